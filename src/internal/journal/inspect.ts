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
const rowEntriesRow = (
  journal: Journal["Type"],
  sagaId: string,
  keys: KeyRing | undefined
): Effect.Effect<Inspected, JournalError> =>
  Effect.gen(function* () {
    const first = yield* readRow(journal, sagaId)
    const entries = yield* readEntries(journal, sagaId)
    const second = yield* readRow(journal, sagaId)
    const from = revisionOf(first)
    const to = revisionOf(second)
    if (Either.isLeft(entries) || from === undefined || to === undefined) return inspected(entries, second, keys)
    const read = entries.right.length
    if (read < from) return inspected(entries, first, keys)
    if (read > to) return inspected(entries, second, keys)
    return inspected(Either.right(entries.right.slice(0, from)), first, keys)
  })

/**
 * Reads the entries, then the row (in one statement where the store can: then they are one
 * snapshot). An append that commits in between leaves the row ahead of the entries (never behind:
 * entries and row are written together); such a read is made again as the row, the entries and the
 * row again (`rowEntriesRow`), which shows one state of the saga however often it is appended to.
 * A stored entry that does not decode is a break, not a failure.
 */
export const inspect = (
  journal: Journal["Type"],
  sagaId: string,
  keys: KeyRing | undefined
): Effect.Effect<Inspected, JournalError> =>
  Effect.flatMap(entriesThenRow(journal, sagaId), ({ entries, record }) => {
    const once = inspected(entries, record, keys)
    const racing =
      once.verification._tag === "Broken" && once.verification.problem === "truncated" && Option.isSome(once.record)
    return racing ? rowEntriesRow(journal, sagaId, keys) : Effect.succeed(once)
  })
