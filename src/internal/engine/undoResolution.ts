/**
 * An operator's answer to an explicit undo's run: it settles the undo, and ends the run `completed`
 * (nothing is left to do with the run; its answer says what came of the undo).
 *
 * - A run that `needs_attention` (its undo answered `unknown`, or it answered the saga's own undo's
 *   `unknown`): the operator asks the provider, then resolves the run's step as undone (`applied`:
 *   the run answers `completed`) or not undone (`not-applied`: it answers `failed`, and the effect
 *   is still in place: the saga's own compensation undoes it, if it has not settled the step yet).
 * - A run that ended `compensation_failed` (its undo `failed`, was rejected or expired, was `partial`,
 *   or `unavailable`): the operator closes it once the effect is undone (`applied`: by hand, or by the
 *   saga's own compensation since), or keeps the effect as it is (`not-applied`: a rejected undo kept
 *   as decided; refused for a `partial` undo, which undid part of it). A run closed `not-applied` is
 *   closed again `applied` once the effect is undone by hand.
 *
 * `not-applied` is refused while the saga's own step says the effect may be undone (its undo
 * completed, runs, or is unknown). Until then the run is never finished: nothing else settles it.
 */
import * as Effect from "effect/Effect"
import type { Draft } from "../../Journal.js"
import type { Resolution } from "../../Saga.js"
import { CommandConflict, CommandRefused } from "../../SagaError.js"
import { sagaDraft, stepDraft } from "../journal/drafts.js"
import { isResolvedUndo, resolvedAnswerOf, resolvedReason } from "../journal/resolvedUndo.js"
import type { JournalView } from "../journal/view.js"
import type { Writer } from "../journal/writer.js"
import { shellWord } from "../util/shellWord.js"
import { RESOLVED_UNDO } from "../util/undoToResolve.js"
import { awaitsItsRun } from "./compensation.js"
import type { Subject } from "./explicitUndo.js"
import { answerOf } from "./explicitUndo.js"
import type { Prior } from "./replay.js"
import { seenByRetry } from "./replay.js"

/** The reason a resolved undo journals: which way, and who. */
const reasonOf = (resolution: Resolution): string => resolvedReason(resolution.outcome, resolution.by)

/** How the answer of a run an operator closed as not undone says so, before the answer it had. */
const keptReason = (reason: string, before: string | undefined): string =>
  before === undefined || before === reason ? reason : `${reason} (its answer was: ${before})`

/** The answer's detail of a run an operator's resolution ended (`completed`), if one did. */
const resolvedAnswer = (view: JournalView): string | undefined =>
  view.last === undefined ? undefined : resolvedAnswerOf(view.last)

/**
 * A resolution of the run's undo replays one made before the same way by the same person; `applied`
 * after `not-applied` is a new one (the effect was undone by hand since); another is a conflict.
 */
export const prior = (
  writer: Writer,
  stepId: string,
  resolution: Resolution
): Effect.Effect<Prior, CommandConflict> => {
  const answer = resolvedAnswer(writer.view)
  if (answer === undefined) return Effect.succeed("new")
  const reason = reasonOf(resolution)
  if (answer === reason || answer.startsWith(`${reason} (`)) {
    // From a position the run never held, or left by something else, it is new: refused as moved on.
    return Effect.succeed(seenByRetry(writer, resolution, firstOfResolution(writer, stepId)) ? "replay" : "new")
  }
  if (resolution.outcome === "applied" && answer.startsWith(`${RESOLVED_UNDO}not undone by `)) {
    return Effect.succeed("new")
  }
  return Effect.fail(new CommandConflict({ sagaId: writer.sagaId, stepId, answer }))
}

/** The first entry the resolution that ended the run appended: the step's outcome, if it journaled one. */
const firstOfResolution = (writer: Writer, stepId: string): { readonly seq: number } => {
  const last = writer.view.last!
  const own = writer.view.steps.get(stepId)?.compensation
  return own !== undefined && own.seq === last.seq - 1 && isResolvedUndo(own) ? own : last
}

/**
 * Why a run in `status` has no undo to resolve. A run still `running` whose worker stopped (a
 * crash, an interruption) gets its answer when the effect is asked for again: an undo that started
 * and has no outcome, or was journaled unknown, is answered `unknown` and not run again.
 */
const nothingToResolve = (view: JournalView, effectId: string): string =>
  view.status === "completed"
    ? "the undo completed (the run is completed): there is nothing to resolve"
    : view.status === "running"
      ? `the run has no answer to resolve yet (it is running): if its worker stopped, ask for the effect again first (effect-saga compensate-effect ${shellWord(effectId)}, or Saga.compensateEffect), which answers an undo left without an outcome unknown and runs nothing; then resolve it`
      : `the run has no answer to resolve yet (it is ${view.status})`

