import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { Approval, Decision } from "../../Approval.js"
import { AlreadyDecided, holdsRequest } from "../../Approval.js"
import type { Draft } from "../../Journal.js"
import { ConcurrencyConflict, JournalTampered } from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"
import * as Outcome from "../../Outcome.js"
import type { Resolution, Seen } from "../../Saga.js"
import { CommandRefused } from "../../SagaError.js"
import { copyDeparture } from "../journal/approvalCopy.js"
import { distrust, heldBy, outOfTime, requestOf, tamperedAt } from "../journal/decisions.js"
import { stepDraft } from "../journal/drafts.js"
import { stepKey } from "../journal/ids.js"
import { executed } from "../journal/payloads.js"
import { resolvedReason } from "../journal/resolvedUndo.js"
import type { StepView } from "../journal/view.js"
import { isNotStarted, isRead, isUnknown, needsReceipt } from "../journal/view.js"
import type { Writer } from "../journal/writer.js"
import { nowIso } from "../util/clock.js"
import { byteLength, encodeJson } from "../util/codec.js"
import { cutDetail } from "../util/detail.js"
import { millisOf, NO_ZONE, namesNoZone } from "../util/isoTime.js"
import { pastExpiry } from "../util/pastExpiry.js"
import * as boundToUndo from "./boundToUndo.js"
import type { Lookup } from "./compensation.js"
import { tooLate, undoneBefore } from "./lateResolution.js"
import * as Receipts from "./receipts.js"
import { DEFAULT_MAX_PAYLOAD_BYTES } from "./spec.js"

/** Refuses the command if the saga is no longer where the operator saw it. */
export const checkSeen = (writer: Writer, seen: Seen | undefined) => {
  const { position } = writer.view
  const moved =
    (seen?.revision !== undefined && seen.revision !== position.revision) ||
    (seen?.digest !== undefined && seen.digest !== position.digest)
  return moved
    ? Effect.fail(
        new ConcurrencyConflict({
          sagaId: writer.sagaId,
          expectedRevision: seen?.revision ?? position.revision,
          actualRevision: position.revision
        })
      )
    : Effect.void
}

const refused = (writer: Writer, stepId: string, reason: string) =>
  Effect.fail(new CommandRefused({ sagaId: writer.sagaId, stepId, reason }))

const stepOf = (writer: Writer, stepId: string) => {
  const step = writer.view.steps.get(stepId)
  return step === undefined ? refused(writer, stepId, "the saga has no such step") : Effect.succeed(step)
}

/** The step waiting for a decision, or why it is not (an approved step its saga's compensation overtook: that). */
const awaitingStep = (writer: Writer, stepId: string) =>
  Effect.flatMap(stepOf(writer, stepId), (step) =>
    step.awaiting !== undefined && step.refused === undefined && step.intents === 0 && writer.view.compensationStarted
      ? refused(writer, stepId, "the saga has begun to compensate")
      : step.awaiting === undefined || step.approved !== undefined || step.refused !== undefined || step.intents > 0
        ? refused(writer, stepId, "the step is not awaiting approval")
        : Effect.succeed(step)
  )

/**
 * Refuses an `expiresAt` that names no time: ISO-8601, a date (midnight UTC) or a date and time with
 * its zone. Without a zone, `Date.parse` would read it in each worker's local time. A run would
 * find an unreadable approval expired, and compensate.
 */
const readableExpiry = (writer: Writer, stepId: string, expiresAt: string | undefined) => {
  if (expiresAt === undefined) return Effect.void
  const millis = millisOf(expiresAt)
  if (millis === undefined) {
    return refused(
      writer,
      stepId,
      namesNoZone(expiresAt)
        ? `expiresAt ${JSON.stringify(expiresAt)} ${NO_ZONE}`
        : `expiresAt ${JSON.stringify(expiresAt)} is not a time (ISO-8601 with its zone, such as 2026-12-31T18:00:00Z)`
    )
  }
  // An approval already expired would only be journaled EXPIRED by the next run: the saga compensates.
  return Effect.flatMap(Clock.currentTimeMillis, (now) =>
    millis > now ? Effect.void : refused(writer, stepId, pastExpiry(expiresAt))
  )
}

/**
 * Approves a step that awaits approval: the decision is recorded by the `Approval` service and
 * journaled `APPROVED` (who, when, the input digest). Nothing runs until the saga is resumed.
 */
