import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Outcome from "../../Outcome.js"
import type { StepSpec } from "./spec.js"

/**
 * Where a fault can be injected: a tool's forward call or its undo (`FaultPlan.on`).
 *
 * @since 0.5.0
 * @category fault injection
 */
export type FaultSite = "execute" | "compensate"

/**
 * What a fault-injecting `Faults` service is told about a call besides its tool and site: the
 * step it belongs to and its tool's declaration.
 *
 * @since 0.2.0
 * @category fault injection
 */
export interface FaultStep {
  readonly stepId: string
  readonly spec: StepSpec
}

/**
 * The service behind `Testing.faults`, for tests that build their own: it wraps tool calls so
 * that they fail, lose their answer, or are interrupted.
 *
 * @since 0.1.0
 * @category fault injection
 */
export class Faults extends Context.Tag("effect-saga/Faults")<
  Faults,
  {
    /**
     * Runs `call`, `toolName`'s forward call or undo for `step`, with the fault planned for it, if
     * any: it fails as `call` does, or with the `Outcome.Failed` (not applied) or `Outcome.Unknown`
     * (answer lost) a fault stands for.
     */
    readonly around: <A, E, R>(
      toolName: string,
      site: FaultSite,
      call: Effect.Effect<A, E, R>,
      step: FaultStep
    ) => Effect.Effect<A, E | Outcome.Failed | Outcome.Unknown, R>
  }
>() {}
