/**
 * Reads of a saga's entries and row in one go, where a store can make them one statement (the
 * PostgreSQL journal: one round trip instead of two for every load, and one snapshot, so the row is
 * never ahead of the entries). A store is found by its `read` function itself, so that a journal
 * wrapped by replacing `read` (a test's fault, a user's decorator) is always read as wrapped.
 */
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type { Entry, Journal, JournalCorrupted, JournalError } from "../../Journal.js"
import type { StoredRow } from "./storedRows.js"

/** A saga's entries (or the first that does not decode) and its row, read together. */
export interface ReadTogether {
  readonly entries: Either.Either<ReadonlyArray<Entry>, JournalCorrupted>
  readonly record: StoredRow
}

/** The one-statement twin of each `read` that has one. */
export const readsTogether = new WeakMap<
  Journal["Type"]["read"],
  (sagaId: string) => Effect.Effect<ReadTogether, JournalError>
>()
