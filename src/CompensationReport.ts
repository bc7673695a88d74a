/**
 * What compensation did to each step, and what it could not touch.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { printable } from "./internal/util/printable.js"
import { undoDetailSaid } from "./internal/util/undoSaid.js"

/**
 * What one undo achieved:
 * `completed` (the declared inverse ran), `partial` (applied in part: see `detail`),
 * `unavailable` (no undo or no usable result or receipt in this process), `failed` (proved not
 * applied: the effect is still live), `unknown` (it may or may not have run), `skipped` (the tool
 * declares no undo: a gap worth auditing).
 *
 * @since 0.1.0
 * @category models
 */
export const UndoOutcome = Schema.Literal("completed", "partial", "unavailable", "failed", "unknown", "skipped")

/**
 * @since 0.1.0
 * @category models
 */
export type UndoOutcome = typeof UndoOutcome.Type

/**
 * One executed step and what its undo achieved.
 *
 * @since 0.1.0
 * @category models
 */
export const StepReport = Schema.Struct({
  stepId: Schema.String,
  toolName: Schema.String,
  outcome: UndoOutcome,
  detail: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type StepReport = typeof StepReport.Type

/**
 * A step that was not undone because it may never have happened: it `FAILED`, or its outcome is
 * `UNKNOWN` (an `INTENT` with nothing after it).
 *
 * @since 0.1.0
 * @category models
 */
export const NotUndone = Schema.Struct({
  stepId: Schema.String,
  toolName: Schema.String,
  phase: Schema.Literal("FAILED", "UNKNOWN"),
  detail: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type NotUndone = typeof NotUndone.Type

/**
 * The report: `undone` in the order the undos ran (reverse execution order), `notUndone`, and the
 * saga's final status. `compensation_failed` means something may still be dirty: page a human.
 *
 * @since 0.1.0
 * @category models
 */
export const CompensationReport = Schema.Struct({
  sagaId: Schema.String,
  status: Schema.Literal("compensated", "compensation_failed"),
  undone: Schema.Array(StepReport),
  notUndone: Schema.Array(NotUndone)
})

/**
 * @since 0.1.0
 * @category models
 */
export type CompensationReport = typeof CompensationReport.Type

const clean = new Set<UndoOutcome>(["completed", "skipped"])

/**
 * The steps whose effects may still be live after compensation.
 *
 * @since 0.1.0
 * @category getters
 */
export const dirty = (report: CompensationReport): ReadonlyArray<StepReport | NotUndone> => [
  ...report.undone.filter((step) => !clean.has(step.outcome)),
  ...report.notUndone.filter((step) => step.phase === "UNKNOWN")
]

/**
 * Builds a report, deciding the status: clean only when every undo completed or was skipped and no
 * step's outcome is unknown.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  sagaId: string,
  undone: ReadonlyArray<StepReport>,
  notUndone: ReadonlyArray<NotUndone>
): CompensationReport => {
  const report: CompensationReport = { sagaId, status: "compensated", undone, notUndone }
  return dirty(report).length === 0 ? report : { ...report, status: "compensation_failed" }
}

/** A step's line after its outcome: tool, step id and detail, each `printable`. */
const stepText = (step: StepReport | NotUndone, detail = step.detail): string =>
  `${printable(step.toolName)} (${printable(step.stepId)})${detail ? ` ${printable(detail)}` : ""}`

/**
 * An undo's outcome as its line begins: one that left the step's effect live, or may have, says
 * it was the undo (`undo failed charge`, not `failed charge`, which reads as the charge failing).
 */
const undoLabel: Record<UndoOutcome, string> = {
  completed: "completed",
  partial: "undo partial",
  unavailable: "unavailable",
  failed: "undo failed",
  unknown: "undo unknown",
  skipped: "skipped"
}

/**
 * The report as lines a person can read at 3 a.m.: `completed`, `skipped` and `unavailable` as the
 * outcome is named, `undo failed`, `undo partial` and `undo unknown` for an undo that left the
 * step's effect live (or may have). An undo's detail comes from outside (a provider's error), so
 * control characters in it are escaped (`\n`, `\u001b`): each step stays on its line.
 *
 * @since 0.1.0
 * @category formatting
 */
export const format = (report: CompensationReport): string => {
  const lines = [`saga ${printable(report.sagaId)}: ${report.status}`]
  for (const step of report.undone) {
    const detail = step.detail === undefined ? undefined : undoDetailSaid(step.outcome, step.detail)
    lines.push(`  ${undoLabel[step.outcome].padEnd(12)} ${stepText(step, detail)}`)
  }
  for (const step of report.notUndone) {
    const why = step.phase === "FAILED" ? "not undone (its call failed)" : "not undone: outcome unknown"
    lines.push(`  ${why} ${stepText(step)}`)
  }
  return lines.join("\n")
}
