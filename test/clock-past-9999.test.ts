/**
 * A clock past year 9999 (a `TestClock` moved too far, a host whose clock is wrong): the stores
 * compare times as text, which names years 0000–9999 only, so a run at such a time writes nothing
 * and fails with a typed `JournalError` naming the clock, never a defect.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { recordedReserve } from "./fixtures/recorded-reserve.js"

/** A reservation whose calls nobody reads. */
const reserve = recordedReserve([])

describe("a clock past year 9999", () => {
  for (const [label, millis] of [
    ["the first millisecond of year 10000", Date.UTC(10_000, 0, 1)],
    ["a second before the last date JavaScript can name", 8.64e15 - 1_000]
  ] as const) {
    it.effect(`Saga.run at ${label} writes nothing and fails with a JournalError naming the clock`, () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(millis)
        const error = yield* Effect.flip(Saga.run("late", reserve("A-1")))
        assert(error._tag === "JournalError")
        expect(error.reason).toContain(
          `the clock reads ${new Date(millis).toISOString()}, past 9999-12-31T23:59:59.999Z`
        )
        expect((yield* Effect.flip(Saga.status("late")))._tag).toBe("SagaNotFound")
      }).pipe(Effect.provide(Testing.layer))
    )
  }

  it.effect("a run that the clock carries past year 9999 stops at its next write, its steps before it journaled", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(9999, 11, 31, 23, 59, 59, 990))
      const program = Effect.zipRight(reserve("A-1"), Effect.zipRight(TestClock.adjust("1 second"), reserve("B-2")))
      const error = yield* Effect.flip(Saga.run("crossing", program))
      expect(error).toMatchObject({ _tag: "JournalError", operation: "append" })
      const status = yield* Saga.status("crossing")
      expect(status.updatedAt).toBe("9999-12-31T23:59:59.990Z")
      expect(status.steps.map((step) => [step.toolName, step.state])).toEqual([["reserve", "executed"]])
    }).pipe(Effect.provide(Testing.layer))
  )
})
