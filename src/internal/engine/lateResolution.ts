/**
 * Whether a step whose outcome is unknown can still be resolved as applied: not once compensation
 * has undone a step that ran before it. Its `EXECUTED` would come last in the order compensation
 * reverses, so its undo would run after the undo of a step that ran before it: out of reverse order.
 */
import type { JournalView, StepView } from "../journal/view.js"

/** Whether a step's undo began or settled (a step passed over, `SKIPPED`, undid nothing). */
const undoBegan = (step: StepView): boolean =>
  step.compensating !== undefined || (step.compensation !== undefined && step.compensation.phase !== "SKIPPED")

/** A step executed before `step` was called (its last `INTENT`) whose undo already began, if any. */
export const undoneBefore = (view: JournalView, step: StepView): StepView | undefined => {
  const calledAt = step.intent?.seq ?? 0
  for (const stepId of view.executedOrder) {
    const earlier = view.steps.get(stepId)!
    if (earlier.executed!.seq < calledAt && undoBegan(earlier)) return earlier
  }
  return undefined
}

/** Why `resolve --applied` is refused for `step`, whose undo would come after `earlier`'s. */
export const tooLate = (sagaId: string, step: StepView, earlier: StepView): string =>
  `compensation already began the undo of step ${earlier.stepId} (${earlier.toolName}), which ran before this one: ` +
  `an undo of this step now would come after it, out of reverse order. If the call happened, undo its effect ` +
  `by hand (idempotency key ${sagaId}/${step.stepId}), then resolve it as applied and undone (undone: true; ` +
  `effect-saga resolve --applied --undone); resolve it as not applied only if it did not happen`