/**
 * Why the saga's own step says the effect may not be in place, if it does: its compensation undid
 * it since, or began to undo it and has no outcome (still running, or unknown). An `unknown` it took
 * over from this very run is the run's own, which the resolution settles.
 */
const undoneBySaga = ({ step }: Subject): string | undefined => {
  if (awaitsItsRun(step)) return undefined
  const outcome = step.compensation
  if (outcome?.phase === "COMPENSATED") {
    return `the saga's own compensation has undone the effect since (COMPENSATED${outcome.payload === null ? "" : `: ${outcome.payload.reason}`}): it is not in place; close the run applied`
  }
  if (outcome?.phase === "COMPENSATION_UNKNOWN" || (step.compensating !== undefined && outcome === undefined)) {
    return `the saga's own compensation began to undo the effect and its outcome is ${outcome === undefined ? "not journaled yet (it may still run)" : "unknown"}: it may not be in place; once the saga says how its undo ended (effect-saga show), close the run`
  }
  return undefined
}

/** Why a run that answers with the saga's own undo is not resolved `applied` before the saga's step is. */
const sagaFirst = ({ sagaId, step }: Subject): string =>
  `this run answers with the saga's own undo of ${step.stepId}, which the saga's journal does not say is undone: resolve it in the saga first (effect-saga show ${sagaId} says how), then close this run the same way`

/** Why a resolution that speaks of a call is no resolution of an undo, if it is one. */
const ofCall = (resolution: Resolution): string | undefined => {
  // `undone` is not in the type of `not-applied`: a caller without types could still send it.
  if ((resolution as { readonly undone?: unknown }).undone === true) {
    return "undone does not go with the resolution of an undo: applied alone says the effect is undone now"
  }
  if (resolution.outcome !== "applied") return undefined
  return resolution.result !== undefined || resolution.receipt !== undefined
    ? "the resolution of an undo takes no result or receipt: say whether the undo happened"
    : undefined
}

/**
 * Journals the operator's answer to the run's undo: the step's outcome (where the run journaled the
 * step) and the run's last entry, `SAGA_COMPLETED`, in one append. `subject`: the saga's step the
 * run undoes, as the saga's journal has it now.
 */
export const resolve = (writer: Writer, stepId: string, resolution: Resolution, subject: Subject) =>
  Effect.gen(function* () {
    const refused = (reason: string) => new CommandRefused({ sagaId: writer.sagaId, stepId, reason })
    const { view } = writer
    const { effectId } = subject
    if (subject.step.stepId !== stepId) return yield* refused("the run has no such step")
    const notAnUndo = ofCall(resolution)
    if (notAnUndo !== undefined) return yield* refused(notAnUndo)
    const undoneSince = resolution.outcome === "not-applied" ? undoneBySaga(subject) : undefined
    if (undoneSince !== undefined) return yield* refused(undoneSince)
    const undo = view.steps.get(stepId)
    const reason = reasonOf(resolution)
    const ending = (outcome: "completed" | "failed" | "unavailable", detail: string): Draft =>
      sagaDraft("SAGA_COMPLETED", { effectId, outcome, detail })
    // An unknown undo settled: the answer is the operator's.
    const settled = ending(resolution.outcome === "applied" ? "completed" : "failed", reason)
    if (view.status === "needs_attention" && undo?.compensation?.phase === "COMPENSATION_UNKNOWN") {
      const phase = resolution.outcome === "applied" ? "COMPENSATED" : "COMPENSATION_FAILED"
      return yield* writer.append([stepDraft(undo, phase, { reason }), settled])
    }
    const answer = answerOf(effectId, view)
    // Its answer is the saga's own undo's `unknown` (the run journaled no undo of its own).
    const borrowedUnknown = answer?._tag === "Settled" && answer.outcome === "unknown" && undo === undefined
    if (view.status === "needs_attention" && borrowedUnknown) {
      // The saga's step is resolved first; the run then says the same (not-applied is guarded above).
      if (resolution.outcome === "applied" && subject.step.compensation?.phase !== "COMPENSATED") {
        return yield* refused(sagaFirst(subject))
      }
      return yield* writer.append([settled])
    }
    const closedKept = view.status === "completed" && resolvedAnswer(view) !== undefined
    if (answer?._tag !== "Settled" || answer.outcome === "completed" || answer.outcome === "unknown") {
      return yield* refused(nothingToResolve(view, effectId))
    }
    if (view.status !== "compensation_failed" && !closedKept) return yield* refused(nothingToResolve(view, effectId))
    if (resolution.outcome === "applied") {
      const undone = undo === undefined ? [] : [stepDraft(undo, "COMPENSATED", { reason })]
      return yield* writer.append([...undone, ending("completed", reason)])
    }
    if (answer.outcome === "partial") {
      return yield* refused(
        "its undo was partial (part of the effect is undone): undo the rest by hand, then resolve it applied"
      )
    }
    yield* writer.append([ending(answer.outcome, keptReason(reason, answer.detail))])
  })
