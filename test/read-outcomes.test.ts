/**
 * What a call's type says it fails with is what the program gets: a read's (`changesNothing`)
 * unknown or partial outcome reaches it (`Compensable.ReadOutcome`, caught here by its tag, which
 * compiles only because the type names it), a write's halts the saga and never does. The type side
 * is test/types/tool-types.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schema, TestClock } from "effect"
import { Compensable, Outcome, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"

describe("a read's unknown or partial outcome reaches the program", () => {
  it.effect("a read that answers Outcome.partial: the program catches OutcomePartial, on the run and on replay", () =>
    Effect.gen(function* () {
      const count = Compensable.make({
        name: "count",
        input: Schema.Null,
        success: Schema.Int,
        changesNothing: true,
        execute: () => Effect.fail(Outcome.partial("half the shelves"))
      })
      const caught: Array<string> = []
      const program = count(null).pipe(
        Effect.catchTag("OutcomePartial", (error) => Effect.sync(() => caught.push(error.remaining)))
      )
      const first = yield* Saga.run("read-partial", program)
      const replayed = yield* Saga.run("read-partial", program)
      // A failed read taints the saga as any failed step does: it compensates (nothing to undo).
      expect([first._tag, replayed._tag]).toEqual(["Compensated", "Compensated"])
      expect(caught).toEqual(["half the shelves", "half the shelves"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a read that times out: the program catches OutcomeUnknown", () =>
    Effect.gen(function* () {
      const lookup = Compensable.make({
        name: "lookup",
        input: Schema.Null,
        success: Schema.String,
        changesNothing: true,
        timeout: "1 second",
        execute: () => Effect.never
      })
      const caught: Array<string> = []
      const program = lookup(null).pipe(
        Effect.catchTag("OutcomeUnknown", (error) => Effect.sync(() => caught.push(error.reason)))
      )
      const fiber = yield* Effect.fork(Saga.run("read-timeout", program))
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(fiber))._tag).toBe("Compensated")
      expect(caught).toEqual(["the call started but timed out before it answered"])
    }).pipe(Effect.provide(Testing.layer))
  )
})

describe("a write's unknown or partial outcome never reaches the program", () => {
  for (const outcome of [Outcome.unknown("the line dropped"), Outcome.partial("one of two rooms")]) {
    it.effect(`${outcome._tag}: the saga needs attention, and the program's catchAll never runs`, () =>
      Effect.gen(function* () {
        const book = Compensable.make({
          name: "book",
          input: Schema.Null,
          success: Schema.String,
          execute: () => Effect.fail(outcome),
          compensate: () => Effect.void
        })
        const caught: Array<unknown> = []
        const program = book(null).pipe(Effect.catchAll((error) => Effect.sync(() => caught.push(error))))
        const result = yield* Saga.run("write-outcome", program)
        expect(result._tag).toBe("NeedsAttention")
        expect(caught).toEqual([])
      }).pipe(Effect.provide(Testing.layer))
    )
  }
})
