import type { Entry, Expected, SagaStatus } from "../../Journal.js"
import { empty, statusAfter } from "../../Journal.js"
import { parsePayload } from "../util/codec.js"

/** What the journal says about one step. */
export interface StepView {
  readonly stepId: string
  readonly toolName: string
  input: string | null
  intents: number
  executed: Entry | undefined
  failed: Entry | undefined
  awaiting: Entry | undefined
  approved: Entry | undefined
  /** The first `APPROVED` entry: the decision itself (later ones are renewals). */
  firstApproved: Entry | undefined
  refused: Entry | undefined
  /** It awaited approval without halting the saga: the program went on (`ApprovalPending`). */
  deferred: boolean
  /** It ran where the program called it (an `INTENT` that does not say it ran deferred). */
  ranWhereCalled: boolean
  compensating: Entry | undefined
  compensation: Entry | undefined
}

const compensationOutcomes = new Set([
  "COMPENSATED",
  "COMPENSATION_PARTIAL",
  "COMPENSATION_FAILED",
  "COMPENSATION_UNKNOWN",
  "SKIPPED"
])

/** A step whose `INTENT` has no outcome after it. */
export const isUnknown = (step: StepView): boolean =>
  step.intents > 0 && step.executed === undefined && step.failed === undefined

/**
 * A call that answered `ApprovalPending` where the program made it: a replay answers the same
 * there, whatever happened to it since (it runs, if it runs, where the program settles it).
 */
export const answersPending = (step: StepView): boolean => step.deferred && !step.ranWhereCalled

/** A saga's journal folded into the state a run needs, kept current as entries are appended. */
export class JournalView {
  readonly steps = new Map<string, StepView>()
  /** Step ids in the order their `EXECUTED` entries were written: the order compensation reverses. */
  readonly executedOrder: Array<string> = []
  position: Expected = empty
  status: SagaStatus = "running"
  exists = false
  compensationStarted = false
  /** The last entry. */
  last: Entry | undefined = undefined
  /** The saga's `SAGA_STARTED` entry. */
  started: Entry | undefined = undefined
  /** Why compensation started, as journaled. */
  compensationCause = ""

  constructor(entries: ReadonlyArray<Entry> = []) {
    for (const entry of entries) this.apply(entry)
  }

  apply(entry: Entry): void {
    this.exists = true
    this.last = entry
    this.position = { revision: entry.seq, digest: entry.hash }
    this.status = statusAfter(this.status, [entry])
    if (entry.phase === "SAGA_STARTED") this.started = entry
    if (entry.phase === "SAGA_COMPENSATING") {
      this.compensationStarted = true
      const cause = parsePayload(entry.payload)?.cause
      this.compensationCause = typeof cause === "string" ? cause : "unknown cause"
    }
    if (entry.stepId === null) return
    const step = this.stepOf(entry)
    switch (entry.phase) {
      case "INTENT":
        step.intents++
        step.input = entry.input
        if (!step.deferred || parsePayload(entry.payload)?.deferred !== true) step.ranWhereCalled = true
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
        step.deferred = parsePayload(entry.payload)?.deferred === true
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
      default:
        if (compensationOutcomes.has(entry.phase)) step.compensation = entry
    }
  }

  private stepOf(entry: Entry): StepView {
    let step = this.steps.get(entry.stepId!)
    if (step === undefined) {
      step = {
        stepId: entry.stepId!,
        toolName: entry.toolName ?? "",
        input: entry.input,
        intents: 0,
        executed: undefined,
        failed: undefined,
        awaiting: undefined,
        approved: undefined,
        firstApproved: undefined,
        refused: undefined,
        deferred: false,
        ranWhereCalled: false,
        compensating: undefined,
        compensation: undefined
      }
      this.steps.set(entry.stepId!, step)
    }
    return step
  }

  /** Steps that failed, in journal order. */
  failedSteps(): Array<StepView> {
    return Array.from(this.steps.values()).filter((step) => step.failed !== undefined)
  }

  /** Steps whose outcome is unknown, in journal order. */
  unknownSteps(): Array<StepView> {
    return Array.from(this.steps.values()).filter(isUnknown)
  }
}
