/**
 * An undo's detail beside its answer. The detail of an undo that answered with an outcome is the
 * outcome's message, which begins with what the answer says already (`Outcome.failed("…")` is
 * journaled `failed (not applied): …`): beside `undo failed` only what it adds is said, so a line
 * reads `undo failed (not applied: the bank refused)`, not `undo failed (failed (not applied): …)`.
 */

/** The words an outcome's message begins with, by the undo answer they repeat, and what stays of them. */
const repeated: Readonly<Record<string, readonly [string, string]>> = {
  failed: ["failed (not applied): ", "not applied: "],
  unknown: ["outcome unknown: ", ""]
}

/** `detail` without the words of `undo` it repeats. */
export const undoDetailSaid = (undo: string, detail: string): string => {
  const words = repeated[undo]
  return words !== undefined && detail.startsWith(words[0]) ? `${words[1]}${detail.slice(words[0].length)}` : detail
}

/** `undo ANSWER (DETAIL)`, as the views say an undo's answer. */
export const undoSaid = (undo: string, detail: string | undefined): string =>
  `undo ${undo}${detail === undefined ? "" : ` (${undoDetailSaid(undo, detail)})`}`
