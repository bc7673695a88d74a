/**
 * The engine against another checkout of itself, in one process: `npx tsx bench/ab.ts <checkout>`.
 * Make the other checkout with `git worktree add /tmp/base <rev>` and link this repo's
 * `node_modules` into it (`ln -s "$PWD/node_modules" /tmp/base/node_modules`), so that both load the
 * same `effect`. Both run the bench's five-step saga on `Journal.layerMemory`, beside the journaling
 * floor, taking turns for `--rounds` rounds of 400 ms of CPU time each (CPU, not wall time: the
 * machines are shared); the best round of each is printed, with the ratios. Two identical
 * checkouts read within a few per cent of each other: a smaller difference is noise.
 */
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { Effect, Layer, ManagedRuntime } from "effect"
import type * as Library from "../src/index.js"
import { floorSaga } from "./floor.js"
import { STEPS, sagaOf } from "./steps.js"

const [checkout] = process.argv.slice(2).filter((arg) => !arg.startsWith("--"))
if (checkout === undefined) throw new Error("usage: npx tsx bench/ab.ts <other checkout> [--rounds N]")
const roundsAt = process.argv.indexOf("--rounds")
const ROUNDS = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : 8
const ROUND_MS = 400
const BATCH = 100

/** Runs `count` sagas of the bench on `library`, each call numbering on from the last. */
const sagasOn = (library: typeof Library) => {
  const { Approval, Journal, Saga } = library
  const runtime = ManagedRuntime.make(
    Saga.layer.pipe(Layer.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
  )
  let next = 0
  const saga = sagaOf(library)
  return (count: number) =>
    runtime.runPromise(
      Effect.forEach(
        Array.from({ length: count }, () => next++),
        saga,
        { discard: true }
      )
    )
}

let floorNext = 0
const floor = (count: number) =>
  Effect.runPromise(
    Effect.forEach(
      Array.from({ length: count }, () => floorNext++),
      floorSaga,
      { discard: true }
    )
  )

const cpuMs = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

/** µs of CPU a step over about `ms` of CPU time. */
const measure = async (run: (count: number) => Promise<unknown>, ms: number) => {
  const start = cpuMs()
  let sagas = 0
  while (cpuMs() - start < ms) {
    await run(BATCH)
    sagas += BATCH
  }
  return ((cpuMs() - start) * 1000) / (sagas * STEPS)
}

const other = (await import(pathToFileURL(Path.resolve(checkout, "src/index.ts")).href)) as typeof Library
const contenders = { floor, other: sagasOn(other), this: sagasOn(await import("../src/index.js")) }
for (const run of Object.values(contenders)) await measure(run, 3 * ROUND_MS)
const best = new Map<string, number>()
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(contenders)) {
    best.set(name, Math.min(best.get(name) ?? Number.POSITIVE_INFINITY, await measure(run, ROUND_MS)))
  }
}
const us = (name: string) => best.get(name)!
for (const name of Object.keys(contenders)) {
  console.log(
    `${name.padEnd(6)} ${us(name).toFixed(1).padStart(8)} µs/step   ${(us("floor") / us(name)).toFixed(3)}× the floor's steps/s`
  )
}
console.log(
  `this / other: ${(us("this") / us("other")).toFixed(3)}× the µs a step (best of ${ROUNDS} rounds each, CPU time)`
)
