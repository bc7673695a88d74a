/**
 * The rows of the console's Undos table: each step's undo, and each step the saga's last
 * compensation report names as may still be live because its outcome was unknown. Those have no
 * undo of their own (nothing was asked of their tool), so the steps' undo column cannot show them;
 * `effect-saga show` names them from the report, and so does the table.
 */
import * as Either from "effect/Either"
import * as CompensationReport from "../../../CompensationReport.js"
import { decodeEntry, type Entry } from "../../../Journal.js"
import type { SagaDetail } from "../models.js"

/**
 * The report of the last `SAGA_COMPENSATED` or `SAGA_COMPENSATION_FAILED` of a saga's own (an
 * explicit undo's answer is not one), as the engine reads it.
 */
const lastReport = (entries: ReadonlyArray<Entry>): CompensationReport.CompensationReport | undefined => {
  for (const entry of [...entries].reverse()) {
    if (entry.phase !== "SAGA_COMPENSATED" && entry.phase !== "SAGA_COMPENSATION_FAILED") continue
    const recorded = decodeEntry(entry)
    if (Either.isLeft(recorded)) continue
    const payload: object | null = recorded.right.payload
    if (payload !== null && "undone" in payload) return payload as CompensationReport.CompensationReport
  }
  return undefined
}

/**
 * The steps the last report names as may still be live because their outcome was unknown (`not
 * undone: outcome unknown`), each with its detail: still so when the report was journaled, even if
 * resolved since (a compensation again journals a new report).
 */
const unknownNotUndone = (entries: ReadonlyArray<Entry>): ReadonlyArray<CompensationReport.NotUndone> => {
  const report = lastReport(entries)
  return report === undefined
    ? []
    : CompensationReport.dirty(report).filter(
        (step): step is CompensationReport.NotUndone => "phase" in step && step.phase === "UNKNOWN"
      )
}

/** One row of the Undos table: a step, its undo's outcome (or `not_undone`) and the detail in full. */
export interface UndoRow {
  readonly toolName: string
  readonly stepId: string
  readonly undo: string
  readonly detail: string
}

/**
 * The Undos table of a saga: the steps an undo was asked for, then those the last report names as
 * not undone, outcome unknown (none for a tampered saga: its journal past the break is no fact).
 */
export const undoRows = (detail: SagaDetail): ReadonlyArray<UndoRow> => {
  const asked = detail.steps.flatMap((step) =>
    step.undo === null
      ? []
      : [{ toolName: step.toolName, stepId: step.stepId, undo: step.undo, detail: step.undoDetail ?? "" }]
  )
  const unknown = detail.saga.tampered === null ? unknownNotUndone(detail.entries) : []
  return [
    ...asked,
    ...unknown
      .filter((step) => !asked.some((row) => row.stepId === step.stepId))
      .map((step) => ({
        toolName: step.toolName,
        stepId: step.stepId,
        undo: "not_undone",
        detail: `outcome unknown when the last report was journaled${step.detail ? `: ${step.detail}` : ""}`
      }))
  ]
}
