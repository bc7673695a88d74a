/**
 * Saga rows as stored, where a store can hold one that does not decode (the SQL stores: a row
 * edited behind the library's back). The reads that tell an operator what is true (`Saga.status`,
 * `Saga.list`, `Journal.verify`, the CLI, every run's verified load) take such a row as a broken
 * chain (problem `row`), as they take a deleted one, instead of failing as a whole. A store is
 * found by its `get` and `list` functions, as in `together.ts`; any other store's rows all decode
 * (and no other store holds entries without a row).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Option from "effect/Option"
import type { Journal, JournalError, ListFilter, SagaRecord } from "../../Journal.js"

/** A saga's row: `Left` says why the stored row does not decode. */
export type StoredRow = Either.Either<Option.Option<SagaRecord>, string>

/** A listed row that does not decode: its saga id as stored, and why. */
export interface UndecodableRow {
  readonly sagaId: string
  readonly reason: string
}

/** The `get` twin that answers an undecodable row instead of failing, per store. */
export const rowReads = new WeakMap<
  Journal["Type"]["get"],
  (sagaId: string) => Effect.Effect<StoredRow, JournalError>
>()

/** The `list` twin that lists undecodable rows instead of failing, per store. */
export const rowLists = new WeakMap<
  Journal["Type"]["list"],
  (filter?: ListFilter) => Effect.Effect<ReadonlyArray<Either.Either<SagaRecord, UndecodableRow>>, JournalError>
>()

/**
 * The twin of each store's `list` that lists the ids of sagas whose entries it holds without a
 * row (the row deleted behind the library's back): `list` lists rows, and never them.
 */
export const rowlessLists = new WeakMap<
  Journal["Type"]["list"],
  () => Effect.Effect<ReadonlyArray<string>, JournalError>
>()

/** The ids of sagas with entries and no row, in code-point order; none in a store without the twin. */
export const listRowless = (journal: Journal["Type"]): Effect.Effect<ReadonlyArray<string>, JournalError> => {
  const own = rowlessLists.get(journal.list)
  return own === undefined ? Effect.succeed([]) : own()
}

/** Saga `sagaId`'s row as stored. */
export const readRow = (journal: Journal["Type"], sagaId: string): Effect.Effect<StoredRow, JournalError> => {
  const own = rowReads.get(journal.get)
  return own === undefined ? Effect.map(journal.get(sagaId), Either.right) : own(sagaId)
}

/** The rows `filter` selects, each decoded or said why not. */
export const listRows = (
  journal: Journal["Type"],
  filter?: ListFilter
): Effect.Effect<ReadonlyArray<Either.Either<SagaRecord, UndecodableRow>>, JournalError> => {
  const own = rowLists.get(journal.list)
  return own === undefined ? Effect.map(journal.list(filter), (records) => records.map(Either.right)) : own(filter)
}

/**
 * The twin of each store's `claimLapsed` that lists sagas left behind which no claim takes, because
 * their row was edited: a lease whose end is not a time as the store writes one (it never lapses),
 * or a status that is no saga status, among the rows that hold a lease (read from the index of
 * leased rows, never a scan of all). Each with why its row does not decode; at most `limit`.
 */
export const unclaimableLists = new WeakMap<
  Journal["Type"]["claimLapsed"],
  (limit: number) => Effect.Effect<ReadonlyArray<UndecodableRow>, JournalError>
>()

/** The sagas `unclaimableLists` names for `journal`, in code-point order of their ids; none in a store without the twin. */
export const listUnclaimable = (
  journal: Journal["Type"],
  limit: number
): Effect.Effect<ReadonlyArray<UndecodableRow>, JournalError> => {
  const own = unclaimableLists.get(journal.claimLapsed)
  return own === undefined
    ? Effect.succeed([])
    : Effect.map(own(limit), (rows) => [...rows].sort((a, b) => (a.sagaId < b.sagaId ? -1 : 1)))
}
