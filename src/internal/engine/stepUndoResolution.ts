/**
 * Settling the undo of a saga's own step that its compensation left not undone: the saga is
 * `compensation_failed`, the step executed, and its undo `failed`, was `partial`, answered `unknown`,
 * or could not run (`unavailable`: the report says so, nothing is journaled for the step). The
 * operator cleans up by hand, or finds at the provider that the undo did happen, and resolves the
 * step: `applied` journals `COMPENSATED` (the effect is undone now), `not-applied`, for an undo that
 * answered `unknown` only, journals `COMPENSATION_FAILED` (the effect is known live: undo it by
 * hand, then resolve it `applied`). The saga stays `compensation_failed`: a compensation again
 * reports the step from the journal, never runs its undo again, and ends the saga `compensated`
 * once nothing else is left dirty.
 */
import * as Effect from "effect/Effect"
import type { Resolution } from "../../Saga.js"
import { CommandConflict, CommandRefused } from "../../SagaError.js"
import { stepDraft } from "../journal/drafts.js"
import { isResolvedUndo, resolvedReason } from "../journal/resolvedUndo.js"
import type { JournalView, StepView } from "../journal/view.js"
import type { Writer } from "../journal/writer.js"
import { speaksOfCall as givesCall, leftNotUndone } from "../util/undoToResolve.js"
import { changedNothing, undoOf } from "./compensation.js"
import type { Prior } from "./replay.js"
import { seenByRetry } from "./replay.js"

/** What compensation left of an undo an operator may resolve. */
export type UndoLeft = "failed" | "partial" | "unknown" | "unavailable"

/** What the saga's compensation left of the step's undo, if an operator may resolve it: `undefined` otherwise. */
export const undoLeft = (view: JournalView, step: StepView): UndoLeft | undefined => {
  if (view.status !== "compensation_failed" || step.executed === undefined || changedNothing(step)) return undefined
  const outcome = undoOf(step, view.lastReport)?.outcome
  return outcome !== undefined && leftNotUndone.has(outcome) ? (outcome as UndoLeft) : undefined
}

/** The undo outcome an operator journaled for the step, if they resolved it. */
const resolvedUndo = (step: StepView) =>
  step.compensation !== undefined && isResolvedUndo(step.compensation) ? step.compensation : undefined

/** Whether the resolution speaks of the step's call: it gives a result or a receipt, or names the position a retry of its resolution names. */
const speaksOfCall = (view: JournalView, step: StepView, resolution: Resolution): boolean => {
  if (givesCall(resolution)) return true
  const resolved = step.executed?.payload.resolvedBy === undefined ? undefined : step.executed
  if (resolved === undefined || (resolution.revision === undefined && resolution.digest === undefined)) return false
  const before = view.positionBefore(resolved.seq)
  return (
    before !== undefined &&
    (resolution.revision ?? before.revision) === before.revision &&
    (resolution.digest ?? before.digest) === before.digest
  )
}

/**
 * Whether a resolution of `stepId` settles its undo: the step executed, and its undo is left not
 * undone or was resolved before. One that speaks of the step's call (a result, a receipt, the
 * position of a retry of the call's own resolution) is the call's, as it always was.
 */
export const concernsUndo = (view: JournalView, stepId: string, resolution: Resolution): boolean => {
  const step = view.steps.get(stepId)
  if (step === undefined || step.executed === undefined || speaksOfCall(view, step, resolution)) return false
  return resolvedUndo(step) !== undefined || undoLeft(view, step) !== undefined
}

/**
 * Why a resolution that gives a result or a receipt is refused for a step whose undo is left not
 * undone (`undefined` for any other step): the undo is what is left to resolve, and it takes none.
 */
export const givenResult = (view: JournalView, stepId: string): string | undefined => {
  const step = view.steps.get(stepId)
  const left = step === undefined ? undefined : undoLeft(view, step)
  return left === undefined
    ? undefined
    : `its outcome is known: it executed (EXECUTED is journaled), and its undo is left ${left}: the resolution of its undo takes no result or receipt, say whether the effect is undone now`
}

/**
 * A resolution of the step's undo replays one made before the same way by the same person (from a
 * position a retry names); `applied` after `not-applied` is a new resolution (the effect was undone
 * by hand since); any other is a conflict.
 */
export const prior = (
  writer: Writer,
  stepId: string,
  resolution: Resolution
): Effect.Effect<Prior, CommandConflict> => {
  const resolved = resolvedUndo(writer.view.steps.get(stepId)!)
  if (resolved === undefined) return Effect.succeed("new")
  const answer = resolved.payload!.reason
  if (answer === resolvedReason(resolution.outcome, resolution.by)) {
    return Effect.succeed(seenByRetry(writer, resolution, resolved) ? "replay" : "new")
  }
  if (resolved.phase === "COMPENSATION_FAILED" && resolution.outcome === "applied") return Effect.succeed("new")
  return Effect.fail(new CommandConflict({ sagaId: writer.sagaId, stepId, answer }))
}

/** Why `not-applied` says nothing new of an undo left `left`: it is known not undone already. */
const knownNotUndone = (left: Exclude<UndoLeft, "unknown">): string =>
  `its undo is known not undone (${left === "unavailable" ? "no undo could run for it: the last report says unavailable" : `it ${left === "partial" ? "was partial" : "failed"}: COMPENSATION_${left === "partial" ? "PARTIAL" : "FAILED"} is journaled`}), so there is nothing to resolve as not applied: undo it by hand, then resolve it applied`

/**
 * Journals the operator's answer for the step's undo, left not undone by the saga's compensation:
 * `COMPENSATED` (applied) or `COMPENSATION_FAILED` (not-applied, an `unknown` undo only), with the
 * reason `resolved as undone by WHO`. Nothing runs, and the saga's status stays as it is.
 */
export const resolve = (writer: Writer, stepId: string, resolution: Resolution) =>
  Effect.gen(function* () {
    const refused = (reason: string) => new CommandRefused({ sagaId: writer.sagaId, stepId, reason })
    const step = writer.view.steps.get(stepId)!
    const left = undoLeft(writer.view, step)
    if (left === undefined) {
      return yield* refused(`its undo is settled (the saga is ${writer.view.status}): there is nothing to resolve`)
    }
    if (resolution.outcome === "not-applied" && left !== "unknown") return yield* refused(knownNotUndone(left))
    const reason = resolvedReason(resolution.outcome, resolution.by)
    yield* writer.append([
      stepDraft(step, resolution.outcome === "applied" ? "COMPENSATED" : "COMPENSATION_FAILED", { reason })
    ])
  })
