import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { Expected } from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"
import type { Resolution, Seen } from "../../Saga.js"
import { CommandConflict } from "../../SagaError.js"
import { isResolvedUndo } from "../journal/resolvedUndo.js"
import type { StepView } from "../journal/view.js"
import type { Writer } from "../journal/writer.js"
import { encodeJson } from "../util/codec.js"
import { isBoundToUndo } from "./boundToUndo.js"
import type { Lookup } from "./compensation.js"
import * as Receipts from "./receipts.js"
import { isWithdrawn } from "./withdrawal.js"

/**
 * Whether an operator's command was already processed. `"replay"`: the same command answered
 * before, and its first answer stands (nothing runs, nothing is written); `"new"`: it was not;
 * a different terminal answer already given is a `CommandConflict`.
 */
export type Prior = "new" | "replay"

const conflict = (writer: Writer, stepId: string, answer: string) =>
  Effect.fail(new CommandConflict({ sagaId: writer.sagaId, stepId, answer }))

/**
 * The terminal decision a step already has, as a conflict names it: an approval a refusal
 * overtook names both (`approved by alice, then refused: its approval expired`).
 */
const decisionOf = (step: StepView): string | undefined => {
  const refusal = refusalOf(step)
  if (step.firstApproved === undefined) return refusal
  const approved = `approved by ${step.firstApproved.payload.by}`
  return refusal === undefined ? approved : `${approved}, then ${refusal}`
}

/** The refusal a step's journal holds, as a conflict names it. */
const refusalOf = (step: StepView): string | undefined => {
  if (step.refused === undefined) return undefined
  if (step.refused.phase === "EXPIRED") return "refused: its approval expired"
  const refusal = step.refused.payload
  if (isBoundToUndo(step)) return `refused (${refusal.reason})`
  return isWithdrawn(step) ? refusal.reason : `rejected by ${refusal.by ?? "a run"}`
}

/**
 * Whether the step's journaled approval stands no more, though no refusal follows it: its saga
 * began to compensate before the step ran. A command on it is new, and refused by its own checks
 * (`the saga has begun to compensate`), never answered as a retry.
 */
const overtakenByCompensation = (writer: Writer, step: StepView): boolean =>
  step.approved !== undefined && step.refused === undefined && step.intents === 0 && writer.view.compensationStarted

/**
 * Whether a command that repeats `decision` names a position a retry of it can name: none, the one
 * just before `decision` (where the command that wrote it found the saga), or where the saga is
 * now. Any other is a position the saga moved on from: the command is not a retry, and is refused
 * as a new one is (`ConcurrencyConflict`).
 */
export const seenByRetry = (writer: Writer, seen: Seen, decision: { readonly seq: number }): boolean => {
  if (seen.revision === undefined && seen.digest === undefined) return true
  const at = (position: Expected | undefined) =>
    position !== undefined &&
    (seen.revision ?? position.revision) === position.revision &&
    (seen.digest ?? position.digest) === position.digest
  return at(writer.view.position) || at(writer.view.positionBefore(decision.seq))
}

/**
 * An `approve` replays the first when the step was approved by the same person with the same expiry,
 * from a position a retry names (`seenByRetry`), and that approval still stands; from another
 * position, it is new (and refused: moved on). An approval a refusal overtook (`EXPIRED`) is a
 * conflict for anyone; one its saga's compensation overtook is new, and refused.
 */
export const approval = (
  writer: Writer,
  stepId: string,
  options: Seen & { readonly by: string; readonly expiresAt?: string | undefined }
): Effect.Effect<Prior, CommandConflict> => {
  const step = writer.view.steps.get(stepId)
  const decided = step === undefined ? undefined : decisionOf(step)
  if (step === undefined || decided === undefined || overtakenByCompensation(writer, step)) return Effect.succeed("new")
  const first = step.firstApproved
  const same = first?.payload.by === options.by && first.payload.expiresAt === options.expiresAt
  if (first === undefined || step.refused !== undefined || !same) return conflict(writer, stepId, decided)
  return Effect.succeed(seenByRetry(writer, options, first) ? "replay" : "new")
}

/**
 * A renewal replays the last one when the step's approval was last renewed by the same person with
 * the same expiry (and, if the operator names one, the same input digest), and still stands: asked
 * again, it writes no second `APPROVED`. Anything else is a new renewal, which the step's state may
 * refuse (`the step was refused (EXPIRED): nothing can revive it`).
 */
export const renewal = (
  writer: Writer,
  stepId: string,
  options: Seen & {
    readonly by: string
    readonly expiresAt?: string | undefined
    readonly inputDigest?: string | undefined
  }
): Effect.Effect<Prior> => {
  const step = writer.view.steps.get(stepId)
  const approved = step?.approved
  const same =
    approved !== undefined &&
    step!.refused === undefined &&
    !overtakenByCompensation(writer, step!) &&
    approved.payload.renewedBy === options.by &&
    approved.payload.expiresAt === options.expiresAt &&
    (options.inputDigest === undefined || options.inputDigest === approved.payload.inputDigest) &&
    seenByRetry(writer, options, approved)
  return Effect.succeed(same ? "replay" : "new")
}

