/**
 * Type tests, checked by `tsc` in CI: an undo that would call a compensable tool or start a saga
 * does not type-check (the inverse of a step is one undo call).
 */
import { Effect, Schema } from "effect"
import { Compensable, Saga } from "../../src/index.js"

const inner = Compensable.make({
  name: "inner",
  input: Schema.String,
  success: Schema.String,
  execute: (input) => Effect.succeed(input)
})

export const bounded = Compensable.make({
  name: "bounded",
  input: Schema.String,
  success: Schema.String,
  execute: (input) => Effect.succeed(input),
  compensate: () => Effect.void
})

export const callsATool = Compensable.make({
  name: "callsATool",
  input: Schema.String,
  success: Schema.String,
  execute: (input) => Effect.succeed(input),
  // @ts-expect-error an undo cannot call a compensable tool
  compensate: (ctx) => inner(ctx.result)
})

export const startsASaga = Compensable.make({
  name: "startsASaga",
  input: Schema.String,
  success: Schema.String,
  execute: (input) => Effect.succeed(input),
  // @ts-expect-error an undo cannot start a saga
  compensate: () => Saga.run("nested", Effect.void)
})

export const withCompensationToo = Effect.succeed("x").pipe(
  // @ts-expect-error withCompensation's undo is bounded the same way
  Compensable.withCompensation({ name: "step", success: Schema.String, compensate: (ctx) => inner(ctx.result) })
)
