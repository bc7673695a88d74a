import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Journal from "../Journal.js"
import { buildEntries } from "./memoryJournal.js"
import { isUniqueViolation, journalError } from "./sqlite.js"
import { entriesTable, migrate, sagasTable } from "./sqlMigrations.js"

/** Rows per multi-row `INSERT`: far below SQLite's and PostgreSQL's limits on bound parameters. */
const insertChunk = 500

const finished = Journal.SagaStatus.literals.filter(Journal.isFinished)

const decodeEntry = Schema.decodeUnknownEither(Journal.Entry)
const decodeRecord = Schema.decodeUnknownEither(Journal.SagaRecord)

const formatError = (error: ParseResult.ParseError) => ParseResult.TreeFormatter.formatErrorSync(error)

/** The status `drafts` set, or `null` when none of them is a saga-level phase (the status stays). */
const statusSetBy = (drafts: ReadonlyArray<Pick<Journal.Entry, "phase">>): Journal.SagaStatus | null => {
  const fromRunning = Journal.statusAfter("running", drafts)
  return fromRunning === Journal.statusAfter("completed", drafts) ? fromRunning : null
}

const toRow = (entry: Journal.Entry) => ({
  saga_id: entry.sagaId,
  seq: entry.seq,
  step_id: entry.stepId,
  tool_name: entry.toolName,
  phase: entry.phase,
  input: entry.input,
  payload: entry.payload,
  at: entry.at,
  hash: entry.hash
})

