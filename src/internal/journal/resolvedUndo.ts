/**
 * An undo an operator resolved (`Saga.resolve`): the undo of a step in the run of an explicit undo
 * that answered `unknown`, or the undo of a saga's own step that its compensation left not undone.
 * Journaled as the undo's outcome, `COMPENSATED` (undone) or `COMPENSATION_FAILED` (not undone),
 * with a reason that says which way and who: `resolved as undone by alice`.
 */
import { RESOLVED_UNDO as RESOLVED } from "../util/undoToResolve.js"
import type { Recorded } from "./payloads.js"

/** Which way an operator resolved an undo: `applied`, it is undone; `not-applied`, it is not. */
export type ResolvedWay = "applied" | "not-applied"

/** The reason a resolved undo journals: which way, and who. */
export const resolvedReason = (outcome: ResolvedWay, by: string): string =>
  `${RESOLVED}${outcome === "applied" ? "undone" : "not undone"} by ${by}`

/**
 * An undo's own words (why it failed, what it left, why its outcome is unknown), never read as an
 * operator's resolution: a text that begins as a resolution's reason does (an undo that fails with
 * the string `resolved as undone by …`) is journaled behind `prefix`.
 */
export const undoOwnText = (text: string, prefix: string): string =>
  text.startsWith(RESOLVED) ? `${prefix}${text}` : text

/** Whether an entry is the outcome of an undo an operator resolved. */
export const isResolvedUndo = (entry: Recorded): entry is Recorded<"COMPENSATED" | "COMPENSATION_FAILED"> =>
  (entry.phase === "COMPENSATED" || entry.phase === "COMPENSATION_FAILED") &&
  entry.payload !== null &&
  entry.payload.reason.startsWith(RESOLVED)

/**
 * The detail of an explicit undo's run's last entry an operator's resolution wrote (`SAGA_COMPLETED`,
 * its answer `resolved as … by …`), if the entry is one.
 */
export const resolvedAnswerOf = (entry: Recorded): string | undefined => {
  if (entry.phase !== "SAGA_COMPLETED" || entry.payload === null || !("outcome" in entry.payload)) return undefined
  const { detail } = entry.payload
  return detail?.startsWith(RESOLVED) === true ? detail : undefined
}
