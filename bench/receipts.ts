/**
 * The receipts section of `npm run bench`: what sealing a receipt costs.
 *
 * - **seal + open**: µs to seal one receipt (AES-256-GCM, bound to its saga and step, as JSON text
 *   in the payload) and open it again, as a step and its undo do;
 * - **one saga on SQLite**: the five-step saga of the other sections, each tool setting a receipt,
 *   one saga after another on an SQLite file, with `EFFECT_SAGA_RECEIPT_KEYS` set and without it.
 *   Rounds of the two alternate, so that both see the same disk and load; the best round counts.
 *   `synchronous` is NORMAL: a flush to the disk costs far more, and varies far more, than sealing.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ConfigProvider, Effect, Either, Layer, Logger, LogLevel, ManagedRuntime, Schema } from "effect"
import { Compensable, Keys, Saga, SqlApproval } from "../src/index.js"
import { open, seal } from "../src/internal/crypto.js"
import { associatedData } from "../src/internal/receipts.js"
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

/** One saga after another on a file, the receipt keys as `keys` says; the plain-text warning silenced. */
const runner = (filename: string, keys: string | undefined) => {
  const config = new Map(keys === undefined ? [] : [[Keys.RECEIPT_KEYS, keys]])
  const runtime = ManagedRuntime.make(
    Saga.layer.pipe(
      Layer.provide(SqlApproval.layerSqlite({ filename, synchronous: "normal" })),
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

/** The receipts figures. */
export interface ReceiptFigures {
  readonly usPerSeal: number
  /** µs per step, the best round, one saga at a time with a receipt per step. */
  readonly sealedUsPerStep: number
  readonly plainUsPerStep: number
}

/** Measures, in a temp dir removed afterwards. */
export const measureReceipts = async (options: ReceiptBenchOptions): Promise<ReceiptFigures> => {
  const usPerSeal = measureSeal(options)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-bench-receipts-"))
  const sealed = runner(path.join(dir, "sealed.db"), Keys.generate("k1"))
  const plain = runner(path.join(dir, "plain.db"), undefined)
  try {
    const roundMs = options.measureMs / options.rounds
    const warmup = performance.now()
    while (performance.now() - warmup < options.warmupMs) {
      await sealed.run(1)
      await plain.run(1)
    }
    const round = async (variant: typeof sealed) => {
      let sagas = 0
      const start = performance.now()
      while (performance.now() - start < roundMs) {
        await variant.run(1)
        sagas++
      }
      return ((performance.now() - start) * 1000) / (sagas * STEPS)
    }
    let best = { sealed: Number.POSITIVE_INFINITY, plain: Number.POSITIVE_INFINITY }
    for (let r = 0; r < options.rounds; r++) {
      best = { sealed: Math.min(best.sealed, await round(sealed)), plain: Math.min(best.plain, await round(plain)) }
    }
    return { usPerSeal, sealedUsPerStep: best.sealed, plainUsPerStep: best.plain }
  } finally {
    await sealed.dispose()
    await plain.dispose()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** Prints the figures, with the share sealing takes of a durable step. */
export const printReceipts = (figures: ReceiptFigures): void => {
  const { usPerSeal, sealedUsPerStep, plainUsPerStep } = figures
  console.log(`receipts: ${fmt(usPerSeal, 2)} µs to seal and open one (AES-256-GCM, bound to its saga and step)`)
  console.log(
    `receipts, one five-step saga at a time on SQLite (synchronous = NORMAL), a receipt per step: sealed ${fmt(sealedUsPerStep, 1)} µs/step, ` +
      `plain text ${fmt(plainUsPerStep, 1)} µs/step (${fmt(sealedUsPerStep / plainUsPerStep, 3)}×; ` +
      `sealing alone is ${fmt((100 * usPerSeal) / plainUsPerStep, 2)} % of a step)`
  )
}
