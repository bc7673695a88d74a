/**
 * Reading a saga's entries and row as one state of the saga, even while another worker appends to
 * it, and verifying one against the other: what every load, status, list and `Journal.verify`
 * decides a break from.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { Entry, Journal, JournalError, SagaRecord, Verification } from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"
import { JournalCorrupted } from "./errors.js"
import type { StoredRow } from "./storedRows.js"
import { readRow } from "./storedRows.js"
import type { ReadTogether } from "./together.js"
import { readsTogether } from "./together.js"
import { verifyAgainstStored } from "./verification.js"

/**
 * A saga's entries and row, read together, and what verifying one against the other says (`record`
 * is `None` both for a saga without a row and for a row that does not decode: `verification` tells).
 */
export interface Inspected {
  readonly entries: ReadonlyArray<Entry>
  readonly record: Option.Option<SagaRecord>
  readonly verification: Verification
}

/** Whether the store holds nothing of the saga: never written, or pruned (`Journal.verify`'s `SagaNotFound`). */
export const holdsNothing = ({ entries, record, verification }: Inspected): boolean =>
  entries.length === 0 && Option.isNone(record) && verification._tag === "Intact"

type ReadEntries = ReadTogether["entries"]

/** The saga's entries, or the first that does not decode (a break to name, not a failure). */
const readEntries = (journal: Journal["Type"], sagaId: string): Effect.Effect<ReadEntries, JournalError> =>
  journal.read(sagaId).pipe(
    Effect.map((read): ReadEntries => Either.right(read)),
    Effect.catchIf(
      (error): error is JournalCorrupted => error instanceof JournalCorrupted,
      (error) => Effect.succeed(Either.left(error))
    )
  )

/** The entries and then the row; in one statement, one snapshot, where the store reads them together. */
const entriesThenRow = (journal: Journal["Type"], sagaId: string): Effect.Effect<ReadTogether, JournalError> => {
  const together = readsTogether.get(journal.read)
  if (together !== undefined) return together(sagaId)
  return Effect.flatMap(readEntries(journal, sagaId), (entries) =>
    Effect.map(readRow(journal, sagaId), (record) => ({ entries, record }))
  )
}

const inspected = (entries: ReadEntries, record: StoredRow, keys: KeyRing | undefined): Inspected =>
  Either.isLeft(entries)
    ? {
        entries: [],
        record: Either.getOrElse(record, Option.none),
        verification: { _tag: "Broken", seq: entries.left.seq, problem: "undecodable", reason: entries.left.reason }
      }
    : {
        entries: entries.right,
        record: Either.getOrElse(record, Option.none),
        verification: verifyAgainstStored(entries.right, record, keys)
      }

/** The row's revision, where a row was read and decodes. */
const revisionOf = (record: StoredRow): number | undefined =>
  Either.isRight(record) && Option.isSome(record.right) ? record.right.value.revision : undefined

/**
 * The row, the entries, and the row again. An append commits its entries and its row at once, so
 * entries read after a row hold at least that row's entries, and a row read after entries covers
 * every entry the library wrote. Entries between the two rows' revisions were appended while this
 * read: the saga is shown as the first row left it. Entries past the second row were written
 * behind the library's back, and fewer than the first row's were deleted: both are verified as read.
 */
const rowEntriesRow = (journal: Journal["Type"], sagaId: string): Effect.Effect<ReadTogether, JournalError> =>
  Effect.gen(function* () {
    const first = yield* readRow(journal, sagaId)
    const entries = yield* readEntries(journal, sagaId)
    const second = yield* readRow(journal, sagaId)
    const from = revisionOf(first)
    const to = revisionOf(second)
    if (Either.isLeft(entries) || from === undefined || to === undefined) return { entries, record: second }
    const read = entries.right.length
    if (read < from) return { entries, record: first }
    if (read > to) return { entries, record: second }
    return { entries: Either.right(entries.right.slice(0, from)), record: first }
  })

/** A read of the saga, and what verifying it says. */
interface Checked {
  readonly read: ReadTogether
  readonly inspected: Inspected
}

const checked = (read: ReadTogether, keys: KeyRing | undefined): Checked => ({
  read,
  inspected: inspected(read.entries, read.record, keys)
})

/**
 * The entries, then the row; made again as the row, the entries and the row again when the row is
 * ahead of the entries (an append committed in between).
 */
const readOnce = (
  journal: Journal["Type"],
  sagaId: string,
  keys: KeyRing | undefined
): Effect.Effect<Checked, JournalError> =>
  Effect.flatMap(entriesThenRow(journal, sagaId), (read) => {
    const once = checked(read, keys)
    const { record, verification } = once.inspected
    const racing = verification._tag === "Broken" && verification.problem === "truncated" && Option.isSome(record)
    return racing ? Effect.map(rowEntriesRow(journal, sagaId), (again) => checked(again, keys)) : Effect.succeed(once)
  })

/**
 * Whether a read found entries and no row at all: a row deleted behind the library's back, or a
 * prune (which deletes both at once) that committed between the read of the entries and that of
 * the row, where they are not one snapshot (SQLite, the memory journal, a read made again).
 */
const rowGone = ({ entries, record }: ReadTogether): boolean =>
  Either.isRight(entries) && entries.right.length > 0 && Either.isRight(record) && Option.isNone(record.right)

/**
 * Reads the entries, then the row (in one statement where the store can: then they are one
 * snapshot). An append that commits in between leaves the row ahead of the entries (never behind:
 * entries and row are written together); such a read is made again as the row, the entries and the
 * row again (`rowEntriesRow`), which shows one state of the saga however often it is appended to.
 * A read that finds entries and no row is made again, and the saga is as the second read says: a
 * prune that committed under the first leaves neither (no entries, no row, `Intact`: an unknown
 * saga), a deleted row stays a break (`row`). A stored entry that does not decode is a break, not a
 * failure.
 */
export const inspect = (
  journal: Journal["Type"],
  sagaId: string,
  keys: KeyRing | undefined
): Effect.Effect<Inspected, JournalError> =>
  Effect.flatMap(readOnce(journal, sagaId, keys), (first) =>
    rowGone(first.read)
      ? Effect.map(readOnce(journal, sagaId, keys), (second) => second.inspected)
      : Effect.succeed(first.inspected)
  )
