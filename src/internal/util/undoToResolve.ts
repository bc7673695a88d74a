/**
 * Whether an operator's resolution of a saga's step settles its undo rather than its call, as
 * `Saga.status` shows the step: the rule the engine applies (engine/stepUndoResolution.ts), read by
 * the CLI's `resolve` (whether `--applied` needs `--result`, and what it says it did) and the HTTP
 * API's answer. The saga is `compensation_failed` and the step executed, with its undo left
 * `failed`, `partial`, `unknown` or `unavailable`; or its undo was resolved before (asked again).
 *
 * @since 0.5.0
 */

/** How the reason, and so the `undoDetail`, of an undo an operator resolved begins. */
export const RESOLVED_UNDO = "resolved as "

/** What the rule reads of a step: a `Saga.StepStatus`, or the HTTP API's copy of one. */
interface Step {
  readonly state: string
  readonly changesNothing?: boolean | undefined
  readonly undo?: string | null | undefined
  readonly undoDetail?: string | null | undefined
}

/**
 * The undo outcomes a failed compensation leaves an operator to resolve: the engine's rule
 * (engine/stepUndoResolution.ts) reads the same set.
 */
export const leftNotUndone: ReadonlySet<string> = new Set(["failed", "partial", "unknown", "unavailable"])

/**
 * Whether resolving `step` of a saga with status `sagaStatus` settles its undo: a resolution that
 * gives a result or a receipt speaks of the call, and is never one.
 *
 * @since 0.5.0
 * @category resolving
 */
export const settlesUndo = (sagaStatus: string, step: Step): boolean => {
  if (step.state !== "executed" || step.changesNothing === true) return false
  if (step.undoDetail?.startsWith(RESOLVED_UNDO) === true) return true
  return sagaStatus === "compensation_failed" && step.undo != null && leftNotUndone.has(step.undo)
}

/**
 * Whether a resolution speaks of a step's call rather than its undo: `applied` with a result, a
 * receipt, or `undone` (the call happened, and was undone by hand). The engine, the CLI and the HTTP
 * API read the same rule.
 *
 * @since 0.5.0
 * @category resolving
 */
export const speaksOfCall = (resolution: {
  readonly outcome: string
  readonly result?: unknown
  readonly receipt?: unknown
  readonly undone?: boolean | undefined
}): boolean =>
  resolution.outcome === "applied" &&
  (resolution.result !== undefined || resolution.receipt !== undefined || resolution.undone === true)
