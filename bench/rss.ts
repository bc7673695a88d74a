/**
 * Child entry point: `node --expose-gc --import tsx bench/rss.ts [first] [total]`.
 * Runs `total` (default 100,000) new sagas on `SqlStore.layerSqlite` (a file in a temp dir,
 * `synchronous = NORMAL`, 100 at once) in one process, and reads RSS and heap after a GC once
 * `first` (default 10,000) have run and again after all of them: what a process running sagas on a
 * durable journal keeps per completed saga. It reads them every `first` sagas in between too: one
 * reading moves by ±15 % with the pages V8 and the allocator have not handed back yet, a leak
 * climbs through all of them. Prints one JSON line: an `RssResult`.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Layer, ManagedRuntime } from "effect"
import { sagaRunner } from "./contenders.js"
import { Saga, SqlStore } from "./library.js"

/** Result line printed by the child and parsed by `bench/index.ts`. */
export interface RssResult {
  readonly first: number
  readonly total: number
  readonly rssFirstMB: number
  readonly rssTotalMB: number
  readonly heapFirstMB: number
  readonly heapTotalMB: number
  /** RSS after every `first` sagas, from `first` to `total`. */
  readonly rssReadingsMB: ReadonlyArray<number>
}

const [firstArg = "10000", totalArg = "100000"] = process.argv.slice(2)
const first = Number(firstArg)
const total = Number(totalArg)
const MB = 1024 * 1024
const BATCH = 1_000

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-rss-"))
const layer = Saga.layer.pipe(
  Layer.provide(SqlStore.layerSqlite({ filename: path.join(dir, "journal.db"), synchronous: "normal" }))
)
const runtime = ManagedRuntime.make(layer)
const runner = sagaRunner(runtime)

const runUpTo = async (count: number, done: number) => {
  for (let run = done; run < count; run += BATCH) await runner.concurrent(Math.min(BATCH, count - run))
}
const settled = () => {
  globalThis.gc?.()
  const usage = process.memoryUsage()
  return { rss: usage.rss / MB, heap: usage.heapUsed / MB }
}

const readings: Array<{ readonly rss: number; readonly heap: number }> = []
for (let done = 0; done < total; done = Math.min(total, done + first)) {
  await runUpTo(Math.min(total, done + first), done)
  readings.push(settled())
}
const atFirst = readings[0]!
const atTotal = readings[readings.length - 1]!
await runtime.dispose()
fs.rmSync(dir, { recursive: true, force: true })
const result: RssResult = {
  first,
  total,
  rssFirstMB: atFirst.rss,
  rssTotalMB: atTotal.rss,
  heapFirstMB: atFirst.heap,
  heapTotalMB: atTotal.heap,
  rssReadingsMB: readings.map((reading) => reading.rss)
}
console.log(JSON.stringify(result))