/** A `reject` replays the first when the step was rejected by the same person for the same reason. */
export const rejection = (
  writer: Writer,
  stepId: string,
  options: Seen & { readonly by: string; readonly reason: string }
): Effect.Effect<Prior, CommandConflict> => {
  const step = writer.view.steps.get(stepId)
  const decided = step === undefined ? undefined : decisionOf(step)
  if (step === undefined || decided === undefined) return Effect.succeed("new")
  const rejected = step.refused?.phase === "REJECTED" ? step.refused : undefined
  const same =
    rejected?.payload.by === options.by && rejected.payload.reason === `rejected by ${options.by}: ${options.reason}`
  if (!same) return conflict(writer, stepId, decided)
  return Effect.succeed(seenByRetry(writer, options, rejected) ? "replay" : "new")
}

/** A `resolve` replays the first when the step was resolved by the same person, the same way. */
export const resolution = (
  writer: Writer,
  lookup: Lookup,
  stepId: string,
  resolution: Resolution,
  receiptKeys: KeyRing | undefined
): Effect.Effect<Prior, CommandConflict> => {
  const step = writer.view.steps.get(stepId)
  const resolved = step?.executed ?? step?.failed
  const by = resolved?.payload.resolvedBy
  if (step === undefined || resolved === undefined || by === undefined) return Effect.succeed("new")
  const outcome = step.executed !== undefined ? "applied" : "not-applied"
  const undone = outcome === "applied" && undoneWithIt(step)
  const answer = `resolved as ${outcome}${undone ? " and undone by hand" : ""} by ${by}`
  if (resolution.outcome !== outcome || resolution.by !== by) return conflict(writer, stepId, answer)
  if (resolution.outcome === "applied" && (resolution.undone === true) !== undone) {
    return conflict(writer, stepId, answer)
  }
  if (!seenByRetry(writer, resolution, resolved)) return Effect.succeed("new")
  if (resolution.outcome === "not-applied") return Effect.succeed("replay")
  const tool = lookup(step)
  const encoded =
    tool === undefined
      ? Either.right(JSON.stringify(resolution.result ?? null))
      : encodeJson(tool.spec.success, resolution.result)
  if (Either.isLeft(encoded) || encoded.right !== JSON.stringify(step.executed?.payload.result ?? null)) {
    return conflict(writer, stepId, answer)
  }
  const receipt = sameReceipt(receiptKeys, writer.sagaId, step, resolution.receipt)
  if (typeof receipt === "string") {
    return conflict(
      writer,
      stepId,
      `${answer}, but ${receipt}: this process cannot tell whether it is the same receipt`
    )
  }
  return receipt ? Effect.succeed("replay") : conflict(writer, stepId, answer)
}

/**
 * Whether the step's resolution as applied journaled its undo with it (`undone`: undone by hand):
 * the resolved undo is the next entry, in the same append (the same time).
 */
const undoneWithIt = (step: StepView): boolean =>
  step.compensation !== undefined &&
  step.compensation.seq === step.executed!.seq + 1 &&
  step.compensation.at === step.executed!.at &&
  isResolvedUndo(step.compensation)

/**
 * Whether a resolution gives the receipt the step's resolution journaled (none, or the same text),
 * or why this process cannot tell (the journaled receipt does not open here).
 */
const sameReceipt = (
  keys: KeyRing | undefined,
  sagaId: string,
  step: StepView,
  given: Redacted.Redacted<string> | undefined
): boolean | string => {
  const journaled = step.executed?.payload.receipt
  if (!Receipts.isSet(journaled) || given === undefined) return !Receipts.isSet(journaled) && given === undefined
  const opened = Receipts.forUndo(keys, sagaId, step.stepId, journaled)
  if (Either.isLeft(opened)) return opened.left
  return Option.isSome(opened.right) && Redacted.value(opened.right.value) === Receipts.textOf(given)
}

/** Why an operator's `compensate` journals that compensation began (`SAGA_COMPENSATING`'s cause). */
export const OPERATOR_COMPENSATION = "an operator asked for compensation"

/**
 * A `compensate` replays the one that began the saga's compensation where this one saw the saga:
 * its `revision` and `digest` are the position just before an operator's `SAGA_COMPENSATING`. A
 * compensate has nothing else to tell two apart, so that one was this command. Its answer is the
 * compensation as it stands: reported from the journal, finished first if something is left (as a
 * rejection's replay finishes its compensation). Any other position is new: refused if the saga
 * moved on from it; none at all finds the saga already so.
 */
export const compensation = (writer: Writer, seen: Seen | undefined): Effect.Effect<Prior> => {
  const { compensationCause, compensationFrom: from } = writer.view
  const named = seen !== undefined && (seen.revision !== undefined || seen.digest !== undefined)
  const same =
    named &&
    from !== undefined &&
    compensationCause === OPERATOR_COMPENSATION &&
    (seen.revision ?? from.revision) === from.revision &&
    (seen.digest ?? from.digest) === from.digest
  return Effect.succeed(same ? "replay" : "new")
}
