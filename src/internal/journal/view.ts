import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { CompensationReport } from "../../CompensationReport.js"
import type { Entry, Expected, JournalCorrupted, SagaStatus } from "../../Journal.js"
import { empty, statusAfter } from "../../Journal.js"
import { effectIdOfRun } from "./ids.js"
import type { Recorded, UndoPhase } from "./payloads.js"
import { decodeEntry, notStartedIn } from "./payloads.js"
import { isResolvedUndo, resolvedAnswerOf } from "./resolvedUndo.js"

/** What the journal says about one step. */
export interface StepView {
  readonly stepId: string
  readonly toolName: string
  input: string | null
  intents: number
  /** The last `INTENT` entry: when the step's last attempt began. */
  intent: Recorded<"INTENT"> | undefined
  executed: Recorded<"EXECUTED"> | undefined
  failed: Recorded<"FAILED"> | undefined
  awaiting: Recorded<"AWAITING_APPROVAL"> | undefined
  approved: Recorded<"APPROVED"> | undefined
  /** The first `APPROVED` entry: the decision itself (later ones are renewals). */
  firstApproved: Recorded<"APPROVED"> | undefined
  refused: Recorded<"REJECTED" | "EXPIRED"> | undefined
  /** It awaited approval without halting the saga: the program went on (`ApprovalPending`). */
  deferred: boolean
  /** It ran where the program called it (an `INTENT` that does not say it ran deferred). */
  ranWhereCalled: boolean
  compensating: Recorded<"COMPENSATING"> | undefined
  compensation: Recorded<UndoPhase> | undefined
  /**
   * A saga-level entry after its last `INTENT` says that the run was interrupted with none of its
   * calls in flight (`notStarted`: it never started, or every attempt failed): it did not run.
   */
  notStarted: boolean
}

/** A step whose last `INTENT` has no outcome after it and was journaled as not started: it did not run. */
export const isNotStarted = (step: StepView): boolean =>
  step.notStarted && step.intents > 0 && step.executed === undefined && step.failed === undefined

/** A step whose `INTENT` has no outcome after it, unless the saga journaled that it never started. */
export const isUnknown = (step: StepView): boolean =>
  step.intents > 0 && step.executed === undefined && step.failed === undefined && !step.notStarted

/**
 * A step journaled as changing nothing outside (a read): its last `INTENT` or its `EXECUTED` says
 * so. A journal written before an `INTENT` said it knows a read only once it executed.
 */
export const isRead = (step: StepView): boolean =>
  step.intent?.payload?.changesNothing === true || step.executed?.payload.changesNothing === true

/**
 * A step of a saga (not of an explicit undo's run, whose approvals are its undo's) that waits, or
 * waited before it ran, for an approval: only an irreversible tool's step does, so its tool had no
 * undo when it ran. Not one whose request comes after its `INTENT`, or whose `INTENT` says its tool
 * declared an undo: no run journals either, and the evidence against it is not overruled.
 */
export const isIrreversible = (sagaId: string, step: StepView): boolean =>
  step.awaiting !== undefined &&
  effectIdOfRun(sagaId) === undefined &&
  (step.intent === undefined || (step.awaiting.seq < step.intent.seq && step.intent.payload?.undo !== true))

/** A step whose tool declared `retryMode: "idempotency-key"`, as its last `INTENT` says (since 0.5.0). */
export const retriesByKey = (step: StepView): boolean => step.intent?.payload?.retriesByKey === true

/** A step whose tool's undo needs the provider's receipt, as its last `INTENT` says (since 0.5.0). */
export const needsReceipt = (step: StepView): boolean => step.intent?.payload?.receiptRequired === true

/**
 * A read whose outcome is unknown: it changed nothing whether it ran or not, so it holds nothing
 * up. Compensation passes over it (journaled `SKIPPED`) and a resume runs it again.
 */
export const isUnknownRead = (step: StepView): boolean => isUnknown(step) && isRead(step)

/** A step whose outcome is unknown and may have changed something: what an operator must settle. */
export const isUnsettled = (step: StepView): boolean => isUnknown(step) && !isRead(step)

/**
 * A call that answered `ApprovalPending` where the program made it: a replay answers the same
 * there, whatever happened to it since (it runs, if it runs, where the program settles it).
 */
export const answersPending = (step: StepView): boolean => step.deferred && !step.ranWhereCalled

/** An entry that decides a step: an approval, a refusal, or an outcome (of its call or its undo) an operator resolved. */
const isDecision = (entry: Recorded): boolean => {
  switch (entry.phase) {
    case "APPROVED":
    case "REJECTED":
    case "EXPIRED":
      return true
    case "EXECUTED":
    case "FAILED":
      return entry.payload.resolvedBy !== undefined
    case "COMPENSATED":
    case "COMPENSATION_FAILED":
      return isResolvedUndo(entry)
    case "SAGA_COMPLETED":
      return resolvedAnswerOf(entry) !== undefined
    default:
      return false
  }
}

