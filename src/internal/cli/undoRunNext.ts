/**
 * The `next:` lines of an explicit undo's run (`compensate-effect`): once its undo's approval is
 * approved, ask again (nothing resumes a run); once it ended `compensation_failed`, what is left is
 * done to the effect, not the run (`UndoRunAdvice` says which, as the console's run page does).
 *
 * @since 0.5.0
 */
import type * as Saga from "../../Saga.js"
import type * as ApprovalExpiry from "../util/approvalExpiry.js"
import * as UndoRunAdvice from "../util/undoRunAdvice.js"

export const sagaIdOf = UndoRunAdvice.sagaIdOf

/**
 * The `next:` line of an approved step of a run awaiting approval: ask `compensate-effect` again
 * (which runs the undo, unless `saga`'s own compensation has reached the step since).
 *
 * @since 0.5.0
 * @category next lines
 */
export const approved = (
  run: Saga.SagaStatus,
  step: Saga.StepStatus,
  standing: ApprovalExpiry.Standing,
  at: string,
  saga: Saga.SagaStatus | undefined
): string => {
  const own = UndoRunAdvice.sagaUndoSince(step, saga)
  return `next: ${own === undefined ? UndoRunAdvice.approved(run.sagaId, step, standing, at) : UndoRunAdvice.reachedBySaga(step, own, true)}`
}

/**
 * The `next:` lines of an explicit undo's run that ended `compensation_failed`, `saga` the saga
 * whose effect it undid, as it stands now (its position is the one `compensate` takes).
 *
 * @since 0.5.0
 * @category next lines
 */
export const compensationFailed = (run: Saga.SagaStatus, saga: Saga.SagaStatus | undefined): ReadonlyArray<string> =>
  UndoRunAdvice.compensationFailed(run, saga).map((said) => `next: ${said}`)
