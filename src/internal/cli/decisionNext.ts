/**
 * The `next:` lines of a step awaiting approval, one per decision, as each command is run: `approve`
 * only journals the approval (the saga goes on when it is resumed; an explicit undo's run, when
 * `compensate-effect` is asked again), while `reject` compensates the saga there and then, with the
 * undos of the tools `--register` loads (refused while one it needs is missing).
 *
 * @since 0.5.0
 */
import type * as Saga from "../../Saga.js"
import type { Origin } from "../util/origin.js"
import { shellWord } from "../util/shellWord.js"
import { undoNeeded } from "../util/undoNeeded.js"
import * as UndoRunAdvice from "../util/undoRunAdvice.js"
import { resumedBy } from "./resumer.js"

/** The steps whose undo compensating the saga would run, in the order it runs them (reverse order of execution). */
const undosToRun = (status: Saga.SagaStatus): ReadonlyArray<Saga.StepStatus> =>
  status.steps.filter(undoNeeded).reverse()

const names = (steps: ReadonlyArray<Saga.StepStatus>): string => steps.map((step) => step.stepId).join(", ")

/** The lines of a saga's step awaiting approval. */
const sagaLines = (status: Saga.SagaStatus, stepId: string, origin: Origin | undefined, at: string) => {
  const undos = undosToRun(status)
  const reject = `effect-saga reject ${shellWord(status.sagaId)} ${shellWord(stepId)}${undos.length === 0 ? "" : " --register MODULE"} --as WHO ${at}`
  return [
    `next: effect-saga approve ${shellWord(status.sagaId)} ${shellWord(stepId)} --as WHO ${at}, then resume the saga, by ${resumedBy(status.sagaId, origin)}`,
    undos.length === 0
      ? `next: or ${reject}: the saga compensates now, in that command (no executed step has an undo to run); nothing is left to resume`
      : `next: or ${reject}, MODULE exporting their tools (and the receipt keys set, if their receipts are sealed): the saga compensates now, in that command: it runs the undo of ${names(undos)}; nothing is left to resume`
  ]
}

/**
 * The lines of an explicit undo's run whose undo awaits its own approval: asked again, it runs the
 * undo, or answers the rejection; once the saga's own compensation settled the step (`saga`, as it
 * stands), nothing is left to approve: asked again, the run answers what the saga's did and
 * withdraws the request.
 */
const runLines = (status: Saga.SagaStatus, step: Saga.StepStatus, at: string, saga: Saga.SagaStatus | undefined) => {
  const own = UndoRunAdvice.sagaUndoSince(step, saga)
  return own === undefined
    ? decisionLines(status, step, at)
    : [`next: ${UndoRunAdvice.reachedBySaga(step, own, false)}`]
}

const decisionLines = (status: Saga.SagaStatus, step: Saga.StepStatus, at: string) => [
  `next: effect-saga approve ${shellWord(status.sagaId)} ${shellWord(step.stepId)} --as WHO ${at}, then ask again: ${UndoRunAdvice.askAgain(step.effectId)}`,
  `next: or effect-saga reject ${shellWord(status.sagaId)} ${shellWord(step.stepId)} --as WHO ${at} (the undo never runs, and the run ends compensation_failed: the effect stays live, and the saga's own compensation handles it as if nobody had asked)`
]

/**
 * The `next:` lines of a step awaiting approval, with the position shown (`at`): approve it (then
 * resume the saga, or ask `compensate-effect` again for an explicit undo's run), or reject it; for
 * a run, `saga` is the saga whose effect it undoes, as it stands.
 *
 * @since 0.5.0
 * @category next lines
 */
export const awaitingApproval = (
  status: Saga.SagaStatus,
  step: Saga.StepStatus,
  origin: Origin | undefined,
  at: string,
  saga?: Saga.SagaStatus | undefined
): ReadonlyArray<string> =>
  origin?._tag === "Effect" ? runLines(status, step, at, saga) : sagaLines(status, step.stepId, origin, at)
