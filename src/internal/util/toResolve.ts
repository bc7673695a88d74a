/**
 * The steps an operator resolves, and the command that does it: one rule for `effect-saga show`'s
 * `next:` lines and the console's saga page. A step whose outcome is unknown and that may have
 * changed something stays `unknown` until it is resolved; a compensation before then cannot undo
 * it (nobody knows whether it happened) and ends the saga `compensation_failed`, so it is resolved
 * first (docs/compensation.md, "Unknown outcomes and the operator").
 *
 * @since 0.5.0
 */
import { shellWord } from "./shellWord.js"

/** What the rule reads of a step: a `Saga.StepStatus`, or the HTTP API's copy of one. */
interface Step {
  readonly stepId: string
  readonly state: string
  readonly changesNothing?: boolean | undefined
  readonly retriesByKey?: boolean | undefined
}

/**
 * The steps with no outcome journaled that may have changed something: what an operator resolves
 * (a read's unknown outcome changed nothing, and a resume runs it again).
 *
 * @since 0.5.0
 * @category resolving
 */
export const toResolve = <S extends Step>(steps: ReadonlyArray<S>): ReadonlyArray<S> =>
  steps.filter((step) => step.state === "unknown" && step.changesNothing !== true)

/**
 * The steps with no outcome journaled yet that may change something, while a live lease drives
 * their saga (`in_flight`): what an operator waits for, not resolves (not yet).
 *
 * @since 0.5.0
 * @category resolving
 */
export const toWaitFor = <S extends Step>(steps: ReadonlyArray<S>): ReadonlyArray<S> =>
  steps.filter((step) => step.state === "in_flight" && step.changesNothing !== true)

/**
 * `effect-saga resolve` for a step, at the position `at` (`--revision N --digest HASH`): as applied
 * (with its result) or not; once compensation began the undo of `earlier`, a step that ran before it
 * (`Timeline.undoneBefore`: its undo would come out of reverse order), as applied and undone by hand
 * (`--undone`) or not applied.
 *
 * @since 0.5.0
 * @category resolving
 */
export const resolveCommand = (sagaId: string, stepId: string, at: string, earlier: string | undefined): string =>
  earlier === undefined
    ? `effect-saga resolve ${shellWord(sagaId)} ${shellWord(stepId)} --applied --result JSON|--not-applied --as WHO ${at}`
    : `effect-saga resolve ${shellWord(sagaId)} ${shellWord(stepId)} --applied --undone --result JSON|--not-applied --as WHO ${at}`

/**
 * Whether a resume settles a step whose outcome is unknown (`reason`: `Timeline.unknownReasons`):
 * its tool retries by key (`retriesByKey`, as its `INTENT` says), so a resume runs the call again,
 * unless the program itself cut it, which a resume does again (docs/recovery.md).
 *
 * @since 0.5.0
 * @category resolving
 */
export const resumeSettles = (retriesByKey: boolean | undefined, reason: string | undefined): boolean =>
  retriesByKey === true && reason?.startsWith(PROGRAM_CUT) !== true

/**
 * What a resume does with a step whose outcome is unknown when it settles it (`resumeSettles`): it
 * runs the call again, which is then the provider's to dedupe. An operator may resume instead of
 * resolving.
 *
 * @since 0.5.0
 * @category resolving
 */
export const resumeRetries = (stepId: string): string =>
  `the tool of ${stepId} retries by key (its INTENT says so): a resume runs the call again with the same idempotency key, which its provider answers as it did the first time`

/**
 * The steps of `unknown` (what an operator resolves, `toResolve`) other than `stepId` that a resume
 * does not settle (`resumeSettles`, by the reasons `Timeline.unknownReasons` reads): a resume stops on
 * them again, so they are resolved before it.
 *
 * @since 0.5.0
 * @category resolving
 */
export const unsettledBesides = (
  stepId: string,
  unknown: ReadonlyArray<Step>,
  reasons: ReadonlyMap<string, string>
): ReadonlyArray<string> =>
  unknown
    .filter((step) => step.stepId !== stepId && !resumeSettles(step.retriesByKey, reasons.get(step.stepId)))
    .map((step) => step.stepId)

/**
 * When to resume a saga whose step a resume settles, given the other steps it does not settle
 * (`unsettledBesides`): at once, or once they are resolved.
 *
 * @since 0.5.0
 * @category resolving
 */
export const resumeWhen = (others: ReadonlyArray<string>): string =>
  others.length === 0
    ? "resume the saga"
    : `once ${others.join(", ")} ${others.length === 1 ? "is" : "are"} resolved (a resume stops on ${others.length === 1 ? "it" : "them"} again), resume the saga`

/**
 * What an operator resolving a step as applied must give when its tool's undo needs the provider's
 * receipt (`receiptRequired`, as its `INTENT` says), as the end of a sentence.
 *
 * @since 0.5.0
 * @category resolving
 */
export const receiptNeeded = (how: string): string =>
  `its undo needs the provider's receipt: resolved as applied without it (${how}), effect-saga can never undo the call's effect`

