/**
 * Child entry point, bundled and run by plain `node` (`measureRss` in bench/index.ts):
 * `node --expose-gc .bench/rss.mjs [first] [total]`. Under `--import tsx` it runs too, with tsx's
 * loader thread in its RSS: ≈ 65 MB more, ≈ 30 MB of which it hands back once, at a moment of its own.
 * Runs `total` (default 100,000) new sagas on `SqlStore.layerSqlite` (a file in a temp dir,
 * `synchronous = NORMAL`, 100 at once) in one process, and reads RSS and heap once `first` (default
 * 10,000) have run and again after all of them: what a process running sagas on a durable journal
 * keeps per completed saga. It reads them every `first` sagas in between too: a leak climbs through
 * all of them.
 *
 * A reading is settled: a GC, then a GC every `SETTLE_MS` until RSS moves by less than
 * `SETTLE_MB`. RSS read at once after one GC (kept as `rssAtOnceReadingsMB`) still holds the pages
 * that GC freed: V8 sweeps and unmaps them on background threads (`--trace-unmapper`: ≈ 200 pages
 * of 256 KB after a burst), so that reading lands anywhere in a band of ≈ 100 MB above the settled
 * one, depending on how far those threads got (docs/performance.md, twelfth pass). Prints one JSON
 * line: an `RssResult`.
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
  /** Settled RSS after every `first` sagas, from `first` to `total`. */
  readonly rssReadingsMB: ReadonlyArray<number>
  /** RSS read at once after the first GC of each reading, as the bench read it before the twelfth pass. */
  readonly rssAtOnceReadingsMB: ReadonlyArray<number>
  /** V8's committed heap (`heapTotal`) at each settled reading: the rest of RSS is outside V8's heap. */
  readonly heapCommittedReadingsMB: ReadonlyArray<number>
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
/** A settled reading: a GC every `SETTLE_MS` until RSS moves by less than `SETTLE_MB`, at most `SETTLE_ROUNDS` of them. */
const SETTLE_MS = 100
const SETTLE_MB = 1
const SETTLE_ROUNDS = 20

const rssNow = () => process.memoryUsage().rss / MB
const settled = async () => {
  globalThis.gc?.()
  const atOnce = rssNow()
  let rss = atOnce
  for (let round = 0; round < SETTLE_ROUNDS; round++) {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
    globalThis.gc?.()
    const last = rss
    rss = rssNow()
    if (Math.abs(rss - last) < SETTLE_MB) break
  }
  const usage = process.memoryUsage()
  return { rss: usage.rss / MB, atOnce, heap: usage.heapUsed / MB, committed: usage.heapTotal / MB }
}

const readings: Array<{
  readonly rss: number
  readonly atOnce: number
  readonly heap: number
  readonly committed: number
}> = []
for (let done = 0; done < total; done = Math.min(total, done + first)) {
  await runUpTo(Math.min(total, done + first), done)
  readings.push(await settled())
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
  rssReadingsMB: readings.map((reading) => reading.rss),
  rssAtOnceReadingsMB: readings.map((reading) => reading.atOnce),
  heapCommittedReadingsMB: readings.map((reading) => reading.committed)
}
console.log(JSON.stringify(result))
