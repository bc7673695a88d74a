import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

/** Where a fault can be injected: a tool's forward call or its undo. */
export type FaultSite = "execute" | "compensate"

/** Wraps tool calls so that tests can make them fail, lose their answer, or be interrupted. */
export class Faults extends Context.Tag("effect-saga/Faults")<
  Faults,
  {
    /** Runs `call`, `toolName`'s forward call or undo, with the fault planned for it, if any. */
    readonly around: <A, E, R>(
      toolName: string,
      site: FaultSite,
      call: Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E | unknown, R>
  }
>() {}
