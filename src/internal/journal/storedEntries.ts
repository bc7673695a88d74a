/**
 * A saga's entries as the store holds them, each column's value undecoded: what an operator reads
 * for forensics when an entry no longer decodes (`read` fails with `JournalCorrupted`), as
 * `effect-saga export` prints them. A store is found by its `read` function, as in `together.ts`;
 * a store without a twin (the memory journal) holds only entries that decode.
 */
import * as Effect from "effect/Effect"
import type { Entry, Journal, JournalCorrupted, JournalError } from "../../Journal.js"

/**
 * One entry as the store holds it, its columns named as `Entry`'s fields, each value whatever the
 * column holds (text, a number, `null`, or bytes as a `Uint8Array`), checked against nothing.
 *
 * @since 0.5.0
 * @category models
 */
export type StoredEntry = { readonly [Column in keyof Entry]-?: unknown }

/** The twin of each `read` that can read entries undecoded, per store. */
export const entryReads = new WeakMap<
  Journal["Type"]["read"],
  (sagaId: string) => Effect.Effect<ReadonlyArray<StoredEntry>, JournalError>
>()

/** Saga `sagaId`'s entries as stored, in the store's `seq` order. */
export const readStored = (
  journal: Journal["Type"],
  sagaId: string
): Effect.Effect<ReadonlyArray<StoredEntry>, JournalError | JournalCorrupted> => {
  const own = entryReads.get(journal.read)
  return own === undefined
    ? Effect.map(journal.read(sagaId), (entries) => entries.map((entry) => ({ ...entry, mac: entry.mac ?? null })))
    : own(sagaId)
}
