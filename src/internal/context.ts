import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
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

/** Set while an undo runs: starting a saga from inside one is refused (the inverse is bounded). */
export const insideUndo: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)
