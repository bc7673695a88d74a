/** Reading a saga's journal so that nothing acts on entries that do not verify. */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { Entry, Journal, JournalError, SagaRecord, Verification } from "../../Journal.js"
import { JournalCorrupted, JournalTampered } from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"
import type { Tamper } from "../../Saga.js"
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

/** A read is retried this many times when the row is ahead of the entries read just before it. */
const RACE_RETRIES = 3

/**
 * The entries (or the first that does not decode) and then the row; in one statement where the
 * store reads them together (together.ts).
 */
const readBoth = (journal: Journal["Type"], sagaId: string): Effect.Effect<ReadTogether, JournalError> => {
  const together = readsTogether.get(journal.read)
  if (together !== undefined) return together(sagaId)
  const entries = journal.read(sagaId).pipe(
    Effect.map((read): ReadTogether["entries"] => Either.right(read)),
    Effect.catchIf(
      (error): error is JournalCorrupted => error instanceof JournalCorrupted,
      (error) => Effect.succeed(Either.left(error))
    )
  )
  return Effect.flatMap(entries, (entries) => Effect.map(readRow(journal, sagaId), (record) => ({ entries, record })))
}

/**
 * Reads the entries, then the row (in one statement where the store can: then they are one
 * snapshot). An append that commits in between two reads leaves the row ahead of the entries
 * (never behind: entries and row are written together), so such a read is made again before it
 * is called a truncation. A stored entry that does not decode is a break, not a failure.
 */
export const inspect = (
  journal: Journal["Type"],
  sagaId: string,
  keys: KeyRing | undefined
): Effect.Effect<Inspected, JournalError> => {
  const once = Effect.map(
    readBoth(journal, sagaId),
    ({ entries, record }): Inspected =>
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
  )
  const racing = (inspected: Inspected) =>
    inspected.verification._tag === "Broken" &&
    inspected.verification.problem === "truncated" &&
    Option.isSome(inspected.record)
  const attempt = (left: number): Effect.Effect<Inspected, JournalError> =>
    Effect.flatMap(once, (inspected) => (left > 0 && racing(inspected) ? attempt(left - 1) : Effect.succeed(inspected)))
  return attempt(RACE_RETRIES)
}

/** The tamper mark of a verification, if it broke. */
export const tamperOf = (verification: Verification): Tamper | undefined =>
  verification._tag === "Broken"
    ? { seq: verification.seq, problem: verification.problem, reason: verification.reason }
    : undefined

/** The entries before the first one that does not verify: what a read may still show as facts. */
export const trustedPrefix = (inspected: Inspected): ReadonlyArray<Entry> =>
  inspected.verification._tag === "Intact"
    ? inspected.entries
    : inspected.entries.filter((entry) => entry.seq < (inspected.verification as { readonly seq: number }).seq)

/**
 * Whether loads verify. Only the benchmark turns it off, to measure what verifying costs: this is
 * not an option, and nothing else may touch it.
 */
export const loadChecks = { enabled: true }

/**
 * A saga's entries, refused with `JournalTampered` unless their chain (and MACs, with `keys`)
 * verifies and ends exactly at the saga row's revision and digest. No entries for a saga that
 * does not exist.
 */
export const readVerified = (
  journal: Journal["Type"],
  sagaId: string,
  keys: KeyRing | undefined
): Effect.Effect<ReadonlyArray<Entry>, JournalError | JournalTampered> =>
  !loadChecks.enabled
    ? Effect.orDie(journal.read(sagaId))
    : Effect.flatMap(inspect(journal, sagaId, keys), ({ entries, verification }) =>
        verification._tag === "Intact"
          ? Effect.succeed(entries)
          : Effect.fail(
              new JournalTampered({
                sagaId,
                seq: verification.seq,
                problem: verification.problem,
                reason: verification.reason
              })
            )
      )

/** A journal whose `read` verifies: what the engine acts on. */
export interface VerifiedJournal extends Omit<Journal["Type"], "read"> {
  readonly read: (sagaId: string) => Effect.Effect<ReadonlyArray<Entry>, JournalError | JournalTampered>
}

/** `journal`, with every read verified under `keys` (see `readVerified`). */
export const verifying = (journal: Journal["Type"], keys: KeyRing | undefined): VerifiedJournal => ({
  ...journal,
  read: (sagaId) => readVerified(journal, sagaId, keys)
})
