/**
 * How the message of `Outcome.Failed` begins, before its reason: what the views leave out beside
 * an undo's `failed` answer (`undoSaid.ts`), which already says it.
 */
export const FAILED_WORDS = "failed (not applied): "