export const approve = (
  writer: Writer,
  approval: Approval["Type"],
  keys: KeyRing | undefined,
  stepId: string,
  options: { readonly by: string; readonly expiresAt?: string | undefined; readonly principal?: string | undefined }
) =>
  Effect.gen(function* () {
    const step = yield* awaitingStep(writer, stepId)
    yield* readableExpiry(writer, stepId, options.expiresAt)
    const { inputDigest } = step.awaiting!.payload
    const { by, expiresAt, principal } = options
    const at = yield* decide(writer, approval, keys, step, {
      checkCopy: true,
      record: (requestId) => approval.approve(requestId, { by, inputDigest, expiresAt }),
      isThisCommands: (decision) =>
        decision._tag === "Approved" &&
        decision.by === by &&
        decision.inputDigest === inputDigest &&
        decision.expiresAt === expiresAt &&
        decision.renewedBy === undefined
    })
    yield* writer.append([stepDraft(step, "APPROVED", { _tag: "Approved", by, at, inputDigest, expiresAt, principal })])
    yield* warnIfBehind(writer.sagaId, step, at)
  })

/**
 * A decision this host's clock dates before the request it answers: the clocks disagree, and an
 * approval's TTL counts from the decision's time, so it may have expired when the saga resumes.
 */
const warnIfBehind = (sagaId: string, step: StepView, at: string): Effect.Effect<void> => {
  const asked = step.awaiting!.at
  return Date.parse(at) < Date.parse(asked)
    ? Effect.logWarning(
        `effect-saga: this host's clock reads ${at}, before step ${step.stepId} of saga ${sagaId} asked for approval at ${asked} (its worker's clock): the clocks disagree, and an approval's TTL counts from ${at}, so it may have expired when the saga resumes; keep the hosts' clocks synchronised`
      )
    : Effect.void
}

/**
 * The store's record of the step's request, checked against the journal. A request the store does
 * not hold (its row was deleted) is registered again from the `AWAITING_APPROVAL` entry, as the
 * saga's next run would, and so is a decided record requested at another time (an earlier saga's
 * of the same id). With `checkCopy` (an approval), a copy that departs from the entry is refused:
 * the table was edited, and every reader marks it "do not decide". That holds for a pending copy
 * whose time of request differs too, since readers show the pending copy: a run of the saga
 * registers the journal's request over it (`holdsRequest`), and the approval can then be decided.
 */
type ApprovalFailure = Effect.Effect.Error<ReturnType<Approval["Type"]["request"]>>

const heldRequest = (writer: Writer, approval: Approval["Type"], step: StepView, checkCopy: boolean) => {
  const asked = step.awaiting!
  const requestId = stepKey(writer.sagaId, step.stepId)
  return Effect.flatMap(approval.get(requestId), (found): Effect.Effect<void, ApprovalFailure | JournalTampered> => {
    const journaled = requestOf(writer.sagaId, step)
    if (Option.isNone(found)) return Effect.asVoid(approval.request(journaled))
    const held = found.value
    const own = holdsRequest(held.request, journaled)
    const shown = own || held.decision._tag === "Pending"
    const reason =
      checkCopy && shown ? copyDeparture(asked.seq, { ...journaled, input: asked.input }, held.request) : undefined
    if (reason !== undefined) {
      return Effect.fail(new JournalTampered({ sagaId: writer.sagaId, seq: asked.seq, problem: "approval", reason }))
    }
    return own ? Effect.void : Effect.asVoid(approval.request(journaled))
  })
}

/**
 * Records a command's decision with the approval store and answers its time. The request is held
 * first (see `heldRequest`). A decision the store already holds that is exactly this command's is
 * the one to journal: the same command stopped between its two writes, and is retried to finish.
 */
const decide = (
  writer: Writer,
  approval: Approval["Type"],
  keys: KeyRing | undefined,
  step: StepView,
  command: {
    readonly checkCopy: boolean
    readonly record: (requestId: string) => ReturnType<Approval["Type"]["approve"]>
    readonly isThisCommands: (decision: Decision) => boolean
  }
) => {
  const requestId = stepKey(writer.sagaId, step.stepId)
  return heldRequest(writer, approval, step, command.checkCopy).pipe(
    Effect.zipRight(command.record(requestId)),
    Effect.zipRight(nowIso),
    Effect.catchTag("AlreadyDecided", unjournaled(writer, approval, keys, step, command.isThisCommands)),
    Effect.mapError(tamperedAt(writer.sagaId, step.awaiting!.seq))
  )
}

/**
 * The time of a decision the store holds and the journal lacks, when it is exactly the one this
 * command makes: the same command stopped between its two writes (a crash, a journal write that
 * failed), and is retried to finish. Such a decision is one this command could have made: signed
 * under the journal key when there is one, and made between the request and now; another is
 * tampering (`JournalTampered`). Another decision stays `AlreadyDecided`, saying whose it is and
 * whether a run will act on it.
 */
