/**
 * The SQLite journal path against another checkout of itself, in one process:
 * `npx tsx bench/ab-sqlite.ts <checkout> [--synchronous normal|full] [--concurrency N] [--rounds N]`.
 * Make the other checkout as for bench/ab.ts (`git worktree add /tmp/base <rev>`, its
 * `node_modules` linked to this one's). Both run the bench's five-step saga on `SqlStore.layerSqlite`,
 * each on a file of its own, taking turns for `--rounds` rounds of 400 ms of CPU time each; printed:
 * the best round of each in CPU µs a step and in wall µs a step (a flush under `FULL` is wall time,
 * not CPU), with the ratios.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { Effect, Layer, ManagedRuntime } from "effect"
import type * as Library from "../src/index.js"
import { STEPS, sagaOf } from "./steps.js"

const argument = (name: string, otherwise: string) => {
  const at = process.argv.indexOf(name)
  return at > 0 ? process.argv[at + 1]! : otherwise
}
const [checkout] = process.argv
  .slice(2)
  .filter((arg, i, args) => !arg.startsWith("--") && !args[i - 1]?.startsWith("--"))
if (checkout === undefined)
  throw new Error("usage: npx tsx bench/ab-sqlite.ts <other checkout> [--synchronous normal|full]")
const synchronous = argument("--synchronous", "normal") as "normal" | "full"
const concurrency = Number(argument("--concurrency", "1"))
const ROUNDS = Number(argument("--rounds", "8"))
const ROUND_MS = 400
const BATCH = Math.max(20, concurrency)
const dir = fs.mkdtempSync(Path.join(os.tmpdir(), "effect-saga-ab-sqlite-"))

/** Runs `count` sagas of the bench on `library`'s SQLite store, each call numbering on from the last. */
const sagasOn = (library: typeof Library, file: string) => {
  const { Saga, SqlStore } = library
  const runtime = ManagedRuntime.make(
    Saga.layer.pipe(Layer.provide(SqlStore.layerSqlite({ filename: Path.join(dir, file), synchronous })))
  )
  let next = 0
  const saga = sagaOf(library)
  const run = (count: number) =>
    runtime.runPromise(
      Effect.forEach(
        Array.from({ length: count }, () => next++),
        saga,
        { concurrency, discard: true }
      )
    )
  return { run, dispose: () => runtime.dispose() }
}

const cpuMs = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

/** CPU and wall µs a step over about `ms` of CPU time. */
const measure = async (run: (count: number) => Promise<unknown>, ms: number) => {
  const start = cpuMs()
  const wallStart = performance.now()
  let sagas = 0
  while (cpuMs() - start < ms) {
    await run(BATCH)
    sagas += BATCH
  }
  const per = 1000 / (sagas * STEPS)
  return { cpu: (cpuMs() - start) * per, wall: (performance.now() - wallStart) * per }
}

const other = (await import(pathToFileURL(Path.resolve(checkout, "src/index.ts")).href)) as typeof Library
const contenders = {
  other: sagasOn(other, "other.db"),
  this: sagasOn(await import("../src/index.js"), "this.db")
}
try {
  for (const { run } of Object.values(contenders)) await measure(run, 3 * ROUND_MS)
  const best = new Map<string, { cpu: number; wall: number }>()
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, { run }] of Object.entries(contenders)) {
      const { cpu, wall } = await measure(run, ROUND_MS)
      const was = best.get(name) ?? { cpu: Number.POSITIVE_INFINITY, wall: Number.POSITIVE_INFINITY }
      best.set(name, { cpu: Math.min(was.cpu, cpu), wall: Math.min(was.wall, wall) })
    }
  }
  const of = (name: string) => best.get(name)!
  console.log(`SQLite synchronous = ${synchronous.toUpperCase()}, ${concurrency} at once, best of ${ROUNDS} rounds`)
  for (const name of Object.keys(contenders)) {
    console.log(
      `${name.padEnd(6)} ${of(name).cpu.toFixed(1).padStart(8)} CPU µs/step ${of(name).wall.toFixed(1).padStart(8)} wall µs/step`
    )
  }
  console.log(
    `this / other: ${(of("this").cpu / of("other").cpu).toFixed(3)}× the CPU a step, ${(of("this").wall / of("other").wall).toFixed(3)}× the wall time`
  )
} finally {
  for (const { dispose } of Object.values(contenders)) await dispose()
  fs.rmSync(dir, { recursive: true, force: true })
}
