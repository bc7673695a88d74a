/** Where a saga stands after its entries: the status its saga-level phases set (`Journal.statusAfter` and kin). */
import type { Entry, OpenCounts, Phase, SagaStatus } from "../../Journal.js"

const statusOfPhase: Partial<Record<Phase, SagaStatus>> = {
  SAGA_STARTED: "running",
  SAGA_RESUMED: "running",
  SAGA_COMPLETED: "completed",
  SAGA_COMPENSATING: "compensating",
  SAGA_COMPENSATED: "compensated",
  SAGA_COMPENSATION_FAILED: "compensation_failed",
  SAGA_AWAITING_APPROVAL: "awaiting_approval",
  SAGA_NEEDS_ATTENTION: "needs_attention",
  SAGA_SUSPENDED: "suspended"
}

/** The saga's status after `drafts`: the last saga-level phase decides, otherwise it is unchanged. */
export const statusAfter = (current: SagaStatus, drafts: ReadonlyArray<Pick<Entry, "phase">>): SagaStatus => {
  let status = current
  for (const draft of drafts) status = statusOfPhase[draft.phase] ?? status
  return status
}

/**
 * Whether an append of `drafts` keeps the saga's lease: unless it sets a status that is not active.
 * One that sets none keeps it whatever the saga's status: an operator's command on a saga that
 * waits, needs attention or failed to compensate holds its lease until it releases it.
 */
export const keepsLease = (drafts: ReadonlyArray<Pick<Entry, "phase">>): boolean => {
  let set: SagaStatus | undefined
  for (const draft of drafts) set = statusOfPhase[draft.phase] ?? set
  return set === undefined || isActive(set)
}

/** Whether a status is final: the saga will not move on by itself. */
export const isFinished = (status: SagaStatus): boolean =>
  status === "completed" || status === "compensated" || status === "compensation_failed"

/**
 * Whether `prune` may delete a saga of this status: finished with nothing left live.
 * `compensation_failed` is final, but an effect may still be live: its saga stays, the record of
 * what to undo by hand, until an operator settles it and a compensation again ends it `compensated`.
 */
export const isPrunable = (status: SagaStatus): boolean => status === "completed" || status === "compensated"

/** The saga-level phases that set a final status. */
export const finishingPhases: ReadonlyArray<Phase> = (Object.keys(statusOfPhase) as Array<Phase>).filter((phase) =>
  isFinished(statusOfPhase[phase]!)
)

/** Whether a saga with this status is being driven: only then does a lease mean anything. */
export const isActive = (status: SagaStatus): boolean => status === "running" || status === "compensating"

/** No saga under any open status: where a count of open sagas starts. */
export const noneOpen: OpenCounts = {
  running: 0,
  compensating: 0,
  suspended: 0,
  awaiting_approval: 0,
  needs_attention: 0,
  compensation_failed: 0
}

/** The saga-level phases that set a status `prune` may delete. */
export const prunablePhases: ReadonlyArray<Phase> = finishingPhases.filter((phase) => isPrunable(statusOfPhase[phase]!))
