/**
 * Journal revisions as a sentence names them.
 */

/**
 * The revisions `entries` (in `seq` order) hold, as a sentence ends: `revision 11`, `revisions 11–14`.
 */
export const revisionsOf = (entries: ReadonlyArray<{ readonly seq: number }>): string => {
  const first = entries[0]?.seq
  const last = entries.at(-1)?.seq
  return first === last ? `revision ${first}` : `revisions ${first}–${last}`
}

/** Entries written, by saga: their revisions, in the order written (`Saga.onWritten`'s entries). */
export const revisionsBySaga = (
  written: ReadonlyArray<{ readonly sagaId: string; readonly revision: number }>
): ReadonlyMap<string, ReadonlyArray<number>> => {
  const sagas = new Map<string, Array<number>>()
  for (const { revision, sagaId } of written) sagas.set(sagaId, [...(sagas.get(sagaId) ?? []), revision])
  return sagas
}