/** A step as the view first meets it, before its entry is applied (a class: see the NOTE on V8's pretenuring in engine/run.ts). */
class UnseenStep implements StepView {
  intents = 0
  intent: StepView["intent"] = undefined
  executed: StepView["executed"] = undefined
  failed: StepView["failed"] = undefined
  awaiting: StepView["awaiting"] = undefined
  approved: StepView["approved"] = undefined
  firstApproved: StepView["firstApproved"] = undefined
  refused: StepView["refused"] = undefined
  deferred = false
  ranWhereCalled = false
  compensating: StepView["compensating"] = undefined
  compensation: StepView["compensation"] = undefined
  notStarted = false
  constructor(
    readonly stepId: string,
    readonly toolName: string,
    public input: string | null
  ) {}
}

/** A saga's journal folded into the state a run needs, kept current as entries are appended. */
export class JournalView {
  readonly steps = new Map<string, StepView>()
  /** Step ids in the order their `EXECUTED` entries were written: the order compensation reverses. */
  // Not `[]`: see the NOTE on V8's pretenuring in engine/run.ts.
  readonly executedOrder: Array<string> = Array.of()
  position: Expected = empty
  status: SagaStatus = "running"
  exists = false
  compensationStarted = false
  /** The last entry. */
  last: Recorded | undefined = undefined
  /** The saga's `SAGA_STARTED` entry. */
  started: Recorded<"SAGA_STARTED"> | undefined = undefined
  /** Why compensation started, as journaled. */
  compensationCause = ""
  /** Where the saga stood when compensation started: the position just before `SAGA_COMPENSATING`. */
  compensationFrom: Expected | undefined = undefined
  /** The report of the last `SAGA_COMPENSATED` or `SAGA_COMPENSATION_FAILED` (a saga's, not an explicit undo's answer). */
  lastReport: CompensationReport | undefined = undefined
  /** Where the saga stood just before each decision entry (`positionBefore`), by its seq: made for the first. */
  private decisionsFrom: Map<number, Expected> | undefined = undefined
  /** Why a step is unknown, as the last `SAGA_NEEDS_ATTENTION` after its `INTENT` says: made for the first. */
  private unknownBecause: Map<string, string> | undefined = undefined
  /** The steps the last `SAGA_NEEDS_ATTENTION` after their `INTENT` journals `unreached`: made for the first. */
  private unreachedSteps: Set<string> | undefined = undefined

  constructor(entries: ReadonlyArray<Recorded> = []) {
    for (const entry of entries) this.apply(entry)
  }

  apply(entry: Recorded): void {
    this.exists = true
    this.last = entry
    if (entry.phase === "SAGA_COMPENSATING") this.compensationFrom = this.position
    if (isDecision(entry)) this.decidedFrom(entry.seq, this.position)
    this.position = { revision: entry.seq, digest: entry.hash }
    this.status = statusAfter(this.status, [entry])
    if (entry.phase === "SAGA_STARTED") this.started = entry
    if (entry.phase === "SAGA_COMPENSATING") {
      this.compensationStarted = true
      this.compensationCause = entry.payload.cause
    }
    if (entry.stepId === null) {
      if (
        (entry.phase === "SAGA_COMPENSATED" || entry.phase === "SAGA_COMPENSATION_FAILED") &&
        "undone" in entry.payload
      ) {
        this.lastReport = entry.payload
      }
      const notStarted = notStartedIn(entry)
      if (notStarted !== undefined) this.markNotStarted(notStarted)
      if (entry.phase === "SAGA_NEEDS_ATTENTION" && "unknown" in entry.payload) this.unknownFor(entry.payload.unknown)
      return
    }
    const step = this.stepOf(entry)
    switch (entry.phase) {
      case "INTENT":
        this.unknownBecause?.delete(entry.stepId)
        this.unreachedSteps?.delete(entry.stepId)
        step.intents++
        step.notStarted = false
        step.intent = entry
        step.input = entry.input
        if (!step.deferred || entry.payload?.deferred !== true) step.ranWhereCalled = true
        break
      case "EXECUTED":
        step.executed = entry
        this.executedOrder.push(entry.stepId)
        break
      case "FAILED":
        step.failed = entry
        break
      case "AWAITING_APPROVAL":
        step.awaiting = entry
        step.input = entry.input
        step.deferred = entry.payload.deferred === true
        break
      case "APPROVED":
        step.approved = entry
        step.firstApproved ??= entry
        break
      case "REJECTED":
      case "EXPIRED":
        step.refused = entry
        break
      case "COMPENSATING":
        step.compensating = entry
        break
      case "COMPENSATED":
      case "COMPENSATION_PARTIAL":
      case "COMPENSATION_FAILED":
      case "COMPENSATION_UNKNOWN":
      case "SKIPPED":
        step.compensation = entry
    }
  }