/**
 * The start of the reason a run journals for a call its program cut once it had started (a
 * timeout, a race, a failing sibling, an MCP client gone): the engine writes it, `show` and the
 * console read it.
 *
 * @since 0.5.0
 * @category resolving
 */
export const PROGRAM_CUT = "the program interrupted the call"

/**
 * The start of the reason a run journals for a call cut by the run's own interruption (a shutdown,
 * or its caller interrupting it) once it had started, when it then needs attention
 * (`onInterrupt: "compensate"`): the engine writes it, `show` and the console read it.
 *
 * @since 0.5.0
 * @category resolving
 */
export const RUN_CUT = "the run was interrupted (a shutdown, or its caller) while the call ran"

/**
 * Why the call of a step may still happen, which resolving it `not-applied` must rule out, given
 * the reason it is unknown (`Timeline.unknownReasons`). A call the program cut reached its provider,
 * which may still act on it, and a resume may cut it again as the program did (docs/recovery.md);
 * otherwise a lapsed lease does not prove its worker is gone (a paused process may still make or
 * finish the call once it wakes).
 *
 * @since 0.5.0
 * @category resolving
 */
export const stillPossible = (sagaId: string, stepId: string, reason: string | undefined): string =>
  reason?.startsWith(PROGRAM_CUT) === true
    ? `the program cut the call while it ran, and the provider may still act on what it received (ask it about the key ${sagaId}/${stepId}); a resume may not settle it: it stops at the step again or, for a tool that retries by key, may cut the call again`
    : reason?.startsWith(RUN_CUT) === true
      ? `the run's interruption cut the call while it ran, and the provider may still act on what it received (ask it about the key ${sagaId}/${stepId})`
      : `a worker whose lease lapsed may only be paused (its process dead or restarted, or the provider refusing the key ${sagaId}/${stepId} from now on)`

/**
 * What to make sure of before resolving a step `not-applied` (`stillPossible`), as `show` says it.
 *
 * @since 0.5.0
 * @category resolving
 */
export const beforeNotApplied = (sagaId: string, stepId: string, reason: string | undefined): string =>
  `before --not-applied, make sure the call cannot still happen: ${stillPossible(sagaId, stepId, reason)}`

/**
 * What a resume of a saga with nothing left to resolve does: it goes on, or compensates where a
 * journaled failure binds it to (`failed`: `Timeline.failureToUndo`).
 *
 * @since 0.5.0
 * @category resolving
 */
export const resumeDoes = (failed: string | undefined): string =>
  failed === undefined ? "goes on" : `compensates (step ${failed} failed, which binds it to compensate)`

/**
 * Why a saga whose program cannot replay some of its executed steps (`Timeline.notReplayable`) is
 * compensated, not resumed, as the start of a sentence that goes on with how to compensate it.
 *
 * @since 0.5.0
 * @category resolving
 */
export const compensateNotResume = (notReplayable: ReadonlyArray<string>): string => {
  const [steps, them] = notReplayable.length === 1 ? ["step", "it"] : ["steps", "them"]
  return `do not resume the saga: its program's last run ended without reaching ${steps} ${notReplayable.join(", ")} (a changed program), executed now, so a resume of that program fails with NonDeterminism at its end, writing nothing (only a release that makes ${them} again could go on); compensate it instead`
}

/**
 * Whether a resume of the saga fails, its program unable to replay a step (`notReplayable`:
 * `Timeline.notReplayable`), rather than compensates, which a journaled failure binds it to
 * (`failed`: `Timeline.failureToUndo`): the replay answers that failure before its end.
 *
 * @since 0.5.0
 * @category resolving
 */
export const cannotResume = (failed: string | undefined, notReplayable: ReadonlyArray<string>): boolean =>
  failed === undefined && notReplayable.length > 0

/**
 * What to do once a step is resolved, as the end of a sentence: resume the saga, which goes on, or
 * compensates where a journaled failure binds it to (`failed`: `Timeline.failureToUndo`, read after
 * the resolution: a step resolved not applied binds it); or compensate it, when its program cannot
 * replay a step (`cannotResume`), followed by `how` to, once the steps still unknown
 * (`unresolved`) are resolved too: a compensation cannot undo them.
 *
 * @since 0.5.0
 * @category resolving
 */
export const resumeAfterResolve = (
  failed: string | undefined,
  notReplayable: ReadonlyArray<string>,
  how: string,
  unresolved: ReadonlyArray<string> = []
): string => {
  if (cannotResume(failed, notReplayable)) {
    const compensate = `${compensateNotResume(notReplayable)} (${how})`
    if (unresolved.length === 0) return compensate
    const [it, is] = unresolved.length === 1 ? ["it", "is"] : ["them", "are"]
    return `resolve ${unresolved.join(", ")} too: ${it} ${is} unknown, and a compensation before then cannot undo ${it}; then ${compensate}`
  }
  return failed === undefined ? "resume the saga to go on" : `resume the saga: it ${resumeDoes(failed)}`
}
