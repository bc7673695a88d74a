/**
 * The `next:` line of an explicit undo's run (`compensate-effect`) that ended `compensation_failed`:
 * its answer is final (asking again answers the same, nothing runs), so what is left is done to the
 * effect, not the run. An answer of `failed` (the undo failed, was rejected, or was resolved not
 * applied) leaves the effect live, and the saga's own compensation handles the step as if nobody
 * had asked: it runs the undo with its own key. A `partial` answer is taken over by the saga's
 * compensation as it is (never run again), and an `unavailable` one has no undo that can run: what
 * is left live of those is undone by hand.
 *
 * @since 0.5.0
 */
import type * as Saga from "../../Saga.js"
import { undoNeeded } from "../util/undoNeeded.js"

const FINAL = "the run stays compensation_failed (its answer is final: asking again runs nothing)"

/** The saga an effect id names, with its step: `<sagaId>/<stepId>` (a step id holds no `/`). */
export const sagaIdOf = (step: Saga.StepStatus): string => step.effectId.slice(0, -(step.stepId.length + 1))

/** The line of a `failed` answer: by hand, or the saga's compensation, at the saga's own position. */
const failedLine = (step: Saga.StepStatus, saga: Saga.SagaStatus | undefined): string => {
  const own = saga?.steps.find((candidate) => candidate.stepId === step.stepId)
  if (saga === undefined || own === undefined) {
    return `next: the effect ${step.effectId} is still live: undo it by hand, at the provider; ${FINAL}`
  }
  if (!undoNeeded(own)) {
    return `next: the saga's own compensation settled ${step.stepId} since (undo ${own.undo}): effect-saga show ${saga.sagaId} says what is left; ${FINAL}`
  }
  return `next: the effect ${step.effectId} is still live: undo it by hand, at the provider, or compensate the saga, which runs its undo as if nobody had asked (key ${saga.sagaId}/${step.stepId}/undo) and undoes every other executed step too: effect-saga compensate ${saga.sagaId} --register MODULE --as WHO --revision ${saga.revision} --digest ${saga.digest}; ${FINAL}`
}

/**
 * The `next:` lines of an explicit undo's run that ended `compensation_failed`, `saga` the saga
 * whose effect it undid, as it stands now (its position is the one `compensate` takes).
 *
 * @since 0.5.0
 * @category next lines
 */
export const compensationFailed = (run: Saga.SagaStatus, saga: Saga.SagaStatus | undefined): ReadonlyArray<string> =>
  run.steps.map((step) => {
    const detail = step.undoDetail === undefined ? "" : `: ${step.undoDetail}`
    switch (step.undo) {
      case "partial":
        return `next: undo by hand, at the provider, what the undo left live${detail} (effect ${step.effectId}); the saga's own compensation takes this answer over and does not run the undo again, and ${FINAL}`
      case "unavailable":
        return `next: the effect ${step.effectId} is still live and has no undo that can run${detail}: undo it by hand, at the provider; ${FINAL}`
      default:
        return failedLine(step, saga)
    }
  })
