/**
 * What a store must answer an append with: the entries it wrote, one per draft, at the seqs that
 * follow the position the append named, each with its hash. A store of one's own that does not
 * compare-and-set (it appends wherever the saga is, or overwrites) answers otherwise; the writer
 * stops there, naming the store's fault, rather than go on from a position the journal does not
 * hold (a run that would report `Completed` over a journal another worker wrote meanwhile).
 */
import type { Entry, Expected } from "../../Journal.js"

/** Why `entries` are not what an append of `count` drafts at `expected` writes, if they are not. */
export const unlikeAppended = (
  sagaId: string,
  expected: Expected,
  count: number,
  entries: ReadonlyArray<Entry>
): string | undefined => {
  const at = `an append of ${count} ${count === 1 ? "entry" : "entries"} to saga ${sagaId} at revision ${expected.revision}`
  if (entries.length !== count) return `${at} was answered with ${entries.length}`
  for (let index = 0; index < count; index++) {
    const entry = entries[index]!
    if (entry.seq !== expected.revision + 1 + index) {
      return `${at} was answered with an entry at seq ${entry.seq}, not ${expected.revision + 1 + index}: the store did not append at the position it was given (it must refuse an append whose expected revision and digest are not the saga's, ConcurrencyConflict), so the journal may hold entries this writer never saw`
    }
    if (typeof entry.hash !== "string" || entry.hash === "") {
      return `${at} was answered with an entry at seq ${entry.seq} without its hash`
    }
  }
  return undefined
}
