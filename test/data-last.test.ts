/**
 * `Saga.run` and `Saga.resume` data-last, `SagaResult.match` data-last and its guards: they answer
 * as the data-first forms do.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Compensable, Saga, SagaResult } from "../src/index.js"
import * as Testing from "../src/Testing.js"

const hold = Compensable.make({
  name: "hold",
  input: Schema.String,
  success: Schema.String,
  execute: (room) => Effect.succeed(`hold-${room}`),
  compensate: () => Effect.void
})

const said = SagaResult.match({
  Completed: ({ value }: SagaResult.Completed<string>) => `completed: ${value}`,
  Compensated: () => "compensated",
  CompensationFailed: () => "compensation failed",
  AwaitingApproval: () => "awaiting approval",
  NeedsAttention: () => "needs attention",
  Suspended: () => "suspended"
})

describe("data-last forms", () => {
  it.effect(
    "program.pipe(Saga.run(id)) runs the saga; Saga.resume(id) replays it; match and the guards read the result",
    () =>
      Effect.gen(function* () {
        const result = yield* hold("101").pipe(Saga.run("order-1"))
        expect(said(result)).toBe("completed: hold-101")
        expect(SagaResult.isCompleted(result)).toBe(true)
        expect(SagaResult.isCompensated(result)).toBe(false)
        expect((yield* Saga.status("order-1")).status).toBe("completed")
        const again = yield* hold("101").pipe(Saga.resume("order-1", { onInterrupt: "suspend" }))
        expect(said(again)).toBe("completed: hold-101")
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("each guard is true of its result only", () =>
    Effect.gen(function* () {
      const failed = yield* Effect.zipRight(hold("102"), Effect.fail("no")).pipe(Saga.run("order-2"))
      const guards = {
        Completed: SagaResult.isCompleted,
        Compensated: SagaResult.isCompensated,
        CompensationFailed: SagaResult.isCompensationFailed,
        AwaitingApproval: SagaResult.isAwaitingApproval,
        NeedsAttention: SagaResult.isNeedsAttention,
        Suspended: SagaResult.isSuspended
      }
      const answers = Object.entries(guards).filter(([, guard]) => guard(failed))
      expect(answers.map(([tag]) => tag)).toEqual(["Compensated"])
    }).pipe(Effect.provide(Testing.layer))
  )
})
