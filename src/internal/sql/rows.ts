/** Decoding what the SQL tables hold into entries and saga rows, and saying in one line what does not decode. */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Journal from "../../Journal.js"
import type { StoredRow, UndecodableRow } from "../journal/storedRows.js"
import { describeUndecodable, oneLine } from "../journal/undecodable.js"
import { isStoredTime } from "../util/isoTime.js"
import { printable } from "../util/printable.js"

const decodeEntry = Schema.decodeUnknownEither(Journal.Entry)
const decodeRecord = Schema.decodeUnknownEither(Journal.SagaRecord)

/** A stored entry as the SQL columns hold it: no MAC is `NULL` there, an absent field here. */
const fromRow = (row: { readonly mac?: unknown }): unknown => {
  if (row.mac !== null) return row
  const { mac: _mac, ...rest } = row
  return rest
}

/** A saga row as `recordColumns` selects it. */
interface RecordRow {
  readonly leaseOwner: string | null
  readonly leaseExpiresAt: string | null
  readonly [column: string]: unknown
}

const isSeq = (seq: unknown): seq is number => typeof seq === "number" && Number.isInteger(seq) && seq > 0

/**
 * Where a row whose `seq` is not one (text, a fraction) broke the journal: the first seq no row
 * holds. The store sorts such a row after every number (SQLite sorts text last) or between two, so
 * its position says nothing; the seq it took the place of is the one missing.
 */
const firstMissingSeq = (rows: ReadonlyArray<Record<string, unknown>>): number => {
  const held = new Set(rows.map((row) => row.seq))
  let seq = 1
  while (held.has(seq)) seq++
  return seq
}

/** A saga's stored entries, in order, or the first that does not decode as `JournalCorrupted`. */
export const decodeEntries = (sagaId: string, rows: ReadonlyArray<Record<string, unknown>>) => {
  const decoded: Array<Journal.Entry> = []
  for (const row of rows) {
    const entry = decodeEntry(fromRow(row))
    if (Either.isLeft(entry)) {
      const seq = isSeq(row.seq) ? row.seq : firstMissingSeq(rows)
      return Effect.fail(
        new Journal.JournalCorrupted({
          sagaId,
          seq,
          reason: `the stored entry does not decode: ${describeUndecodable(row, entry.left)}`
        })
      )
    }
    decoded.push(entry.right)
  }
  return Effect.succeed(decoded as ReadonlyArray<Journal.Entry>)
}

/**
 * Why a decoded row's times are not times as the stores write them, if one is not: the stores
 * compare them as text, so a lease that ends at `garbage` would never lapse.
 */
const misshapenTime = ({ createdAt, lease, updatedAt }: Journal.SagaRecord): string | undefined => {
  const times = { createdAt, updatedAt, "lease's expiresAt": lease?.expiresAt }
  for (const [column, time] of Object.entries(times)) {
    if (time !== undefined && !isStoredTime(time)) {
      return `${column} ${oneLine(JSON.stringify(time), 60)} is not a time as the store writes one (2025-01-31T12:00:00.000Z)`
    }
  }
  return undefined
}

/** A saga row as `recordColumns` selects it, or one line saying why it does not decode. */
const decodeRow = (row: RecordRow): Either.Either<Journal.SagaRecord, string> => {
  const { leaseExpiresAt, leaseOwner, ...columns } = row
  const lease = leaseOwner === null ? null : { owner: leaseOwner, expiresAt: leaseExpiresAt }
  const stored = { ...columns, lease }
  const undecodable = (why: string) =>
    `the stored row of saga ${String((row as { readonly sagaId?: unknown }).sagaId)} does not decode: ${why}`
  return Either.flatMap(
    Either.mapLeft(decodeRecord(stored), (error) => undecodable(describeUndecodable(stored, error))),
    (record) => {
      const misshapen = misshapenTime(record)
      return misshapen === undefined ? Either.right(record) : Either.left(undecodable(misshapen))
    }
  )
}

/** Saga rows as `recordColumns` selects them, or the first that does not decode as a `JournalError` of `operation`. */
export const decodeRecords = (operation: string, rows: ReadonlyArray<unknown>) => {
  const records: Array<Journal.SagaRecord> = []
  for (const row of rows as ReadonlyArray<RecordRow>) {
    const record = decodeRow(row)
    if (Either.isLeft(record)) return Effect.fail(new Journal.JournalError({ operation, reason: record.left }))
    records.push(record.right)
  }
  return Effect.succeed(records as ReadonlyArray<Journal.SagaRecord>)
}

/** A saga's row as a read of it finds it (`recordColumns`): none, decoded, or why it does not decode. */
export const storedRow = (rows: ReadonlyArray<unknown>): StoredRow => {
  const row = rows[0] as RecordRow | undefined
  return row === undefined ? Either.right(Option.none()) : Either.map(decodeRow(row), Option.some)
}

/** Saga rows as `recordColumns` selects them, each decoded or said why not. */
export const storedRows = (
  rows: ReadonlyArray<unknown>
): ReadonlyArray<Either.Either<Journal.SagaRecord, UndecodableRow>> =>
  (rows as ReadonlyArray<RecordRow>).map((row) =>
    Either.mapLeft(decodeRow(row), (reason) => ({ sagaId: String(row.sagaId), reason }))
  )

/**
 * Claimed saga rows: one that does not decode is logged and left out (it keeps the claim until it
 * lapses), so that one edited row does not stop the recovery of every other saga.
 */
export const decodeClaimed = (rows: ReadonlyArray<unknown>) =>
  Effect.gen(function* () {
    const records: Array<Journal.SagaRecord> = []
    for (const row of rows as ReadonlyArray<RecordRow>) {
      const record = decodeRow(row)
      if (Either.isLeft(record)) {
        // Annotated as a saga a pass did not resume: an alert keyed on the saga finds this one too.
        yield* Effect.annotateLogs(Effect.logWarning(printable(`effect-saga: not recovered: ${record.left}`)), {
          "saga.id": String(row.sagaId),
          "error.tag": "JournalError"
        })
      } else records.push(record.right)
    }
    return records as ReadonlyArray<Journal.SagaRecord>
  })
