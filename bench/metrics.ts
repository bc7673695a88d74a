/**
 * The metrics section of `npm run bench`: what recording the library's metrics costs. Five-step
 * sagas one after another, in memory and on an SQLite file, with the metrics recorded and with them
 * switched off (an internal switch for this benchmark, not an option), taking turns so that both
 * see the same machine.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Either, Layer, ManagedRuntime } from "effect"
import { decodeAll, JournalView } from "../dist/internal/journal/view.js"
import { observeAppended, recording } from "../dist/internal/observability/metrics.js"
import { STEPS, saga } from "./contenders.js"
import { Approval, Journal, Saga, SqlStore } from "./library.js"

/** How long each figure is measured. */
export interface MetricsBenchOptions {
  /** Time both modes run, taking turns, before any round counts: the JIT is still compiling. */
  readonly warmupMs: number
  readonly rounds: number
  readonly roundMs: number
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** Milliseconds of wall time, for runs that wait on a disk. */
const wallMs = () => performance.now()

/**
 * Milliseconds of CPU time this process spent, for runs that only compute: what other work on a
 * shared machine takes from them does not count (wall time swung a 1 % difference to 0.3–13 %).
 */
const cpuMs = () => {
  const { system, user } = process.cpuUsage()
  return (user + system) / 1000
}

/** Sagas a mode runs before the other takes its turn. */
const TURN_SAGAS = 10

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

/**
 * µs per step of fresh sagas by `clock`, with the metrics on and off: the best round of each mode,
 * and the median over rounds of their ratio. Within a round the modes take turns every
 * `TURN_SAGAS` sagas on one store, so that both see the same machine, the same collector and a
 * store of the same size; each round has a store of its own (`makeLayer` is called again). The
 * first rounds are a warm-up and do not count. Rounds of one mode each, as this was measured
 * first, read either mode 14 % to 30 % ahead of the other in memory, by which one ran while the JIT
 * was still compiling or the collector was busy.
 */
const onAndOff = async (
  makeLayer: () => Layer.Layer<Saga.Saga, unknown>,
  options: MetricsBenchOptions,
  clock: () => number
) => {
  const perRound = { on: [] as Array<number>, off: [] as Array<number> }
  const warmupRounds = Math.ceil(options.warmupMs / options.roundMs)
  for (let round = -warmupRounds; round < options.rounds; round++) {
    const runtime = ManagedRuntime.make(makeLayer())
    try {
      let next = 0
      const fresh = () => runtime.runPromise(Effect.asVoid(saga(next++)))
      // The store is built and opened (an SQLite file migrated) before any turn is timed.
      await fresh()
      const spent = { on: 0, off: 0 }
      const sagas = { on: 0, off: 0 }
      const start = clock()
      for (let turn = round; clock() - start < options.roundMs; turn++) {
        const mode = Math.abs(turn % 2) === 0 ? "on" : "off"
        recording.enabled = mode === "on"
        const turnStart = clock()
        for (let count = 0; count < TURN_SAGAS; count++) await fresh()
        spent[mode] += clock() - turnStart
        sagas[mode] += TURN_SAGAS
      }
      if (round >= 0) {
        perRound.on.push((spent.on * 1000) / (sagas.on * STEPS))
        perRound.off.push((spent.off * 1000) / (sagas.off * STEPS))
      }
    } finally {
      recording.enabled = true
      await runtime.dispose()
    }
  }
  return {
    on: Math.min(...perRound.on),
    off: Math.min(...perRound.off),
    ratio: median(perRound.on.map((on, round) => on / (perRound.off[round] ?? Number.NaN)))
  }
}

/**
 * µs spent recording the metrics of one five-step saga's entries (`observeAppended` on each, as its
 * writer calls it), alone: the best of a few passes over 20,000 views of the saga.
 */
const recordingCost = async () => {
  const runtime = ManagedRuntime.make(
    Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
  )
  await runtime.runPromise(saga(0))
  const stored = await runtime.runPromise(Effect.flatMap(Journal.Journal, (journal) => journal.read("saga-0")))
  await runtime.dispose()
  const entries = Either.getOrThrow(decodeAll(stored))
  const views = Array.from({ length: 20_000 }, () => new JournalView(entries))
  let best = Number.POSITIVE_INFINITY
  for (let pass = 0; pass < 5; pass++) {
    const start = performance.now()
    for (const view of views) for (const entry of entries) observeAppended(view, [entry], "running")
    best = Math.min(best, ((performance.now() - start) * 1000) / views.length)
  }
  return { entries: entries.length, us: best }
}

/** Measures and prints the metrics section. */
export const runMetrics = async (options: MetricsBenchOptions): Promise<void> => {
  const memory = await onAndOff(
    () => Saga.layer.pipe(Layer.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory))),
    options,
    cpuMs
  )
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-bench-metrics-"))
  let files = 0
  const sqlite = await onAndOff(
    () => Saga.layer.pipe(Layer.provide(SqlStore.layerSqlite({ filename: path.join(dir, `metrics-${files++}.db`) }))),
    options,
    wallMs
  ).finally(() => fs.rmSync(dir, { recursive: true, force: true }))
  const cost = await recordingCost()
  console.log()
  console.log("Metrics (the library's effect_saga_* counters and histograms, recorded and switched off)")
  console.log(
    `  recording alone: ${fmt(cost.us, 2)} µs for the ${cost.entries} entries of a five-step saga ` +
      `(${fmt(cost.us / STEPS, 3)} µs a step)`
  )
  for (const [where, best] of [
    ["in memory (CPU time)", memory],
    ["SQLite (wall time)", sqlite]
  ] as const) {
    const ratio = best.ratio
    console.log(
      `  ${where}, one saga: ${fmt(best.on, 2)} µs/step with metrics, ${fmt(best.off, 2)} µs/step without ` +
        `(best rounds); with against without in the same round, the median: ` +
        `${fmt(ratio, 3)}× (${fmt((ratio - 1) * 100, 1)} % slower; aim ≤ 5 %); ` +
        `recording alone is ${fmt((cost.us / STEPS / best.off) * 100, 2)} % of a step without`
    )
  }
}
