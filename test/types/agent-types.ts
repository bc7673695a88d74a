/**
 * Type tests, checked by `tsc` (`npm run typecheck`): `Agent`'s maps name tools of the toolkit
 * only. A handler, an undo or a policy for a tool the toolkit does not have does not type-check
 * (building the Layer would refuse it with a `DeclarationError`), and the services the handlers
 * need are the Layer's.
 */
import * as Tool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import { Context, Effect, type Layer, Schema } from "effect"
import * as Agent from "../../src/Agent.js"
import type { Saga } from "../../src/index.js"

type Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false
const assert = <T extends true>(..._: [] | [T]) => undefined
type LayerNeeds<T> = T extends Layer.Layer<infer _ROut, infer _E, infer R> ? R : never

class Seats extends Context.Tag("Seats")<Seats, { readonly hold: (flight: string) => Effect.Effect<string> }>() {}

const HoldSeat = Tool.make("HoldSeat", {
  parameters: { flight: Schema.String },
  success: Schema.Struct({ holdId: Schema.String })
})
const Booking = Agent.make(AiToolkit.make(HoldSeat), { undo: { HoldSeat: () => Effect.void } })

// The handlers of the toolkit's tools: the Layer needs what they need.
const handlers = Booking.toLayer({
  HoldSeat: ({ flight }) =>
    Effect.map(Seats, (seats) => seats.hold(flight)).pipe(
      Effect.flatten,
      Effect.map((holdId) => ({ holdId }))
    )
})
assert<Equals<LayerNeeds<typeof handlers>, Seats | Saga.Saga>>()

Booking.toLayer({
  HoldSeat: () => Effect.succeed({ holdId: "h-1" }),
  // @ts-expect-error a handler for a tool the toolkit does not have
  Nope: () => Effect.succeed("no such tool")
})

Agent.make(AiToolkit.make(HoldSeat), {
  // @ts-expect-error an undo for a tool the toolkit does not have
  undo: { Nope: () => Effect.void }
})

// The Layer needs what the undos need, whether or not every undo takes its `ctx`, and such a map
// passes the checks on the undos (`U` is inferred from the undos alone, not `Undos<Tools, any>`).
const Release = Tool.make("Release", { parameters: { holdId: Schema.String }, success: Schema.Null })
const Mixed = Agent.make(AiToolkit.make(HoldSeat, Release), {
  undo: {
    Release: () => Effect.void,
    HoldSeat: (ctx) => Effect.flatMap(Seats, (seats) => seats.hold(ctx.result.holdId))
  }
})
const mixedHandlers = Mixed.toLayer({
  HoldSeat: () => Effect.succeed({ holdId: "h-1" }),
  Release: () => Effect.succeed(null)
})
assert<Equals<LayerNeeds<typeof mixedHandlers>, Seats | Saga.Saga>>()
