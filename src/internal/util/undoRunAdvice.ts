/**
 * What is left to do with the run of an explicit undo (`compensateEffect`), as `effect-saga show`'s
 * `next:` lines and the console's run page both say it. Nothing resumes a run: once its undo's
 * approval is approved, the undo runs when `compensate-effect` is asked again. A run that ended
 * `compensation_failed` has a final answer (asking again runs nothing), so what is left is done to
 * the effect: an answer of `failed` (the undo failed, was rejected, or its approval expired) leaves
 * the effect live, and the saga's own compensation handles the step as if nobody had asked (it runs
 * the undo with its own key); a `partial` answer is taken over by the saga's compensation as it is,
 * and an `unavailable` one has no undo that can run: what is left live of those is undone by hand.
 * Then an operator closes the run (`resolve`): `--applied` once the effect is undone, or
 * `--not-applied` to keep it as it is (a rejected undo, kept as decided; not for a `partial` one).
 *
 * @since 0.5.0
 */
import type * as Saga from "../../Saga.js"
import { effectIdOfRun } from "../journal/ids.js"
import * as ApprovalExpiry from "./approvalExpiry.js"
import { shellWord } from "./shellWord.js"
import { undoNeeded } from "./undoNeeded.js"
import { undoDetailSaid } from "./undoSaid.js"

/**
 * What is left to do with the effect a run's step undoes (`said`, one `compensationFailed` sentence),
 * and whether closing the run as kept (`not-applied`) is offered (`keepOffered`).
 *
 * @since 0.5.0
 * @category models
 */
export interface RunLeft {
  readonly stepId: string
  readonly said: string
  readonly keep: boolean
}

/** The step a run undoes, named by its effect id. */
type Effect = Pick<Saga.StepStatus, "stepId" | "effectId">

/**
 * The saga an effect id names, with its step: `<sagaId>/<stepId>` (a step id holds no `/`).
 *
 * @since 0.5.0
 * @category reading
 */
export const sagaIdOf = (step: Effect): string => step.effectId.slice(0, -(step.stepId.length + 1))

/**
 * `compensate-effect`, asked again: what the run of an explicit undo goes on with.
 *
 * @since 0.5.0
 * @category advice
 */
export const askAgain = (effectId: string): string =>
  `effect-saga compensate-effect ${shellWord(effectId)} --register MODULE`

/**
 * The undo the saga's own compensation journaled of the step a run's undo waits on, if it has reached
 * the step since the run asked (`started` while it runs): asked again, the run then answers what the
 * saga's did without running its own undo, and withdraws a request still undecided. Not an undo the
 * saga reported `unavailable` (it journaled nothing: the run's own undo is still to decide), nor one
 * read from a saga whose journal does not verify.
 *
 * @since 0.5.0
 * @category advice
 */
export const sagaUndoSince = (
  step: Pick<Saga.StepStatus, "stepId">,
  saga: Saga.SagaStatus | undefined
): Saga.StepStatus["undo"] => {
  if (saga === undefined || saga.tampered !== undefined) return undefined
  const own = saga.steps.find((candidate) => candidate.stepId === step.stepId)?.undo
  return own === "unavailable" ? undefined : own
}

/**
 * What is left of a run's step whose undo awaits its approval (`approved`: or was approved, and has
 * not run) once the saga's own compensation has reached the step (`own`, `sagaUndoSince`): nothing
 * to decide, nor to run; asked again, the run answers what the saga's compensation did.
 *
 * @since 0.5.0
 * @category advice
 */
export const reachedBySaga = (step: Effect, own: string, approved: boolean): string =>
  `the saga's own compensation has reached ${step.stepId} since (undo ${own}): ${
    approved
      ? "the approved undo will not run; asked again, the run answers that"
      : "nothing is left to approve; asked again, the run answers that and withdraws this request"
  }: ${askAgain(step.effectId)}`

/**
 * The step a run's approval request names, by its effect id (a run's journal id is
 * `<effect id>/compensate-effect`); `undefined` for a saga's own request.
 *
 * @since 0.5.0
 * @category reading
 */
export const runStepOf = (request: { readonly sagaId: string; readonly stepId: string }): Effect | undefined => {
  const effectId = effectIdOfRun(request.sagaId)
  return effectId === undefined ? undefined : { stepId: request.stepId, effectId }
}

/**
 * What an approved step of a run awaiting approval waits for: `compensate-effect` asked again, before
 * the approval's journaled expiry if it names one; once that passed, asked again as it is, the run
 * journals `EXPIRED` and answers `failed`, unless the approval is renewed first. `at`: the run's
 * position, as `--revision N --digest HASH`.
 *
 * @since 0.5.0
 * @category advice
 */