const unjournaled =
  (
    writer: Writer,
    approval: Approval["Type"],
    keys: KeyRing | undefined,
    step: StepView,
    isThisCommands: (decision: Decision) => boolean
  ) =>
  (error: AlreadyDecided) =>
    Effect.flatMap(
      Effect.zip(approval.get(error.requestId), Clock.currentTimeMillis),
      ([found, now]): Effect.Effect<string, AlreadyDecided | JournalTampered> => {
        if (Option.isNone(found) || found.value.decision._tag === "Pending") return Effect.fail(error)
        const decision = found.value.decision
        const request = requestOf(writer.sagaId, step)
        const distrusted = distrust(approval, keys, request, decision)
        if (!isThisCommands(decision)) {
          const detail =
            distrusted ??
            `${heldBy(request, decision)}, and the journal does not hold it yet: the saga's next run journals it`
          return Effect.fail(new AlreadyDecided({ requestId: error.requestId, decision: error.decision, detail }))
        }
        const reason = keys === undefined ? outOfTime(request, decision, now) : distrusted
        return reason === undefined
          ? Effect.succeed(decision.at)
          : Effect.fail(
              new JournalTampered({ sagaId: writer.sagaId, seq: step.awaiting!.seq, problem: "approval", reason })
            )
      }
    )

/**
 * Reads the store's record of a step's request, for its row only: a row edited so that it names no
 * decision the store wrote fails as approval tampering (`JournalTampered`), as approve and reject do.
 */
const trustedRow = (writer: Writer, approval: Approval["Type"], step: StepView) =>
  Effect.mapError(approval.get(stepKey(writer.sagaId, step.stepId)), tamperedAt(writer.sagaId, step.awaiting!.seq))

/**
 * The step whose journaled approval may be renewed, or why it may not. A step not approved yet is
 * refused so only once its approvals row is read: an edited row is reported as the tampering it is.
 */
const approvedStep = (writer: Writer, approval: Approval["Type"], stepId: string) =>
  Effect.flatMap(stepOf(writer, stepId), (step) => {
    if (step.refused !== undefined) {
      return refused(writer, stepId, `the step was refused (${step.refused.phase}): nothing can revive it`)
    }
    if (step.awaiting === undefined) return refused(writer, stepId, "the step never asked for approval")
    if (step.intents > 0) return refused(writer, stepId, "the step has already run")
    if (step.approved === undefined) {
      return Effect.zipRight(
        trustedRow(writer, approval, step),
        refused(writer, stepId, "the step is not approved yet")
      )
    }
    return writer.view.compensationStarted
      ? refused(writer, stepId, "the saga has begun to compensate")
      : Effect.succeed(step)
  })

/** What a renewal says: who, the new expiry, and optionally the input digest the operator saw. */
export interface RenewOptions {
  readonly by: string
  /** The principal who renews, as the authority knew them. */
  readonly principal?: string | undefined
  readonly expiresAt?: string | undefined
  readonly inputDigest?: string | undefined
}

/**
 * Renews the journaled approval of a step that has not run: the `Approval` service records it, and
 * a new `APPROVED` entry (the approval with the new expiry, `renewedBy`, `renewedAt`) is journaled.
 * The digest is the one journaled; an operator who names another one is refused.
 */
export const renew = (writer: Writer, approval: Approval["Type"], stepId: string, options: RenewOptions) =>
  Effect.gen(function* () {
    const step = yield* approvedStep(writer, approval, stepId)
    yield* readableExpiry(writer, stepId, options.expiresAt)
    const approved = step.approved!.payload
    const { inputDigest } = step.awaiting!.payload
    if (approved.inputDigest !== inputDigest) {
      return yield* refused(writer, stepId, "the journaled approval does not name the input that awaits it")
    }
    if (options.inputDigest !== undefined && options.inputDigest !== inputDigest) {
      return yield* refused(writer, stepId, "the renewal names another input digest than the one approved")
    }
    const renewal = { by: options.by, inputDigest, expiresAt: options.expiresAt }
    yield* Effect.mapError(
      approval.renew(stepKey(writer.sagaId, stepId), renewal),
      tamperedAt(writer.sagaId, step.awaiting!.seq)
    )
    // The decision keeps its fields where the journal holds them (a principal it names stays in place).
    const { expiresAt: _expiresAt, renewedBy: _renewedBy, renewedAt: _renewedAt, ...decision } = approved
    const renewedAt = yield* nowIso
    yield* writer.append([
      stepDraft(step, "APPROVED", {
        ...decision,
        expiresAt: options.expiresAt,
        renewedBy: options.by,
        renewedAt,
        ...principalOf(options)
      })
    ])
  })

