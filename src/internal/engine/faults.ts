import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { StepSpec } from "./spec.js"

/** Where a fault can be injected: a tool's forward call or its undo. */
export type FaultSite = "execute" | "compensate"

/** The step a call belongs to, and its tool's declaration (what `Testing.exploreCrashes` checks against). */
export interface FaultStep {
  readonly stepId: string
  readonly spec: StepSpec
}

/** Wraps tool calls so that tests can make them fail, lose their answer, or be interrupted. */
export class Faults extends Context.Tag("effect-saga/Faults")<
  Faults,
  {
    /** Runs `call`, `toolName`'s forward call or undo for `step`, with the fault planned for it, if any. */
    readonly around: <A, E, R>(
      toolName: string,
      site: FaultSite,
      call: Effect.Effect<A, E, R>,
      step: FaultStep
    ) => Effect.Effect<A, E | unknown, R>
  }
>() {}
