/**
 * What a saga whose compensation failed waits for, as `effect-saga show`'s `next:` lines say it: its
 * compensation already ran, so a resume does not go on. A compensation again runs the undos it
 * could not (an undo `unavailable`, a step resolved applied since) and journals a new report; what
 * an undo left live is undone by hand; with nothing left dirty (a step resolved not applied since
 * the report), a compensation again journals a new report and the saga ends `compensated`.
 */
import { RUN_SUFFIX } from "../../util/identifier.js"
import * as Lease from "../../util/lease.js"
import type { SagaDetail } from "../models.js"

/** Undos that settled with something left live: effect-saga never runs a settled undo again. */
const byHand: ReadonlySet<string | null> = new Set(["failed", "partial", "unknown"])

const compensateWith = (sagaId: string): string =>
  `effect-saga compensate ${sagaId} --register MODULE --as WHO, or POST /api/sagas/${encodeURIComponent(sagaId)}/compensate`

/**
 * The lines for a saga `compensation_failed` that nobody drives, judged at `now` (epoch
 * milliseconds); none for any other saga, a tampered one, or the run of an explicit undo (whose
 * answer is final).
 */
export const lines = (detail: SagaDetail, now: number): ReadonlyArray<string> => {
  const row = detail.saga
  if (
    row.status !== "compensation_failed" ||
    row.tampered !== null ||
    row.sagaId.endsWith(RUN_SUFFIX) ||
    Lease.liveLease(row, now) !== undefined
  ) {
    return []
  }
  const compensate = compensateWith(row.sagaId)
  // In the order the compensation runs them: reverse order of execution.
  const undoable = detail.steps
    .filter((step) => step.state === "executed" && (step.undo === null || step.undo === "unavailable"))
    .reverse()
  const left = detail.steps.filter((step) => byHand.has(step.undo))
  const said: Array<string> = []
  if (undoable.length > 0) {
    said.push(
      `Its compensation already ran: compensate it again (${compensate}) from a process that has their tools registered (and the receipt keys, if their receipts are sealed): it runs the undo of ${undoable.map((step) => step.stepId).join(", ")} and journals a new report.`
    )
  }
  if (left.length > 0) {
    said.push(
      `Undo by hand, at the provider, what ${left.length === 1 ? "this undo" : "these undos"} left live: ${left.map((step) => `${step.stepId} (undo ${step.undo}, key ${row.sagaId}/${step.stepId}/undo)`).join(", ")}; effect-saga does not run a settled undo again, and the saga stays compensation failed.`
    )
  }
  if (said.length === 0 && !detail.steps.some((step) => step.state === "unknown")) {
    said.push(
      `Nothing is left dirty since the last report: its compensation already ran, so compensate it again (${compensate}): that journals a new report, and the saga ends compensated.`
    )
  }
  return said
}
