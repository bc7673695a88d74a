import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { StepSpec } from "./spec.js"

/**
 * The saga a program is running in. `Saga.run` provides it; a tool called outside a saga does not
 * type-check.
 */
export class CurrentSaga extends Context.Tag("effect-saga/CurrentSaga")<
  CurrentSaga,
  {
    readonly sagaId: string
    readonly step: (spec: StepSpec, input: unknown, key: string | undefined) => Effect.Effect<any, any, any>
  }
>() {}
