/**
 * Type tests, checked by `tsc` in CI: an undo that would call a compensable tool or start a saga
 * does not type-check (the inverse of a step is one undo call), a tool's or an agent's.
 */
import * as Tool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import { Effect, Schema } from "effect"
import * as Agent from "../../src/Agent.js"
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

// An agent's undo is bounded the same way (`Agent.BoundedUndos`), on the undo that is not, only.
const HoldSeat = Tool.make("HoldSeat", {
  parameters: { flight: Schema.String },
  success: Schema.Struct({ holdId: Schema.String })
})
const Release = Tool.make("Release", { parameters: { holdId: Schema.String }, success: Schema.Null })
const agentTools = AiToolkit.make(HoldSeat, Release)

export const agentCallsATool = Agent.make(agentTools, {
  undo: {
    Release: () => Effect.void,
    // @ts-expect-error an agent's undo cannot call a compensable tool
    HoldSeat: (ctx) => inner(ctx.result.holdId)
  }
})

export const agentStartsASaga = Agent.make(agentTools, {
  undo: {
    // @ts-expect-error an agent's undo cannot start a saga
    HoldSeat: (ctx) => Saga.run(`undo-${ctx.result.holdId}`, inner(ctx.result.holdId)),
    Release: (ctx) => Effect.log(ctx.input.holdId)
  }
})

export const agentBounded = Agent.make(agentTools, {
  undo: { HoldSeat: (ctx) => Effect.log(ctx.result.holdId), Release: () => Effect.void }
})