export const approved = (runId: string, step: Effect, standing: ApprovalExpiry.Standing, at: string): string => {
  const again = askAgain(step.effectId)
  switch (standing._tag) {
    case "Open":
      return `${step.stepId} is approved: the undo runs when it is asked for again (nothing resumes a run): ${again}`
    case "Holds":
      return `${step.stepId} is approved until ${standing.until}: the undo runs when it is asked for again before then (nothing resumes a run): ${again}`
    case "Lapsed":
      return `the approval of ${step.stepId} ${ApprovalExpiry.lapsedText(standing)}: asked for again as it is, ${ApprovalExpiry.runAskedLapsed} (the undo never runs, the effect stays live); to run the undo still, renew it first: ${ApprovalExpiry.renewCommand(runId, step.stepId)} ${at}, then ask again: ${again}`
  }
}

/**
 * How the run is closed (`resolve`), at its position: `--applied` once the effect is undone; with
 * `keep`, also `--not-applied`, which keeps the effect as it is.
 */
const closing = (run: Saga.SagaStatus, step: Effect, keep: boolean): string => {
  const resolve = (way: "applied" | "not-applied") =>
    `effect-saga resolve ${shellWord(run.sagaId)} ${shellWord(step.stepId)} --${way} --as WHO --revision ${run.revision} --digest ${run.digest}`
  const kept = keep ? `; to keep the effect as it is (as decided), close it so: ${resolve("not-applied")}` : ""
  return `asking again runs nothing, and the run stays compensation_failed until it is closed: once the effect is undone, ${resolve("applied")}${kept}`
}

/** The saga's own undo of a step that says the effect may not be in place: done, running, or unknown. */
const mayBeUndone: ReadonlySet<Saga.StepStatus["undo"]> = new Set(["completed", "started", "unknown"])

/**
 * Whether closing the run `--not-applied` (the effect kept as it is) is offered: not for a `partial`
 * answer (part of it is undone), nor while the saga's own compensation says the effect may be undone
 * (its undo completed, runs, or is unknown), as the engine refuses it then.
 *
 * @since 0.5.0
 * @category advice
 */
export const keepOffered = (step: Saga.StepStatus, saga: Saga.SagaStatus | undefined): boolean =>
  step.undo !== "partial" && !mayBeUndone.has(saga?.steps.find((candidate) => candidate.stepId === step.stepId)?.undo)

/** What is left of a `failed` answer: by hand, or the saga's compensation, at the saga's own position. */
const failedAdvice = (run: Saga.SagaStatus, step: Saga.StepStatus, saga: Saga.SagaStatus | undefined): string => {
  const own = saga?.steps.find((candidate) => candidate.stepId === step.stepId)
  const close = closing(run, step, keepOffered(step, saga))
  if (saga === undefined || own === undefined) {
    return `the effect ${step.effectId} is still live: undo it by hand, at the provider; ${close}`
  }
  if (own.undo === "started") {
    return `the saga's own compensation is undoing ${step.stepId} (undo started, no outcome journaled yet): effect-saga show ${shellWord(saga.sagaId)} says how it stands; ${close}`
  }
  if (!undoNeeded(own)) {
    return `the saga's own compensation settled ${step.stepId} since (undo ${own.undo}): effect-saga show ${shellWord(saga.sagaId)} says what is left; ${close}`
  }
  return `the effect ${step.effectId} is still live: undo it by hand, at the provider, or compensate the saga, which runs its undo as if nobody had asked (key ${saga.sagaId}/${step.stepId}/undo) and undoes every other executed step too: effect-saga compensate ${shellWord(saga.sagaId)} --register MODULE --as WHO --revision ${saga.revision} --digest ${saga.digest}; ${close}`
}

/**
 * What is left to do once an explicit undo's run ended `compensation_failed`, one sentence a step,
 * `saga` the saga whose effect it undid, as it stands now (its position is the one `compensate`
 * takes; `undefined` when it cannot be read).
 *
 * @since 0.5.0
 * @category advice
 */
export const compensationFailed = (run: Saga.SagaStatus, saga: Saga.SagaStatus | undefined): ReadonlyArray<string> =>
  run.steps.map((step) => {
    const detail = step.undoDetail === undefined ? "" : `: ${undoDetailSaid(step.undo ?? "", step.undoDetail)}`
    switch (step.undo) {
      case "partial":
        return `undo by hand, at the provider, what the undo left live${detail} (effect ${step.effectId}); the saga's own compensation takes this answer over and does not run the undo again; ${closing(run, step, false)}`
      case "unavailable":
        return `the effect ${step.effectId} is still live and has no undo that can run${detail}: undo it by hand, at the provider; ${closing(run, step, keepOffered(step, saga))}`
      default:
        return failedAdvice(run, step, saga)
    }
  })

/**
 * What a run resolved by an operator answers, as the end of a sentence: nothing is left to do with
 * it (it is `completed`); an effect not undone stays in place, for the saga's own compensation.
 *
 * @since 0.5.0
 * @category advice
 */
export const closed = (answer: string): string =>
  answer === "completed"
    ? "the run answers completed"
    : `the run answers ${answer} and is closed: the effect stays in place (the saga's own compensation runs its undo, unless it settled the step already)`
