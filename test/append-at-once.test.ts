/**
 * The in-memory journal appends at once (src/internal/journal/synchronous.ts): the writer calls the
 * store's synchronous twin of `append` when nobody holds its lock. A journal wrapped by replacing
 * `append` must still be called as wrapped, and appends racing in one saga stay in order.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Metric, Schema } from "effect"
import { Approval, Compensable, Journal, Metrics, Saga } from "../src/index.js"
import { saga } from "./fixtures/drafts.js"

const tool = (name: string) =>
  Compensable.make({
    name,
    input: Schema.Struct({ n: Schema.Number }),
    success: Schema.Number,
    execute: ({ n }) => Effect.succeed(n),
    compensate: () => Effect.void
  })

const tools = ["reserve", "charge", "ship"].map(tool)

/** `Journal.layerMemory` with `append` replaced: each call logged, the second `INTENT` refused. */
const wrappedMemory = (calls: Array<ReadonlyArray<string>>) =>
  Layer.effect(
    Journal.Journal,
    Effect.map(Journal.Journal, (journal) => {
      let intents = 0
      return Journal.Journal.of({
        ...journal,
        append: (sagaId, expected, drafts, holder) => {
          calls.push(drafts.map((draft) => draft.phase))
          return drafts.some((draft) => draft.phase === "INTENT") && ++intents === 2
            ? Effect.fail(new Journal.JournalError({ operation: "append", reason: "refused by the wrapper" }))
            : journal.append(sagaId, expected, drafts, holder)
        }
      })
    })
  ).pipe(Layer.provide(Journal.layerMemory))

const sagaOn = <E>(journal: Layer.Layer<Journal.Journal, E>) =>
  Saga.layer.pipe(Layer.provideMerge(Layer.merge(journal, Approval.layerMemory)))

describe("appends done at once on the in-memory journal", () => {
  it.scoped("a journal wrapped by replacing append is called as wrapped, every time", () =>
    Effect.gen(function* () {
      const calls: Array<ReadonlyArray<string>> = []
      const exit = yield* Effect.exit(
        Saga.run(
          "wrapped",
          Effect.forEach(tools, (call) => call({ n: 1 }))
        ).pipe(Effect.provide(sagaOn(wrappedMemory(calls))))
      )
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause).includes("refused by the wrapper")).toBe(true)
      expect(calls).toEqual([["SAGA_STARTED", "INTENT"], ["EXECUTED"], ["INTENT"]])
    })
  )

  it.scoped("a conflict on that path fails the run and is counted, as on the other", () =>
    Effect.gen(function* () {
      const before = yield* Metric.value(Metrics.appendConflicts)
      const journal = yield* Journal.Journal
      // Another writer moves the saga on between the run's load and its first append.
      const program = Effect.zipRight(
        journal.append("moved-on", Journal.empty, [saga("SAGA_STARTED")]),
        tools[0]!({ n: 1 })
      )
      const exit = yield* Effect.exit(Saga.run("moved-on", program))
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause).includes("ConcurrencyConflict")).toBe(true)
      const after = yield* Metric.value(Metrics.appendConflicts)
      expect(after.count).toBe(before.count + 1)
    }).pipe(Effect.provide(sagaOn(Journal.layerMemory)))
  )

  it.scoped("steps racing in one saga append in turn: every entry chained after the one before", () =>
    Effect.gen(function* () {
      const many = Array.from({ length: 20 }, (_, i) => tool(`parallel-${i}`))
      const result = yield* Saga.run(
        "racing",
        Effect.forEach(many, (call, i) => call({ n: i }), { concurrency: "unbounded" })
      )
      expect(result._tag).toBe("Completed")
      const journal = yield* Journal.Journal
      const entries = yield* journal.read("racing")
      expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, i) => i + 1))
      expect(entries.filter((entry) => entry.phase === "EXECUTED")).toHaveLength(20)
      expect((yield* Journal.verify("racing"))._tag).toBe("Intact")
    }).pipe(Effect.provide(sagaOn(Journal.layerMemory)))
  )
})