/**
 * Rejects a step that awaits approval: recorded by the `Approval` service and journaled `REJECTED`,
 * in one append with `closing` (what the rejection starts: the saga's compensation, or an undo
 * run's answer). Written apart, the saga would sit between the two appends awaiting approval with
 * no lease (a lease is kept only while a saga is active), for another worker to take.
 */
export const reject = (
  writer: Writer,
  approval: Approval["Type"],
  keys: KeyRing | undefined,
  stepId: string,
  options: { readonly by: string; readonly reason: string; readonly principal?: string | undefined },
  closing: Draft
) =>
  Effect.gen(function* () {
    const unfit = reasonProblem(options.reason)
    if (unfit !== undefined) return yield* refused(writer, stepId, unfit)
    const step = yield* awaitingStep(writer, stepId)
    const { by, principal, reason } = options
    const at = yield* decide(writer, approval, keys, step, {
      checkCopy: false,
      record: (requestId) => approval.reject(requestId, { by, reason }),
      isThisCommands: (decision) => decision._tag === "Rejected" && decision.by === by && decision.reason === reason
    })
    yield* writer.append([
      stepDraft(step, "REJECTED", { _tag: "Rejected", by, at, reason: rejectionReason(options), principal }),
      closing
    ])
  })

/** The most UTF-8 bytes a rejection's reason may hold: it is journaled, and read by people. */
export const MAX_REJECTION_REASON_BYTES = 4096

/** Why `reason` cannot be a rejection's, if it cannot: blank, or over `MAX_REJECTION_REASON_BYTES`. */
const reasonProblem = (reason: string): string | undefined => {
  if (reason.trim() === "") return "a rejection needs a reason, and this one is blank: nothing was written"
  const bytes = byteLength(reason)
  return bytes > MAX_REJECTION_REASON_BYTES
    ? `the reason is ${bytes} UTF-8 bytes, over the limit of ${MAX_REJECTION_REASON_BYTES}: give a shorter one (nothing was written)`
    : undefined
}

/** The reason a rejection journals: who rejected, and why. */
export const rejectionReason = (options: { readonly by: string; readonly reason: string }): string =>
  `rejected by ${options.by}: ${options.reason}`

/** The principal a renewal was carried out for; none named, the one the approval names stays. */
const principalOf = (options: { readonly principal?: string | undefined }) =>
  options.principal === undefined ? {} : { principal: options.principal }

/**
 * What a resolution's result and receipt may weigh: the tool's `maxPayloadBytes`, or, where the tool
 * is not registered to say its own, the default one (nothing is journaled unbounded).
 */
const payloadCap = (tool: { readonly spec: { readonly maxPayloadBytes: number } } | undefined) =>
  tool === undefined
    ? {
        bytes: DEFAULT_MAX_PAYLOAD_BYTES,
        named: `the default maxPayloadBytes of ${DEFAULT_MAX_PAYLOAD_BYTES} (the tool is not registered in this process to name its own: resolve where it is)`
      }
    : { bytes: tool.spec.maxPayloadBytes, named: `the tool's maxPayloadBytes of ${tool.spec.maxPayloadBytes}` }

/** Why a step has nothing to resolve: what the journal already says of it. */
const knownOutcome = (step: StepView): string =>
  step.executed !== undefined
    ? "its outcome is known: it executed (EXECUTED is journaled), so there is nothing to resolve"
    : step.failed !== undefined
      ? "its outcome is known: it failed (FAILED is journaled), so there is nothing to resolve"
      : isNotStarted(step)
        ? "its outcome is known: it never started (the run that called it was interrupted before its call ran, and journaled so), so there is nothing to resolve; a resume calls it"
        : "it has not been called (no INTENT is journaled), so there is nothing to resolve"

/**
 * Settles a step whose outcome is unknown: `applied` journals `EXECUTED` (with the result the
 * operator found, checked against the tool's schema when the tool is known here), `not-applied`
 * journals `FAILED`, which binds the saga to compensate: every request still waiting for a decision
 * is withdrawn in the same write (`boundToUndo.ts`). The next resume goes on, or compensates. `applied` is refused once compensation
 * undid a step that ran before this one (`lateResolution.ts`): its undo would come out of reverse
 * order. An `applied` resolution's `receipt` is journaled as a tool's own is (sealed under
 * `receiptKeys`); a tool that declares `receiptRequired`, resolved without one, is logged as a
 * warning: its effect can never be undone.
 */
