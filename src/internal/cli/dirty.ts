/**
 * Which saga states mean "something is wrong": the read commands exit 1 when they show one.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { SagaStatus } from "../../Journal.js"
import { shellWord } from "../util/shellWord.js"
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
 * The line `list` prints under its table for a stuck saga (`isStuck`).
 *
 * @since 0.4.0
 * @category models
 */
export const stuckLine = (sagaId: string): string =>
  `saga ${sagaId}: stuck: no worker is driving it, and no Recovery can (it was started with Saga.run): run its program again, or compensate it once any step whose outcome is unknown is resolved (effect-saga show ${shellWord(sagaId)} says which, and how)`

/**
 * Ends the command with exit code 1 if any of `sagas` is dirty or stuck, or `more` names anything
 * else wrong (its answer is already printed).
 *
 * @since 0.1.0
 * @category exit codes
 */
export const exitIfDirty = (
  sagas: ReadonlyArray<{ readonly sagaId: string; readonly status: SagaStatus; readonly stuck?: boolean | undefined }>,
  more: ReadonlyArray<string> = []
): Effect.Effect<void, SomethingWrong> => {
  const reasons = sagas
    .flatMap((saga) =>
      isDirty(saga.status)
        ? [`saga ${saga.sagaId} is ${saga.status}`]
        : saga.stuck === true
          ? [`saga ${saga.sagaId} is stuck: no worker drives it, and no Recovery can`]
          : []
    )
    .concat(more)
  return reasons.length === 0 ? Effect.void : Effect.fail(new SomethingWrong({ reason: reasons.join(", ") }))
}
