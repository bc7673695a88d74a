/**
 * The undo of a step the saga's compensation did not run, since an explicit undo of the same effect
 * (`compensateEffect`) ran it or is running it: its outcome is taken over, and the entry that
 * records it says so in its detail. The undo is counted once, where it ran (the metrics).
 */

/** The detail of an outcome taken over from `compensateEffect`, after which its own detail follows. */
const TAKEN_OVER = "by compensateEffect"

/** The detail of an effect whose explicit undo has no outcome yet. */
export const PENDING_ELSEWHERE = "an explicit compensation of this effect has no outcome yet"

/** The detail of an outcome taken over from `compensateEffect`, with the explicit undo's own detail. */
export const takenOverDetail = (detail: string | undefined): string =>
  detail === undefined ? TAKEN_OVER : `${TAKEN_OVER}: ${detail}`

/** Whether an undo's journaled detail says its outcome was taken over, not run here. */
export const isTakenOver = (detail: string | undefined): boolean =>
  detail === PENDING_ELSEWHERE || detail === TAKEN_OVER || detail?.startsWith(`${TAKEN_OVER}: `) === true
