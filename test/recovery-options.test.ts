import { assert, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Option, Schema } from "effect"
import { Compensable, Journal, Recovery, Saga, SagaDefinition } from "../src/index.js"
import * as Testing from "../src/Testing.js"

const noted = Compensable.make({
  name: "noted",
  input: Schema.String,
  success: Schema.String,
  execute: (id) => Effect.succeed(`noted:${id}`),
  compensate: () => Effect.void
})

/** Its program interrupts itself after its step: it is left behind, Suspended, for recovery. */
const Paused = SagaDefinition.make("paused", {
  input: Schema.String,
  program: (id: string) => Effect.zipRight(noted(id), Effect.interrupt)
})

/** Options `make` and `layer` refuse, with the option and the reason they name. */
const refused: ReadonlyArray<readonly [string, Record<string, unknown>, string, string]> = [
  ["concurrency 0", { concurrency: 0 }, "concurrency", "is 0, not a whole number of 1 or more"],
  ["concurrency -1", { concurrency: -1 }, "concurrency", "is -1, not a whole number of 1 or more"],
  ["concurrency 1.5", { concurrency: 1.5 }, "concurrency", "is 1.5, not a whole number of 1 or more"],
  ["concurrency NaN", { concurrency: Number.NaN }, "concurrency", "is NaN, not a whole number of 1 or more"],
  ["concurrency text", { concurrency: "x" }, "concurrency", 'is "x", not a whole number of 1 or more'],
  ["batchSize 0", { batchSize: 0 }, "batchSize", "is 0, not a whole number of 1 or more"],
  ["batchSize text", { batchSize: "x" }, "batchSize", 'is "x", not a whole number of 1 or more'],
  [
    "batchSize 1e400 (Infinity)",
    { batchSize: Number.POSITIVE_INFINITY },
    "batchSize",
    "is Infinity, not a whole number of 1 or more"
  ],
  ["batchSize 2^53", { batchSize: 2 ** 53 }, "batchSize", "is 9007199254740992, not a whole number of 1 or more"],
  [
    "principal with an empty id",
    { principal: { id: "" } },
    "principal",
    `id "" cannot be a principal's id: it is empty`
  ],
  [
    "principal with a number id",
    { principal: { id: 5 } },
    "principal",
    "id a number cannot be a principal's id: it is not text but a number"
  ],
  [
    "principal with a blank id",
    { principal: { id: "  " } },
    "principal",
    `id "  " cannot be a principal's id: it is blank: it names no one`
  ],
  ["principal null", { principal: null }, "principal", "is null, not a principal: give { id }"],
  ["every 0", { every: 0 }, "every", 'is 0, not a positive duration or "startup"'],
  ["every -5", { every: -5 }, "every", 'is -5, not a positive duration or "startup"'],
  ["every NaN", { every: Number.NaN }, "every", 'is NaN, not a positive duration or "startup"'],
  ["every Duration.zero", { every: Duration.zero }, "every", 'is 0, not a positive duration or "startup"'],
  ["every text", { every: "soon" }, "every", 'is "soon", not a positive duration or "startup"'],
  ["every Startup", { every: "Startup" }, "every", 'is "Startup", not a positive duration or "startup"'],
  ["every an object", { every: {} }, "every", 'is an object, not a positive duration or "startup"'],
  ["definitions not a list", { definitions: "paused" }, "definitions", "is a string, not a list of definitions"],
  [
    "two definitions of one name",
    { definitions: [Paused, SagaDefinition.make("paused", { input: Schema.Number, program: () => Effect.void })] },
    "definitions",
    'name "paused" twice: a saga is resumed by its definition\'s name, so each must name one'
  ],
  [
    "one definition listed twice",
    { definitions: [Paused, Paused] },
    "definitions",
    'name "paused" twice: a saga is resumed by its definition\'s name, so each must name one'
  ],
  [
    "a misspelled option",
    { evrey: "startup" },
    "options",
    'name "evrey", which is no option: the options are definitions, concurrency, batchSize, principal, every'
  ]
]

/** The options to try: `Paused` as the definitions, and `overrides`. */
const optionsWith = (overrides: Record<string, unknown>) =>
  ({ definitions: [Paused], ...overrides }) as unknown as Recovery.Options<ReadonlyArray<typeof Paused>>

/** A saga left behind (Suspended, its lease given back) for a pass to claim. */
const leftBehind = Effect.gen(function* () {
  expect((yield* Saga.start(Paused, "left", "a-1"))._tag).toBe("Suspended")
  const journal = yield* Journal.Journal
  return () => Effect.map(journal.get("left"), Option.getOrThrow)
})

describe("recovery's options", () => {
  it.effect.each(refused)(
    "Recovery.make refuses %s with InvalidRecoveryOptions naming it; nothing is claimed",
    ([, overrides, option, reason]) =>
      Effect.gen(function* () {
        const record = yield* leftBehind
        const error = yield* Effect.flip(Recovery.make(optionsWith(overrides)))
        assert(
          error instanceof Recovery.InvalidRecoveryOptions,
          `expected InvalidRecoveryOptions, got ${String(error)}`
        )
        expect(error).toMatchObject({ _tag: "InvalidRecoveryOptions", option, reason })
        expect(error.message).toBe(`Recovery: ${option} ${reason}`)
        expect(yield* record()).toMatchObject({ status: "suspended", lease: null })
      }).pipe(Effect.provide(Testing.layer))
  )

  it.scoped.each(refused)(
    "Recovery.layer refuses %s when it is built: a typed failure, no pass runs",
    ([, overrides, option, reason]) =>
      Effect.gen(function* () {
        const record = yield* leftBehind
        const exit = yield* Effect.exit(Layer.build(Recovery.layer(optionsWith(overrides))))
        assert(Exit.isFailure(exit), "the layer was built")
        const error = yield* Effect.flip(exit)
        expect(error).toMatchObject({ _tag: "InvalidRecoveryOptions", option, reason })
        expect(yield* record()).toMatchObject({ status: "suspended", lease: null })
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("Recovery.make refuses options that are not an object", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Recovery.make(null as unknown as Recovery.Options<[]>))
      expect(error).toMatchObject({ option: "options", reason: "are null, not an object: give { definitions }" })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("every accepted value still recovers: whole counts, a principal, a positive duration", () =>
    Effect.gen(function* () {
      const record = yield* leftBehind
      const recovery = yield* Recovery.make(
        optionsWith({ concurrency: 1, batchSize: 1, principal: { id: "ops" }, every: "1 minute" })
      )
      const report = yield* recovery.recoverAll
      expect(report.sagas.map((saga) => saga.sagaId)).toEqual(["left"])
      expect((yield* record()).lease).toBeNull()
    }).pipe(Effect.provide(Testing.layer))
  )
})
