/**
 * Stores on which a new saga is started unread: the run does not read the journal first, its
 * program runs against an empty view, and its first append (at revision 0, like any new saga's)
 * is the read. A saga that was there already refuses that append with `ConcurrencyConflict`
 * before anything ran (a tool runs only once its `INTENT` is written), and the run starts over,
 * read. It saves a round trip a saga where a read costs one: only the PostgreSQL store allows it
 * (see docs/storage.md, "A new saga is not read first"). A journal is found by its `append`
 * function, as in `synchronous.ts`.
 */
import type { Journal } from "../../Journal.js"
import { ConcurrencyConflict } from "./errors.js"

const journals = new WeakSet<Journal["Type"]["append"]>()

/** Marks the store whose `append` this is as starting new sagas unread. */
export const allow = (append: Journal["Type"]["append"]): void => {
  journals.add(append)
}

/** Whether the store whose `append` this is starts new sagas unread. */
export const allows = (append: Journal["Type"]["append"]): boolean => journals.has(append)

/**
 * Whether `error`, met by a run started unread that has written nothing, says that the saga was
 * there already: its first append, at revision 0, found it further on.
 */
export const foundExisting = (error: unknown): boolean =>
  error instanceof ConcurrencyConflict && error.expectedRevision === 0