export const resolve = (
  writer: Writer,
  lookup: Lookup,
  stepId: string,
  resolution: Resolution & { readonly principal?: string | undefined },
  receiptKeys: KeyRing | undefined,
  withdraw: (requestId: string, reason: string) => Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const step = yield* stepOf(writer, stepId)
    if (!isUnknown(step)) return yield* refused(writer, stepId, knownOutcome(step))
    const { by: resolvedBy, principal } = resolution
    // Not in the type: a caller without types (or with a cast) could still say so.
    if (resolution.outcome === "not-applied" && (resolution as { readonly undone?: unknown }).undone === true) {
      return yield* refused(writer, stepId, "undone goes with applied only: the call happened, and was undone by hand")
    }
    if (resolution.outcome === "not-applied") {
      const error = Outcome.failed(`resolved as not applied by ${resolvedBy}`)
      // A failure of a call whose tool leaves its failures to the program binds nothing, as the run's own.
      const handled = step.intent?.payload?.onFailure === "continue"
      // Else the failure binds the saga to compensate: a request still waiting could never matter now.
      const withdrawn = handled ? [] : boundToUndo.withdrawals(writer.view, step)
      yield* writer.append([
        stepDraft(step, "FAILED", {
          description: error.message,
          defect: false,
          ...(handled ? { taints: false } : {}),
          error: { _tag: error._tag, reason: error.reason },
          resolvedBy,
          principal
        }),
        ...withdrawn
      ])
      const reason = boundToUndo.notRunBecause(step)
      return yield* Effect.forEach(withdrawn, (draft) => withdraw(stepKey(writer.sagaId, draft.stepId!), reason), {
        discard: true
      })
    }
    const undoneByHand = resolution.undone === true
    if (undoneByHand && !writer.view.compensationStarted) {
      return yield* refused(writer, stepId, NOT_COMPENSATING)
    }
    // Undone by hand, nothing is left to undo: no undo can come out of reverse order.
    const earlier = undoneByHand ? undefined : undoneBefore(writer.view, step)
    if (earlier !== undefined) return yield* refused(writer, stepId, tooLate(writer.sagaId, step, earlier))
    const tool = lookup(step)
    const result =
      tool === undefined
        ? Either.right(JSON.stringify(resolution.result ?? null))
        : encodeJson(tool.spec.success, resolution.result)
    if (Either.isLeft(result)) {
      // The schema's message quotes the value given, which may be megabytes: cut, as a journaled reason is.
      return yield* refused(
        writer,
        stepId,
        `the result does not fit the tool's success schema: ${cutDetail(result.left)}`
      )
    }
    const cap = payloadCap(tool)
    const bytes = byteLength(result.right)
    if (bytes > cap.bytes)
      return yield* refused(writer, stepId, `the result is ${bytes} bytes encoded, over ${cap.named}`)
    const given = resolution.receipt
    if (given === undefined && (tool?.spec.receiptRequired === true || needsReceipt(step)) && !undoneByHand) {
      yield* Effect.logWarning(
        `effect-saga: step ${stepId} of saga ${writer.sagaId} was resolved as applied without a receipt, but tool ${step.toolName} declares receiptRequired: its effect can never be undone by effect-saga`
      )
    }
    const receiptText = given === undefined ? undefined : Receipts.textOf(given)
    if (receiptText === "") {
      return yield* refused(writer, stepId, "the receipt is empty: give the provider's receipt, or none")
    }
    // Capped as a tool's own receipt is, measured as given (never repeated in the reason).
    if (receiptText !== undefined && byteLength(receiptText) > cap.bytes) {
      return yield* refused(writer, stepId, `the receipt is ${byteLength(receiptText)} bytes, over ${cap.named}`)
    }
    const receipt =
      receiptText === undefined ? undefined : yield* Receipts.journaled(receiptKeys, writer.sagaId, stepId, receiptText)
    // A read stays one once resolved: compensation passes over it as over any read that executed.
    const changesNothing = isRead(step) ? true : undefined
    const payload = executed({ result: JSON.parse(result.right), receipt, changesNothing, resolvedBy, principal })
    const undone =
      undoneByHand && changesNothing !== true
        ? [stepDraft(step, "COMPENSATED", { reason: resolvedReason("applied", resolvedBy) })]
        : []
    yield* writer.append([stepDraft(step, "EXECUTED", payload), ...undone])
  })

/** Why `undone` is refused before the saga began to compensate: its undo is still to come, in order. */
const NOT_COMPENSATING =
  "the saga has not begun to compensate: undone applies only once it has (a call it passed over, undone by hand); resolve it applied without undone, and its undo runs in order when the saga compensates"