/** The `Journal` service on the `SqlClient` in context; runs the store's migrations first. */
export const make = Effect.gen(function* () {
  yield* migrate
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const sagas = sql(sagasTable)
  const entries = sql(entriesTable)

  const recordColumns = sql.literal(
    `saga_id AS "sagaId", status, revision, digest, created_at AS "createdAt", updated_at AS "updatedAt"`
  )
  const entryColumns = sql.literal(
    `saga_id AS "sagaId", seq, step_id AS "stepId", tool_name AS "toolName", phase, input, payload, at, hash`
  )

  const revisionOf = (sagaId: string) =>
    Effect.map(sql<{ readonly revision: unknown }>`SELECT revision FROM ${sagas} WHERE saga_id = ${sagaId}`, (rows) =>
      Number(rows[0]?.revision ?? 0)
    )

  const conflict = (sagaId: string, expectedRevision: number) =>
    Effect.flatMap(revisionOf(sagaId), (actualRevision) =>
      Effect.fail(new Journal.ConcurrencyConflict({ sagaId, expectedRevision, actualRevision }))
    )

  const insertEntries = (written: ReadonlyArray<Journal.Entry>) =>
    Effect.forEach(
      Array.from({ length: Math.ceil(written.length / insertChunk) }, (_, i) =>
        written.slice(i * insertChunk, (i + 1) * insertChunk)
      ),
      (chunk) => sql`INSERT INTO ${entries} ${sql.insert(chunk.map(toRow))}`,
      { discard: true }
    )

  /**
   * A unique-key violation on the entries means another writer got there first without the saga
   * row saying so: the primary key is the last line of defence, and the loser gets a conflict.
   */
  const lostRace =
    (sagaId: string, expectedRevision: number, operation: string) =>
    (error: SqlError): Effect.Effect<never, Journal.ConcurrencyConflict | Journal.JournalError> =>
      isUniqueViolation(error)
        ? Effect.flatMap(
            Effect.orElseSucceed(
              Effect.map(
                sql<{ readonly seq: unknown }>`SELECT MAX(seq) AS seq FROM ${entries} WHERE saga_id = ${sagaId}`,
                (rows) => Number(rows[0]?.seq ?? 0)
              ),
              () => -1
            ),
            (actualRevision) =>
              Effect.fail(new Journal.ConcurrencyConflict({ sagaId, expectedRevision, actualRevision }))
          )
        : Effect.fail(journalError(operation)(error))

  const append = (sagaId: string, expected: Journal.Expected, drafts: ReadonlyArray<Journal.Draft>) =>
    Effect.flatMap(Clock.currentTimeMillis, (millis) => {
      const at = new Date(millis).toISOString()
      const written = buildEntries(sagaId, expected, drafts, at)
      const last = written[written.length - 1]
      const revision = last?.seq ?? expected.revision
      const digest = last?.hash ?? expected.digest
      const status = statusSetBy(drafts)
      // The compare-and-set is the transaction's first statement: it takes the write lock on any
      // backend and matches only while the saga is still where the writer last saw it.
      const claim =
        expected.revision === 0
          ? sql`INSERT INTO ${sagas} (saga_id, status, revision, digest, created_at, updated_at)
VALUES (${sagaId}, ${status ?? "running"}, ${revision}, ${digest}, ${at}, ${at})
ON CONFLICT (saga_id) DO UPDATE SET status = COALESCE(${status}, ${sagas}.status), revision = ${revision},
  digest = ${digest}, updated_at = ${at}
WHERE ${sagas}.revision = 0 AND ${sagas}.digest = ${expected.digest}
RETURNING saga_id`
          : sql`UPDATE ${sagas} SET status = COALESCE(${status}, status), revision = ${revision}, digest = ${digest},
  updated_at = ${at}
WHERE saga_id = ${sagaId} AND revision = ${expected.revision} AND digest = ${expected.digest}
RETURNING saga_id`
      return sql
        .withTransaction(
          Effect.flatMap(claim, (claimed) =>
            claimed.length === 0 ? conflict(sagaId, expected.revision) : insertEntries(written)
          )
        )
        .pipe(
          Effect.catchTag("SqlError", lostRace(sagaId, expected.revision, "append")),
          Effect.as(written as ReadonlyArray<Journal.Entry>)
        )
    })

  const importSaga = (imported: ReadonlyArray<Journal.Entry>) =>
    Effect.suspend(() => {
      const first = imported[0]
      const last = imported[imported.length - 1]
      if (first === undefined || last === undefined) {
        return Effect.fail(new Journal.JournalError({ operation: "import", reason: "there are no entries to import" }))
      }
      const record: Journal.SagaRecord = {
        sagaId: first.sagaId,
        status: Journal.statusAfter("running", imported),
        revision: last.seq,
        digest: last.hash,
        createdAt: first.at,
        updatedAt: last.at
      }
      return sql
        .withTransaction(
          Effect.flatMap(
            sql`INSERT INTO ${sagas} (saga_id, status, revision, digest, created_at, updated_at)
VALUES (${record.sagaId}, ${record.status}, ${record.revision}, ${record.digest}, ${record.createdAt}, ${record.updatedAt})
ON CONFLICT (saga_id) DO NOTHING
RETURNING saga_id`,
            (claimed) => (claimed.length === 0 ? conflict(record.sagaId, 0) : insertEntries(imported))
          )
        )
        .pipe(Effect.catchTag("SqlError", lostRace(record.sagaId, 0, "import")), Effect.as(record))
    })

  const read = (sagaId: string) =>
    Effect.flatMap(
      Effect.mapError(
        sql`SELECT ${entryColumns} FROM ${entries} WHERE saga_id = ${sagaId} ORDER BY seq`,
        journalError("read")
      ),
      (rows) => {
        const decoded: Array<Journal.Entry> = []
        for (const [index, row] of rows.entries()) {
          const entry = decodeEntry(row)
          if (Either.isLeft(entry)) {
            const seq = typeof row.seq === "number" && Number.isInteger(row.seq) ? row.seq : index + 1
            return Effect.fail(
              new Journal.JournalCorrupted({
                sagaId,
                seq,
                reason: `the stored entry does not decode: ${formatError(entry.left)}`
              })
            )
          }
          decoded.push(entry.right)
        }
        return Effect.succeed(decoded as ReadonlyArray<Journal.Entry>)
      }
    )

  const toRecords = (operation: string) => (rows: ReadonlyArray<unknown>) => {
    const records: Array<Journal.SagaRecord> = []
    for (const row of rows) {
      const record = decodeRecord(row)
      if (Either.isLeft(record)) {
        const sagaId = (row as { readonly sagaId?: unknown }).sagaId
        return Effect.fail(
          new Journal.JournalError({
            operation,
            reason: `the stored row of saga ${String(sagaId)} does not decode: ${formatError(record.left)}`
          })
        )
      }
      records.push(record.right)
    }
    return Effect.succeed(records as ReadonlyArray<Journal.SagaRecord>)
  }

  const get = (sagaId: string) =>
    Effect.mapError(sql`SELECT ${recordColumns} FROM ${sagas} WHERE saga_id = ${sagaId}`, journalError("get")).pipe(
      Effect.flatMap(toRecords("get")),
      Effect.map((records) => Option.fromNullable(records[0]))
    )

  const list = (filter?: Journal.ListFilter) => {
    if (filter?.status !== undefined && filter.status.length === 0) {
      return Effect.succeed([] as ReadonlyArray<Journal.SagaRecord>)
    }
    const where = [
      ...(filter?.status === undefined ? [] : [sql.in("status", filter.status)]),
      ...(filter?.updatedBefore === undefined ? [] : [sql`updated_at < ${filter.updatedBefore}`])
    ]
    return Effect.mapError(
      sql`SELECT ${recordColumns} FROM ${sagas} ${where.length === 0 ? sql.literal("") : sql`WHERE ${sql.and(where)}`}
ORDER BY updated_at, created_at, saga_id`,
      journalError("list")
    ).pipe(Effect.flatMap(toRecords("list")))
  }

  const prune = (before: string) => {
    const prunable = sql`${sql.in("status", finished)} AND updated_at < ${before}`
    return Effect.mapError(
      sql.withTransaction(
        Effect.zipRight(
          sql`DELETE FROM ${entries} WHERE saga_id IN (SELECT saga_id FROM ${sagas} WHERE ${prunable})`,
          sql<{ readonly sagaId: string }>`DELETE FROM ${sagas} WHERE ${prunable} RETURNING saga_id AS "sagaId"`
        )
      ),
      journalError("prune")
    ).pipe(Effect.map((rows) => rows.map((row) => row.sagaId)))
  }

  return Journal.Journal.of({ append, importSaga, read, get, list, prune })
})
