import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Compensable, Outcome, Saga, SagaError, type SagaResult } from "../src/index.js"
import * as Testing from "../src/Testing.js"

describe("the cause a run of a compensated saga answers", () => {
  it.effect("a tainted saga run again answers the StepFailed its first run did, not a defect", () =>
    Effect.gen(function* () {
      const program = Effect.gen(function* () {
        yield* hold("room")
        // The program catches the failure and goes on: the saga is tainted and compensates at its end.
        yield* Effect.ignore(refuse("car"))
        return "done"
      })
      const first = yield* Saga.run("tainted", program)
      const again = yield* Saga.run("tainted", program)
      const failures = [first, again].map(failureOf)
      expect(failures[0]).toBeInstanceOf(SagaError.StepFailed)
      expect(failures[1]).toEqual(failures[0])
      expect(failures[1]).toBeInstanceOf(SagaError.StepFailed)
      expect(again._tag).toBe(first._tag)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a saga whose program failed, run again, answers the program's typed failure again", () =>
    Effect.gen(function* () {
      const program = Effect.zipRight(hold("room"), refuse("car"))
      const first = yield* Saga.run("failed", program)
      const again = yield* Saga.run("failed", program)
      expect(failureOf(first)).toBeInstanceOf(Outcome.Failed)
      expect(failureOf(again)).toEqual(failureOf(first))
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a saga an operator compensated, run again, answers a defect that says what began its compensation", () =>
    Effect.gen(function* () {
      const program = hold("room")
      expect((yield* Saga.run("operated", program))._tag).toBe("Completed")
      yield* Saga.compensate("operated")
      const again = yield* Saga.run("operated", program)
      expect(again._tag).toBe("Compensated")
      if (again._tag !== "Compensated") return
      expect(Option.isNone(Cause.failureOption(again.cause))).toBe(true)
      expect(Cause.pretty(again.cause)).toContain("the saga was compensated before: an operator asked for compensation")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a saga an operator compensated, run again with a program that now fails, answers the defect, not that failure",
    () =>
      Effect.gen(function* () {
        const stopped = yield* Saga.run("operated-then-failing", Effect.zipRight(hold("room"), Effect.interrupt))
        expect(stopped._tag).toBe("Suspended")
        yield* Saga.compensate("operated-then-failing")
        const again = yield* Saga.run("operated-then-failing", Effect.zipRight(hold("room"), Effect.fail("anything")))
        expect(again._tag).toBe("Compensated")
        if (again._tag !== "Compensated") return
        expect(Option.isNone(Cause.failureOption(again.cause))).toBe(true)
        expect(Cause.pretty(again.cause)).toContain(
          "the saga was compensated before: an operator asked for compensation"
        )
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a saga whose program failed one way, run again failing another way, answers the defect naming the first",
    () =>
      Effect.gen(function* () {
        const first = yield* Saga.run("failed-otherwise", Effect.zipRight(hold("room"), Effect.fail("x")))
        expect(failureOf(first)).toBe("x")
        const again = yield* Saga.run("failed-otherwise", Effect.zipRight(hold("room"), Effect.fail("y")))
        expect(again._tag).toBe("Compensated")
        if (again._tag !== "Compensated") return
        expect(Option.isNone(Cause.failureOption(again.cause))).toBe(true)
        expect(Cause.pretty(again.cause)).toContain("the saga was compensated before: Error: x")
      }).pipe(Effect.provide(Testing.layer))
  )
})

const failureOf = (result: SagaResult.SagaResult<unknown, unknown>) =>
  result._tag === "Compensated" || result._tag === "CompensationFailed"
    ? Option.getOrUndefined(Cause.failureOption(result.cause))
    : undefined

const hold = Compensable.make({
  name: "hold",
  input: Schema.String,
  success: Schema.String,
  execute: (item) => Effect.succeed(`hold-${item}`),
  compensate: () => Effect.void
})

const refuse = Compensable.make({
  name: "refuse",
  input: Schema.String,
  success: Schema.String,
  execute: (item) => Effect.fail(Outcome.failed(`no ${item}`))
})
