/**
 * Which saga states mean "something is wrong": the read commands exit 1 when they show one.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { SagaRecord, SagaStatus } from "../../Journal.js"
import { SomethingWrong } from "./failure.js"
import type { Origin } from "./journaled.js"
import { isLeftBehind } from "./resumer.js"

/**
 * `compensation_failed` (an undo failed, was partial or unknown: something may still be live) and
 * `needs_attention` (a step's outcome is unknown until an operator resolves it).
 *
 * @since 0.1.0
 * @category models
 */
export const isDirty = (status: SagaStatus): boolean => status === "compensation_failed" || status === "needs_attention"

/**
 * Whether a saga is stuck at `now`: left behind (`running` or `compensating` with no live lease —
 * none, or one that lapsed: its worker died —, or `suspended` by a shutdown and not taken since) and
 * started with `Saga.run`, so that no `Recovery` can resume it; it goes on only when someone runs
 * its program again or compensates it. A saga started from a definition (or an explicit undo's run)
 * in that state is between workers, not stuck: a `Recovery` pass takes it.
 *
 * @since 0.4.0
 * @category models
 */
export const isStuck = (record: SagaRecord, origin: Origin | undefined, now: number): boolean =>
  origin?._tag === "Program" && isLeftBehind(record, now)

/**
 * The line `list` prints under its table for a stuck saga (`isStuck`).
 *
 * @since 0.4.0
 * @category models
 */
export const stuckLine = (sagaId: string): string =>
  `saga ${sagaId}: stuck: no worker is driving it, and no Recovery can (it was started with Saga.run): run its program again, or compensate it (effect-saga show ${sagaId})`

/**
 * Ends the command with exit code 1 if any of `sagas` is dirty or stuck (its answer is already
 * printed).
 *
 * @since 0.1.0
 * @category exit codes
 */
export const exitIfDirty = (
  sagas: ReadonlyArray<{ readonly sagaId: string; readonly status: SagaStatus; readonly stuck?: boolean | undefined }>
): Effect.Effect<void, SomethingWrong> => {
  const reasons = sagas.flatMap((saga) =>
    isDirty(saga.status)
      ? [`saga ${saga.sagaId} is ${saga.status}`]
      : saga.stuck === true
        ? [`saga ${saga.sagaId} is stuck: no worker drives it, and no Recovery can`]
        : []
  )
  return reasons.length === 0 ? Effect.void : Effect.fail(new SomethingWrong({ reason: reasons.join(", ") }))
}
