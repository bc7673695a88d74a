/**
 * The receipts section of `npm run bench`: what sealing a receipt costs.
 *
 * - **seal + open**: µs to seal one receipt (AES-256-GCM, bound to its saga and step, as JSON text
 *   in the payload) and open it again, as a step and its undo do;
 * - **one saga on SQLite**: the five-step saga of the other sections, each tool setting a receipt,
 *   one saga after another on an SQLite file, with `EFFECT_SAGA_RECEIPT_KEYS` set and without it.
 *   Rounds of the two alternate, so that both see the same disk and load; the best round counts.
 *   `synchronous` is NORMAL: a flush to the disk costs far more, and varies far more, than sealing;
 * - **one saga in memory**: the same on `Journal.layerMemory`, where nothing hides the engine's own
 *   cost of sealing.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ConfigProvider, Effect, Either, Layer, Logger, LogLevel, ManagedRuntime, Schema } from "effect"
import { Approval, Compensable, Journal, Keys, Saga, SqlStore } from "../src/index.js"
import { associatedData } from "../src/internal/engine/receipts.js"
import { open, seal } from "../src/internal/util/crypto.js"
import { STEPS, StepResult } from "./contenders.js"

/** How long to warm up and measure. */
export interface ReceiptBenchOptions {
  readonly warmupMs: number
  readonly measureMs: number
  readonly rounds: number
}

/** The five steps, each setting a receipt of a provider's typical size. */
const tools = Array.from({ length: STEPS }, (_, i) =>
  Compensable.make({
    name: `step-${i + 1}`,
    input: Schema.Struct({ n: Schema.Number }),
    success: StepResult,
    execute: ({ n }, step) =>
      Effect.as(step.setReceipt(`cancel-token-${n}-${i + 1}-0123456789abcdef`), { id: `res-${i + 1}` }),
    compensate: () => Effect.void
  })
)

const saga = (n: number) =>
  Saga.run(
    `saga-${n}`,
    Effect.gen(function* () {
      for (const tool of tools) yield* tool({ n })
    })
  )

const ring = Either.getOrThrow(Keys.parse(Keys.generate("k1"), Keys.RECEIPT_KEYS))

/** µs per seal + open of one receipt, the best of `rounds` rounds. */
const measureSeal = (options: ReceiptBenchOptions): number => {
  const receipt = "cancel-token-42-1-0123456789abcdef"
  const once = (n: number) => {
    const data = associatedData(`saga-${n}`, "step-1:0123456789abcdef")
    const sealed = JSON.parse(JSON.stringify(seal(ring, receipt, data)))
    if (open(ring, sealed, data)._tag !== "Opened") throw new Error("a sealed receipt did not open")
  }
  const roundMs = options.measureMs / options.rounds
  const warmup = performance.now()
  for (let n = 0; performance.now() - warmup < options.warmupMs; n++) once(n)
  let best = Number.POSITIVE_INFINITY
  for (let round = 0; round < options.rounds; round++) {
    let count = 0
    const start = performance.now()
    while (performance.now() - start < roundMs) {
      for (let i = 0; i < 100; i++) once(count++)
    }
    best = Math.min(best, ((performance.now() - start) * 1000) / count)
  }
  return best
}

type Stores = Layer.Layer<Journal.Journal | Approval.Approval, unknown>

/** One saga after another on `stores`, the receipt keys as `keys` says; the plain-text warning silenced. */
const runner = (stores: Stores, keys: string | undefined) => {
  const config = new Map(keys === undefined ? [] : [[Keys.RECEIPT_KEYS, keys]])
  const runtime = ManagedRuntime.make(
    Saga.layer.pipe(
      Layer.provide(stores),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(config))),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
    )
  )
  let next = 0
  return {
    run: async (count: number) => {
      const from = next
      next += count
      for (let n = from; n < from + count; n++) await runtime.runPromise(saga(n))
    },
    dispose: () => runtime.dispose()
  }
}

/** µs per step, the best round, one saga at a time with a receipt per step, sealed and plain. */
export interface Pair {
  readonly sealed: number
  readonly plain: number
}

/** The receipts figures. */
export interface ReceiptFigures {
  readonly usPerSeal: number
  readonly sqlite: Pair
  readonly memory: Pair
}

/** Warms both up, then measures them in alternating rounds; keeps the best round of each. */
const measurePair = async (options: ReceiptBenchOptions, sealed: Stores, plain: Stores): Promise<Pair> => {
  const runners = { sealed: runner(sealed, Keys.generate("k1")), plain: runner(plain, undefined) }
  try {
    const roundMs = options.measureMs / options.rounds
    const warmup = performance.now()
    while (performance.now() - warmup < options.warmupMs) {
      await runners.sealed.run(1)
      await runners.plain.run(1)
    }
    const round = async (variant: ReturnType<typeof runner>) => {
      let sagas = 0
      const start = performance.now()
      while (performance.now() - start < roundMs) {
        await variant.run(1)
        sagas++
      }
      return ((performance.now() - start) * 1000) / (sagas * STEPS)
    }
    const best = { sealed: Number.POSITIVE_INFINITY, plain: Number.POSITIVE_INFINITY }
    for (let r = 0; r < options.rounds; r++) {
      best.sealed = Math.min(best.sealed, await round(runners.sealed))
      best.plain = Math.min(best.plain, await round(runners.plain))
    }
    return best
  } finally {
    await runners.sealed.dispose()
    await runners.plain.dispose()
  }
}

const memoryStores: Stores = Layer.merge(Journal.layerMemory, Approval.layerMemory)

/** Measures, in a temp dir removed afterwards. */
export const measureReceipts = async (options: ReceiptBenchOptions): Promise<ReceiptFigures> => {
  const usPerSeal = measureSeal(options)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-bench-receipts-"))
  const file = (name: string): Stores => SqlStore.layerSqlite({ filename: path.join(dir, name), synchronous: "normal" })
  try {
    const sqlite = await measurePair(options, file("sealed.db"), file("plain.db"))
    const memory = await measurePair(options, memoryStores, memoryStores)
    return { usPerSeal, sqlite, memory }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** Prints the figures, with the share sealing takes of a step. */
export const printReceipts = (figures: ReceiptFigures): void => {
  const { usPerSeal, sqlite, memory } = figures
  console.log(`receipts: ${fmt(usPerSeal, 2)} µs to seal and open one (AES-256-GCM, bound to its saga and step)`)
  const line = (where: string, pair: Pair) =>
    console.log(
      `receipts, one five-step saga at a time ${where}, a receipt per step: sealed ${fmt(pair.sealed, 1)} µs/step, ` +
        `plain text ${fmt(pair.plain, 1)} µs/step (${fmt(pair.sealed / pair.plain, 3)}×; ` +
        `sealing and opening one is ${fmt((100 * usPerSeal) / pair.plain, 1)} % of a step)`
    )
  line("on SQLite (synchronous = NORMAL)", sqlite)
  line("in memory", memory)
}
