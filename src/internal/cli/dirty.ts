/**
 * Which saga states mean "something is wrong": the read commands exit 1 when they show one.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { SagaStatus } from "../../Journal.js"
import { SomethingWrong } from "./failure.js"

/**
 * `compensation_failed` (an undo failed, was partial or unknown: something may still be live) and
 * `needs_attention` (a step's outcome is unknown until an operator resolves it).
 *
 * @since 0.1.0
 * @category models
 */
export const isDirty = (status: SagaStatus): boolean => status === "compensation_failed" || status === "needs_attention"

/**
 * Ends the command with exit code 1 if any of `sagas` is dirty (its answer is already printed).
 *
 * @since 0.1.0
 * @category exit codes
 */
export const exitIfDirty = (
  sagas: ReadonlyArray<{ readonly sagaId: string; readonly status: SagaStatus }>
): Effect.Effect<void, SomethingWrong> => {
  const dirty = sagas.filter((saga) => isDirty(saga.status))
  return dirty.length === 0
    ? Effect.void
    : Effect.fail(
        new SomethingWrong({ reason: dirty.map((saga) => `saga ${saga.sagaId} is ${saga.status}`).join(", ") })
      )
}
