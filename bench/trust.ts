/**
 * The trust section of `npm run bench`: what verifying a saga's journal on every load costs.
 *
 * - **per loaded entry**: a saga's entries read and verified against its row (chain, and MACs with a
 *   journal key) next to the same entries only read, on the in-memory journal (no I/O to hide it);
 * - **SQLite, one saga**: five-step sagas one after another on a file, with the check on load and with
 *   it switched off (an internal switch for this benchmark, not an option), rounds interleaved (their order alternating) so
 *   that both see the same machine; and replays of completed sagas (the load reads all 12 entries).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ConfigProvider, Effect, Either, Layer, ManagedRuntime } from "effect"
import { inspect, loadChecks } from "../dist/internal/journal/verified.js"
import { STEPS, saga } from "./contenders.js"
import { Journal, Keys, Saga, SqlStore } from "./library.js"

/** How long each figure is measured. */
export interface TrustBenchOptions {
  readonly rounds: number
  readonly roundMs: number
  readonly entries: number
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** µs per call of `run`, the best of `rounds` rounds of about `roundMs` each. */
const timeBest = async (rounds: number, roundMs: number, run: () => Promise<void>): Promise<number> => {
  let best = Number.POSITIVE_INFINITY
  for (let round = 0; round < rounds; round++) {
    let calls = 0
    const start = performance.now()
    while (performance.now() - start < roundMs) {
      await run()
      calls++
    }
    best = Math.min(best, ((performance.now() - start) * 1000) / calls)
  }
  return best
}

/** µs per loaded entry spent verifying it, without and with a journal key. */
const perEntry = async (options: TrustBenchOptions) => {
  const figures: Array<{ readonly keyed: boolean; readonly readUs: number; readonly verifiedUs: number }> = []
  const sagaIds = Array.from({ length: Math.ceil(options.entries / 100) }, (_, n) => `s-${n}`)
  const entries = sagaIds.length * 100
  for (const keyed of [false, true]) {
    const keyList = Keys.generate("bench")
    const ring = keyed ? Either.getOrThrow(Keys.parse(keyList)) : undefined
    const config = ConfigProvider.fromMap(new Map(keyed ? [[Keys.JOURNAL_KEYS, keyList]] : []))
    const runtime = ManagedRuntime.make(Layer.provide(Journal.layerMemory, Layer.setConfigProvider(config)))
    const journal = await runtime.runPromise(Journal.Journal)
    const draft = { stepId: "step", toolName: "tool", phase: "INTENT" as const, input: '{"n":1}', payload: "{}" }
    await runtime.runPromise(
      Effect.forEach(sagaIds, (sagaId) => journal.append(sagaId, Journal.empty, Array(100).fill(draft)))
    )
    const readAll = () => runtime.runPromise(Effect.forEach(sagaIds, journal.read, { discard: true }))
    const verifyAll = () =>
      runtime.runPromise(Effect.forEach(sagaIds, (sagaId) => inspect(journal, sagaId, ring), { discard: true }))
    let readUs = Number.POSITIVE_INFINITY
    let verifiedUs = Number.POSITIVE_INFINITY
    const readRound = async () => {
      readUs = Math.min(readUs, (await timeBest(1, options.roundMs, readAll)) / entries)
    }
    const verifyRound = async () => {
      verifiedUs = Math.min(verifiedUs, (await timeBest(1, options.roundMs, verifyAll)) / entries)
    }
    for (let round = 0; round < options.rounds; round++) {
      // The order alternates: a round pays for collecting the garbage of the one before it.
      for (const measure of round % 2 === 0 ? [readRound, verifyRound] : [verifyRound, readRound]) await measure()
    }
    figures.push({ keyed, readUs, verifiedUs })
    await runtime.dispose()
  }
  return figures
}

/** One-saga SQLite runs and replays, with the check on load and without, rounds interleaved. */
const sqliteRuns = async (options: TrustBenchOptions) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-bench-trust-"))
  const runtime = ManagedRuntime.make(
    Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename: path.join(dir, "trust.db") })))
  )
  try {
    let next = 0
    const fresh = () => runtime.runPromise(Effect.asVoid(saga(next++)))
    const replay = () => runtime.runPromise(Effect.asVoid(saga(0)))
    await fresh()
    const best = { on: Number.POSITIVE_INFINITY, off: Number.POSITIVE_INFINITY }
    const replayBest = { on: Number.POSITIVE_INFINITY, off: Number.POSITIVE_INFINITY }
    for (let round = 0; round < options.rounds; round++) {
      // The order alternates: a round pays for collecting the garbage of the one before it.
      for (const mode of round % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const)) {
        loadChecks.enabled = mode === "on"
        best[mode] = Math.min(best[mode], (await timeBest(1, options.roundMs, fresh)) / STEPS)
        replayBest[mode] = Math.min(replayBest[mode], await timeBest(1, options.roundMs / 2, replay))
      }
    }
    return { best, replayBest }
  } finally {
    loadChecks.enabled = true
    await runtime.dispose()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** Measures and prints the trust section. */
export const runTrust = async (options: TrustBenchOptions): Promise<void> => {
  const entries = await perEntry(options)
  const runs = await sqliteRuns(options)
  console.log()
  console.log("Verification on load (the chain against the saga's row; MACs with a journal key)")
  for (const figure of entries) {
    console.log(
      `  per loaded entry, in memory${figure.keyed ? ", with a journal key" : ""}: read ${fmt(figure.readUs, 2)} µs, ` +
        `read and verified ${fmt(figure.verifiedUs, 2)} µs: verifying costs ${fmt(figure.verifiedUs - figure.readUs, 2)} µs an entry`
    )
  }
  const ratio = runs.best.on / runs.best.off
  console.log(
    `  SQLite, one saga: ${fmt(runs.best.on, 1)} µs/step checked, ${fmt(runs.best.off, 1)} µs/step unchecked: ` +
      `${fmt((ratio - 1) * 100, 1)} % slower (aim ≤ 5 %)`
  )
  console.log(
    `  SQLite, replay of a completed saga (12 entries loaded): ${fmt(runs.replayBest.on, 0)} µs checked, ` +
      `${fmt(runs.replayBest.off, 0)} µs unchecked (${fmt((runs.replayBest.on / runs.replayBest.off - 1) * 100, 1)} %)`
  )
}
