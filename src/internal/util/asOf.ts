/**
 * A saga's entries as of the revision its row was read at. A reader that reads the row (with its
 * steps, `Saga.status`) and the entries apart shows one state: a saga only grows, so entries read
 * after the row are cut to its revision, and entries read before it are read again if they stop
 * short of it.
 */
import type { Entry } from "../../Journal.js"

/** Whether `entries` reach `revision`: cut to it, they are the saga as it stood then. */
export const reaches = (entries: ReadonlyArray<Entry>, revision: number): boolean =>
  (entries.at(-1)?.seq ?? 0) >= revision

/** `entries` as of `revision`: those journaled at or before it. */
export const asOf = (entries: ReadonlyArray<Entry>, revision: number): ReadonlyArray<Entry> =>
  (entries.at(-1)?.seq ?? 0) <= revision ? entries : entries.filter((entry) => entry.seq <= revision)