  private decidedFrom(seq: number, position: Expected): void {
    this.decisionsFrom ??= new Map()
    this.decisionsFrom.set(seq, position)
  }

  /**
   * Where the saga stood just before the entry at `seq`, if it is a decision: an `APPROVED`,
   * `REJECTED` or `EXPIRED`, or an outcome (of a call or an undo) an operator resolved (what a
   * command retried names).
   */
  positionBefore(seq: number): Expected | undefined {
    return this.decisionsFrom?.get(seq)
  }

  private unknownFor(
    steps: ReadonlyArray<{ readonly stepId: string; readonly reason: string; readonly unreached?: true | undefined }>
  ): void {
    this.unknownBecause ??= new Map()
    for (const step of steps) {
      this.unknownBecause.set(step.stepId, step.reason)
      if (step.unreached !== true) this.unreachedSteps?.delete(step.stepId)
      else {
        this.unreachedSteps ??= new Set()
        this.unreachedSteps.add(step.stepId)
      }
    }
  }

  /**
   * Whether the run that last stopped on the step (`SAGA_NEEDS_ATTENTION`, since its last `INTENT`)
   * journaled that its program succeeded without reaching it, whatever the step's outcome since (an
   * operator's resolution writes none of its own `INTENT`s).
   */
  unreached(stepId: string): boolean {
    return this.unreachedSteps?.has(stepId) === true
  }

  /**
   * The steps the program's last run succeeded without reaching (`unreached`) that are now executed
   * (resolved as applied): that program cannot replay them, so a resume of it fails with
   * `NonDeterminism` at its end.
   */
  notReplayable(): ReadonlyArray<string> {
    if (this.unreachedSteps === undefined) return []
    return Array.from(this.unreachedSteps).filter((stepId) => this.steps.get(stepId)?.executed !== undefined)
  }

  /**
   * Why the step's outcome is unknown, as the saga journaled when it stopped on it (a timeout, a
   * defect, `Outcome.unknown`'s words): none if it is not unknown (it has an outcome, or did not
   * start) or the saga has not stopped on it (its worker died).
   */
  unknownReason(stepId: string): string | undefined {
    const step = this.steps.get(stepId)
    return step !== undefined && isUnknown(step) ? this.unknownBecause?.get(stepId) : undefined
  }

  /** Steps a saga-level entry journals as not started: only a last `INTENT` with no outcome is. */
  private markNotStarted(stepIds: ReadonlyArray<string>): void {
    for (const stepId of stepIds) {
      const step = this.steps.get(stepId)
      if (step !== undefined && isUnknown(step)) step.notStarted = true
    }
  }

  private stepOf(entry: Recorded): StepView {
    let step = this.steps.get(entry.stepId!)
    if (step === undefined) {
      step = new UnseenStep(entry.stepId!, entry.toolName ?? "", entry.input)
      this.steps.set(entry.stepId!, step)
    }
    return step
  }

  /** Steps that failed, in journal order. */
  failedSteps(): Array<StepView> {
    return Array.from(this.steps.values()).filter((step) => step.failed !== undefined)
  }

  /**
   * The first failure that taints the saga, if any: once one is journaled, the saga compensates
   * when its program ends, whatever else happens. A failure journaled `taints: false` was the
   * program's to handle.
   */
  firstTaint(): StepView | undefined {
    for (const step of this.steps.values())
      if (step.failed !== undefined && step.failed.payload.taints !== false) return step
    return undefined
  }

  /**
   * Steps whose outcome is unknown and may have changed something, in journal order: a read's
   * unknown outcome is left out (`unknownReads`), it leaves nothing to settle.
   */
  unknownSteps(): Array<StepView> {
    return Array.from(this.steps.values()).filter(isUnsettled)
  }

  /** Reads whose outcome is unknown, in journal order. */
  unknownReads(): Array<StepView> {
    return Array.from(this.steps.values()).filter(isUnknownRead)
  }
}

/** Decodes every entry's payload, or fails with `JournalCorrupted` at the first that does not decode. */
export const decodeAll = (entries: ReadonlyArray<Entry>): Either.Either<Array<Recorded>, JournalCorrupted> =>
  Either.all(entries.map(decodeEntry))

/** The view of a saga's entries; `JournalCorrupted` if a payload does not decode (nothing acts on it). */
export const viewOf = (entries: ReadonlyArray<Entry>): Effect.Effect<JournalView, JournalCorrupted> =>
  Either.match(decodeAll(entries), {
    onLeft: Effect.fail,
    onRight: (records) => Effect.succeed(new JournalView(records))
  })
