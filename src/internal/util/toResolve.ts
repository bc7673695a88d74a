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
 * What to make sure of before resolving a step `not-applied`: a lapsed lease does not prove its
 * worker is gone (a paused process may still make or finish the call once it wakes, docs/recovery.md).
 *
 * @since 0.5.0
 * @category resolving
 */
export const beforeNotApplied = (sagaId: string, stepId: string): string =>
  `before --not-applied, make sure the call cannot still happen: a worker whose lease lapsed may only be paused (its process dead or restarted, or the provider refusing the key ${sagaId}/${stepId} from now on)`
