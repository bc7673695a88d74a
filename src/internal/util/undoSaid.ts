/**
 * An undo's detail beside its answer. The detail of an undo that answered `Outcome.failed("…")` is
 * the outcome's message, which begins with what the answer says already (`failed (not applied):
 * …`): beside `undo failed` only what it adds is said, so a line reads `undo failed (not applied:
 * the bank refused)`, not `undo failed (failed (not applied): …)`. (An `Outcome.unknown`'s detail
 * is journaled as its reason alone: nothing to leave out.)
 */
import { FAILED_WORDS } from "./failedWords.js"

/** `detail` without the words of `undo` it repeats. */
export const undoDetailSaid = (undo: string, detail: string): string =>
  undo === "failed" && detail.startsWith(FAILED_WORDS) ? `not applied: ${detail.slice(FAILED_WORDS.length)}` : detail

/** `undo ANSWER (DETAIL)`, as the views say an undo's answer. */
export const undoSaid = (undo: string, detail: string | undefined): string =>
  `undo ${undo}${detail === undefined ? "" : ` (${undoDetailSaid(undo, detail)})`}`
