/**
 * Irreversible calls in a saga that a failure has bound to compensate. Once a failure that taints
 * the saga is journaled (a tool's failure fed to an agent's model, or one the program caught), the
 * saga undoes what ran when its program ends, whatever else happens: an irreversible call would
 * then be the one effect nobody can take back, and an approval of it could never matter. Such a
 * call does not run and asks for no approval: it is journaled `REJECTED` by `effect-saga` with
 * `boundToUndo: true` and the failure in its reason, and a call that does not halt the saga (an
 * agent's) is answered that it did not run, on every replay. Requests filed before the failure are
 * withdrawn the same way, in the same write as the failure.
 */
import type { Draft } from "../../Journal.js"
import { stepDraft } from "../journal/drafts.js"
import type { JournalView, StepView } from "../journal/view.js"
import { undecided, WITHDRAWN_BY } from "./withdrawal.js"

/** A step as an entry names it. */
interface StepRef {
  readonly stepId: string
  readonly toolName: string
}

/** Why an irreversible call of a saga bound to compensate does not run, as journaled and told. */
export const notRunBecause = (failed: StepRef): string =>
  `not run: the saga will be undone when the run ends, because step ${failed.stepId} (${failed.toolName}) failed`

/** Whether a step was refused because the saga was bound to compensate. */
export const isBoundToUndo = (step: StepView): boolean =>
  step.refused?.phase === "REJECTED" && step.refused.payload.boundToUndo === true

/** The refusal of one call; `input` where the journal has no entry of the step yet. */
export const refusal = (step: StepRef, reason: string, input: string | null): Draft =>
  stepDraft(step, "REJECTED", { by: WITHDRAWN_BY, reason, boundToUndo: true }, input)

/** The refusals of every request of `view` still undecided, once `failed`'s failure is journaled. */
export const withdrawals = (view: JournalView, failed: StepRef): Array<Draft> => {
  const reason = notRunBecause(failed)
  return undecided(view).map((step) => refusal(step, reason, null))
}
