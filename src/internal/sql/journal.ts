/**
 * The `Journal` service on any `@effect/sql` client. NOTE: over 400 lines on purpose: one store
 * whose statements are built once from the same fragments (the compare-and-set, the lease checks,
 * PostgreSQL's one-statement append) and used by its appends and its lease paths alike; group
 * commit (groupCommit.ts) and row decoding (rows.ts) live apart.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Journal from "../../Journal.js"
import { journalKeys } from "../../Keys.js"
import { cutoff } from "../journal/cutoff.js"
import { buildEntries, isoClock, recordOf, refuseImport, refuseUnstorable } from "../journal/entries.js"
import * as HeldBack from "../journal/heldBack.js"
import type { StepAddress } from "../journal/ids.js"
import * as PagedRows from "../journal/pagedRows.js"
import * as Pruning from "../journal/pruning.js"
import * as Signing from "../journal/signing.js"
import { finishingPhases, isPrunable, noneOpen, prunablePhases } from "../journal/status.js"
import * as StoredEntries from "../journal/storedEntries.js"
import * as StoredRows from "../journal/storedRows.js"
import { atStorableTime, leaseEnd, pastStoredTime } from "../journal/storedTime.js"
import { appendsAtOnce } from "../journal/synchronous.js"
import { readsTogether } from "../journal/together.js"
import * as UnreadStart from "../journal/unreadStart.js"
import { RUN_SUFFIX } from "../util/identifier.js"
import { groupCommit } from "./groupCommit.js"
import * as GroupRead from "./groupRead.js"
import { entriesTable, migrate, openSagas, openStatusSagas, sagasTable } from "./migrations.js"
import * as PgAppend from "./pgAppend.js"
import * as PgBatch from "./pgBatch.js"
import * as PgLoad from "./pgLoad.js"
import * as Prepared from "./prepared.js"
import { decodeClaimed, decodeEntries, decodeRecords, storedRow, storedRows } from "./rows.js"
import {
  describeFailure,
  isLocked,
  isUniqueViolation,
  journalError,
  leavesOutcomeUnknown,
  neverReachedServer
} from "./sqlite.js"
import * as SqliteAppend from "./sqliteAppend.js"
import * as SqliteDriver from "./sqliteDriver.js"
import { storedTimeForm } from "./storedTimeForm.js"
import * as Unflushed from "./unflushed.js"

const finished = Journal.SagaStatus.literals.filter(Journal.isFinished)
const prunableStatuses = Journal.SagaStatus.literals.filter(isPrunable)
/** How many sagas one statement of `prune` reads or deletes. */
const PRUNE_SLICE = 500

/** The statuses under which a lease means something, as SQL text. */
const activeStatuses = Journal.SagaStatus.literals.filter(Journal.isActive)

/** The status `drafts` set, or `null` when none of them is a saga-level phase (the status stays). */
const statusSetBy = (drafts: ReadonlyArray<Pick<Journal.Entry, "phase">>): Journal.SagaStatus | null => {
  const fromRunning = Journal.statusAfter("running", drafts)
  return fromRunning === Journal.statusAfter("completed", drafts) ? fromRunning : null
}

/**
 * Whether `text` holds a NUL character: no store holds one (every append refuses it), and
 * PostgreSQL fails a statement that names one, so a read or lease naming such a saga finds nothing.
 */
const holdsNul = (text: string): boolean => text.includes("\0")

/**
 * `rows` cut into runs of 256, 128, … 1: few multi-row `INSERT`s for a batch, few distinct
 * statements for the driver to prepare, and far below any backend's limit on bound parameters.
 */
const runs = <A>(rows: ReadonlyArray<A>): ReadonlyArray<ReadonlyArray<A>> => {
  const cut: Array<ReadonlyArray<A>> = []
  let start = 0
  for (let size = 256; size >= 1; size /= 2) {
    for (; rows.length - start >= size; start += size) cut.push(rows.slice(start, start + size))
  }
  return cut
}

/** A table in a statement, or its alias. */
type TableRef = Statement.Fragment | Statement.Identifier

/** What an append comes to: its entries, or its own `ConcurrencyConflict`, `LeaseHeld` or `JournalError`. */
type Outcome = Exit.Exit<ReadonlyArray<Journal.Entry>, Journal.AppendError>

/** Where a saga row stands, read when a compare-and-set did not match. */
interface PositionRow {
  readonly revision: unknown
  readonly digest: unknown
  readonly lease_owner: unknown
  readonly lease_expires_at: unknown
}

/** One caller's append, its entries built (seq, time, hashes) in the caller's fiber. */
interface Request {
  readonly sagaId: string
  readonly expected: Journal.Expected
  readonly written: ReadonlyArray<Journal.Entry>
  readonly status: Journal.SagaStatus | null
  readonly at: string
  /** The process's clock when the entries were built (lease times on stores that use it). */
  readonly millis: number
  /** Who takes the lease with the append, or nobody (then it only passes while nobody holds one). */
  readonly holder: Journal.Holder | null
  /** Whether its entries may commit without waiting for their flush (only steps' `EXECUTED`). */
  readonly unflushed: boolean
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
  hash: entry.hash,
  mac: entry.mac ?? null
})

/**
 * The `Journal` service on the `SqlClient` in context, on tables already migrated (the CLI's read
 * commands, which never migrate, check the version first).
 */
export const makeUnmigrated = Effect.gen(function* () {
  const keys = Option.getOrUndefined(yield* journalKeys)
  const client = yield* SqlClient.SqlClient
  const sql = client.withoutTransforms()
  const unflushedAllowed = Unflushed.isAllowed(client)
  const runNamed = Prepared.runNamedOf(client)
  const sendNamed = Prepared.sendNamedOf(client)
  /** Runs a statement by name where the client says how (PostgreSQL through `Postgres.layerClient`). */
  const run: GroupRead.Run = (name, text, values) =>
    runNamed === undefined ? sql.unsafe(text, values) : runNamed(name, text, values)
  const direct = SqliteDriver.directOf(client)
  const sagas = sql(sagasTable)
  const entries = sql(entriesTable)
  const onPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })

  // Lease times are ISO-8601 text (text order is time order). PostgreSQL, the store for several
  // hosts, reads them off the database's own clock (`now()`), so that hosts whose clocks differ
  // agree on when a lease lapses; SQLite, shared by the processes of one host, is given the
  // process's clock (Effect's `Clock`) as parameters. `timeAfter(arg)` is the time `offset` ms from
  // now in SQL; `timeArg(millis, offset)` is the argument it takes.
  const isoOfPgNow = sql.literal(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`)
  const timeAfter = (arg: unknown) =>
    onPg
      ? sql`to_char((now() + ${arg}::bigint * interval '1 millisecond') AT TIME ZONE 'UTC', ${isoOfPgNow})`
      : sql`${arg}`
  const timeArg = (millis: number, offset: number | null): string | number | null =>
    offset === null ? null : onPg ? offset : new Date(leaseEnd(millis, offset)).toISOString()

  const recordColumns = sql.literal(
    `saga_id AS "sagaId", status, revision, digest, created_at AS "createdAt", updated_at AS "updatedAt",
  lease_owner AS "leaseOwner", lease_expires_at AS "leaseExpiresAt"`
  )
  const entryColumns = sql.literal(
    `saga_id AS "sagaId", seq, step_id AS "stepId", tool_name AS "toolName", phase, input, payload, at, hash, mac`
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
    Effect.forEach(runs(written), (run) => sql`INSERT INTO ${entries} ${sql.insert(run.map(toRow))}`, {
      discard: true
    })

  /** A write whose connection was never made: it sent nothing, and says so. */
  const notSent = (operation: string, error: SqlError) =>
    new Journal.JournalError({
      operation,
      reason: `${describeFailure(error)}; it was not written: no connection to the database could be made`
    })

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
        : Effect.fail(neverReachedServer(error) ? notSent(operation, error) : journalError(operation)(error))

  // The append path runs its statements straight on the transaction's connection: compiled once
  // for the client's dialect with placeholder arguments (`_`), then given their arguments in
  // order. No statement object, compilation or span per statement.
  const _ = null
  const text = (statement: Statement.Statement<unknown>) => statement.compile()[0]
  // The compare-and-set is the first statement of an append: on any backend it matches only while
  // the saga is still where the writer last saw it and nobody else holds its lease (the holder's
  // name, then the time now). An append keeps a lease (the one it names, else the one there is)
  // unless it sets a status that is not active: the append that halts or ends the saga drops it. One
  // that sets no status keeps it whatever the saga's status (an operator's command on a saga that
  // waits, needs attention or failed to compensate holds the lease until it releases it).
  const bare = (name: string) => sql.literal(name)
  const ofSagas = (name: string) => sql`${sagas}.${sql.literal(name)}`
  // A lease is free when nobody holds it, the owner does, or its end (in the form stores write) is past.
  const leaseEndInForm = (column: string) => sql.literal(storedTimeForm(onPg, column))
  const leaseIsFreeAt = (owner: string | null, millis: number) =>
    sql`(lease_owner IS NULL OR lease_owner = ${owner} OR (lease_expires_at <= ${timeAfter(timeArg(millis, 0))} AND ${leaseEndInForm("lease_expires_at")}))`
  const leaseIsFree = (table: string) => {
    const [owner, end] = [`${table}lease_owner`, `${table}lease_expires_at`]
    return sql`(${sql.literal(owner)} IS NULL OR ${sql.literal(owner)} = ${_} OR (${sql.literal(end)} <= ${timeAfter(_)} AND ${leaseEndInForm(end)}))`
  }
  const activeList = sql.literal(`(${activeStatuses.map((status) => `'${status}'`).join(", ")})`)
  const keptWhileActive = (column: typeof bare, name: string, value: Statement.Fragment) =>
    sql`CASE WHEN COALESCE(${_}, 'running') IN ${activeList} THEN COALESCE(${value}, ${column(name)}) END`
  const compareAndSetNewSql = sql`INSERT INTO ${sagas} (saga_id, status, revision, digest, created_at, updated_at,
  lease_owner, lease_expires_at)
VALUES (${_}, ${_}, ${_}, ${_}, ${_}, ${_}, ${_}, ${timeAfter(_)})
ON CONFLICT (saga_id) DO UPDATE SET status = COALESCE(${_}, ${sagas}.status), revision = ${_},
  digest = ${_}, updated_at = ${_}, lease_owner = ${keptWhileActive(ofSagas, "lease_owner", sql`${_}`)},
  lease_expires_at = ${keptWhileActive(ofSagas, "lease_expires_at", timeAfter(_))}
WHERE ${sagas}.revision = 0 AND ${sagas}.digest = ${_} AND ${leaseIsFree(`${sagasTable}.`)}
RETURNING saga_id`
  const compareAndSetNew = text(compareAndSetNewSql)
  const compareAndSetSql = sql`UPDATE ${sagas} SET status = COALESCE(${_}, status), revision = ${_}, digest = ${_},
  updated_at = ${_}, lease_owner = ${keptWhileActive(bare, "lease_owner", sql`${_}`)},
  lease_expires_at = ${keptWhileActive(bare, "lease_expires_at", timeAfter(_))}
WHERE saga_id = ${_} AND revision = ${_} AND digest = ${_} AND ${leaseIsFree("")}
RETURNING saga_id`
  const compareAndSet = text(compareAndSetSql)
  // SQLite: an append that sets no status, by the holder of the saga's lease while it is active,
  // changes neither the status nor the lease's owner. This compare-and-set leaves both alone, so
  // that SQLite updates none of the row's indexes (each covers `status` or `lease_owner`, and a
  // column a `SET` names counts as changed). It matches only where the full one would, with the
  // same outcome; where it does not match, the full one runs.
  const compareAndSetSteady = text(sql`UPDATE ${sagas} SET revision = ${_}, digest = ${_}, updated_at = ${_},
  lease_expires_at = ${_}
WHERE saga_id = ${_} AND revision = ${_} AND digest = ${_} AND lease_owner = ${_} AND status IN ${activeList}
RETURNING saga_id`)
  const maxSeq = text(sql`SELECT MAX(seq) AS seq FROM ${entries} WHERE saga_id = ${_}`)
  const selectPosition = text(
    sql`SELECT revision, digest, lease_owner, lease_expires_at FROM ${sagas} WHERE saga_id = ${_}`
  )
  // Read after a write whose outcome was lost: the saga's row and the hash of its entry at one seq.
  // On PostgreSQL the row is read `FOR SHARE`: a write still in flight on the lost connection that
  // already changed the row is waited for.
  const selectWritten = text(
    sql`SELECT revision, digest, (SELECT hash FROM ${entries} WHERE saga_id = ${_} AND seq = ${_}) AS hash
FROM ${sagas} WHERE saga_id = ${_}${sql.literal(onPg ? " FOR SHARE" : "")}`
  )
  const inserts = new Map<number, string>()
  const insert = (rows: number) => {
    let statement = inserts.get(rows)
    if (statement === undefined) {
      const row = {
        ...{ saga_id: _, seq: _, step_id: _, tool_name: _, phase: _ },
        ...{ input: _, payload: _, at: _, hash: _, mac: _ }
      }
      statement = text(sql`INSERT INTO ${entries} ${sql.insert(Array.from({ length: rows }, () => row))}`)
      inserts.set(rows, statement)
    }
    return statement
  }

  /** `lostRace`, synchronously on the store's own SQLite connection, for a failure `writeNow` threw. */
  const lostRaceNow = (direct: SqliteDriver.Direct, request: Request, thrown: unknown): Journal.AppendError => {
    const error = new SqlError({ cause: thrown, message: "Failed to execute statement" })
    if (!isUniqueViolation(error)) return journalError("append")(error)
    let actualRevision = -1
    try {
      const rows = direct.run(maxSeq, [request.sagaId]) as ReadonlyArray<{ readonly seq: unknown }>
      actualRevision = Number(rows[0]?.seq ?? 0)
    } catch {
      // As `lostRace`: the conflict stands, its revision unknown.
    }
    return new Journal.ConcurrencyConflict({
      sagaId: request.sagaId,
      expectedRevision: request.expected.revision,
      actualRevision
    })
  }

  /** The compare-and-set of an append: the saga's first (an upsert) or a later one, and its arguments. */
  const compareAndSetOf = (request: Request): { readonly first: boolean; readonly args: ReadonlyArray<unknown> } => {
    const { at, expected, holder, millis, sagaId, status, written } = request
    const last = written[written.length - 1]
    const revision = last?.seq ?? expected.revision
    const digest = last?.hash ?? expected.digest
    const owner = holder?.owner ?? null
    const expiresAt = timeArg(millis, holder?.ttlMillis ?? null)
    const now = timeArg(millis, 0)
    const newLease = Journal.isActive(status ?? "running") ? holder : null
    return expected.revision === 0
      ? {
          first: true,
          args: [
            ...[sagaId, status ?? "running", revision, digest, at, at, newLease?.owner ?? null],
            ...[timeArg(millis, newLease?.ttlMillis ?? null), status, revision, digest, at, status, owner, status],
            ...[expiresAt, expected.digest, owner, now]
          ]
        }
      : {
          first: false,
          args: [
            ...[status, revision, digest, at, status, owner, status, expiresAt],
            ...[sagaId, expected.revision, expected.digest, owner, now]
          ]
        }
  }

  /** The steady compare-and-set's arguments, if `request` can take it (SQLite alone uses it). */
  const steadyArgs = (request: Request): ReadonlyArray<unknown> | undefined => {
    const { at, expected, holder, millis, sagaId, status, written } = request
    const last = written[written.length - 1]
    if (status !== null || holder === null || expected.revision === 0 || last === undefined) return undefined
    const expiresAt = timeArg(millis, holder.ttlMillis)
    return [last.seq, last.hash, at, expiresAt, sagaId, expected.revision, expected.digest, holder.owner]
  }

  /** Why a compare-and-set did not match, read from the saga's row: its lease, or another position. */
  const mismatch = (request: Request, rows: ReadonlyArray<unknown>): Outcome => {
    const { expected, sagaId } = request
    const row = rows[0] as PositionRow | undefined
    const actualRevision = Number(row?.revision ?? 0)
    return Exit.fail(
      actualRevision === expected.revision && (row?.digest ?? expected.digest) === expected.digest
        ? new Journal.LeaseHeld({ sagaId, owner: String(row?.lease_owner), expiresAt: String(row?.lease_expires_at) })
        : new Journal.ConcurrencyConflict({ sagaId, expectedRevision: expected.revision, actualRevision })
    )
  }

  /** The compare-and-set of one append: its entries if it matched, its conflict if not. */
  const compareAndSetFor = (conn: Connection, request: Request): Effect.Effect<Outcome, SqlError> => {
    const { first, args } = compareAndSetOf(request)
    return Effect.flatMap(conn.execute(first ? compareAndSetNew : compareAndSet, args, undefined), (rows) =>
      rows.length > 0
        ? Effect.succeed(Exit.succeed(request.written))
        : Effect.map(conn.execute(selectPosition, [request.sagaId], undefined), (rows) => mismatch(request, rows))
    )
  }

  const entryArgs = (entry: Journal.Entry) => [
    ...[entry.sagaId, entry.seq, entry.stepId, entry.toolName, entry.phase],
    ...[entry.input, entry.payload, entry.at, entry.hash, entry.mac ?? null]
  ]

  /**
   * PostgreSQL: the statement's own (implicit) transaction commits without waiting for its WAL
   * flush (`synchronous_commit` is read when a transaction commits; `set_config(…, true)` sets it for
   * this transaction only). A condition of the insert, so that it runs in the one round trip.
   */
  const commitsUnflushed = sql.literal(` AND set_config('synchronous_commit', 'off', true) = 'off'`)

  const typedRow = sql`(${_}::text, ${_}::integer, ${_}::text, ${_}::text, ${_}::text, ${_}::text, ${_}::text, ${_}::text, ${_}::text, ${_}::text)`

  /**
   * PostgreSQL: an append alone as one autocommitted statement, so one round trip and one WAL flush
   * instead of four round trips (BEGIN, compare-and-set, INSERT, COMMIT): the compare-and-set in a
   * CTE, and the entries inserted only if it matched. Named by its shape, for clients that prepare
   * statements by name.
   */
  const oneStatements = new Map<string, { readonly name: string; readonly text: string }>()
  const oneStatement = (first: boolean, rows: number, unflushed: boolean) => {
    const name = `effect_saga_append_${first ? "new" : "next"}_${rows}${unflushed ? "_unflushed" : ""}`
    let statement = oneStatements.get(name)
    if (statement === undefined) {
      const values = Array.from({ length: rows }, () => typedRow)
      const appendText = text(sql`WITH cas AS (${first ? compareAndSetNewSql : compareAndSetSql})
INSERT INTO ${entries} (saga_id, seq, step_id, tool_name, phase, input, payload, at, hash, mac)
SELECT * FROM (VALUES ${sql.csv(values)}) AS written (saga_id, seq, step_id, tool_name, phase, input, payload, at, hash, mac)
WHERE EXISTS (SELECT 1 FROM cas)${unflushed ? commitsUnflushed : sql.literal("")}
RETURNING seq`)
      statement = { name, text: appendText }
      oneStatements.set(name, statement)
    }
    return statement
  }

  /** Whether a batch can be one statement: PostgreSQL, each saga once, each append with entries. */
  const oneStatementFits = (batch: ReadonlyArray<Request>) =>
    onPg &&
    new Set(batch.map((request) => request.sagaId)).size === batch.length &&
    batch.every((request) => request.written.length > 0)

  /** PostgreSQL: a batch as one statement (pgBatch.ts), by name where the client says how. */
  const batchInOneStatement = (
    batch: ReadonlyArray<Request>,
    unflushed: boolean
  ): Effect.Effect<ReadonlyArray<Outcome>, SqlError> => {
    const statement = PgBatch.statement(unflushed)
    const values = PgBatch.parameters(batch)
    return Effect.flatMap(run(statement.name, statement.text, values), (rows) => {
      const written = PgBatch.writtenBySaga(rows)
      return Effect.forEach(batch, (request) =>
        written.get(request.sagaId) === request.written.length
          ? Effect.succeed(Exit.succeed(request.written) as Outcome)
          : Effect.map(sql.unsafe(selectPosition, [request.sagaId]), (position) => mismatch(request, position))
      )
    })
  }

  /** What an append that failed with `error` gets: a conflict if another writer got there first. */
  const refusedBy = (request: Request) => lostRace(request.sagaId, request.expected.revision, "append")

  /** Whether the row and entry `selectWritten` read hold `request`'s entries: the saga at its last, or that entry there. */
  const holds = (request: Request, rows: ReadonlyArray<unknown>) => {
    const row = rows[0] as { readonly revision: unknown; readonly digest: unknown; readonly hash: unknown } | undefined
    const last = request.written[request.written.length - 1]
    if (row === undefined || last === undefined) return false
    return (Number(row.revision) === last.seq && row.digest === last.hash) || row.hash === last.hash
  }

  /**
   * What an append whose write failed with `error` comes to. Where the failure leaves its outcome
   * unknown (the connection was lost once the statement or its `COMMIT` was sent), the saga is read
   * again, on another connection of the pool, before anything is answered: an append the store
   * holds succeeds, with its entries; one it does not hold gets `otherwise`; if the journal cannot
   * be read either, a `JournalError` says that whether it was written is unknown.
   */
  const settle = (request: Request, error: SqlError, otherwise: Effect.Effect<Outcome>): Effect.Effect<Outcome> => {
    const last = request.written[request.written.length - 1]
    if (last === undefined || !leavesOutcomeUnknown(error)) return otherwise
    const reread = sql.unsafe(selectWritten, [request.sagaId, last.seq, request.sagaId])
    return Effect.matchEffect(Effect.retry(reread, { times: 1 }), {
      onSuccess: (rows) => (holds(request, rows) ? Effect.succeed(Exit.succeed(request.written)) : otherwise),
      onFailure: (readError) =>
        Effect.succeed(
          Exit.fail(
            new Journal.JournalError({
              operation: "append",
              reason: `${describeFailure(error)}; whether it was written is unknown: the journal could not be read after (${describeFailure(readError)})`
            })
          )
        )
    })
  }

  /** `settle` for an append written on its own: one the store does not hold fails as today, saying so. */
  const settleAlone = (request: Request, error: SqlError): Effect.Effect<Outcome> =>
    settle(
      request,
      error,
      Effect.exit(
        Effect.mapError(refusedBy(request)(error), (refusal) =>
          leavesOutcomeUnknown(error) && refusal._tag === "JournalError"
            ? new Journal.JournalError({
                operation: "append",
                reason: `${refusal.reason}; it was not written: the journal, read again, does not hold it`
              })
            : refusal
        )
      )
    )

  /** An append alone as one statement: its text (by shape) and its arguments. */
  const oneStatementOf = (request: Request) => {
    const { first, args } = compareAndSetOf(request)
    const written = request.written
    const statement = oneStatement(first, written.length, unflushedAllowed && request.unflushed)
    return { ...statement, values: [...args, ...written.flatMap(entryArgs)] }
  }

  /** What the one statement of `request` returned says: its entries, or (read from its row) why not. */
  const afterOneStatement = (
    request: Request,
    inserted: ReadonlyArray<unknown>
  ): Effect.Effect<ReadonlyArray<Journal.Entry>, Journal.AppendError> =>
    inserted.length === request.written.length
      ? Effect.succeed(request.written)
      : Effect.flatten(
          Effect.catchAll(
            Effect.map(sql.unsafe(selectPosition, [request.sagaId]), (rows) => mismatch(request, rows)),
            (error) => Effect.exit(refusedBy(request)(error))
          )
        )

  const appendInOneStatement = (request: Request): Effect.Effect<Outcome> => {
    const { name, text, values } = oneStatementOf(request)
    return Effect.matchEffect(run(name, text, values), {
      onFailure: (error) => settleAlone(request, error),
      onSuccess: (inserted) => Effect.exit(afterOneStatement(request, inserted))
    })
  }

  /**
   * Appends in one transaction, in arrival order: every compare-and-set first, then the entries of
   * those that matched, in a few multi-row `INSERT`s. An append whose compare-and-set fails writes
   * nothing and the others go on; a store failure fails them all (the transaction rolls back).
   */
  const write = (conn: Connection, batch: ReadonlyArray<Request>) =>
    Effect.flatMap(
      Effect.forEach(batch, (request) => compareAndSetFor(conn, request)),
      (outcomes): Effect.Effect<ReadonlyArray<Outcome>, SqlError> => {
        const rows = outcomes.flatMap((outcome) => (Exit.isSuccess(outcome) ? outcome.value : []))
        return Effect.as(
          Effect.forEach(runs(rows), (run) => conn.execute(insert(run.length), run.flatMap(entryArgs), undefined), {
            discard: true
          }),
          outcomes
        )
      }
    )

  /**
   * SQLite on the store's own connection: a batch's whole transaction as one synchronous call
   * (`BEGIN IMMEDIATE`, every compare-and-set, the inserts, `COMMIT`): `write`'s statements, the
   * steady compare-and-set tried first where it applies. The caller makes sure nothing else runs on
   * the connection meanwhile; nothing can interrupt it half-way: it commits, or it rolls back and
   * throws. `unflushed`: it commits under `synchronous = NORMAL`, the connection back to `FULL` after.
   */
  const writeNow = (direct: SqliteDriver.Direct, batch: ReadonlyArray<Request>, unflushed: boolean) => {
    const run = direct.run
    const compareAndSetOne = (request: Request): Outcome => {
      const steady = steadyArgs(request)
      if (steady !== undefined && run(compareAndSetSteady, steady).length > 0) return Exit.succeed(request.written)
      const { first, args } = compareAndSetOf(request)
      return run(first ? compareAndSetNew : compareAndSet, args).length > 0
        ? Exit.succeed(request.written)
        : mismatch(request, run(selectPosition, [request.sagaId]))
    }
    if (unflushed) run("PRAGMA synchronous = NORMAL", [])
    try {
      run("BEGIN IMMEDIATE", [])
      try {
        const outcomes = batch.map(compareAndSetOne)
        const rows = outcomes.flatMap((outcome) => (Exit.isSuccess(outcome) ? outcome.value : []))
        for (const cut of runs(rows)) run(insert(cut.length), cut.flatMap(entryArgs))
        run("COMMIT", [])
        return outcomes
      } catch (error) {
        if (direct.inTransaction()) run("ROLLBACK", [])
        throw error
      }
    } finally {
      if (unflushed) run("PRAGMA synchronous = FULL", [])
    }
  }

  /** `writeNow` under the client's lock: no other statement of the client runs meanwhile. */
  const writeDirect = (
    direct: SqliteDriver.Direct,
    batch: ReadonlyArray<Request>,
    unflushed: boolean
  ): Effect.Effect<ReadonlyArray<Outcome>, SqlError> => direct.exclusive(() => writeNow(direct, batch, unflushed))

  /**
   * A transaction whose `COMMIT` or `ROLLBACK` failed: `@effect/sql` makes the failure a defect;
   * here it is the write's failure again (a `COMMIT` whose connection was lost is settled as any).
   */
  const endFailed = (defect: unknown) => (defect instanceof SqlError ? Option.some(Effect.fail(defect)) : Option.none())

  /**
   * Runs `f` in a write transaction, on the transaction's connection; `unflushed`: one that may
   * commit without waiting for its flush (the SQLite client's transaction reads it).
   */
  const transaction = <A>(f: (conn: Connection) => Effect.Effect<A, SqlError>, unflushed = false) => {
    const written = Effect.catchSomeDefect(
      sql.withTransaction(
        Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (conn) =>
          Option.isSome(conn) ? f(conn.value[0]) : Effect.dieMessage("effect-saga: a transaction without a connection")
        )
      ),
      endFailed
    )
    return unflushed ? Effect.locally(written, Unflushed.currentCommitUnflushed, true) : written
  }

  /** Whether every append of `batch` may commit unflushed, on a client that allows it. */
  const allUnflushed = (batch: ReadonlyArray<Request>) =>
    unflushedAllowed && batch.every((request) => request.unflushed)

  /** A batch in a write transaction of its own: synchronously on the store's own SQLite connection. */
  const writeBatch = (batch: ReadonlyArray<Request>) =>
    direct === undefined
      ? transaction((conn) => write(conn, batch), !onPg && allUnflushed(batch))
      : writeDirect(direct, batch, allUnflushed(batch))

  /** One append in a transaction of its own; a store failure is its own typed error. */
  const commitOne = (request: Request): Effect.Effect<Outcome> =>
    Effect.catchAll(
      Effect.map(writeBatch([request]), (outcomes) => outcomes[0]!),
      (error) => settleAlone(request, error)
    )

  /** One append inside the caller's own open transaction, as a savepoint of it. */
  const commitInside = (request: Request): Effect.Effect<Outcome> =>
    Effect.catchAll(
      transaction((conn) => Effect.map(write(conn, [request]), (outcomes) => outcomes[0]!)),
      (error) => Effect.exit(lostRace(request.sagaId, request.expected.revision, "append")(error))
    )

  /** An append that has a commit of its own: on PostgreSQL one statement, when its entries are few. */
  const alone = (request: Request): Effect.Effect<Outcome> =>
    onPg && request.written.length > 0 && request.written.length <= 64
      ? appendInOneStatement(request)
      : commitOne(request)

  /**
   * A batch of appends in one transaction. If the transaction fails, a lock held past the busy
   * timeout is everyone's error (each would have waited for it alone); anything else is retried one
   * append a transaction, so that one append's failure stays its own. A failure that leaves the
   * outcome unknown (the connection lost once the batch was sent) is settled first (`settle`): an
   * append the store holds succeeds, and only the others are retried.
   */
  const commit = (batch: ReadonlyArray<Request>): Effect.Effect<ReadonlyArray<Outcome>> =>
    batch.length === 1
      ? Effect.map(alone(batch[0]!), (outcome) => [outcome])
      : Effect.catchAll(
          oneStatementFits(batch) ? batchInOneStatement(batch, allUnflushed(batch)) : writeBatch(batch),
          (error) =>
            isLocked(error)
              ? Effect.succeed(batch.map(() => Exit.fail(journalError("append")(error))))
              : Effect.forEach(batch, (request) => settle(request, error, commitOne(request)))
        )

  const clock = isoClock()
  const pace = new SqliteAppend.Pace()
  const submit = groupCommit(commit, (size) => pace.observe(size))

  /** An append's request, its entries built (seq, time, hash chain) at `millis`; or why it cannot be stored. */
  const requestOf = (
    sagaId: string,
    expected: Journal.Expected,
    drafts: ReadonlyArray<Journal.Draft>,
    holder: Journal.Holder | undefined,
    millis: number
  ): Either.Either<Request, Journal.JournalError> => {
    const unstorable = refuseUnstorable("append", sagaId, drafts) ?? pastStoredTime("append", millis)
    if (unstorable !== undefined) return Either.left(unstorable)
    const at = clock(millis)
    return Either.right({
      sagaId,
      expected,
      written: buildEntries(sagaId, expected, drafts, at, keys),
      status: statusSetBy(drafts),
      at,
      millis,
      holder: holder ?? null,
      unflushed: Unflushed.mayCommitUnflushed(drafts)
    })
  }

  /** `requestOf` at the time of `fiber`'s clock. */
  const requestOn = (
    fiber: Fiber.RuntimeFiber<unknown, unknown>,
    sagaId: string,
    expected: Journal.Expected,
    drafts: ReadonlyArray<Journal.Draft>,
    holder: Journal.Holder | undefined
  ) =>
    requestOf(
      sagaId,
      expected,
      drafts,
      holder,
      Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis()
    )

  /** Whether `fiber` runs inside a transaction of its caller's (`sql.withTransaction`). */
  const insideTransaction = (fiber: Fiber.RuntimeFiber<unknown, unknown>) =>
    Option.isSome(Context.getOption(fiber.currentContext, SqlClient.TransactionConnection))

  /**
   * Builds the entries (seq, time, hash chain) in the caller's fiber, then waits, uninterruptibly,
   * for the transaction that holds them: the caller goes on only once they are committed. An append
   * made inside the caller's own transaction is written in it, not batched: it must commit or roll
   * back with that transaction (and a batch would wait for the connection the caller holds).
   */
  const append = (
    sagaId: string,
    expected: Journal.Expected,
    drafts: ReadonlyArray<Journal.Draft>,
    holder?: Journal.Holder
  ) =>
    // The clock and the caller's transaction read off the fiber in one step: an append's own cost.
    Effect.withFiberRuntime<ReadonlyArray<Journal.Entry>, Journal.AppendError>((fiber) => {
      const request = requestOn(fiber, sagaId, expected, drafts, holder)
      if (Either.isLeft(request)) return Effect.fail(request.left)
      return insideTransaction(fiber)
        ? Effect.flatten(commitInside(request.right))
        : Effect.uninterruptible(submit(request.right))
    })

  // On the store's own SQLite connection, an append may be done at once (sqliteAppend.ts).
  if (direct !== undefined) {
    appendsAtOnce.set(
      append,
      SqliteAppend.atOnce({
        direct,
        groupIdle: submit.idle,
        pace,
        prepare: requestOf,
        write: (request) => writeNow(direct, [request], allUnflushed([request]))[0]!,
        failed: (request, error) => lostRaceNow(direct, request, error)
      })
    )
  }

  const traffic = new PgAppend.Traffic()

  /**
   * PostgreSQL through `Postgres.layerClient`: `append`, where an append that stays alone is sent
   * straight (pgAppend.ts): the same statement as group commit's batch of one, without group commit
   * around it.
   */
  const appendOnPg =
    (send: Prepared.SendNamed) =>
    (sagaId: string, expected: Journal.Expected, drafts: ReadonlyArray<Journal.Draft>, holder?: Journal.Holder) =>
      Effect.withFiberRuntime<ReadonlyArray<Journal.Entry>, Journal.AppendError>((fiber) => {
        const prepared = requestOn(fiber, sagaId, expected, drafts, holder)
        if (Either.isLeft(prepared)) return Effect.fail(prepared.left)
        const request = prepared.right
        if (insideTransaction(fiber)) return Effect.flatten(commitInside(request))
        const fits = request.written.length > 0 && request.written.length <= 64
        if (!traffic.arrive() || !fits) return Effect.uninterruptible(batched(request))
        return Effect.uninterruptible(
          Effect.zipRight(
            Effect.yieldNow(),
            Effect.suspend(() => (traffic.alone() ? sendAlone(send, request) : batched(request)))
          )
        )
      })

  /** `request` through group commit, counted out when it has its outcome. */
  const batched = (request: Request) =>
    Effect.flatMap(Effect.exit(submit(request)), (exit) => {
      traffic.leave()
      return exit
    })

  /** `request` as one statement, on its own: its entries, or why not. */
  const sendAlone = (send: Prepared.SendNamed, request: Request) =>
    Effect.async<ReadonlyArray<Journal.Entry>, Journal.AppendError>((resume) => {
      const { name, text, values } = oneStatementOf(request)
      send(name, text, values, (error, inserted) => {
        if (error === undefined) {
          traffic.leave()
          resume(afterOneStatement(request, inserted))
        } else {
          resume(
            Effect.flatten(
              Effect.ensuring(
                settleAlone(request, error),
                Effect.sync(() => traffic.leave())
              )
            )
          )
        }
      })
    })

  const importSaga = (imported: ReadonlyArray<Journal.Entry>) =>
    Effect.suspend(() => {
      const refused = refuseImport(imported)
      if (refused !== undefined) return Effect.fail(refused)
      const record = recordOf(imported)
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

  /**
   * Runs a read of the saga ids `$1` (`PgLoad.byKey`) unnamed: planned each time, for the tables'
   * current size. A plan a connection cached while a new store's tables were small scans them
   * whole, and nothing plans it again until autovacuum analyzes them (a minute or more): 11 ms a
   * load at 3,000 sagas.
   */
  const readPlannedEachTime: GroupRead.Run = (_name, text, values) => sql.unsafe(text, values)

  // On PostgreSQL, reads outside a transaction of the caller's share a statement with the reads of
  // other sagas that arrive together (groupRead.ts); inside one, they run on its connection.
  const readEntries = GroupRead.groupRead(
    readPlannedEachTime,
    "effect_saga_read_entries",
    text(sql`SELECT ${entryColumns} FROM ${sql.literal(PgLoad.byKey(entriesTable, "e"))} ORDER BY saga_id, seq`),
    "sagaId"
  )
  const readRecords = GroupRead.groupRead(
    readPlannedEachTime,
    "effect_saga_read_sagas",
    text(sql`SELECT ${recordColumns} FROM ${sql.literal(PgLoad.byKey(sagasTable, "s"))}`),
    "sagaId"
  )
  const grouped = <A>(
    alone: Effect.Effect<ReadonlyArray<A>, SqlError>,
    together: Effect.Effect<ReadonlyArray<unknown>, SqlError>
  ): Effect.Effect<ReadonlyArray<unknown>, SqlError> =>
    onPg
      ? Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (outer) =>
          Option.isSome(outer) ? alone : together
        )
      : alone

  // SQLite: on the store's own connection at once while it is idle (sqliteDriver.ts).
  const selectEntries = text(sql`SELECT ${entryColumns} FROM ${entries} WHERE saga_id = ${_} ORDER BY seq`)
  const selectRecord = text(sql`SELECT ${recordColumns} FROM ${sagas} WHERE saga_id = ${_}`)

  const read = (
    sagaId: string
  ): Effect.Effect<ReadonlyArray<Journal.Entry>, Journal.JournalError | Journal.JournalCorrupted> =>
    holdsNul(sagaId)
      ? Effect.succeed([])
      : Effect.flatMap(
          Effect.mapError(
            SqliteDriver.runWhenIdle(
              direct,
              selectEntries,
              [sagaId],
              grouped(
                sql`SELECT ${entryColumns} FROM ${entries} WHERE saga_id = ${sagaId} ORDER BY seq`,
                readEntries(sagaId)
              )
            ),
            journalError("read")
          ),
          (rows) => decodeEntries(sagaId, rows as ReadonlyArray<Record<string, unknown>>)
        )

  // PostgreSQL: a load's two reads as one statement (pgLoad.ts), which `inspect` finds by `read`.
  const loadRows = GroupRead.groupRead(
    readPlannedEachTime,
    PgLoad.statement.name,
    PgLoad.statement.text,
    PgLoad.key,
    PgLoad.oneSaga
  )
  const readTogether = (sagaId: string) =>
    holdsNul(sagaId)
      ? PgLoad.decode(sagaId, [])
      : Effect.flatMap(
          Effect.mapError(grouped(sql.unsafe(PgLoad.oneSaga.text, [sagaId]), loadRows(sagaId)), journalError("read")),
          (rows) => PgLoad.decode(sagaId, rows)
        )
  if (onPg) readsTogether.set(read, readTogether)
  // For forensics: the entries undecoded, when one no longer decodes (storedEntries.ts).
  StoredEntries.entryReads.set(read, (sagaId) =>
    Effect.mapError(
      sql<StoredEntries.StoredEntry>`SELECT ${entryColumns} FROM ${entries} WHERE saga_id = ${sagaId} ORDER BY seq`,
      journalError("read")
    )
  )

  const toRecords = (operation: string) => (rows: ReadonlyArray<unknown>) => decodeRecords(operation, rows)

  const selectRow = (sagaId: string) =>
    Effect.mapError(
      SqliteDriver.runWhenIdle(
        direct,
        selectRecord,
        [sagaId],
        grouped(sql`SELECT ${recordColumns} FROM ${sagas} WHERE saga_id = ${sagaId}`, readRecords(sagaId))
      ),
      journalError("get")
    )

  const get = (sagaId: string): Effect.Effect<Option.Option<Journal.SagaRecord>, Journal.JournalError> =>
    holdsNul(sagaId)
      ? Effect.succeed(Option.none())
      : selectRow(sagaId).pipe(
          Effect.flatMap(toRecords("get")),
          Effect.map((records) => Option.fromNullable(records[0]))
        )
  StoredRows.rowReads.set(get, (sagaId) => Effect.map(selectRow(sagaId), storedRow))

  // Least recently updated first, then created first, then the id in code-point order (PostgreSQL's
  // "C" collation, whatever the database's own; SQLite's default): as the memory journal orders them.
  const byUpdate = sql.literal(`updated_at, created_at, saga_id${onPg ? ' COLLATE "C"' : ""}`)
  const selectRows = (filter?: Journal.ListFilter) => {
    if (filter?.status !== undefined && filter.status.length === 0) return Effect.succeed([])
    // Times are compared as the text they are stored as: `updatedBefore` must be in that form too.
    const before = filter?.updatedBefore === undefined ? undefined : cutoff(filter.updatedBefore)
    if (before !== undefined && Either.isLeft(before)) {
      return Effect.fail(new Journal.JournalError({ operation: "list", reason: before.left }))
    }
    const where = [
      ...(filter?.status === undefined ? [] : [sql.in("status", filter.status)]),
      ...(before === undefined ? [] : [sql`updated_at < ${before.right}`])
    ]
    return Effect.mapError(
      sql`SELECT ${recordColumns} FROM ${sagas} ${where.length === 0 ? sql.literal("") : sql`WHERE ${sql.and(where)}`}
ORDER BY ${byUpdate}`,
      journalError("list")
    )
  }

  const list = (filter?: Journal.ListFilter) => Effect.flatMap(selectRows(filter), toRecords("list"))
  StoredRows.rowLists.set(list, (filter) => Effect.map(selectRows(filter), storedRows))
  // The sagas `list` cannot list: entries whose row was deleted behind the library's back.
  StoredRows.rowlessLists.set(list, () =>
    Effect.mapError(
      sql<{ readonly sagaId: string }>`SELECT orphan.saga_id AS "sagaId" FROM ${entries} AS orphan
WHERE NOT EXISTS (SELECT 1 FROM ${sagas} AS kept WHERE kept.saga_id = orphan.saga_id)
GROUP BY orphan.saga_id ORDER BY orphan.saga_id${sql.literal(onPg ? ' COLLATE "C"' : "")}`,
      journalError("list")
    ).pipe(Effect.map((rows) => rows.map((row) => row.sagaId)))
  )

  // The most urgent status first (`PagedRows.urgency`), then the most recently updated, then the id
  // in code-point order (PostgreSQL's "C" collation, SQLite's default).
  const byUrgency = sql.literal(
    `CASE status ${PagedRows.urgency.map((status, at) => `WHEN '${status}' THEN ${at}`).join(" ")} ELSE ${PagedRows.urgency.length} END, updated_at DESC, saga_id${onPg ? ' COLLATE "C"' : ""}`
  )
  const selectPage = (query: PagedRows.PageQuery) => {
    if (query.status !== undefined && query.status.length === 0) return Effect.succeed({ rows: [], total: 0 })
    const before = query.updatedBefore === undefined ? undefined : cutoff(query.updatedBefore)
    if (before !== undefined && Either.isLeft(before)) {
      return Effect.fail(new Journal.JournalError({ operation: "list", reason: before.left }))
    }
    const search = query.search ?? ""
    const where = [
      ...(query.status === undefined ? [] : [sql.in("status", query.status)]),
      ...(before === undefined ? [] : [sql`updated_at < ${before.right}`]),
      ...(search === "" ? [] : [onPg ? sql`strpos(saga_id, ${search}) > 0` : sql`instr(saga_id, ${search}) > 0`])
    ]
    const whereClause = where.length === 0 ? sql.literal("") : sql`WHERE ${sql.and(where)}`
    return Effect.mapError(
      Effect.all([
        sql`SELECT ${recordColumns} FROM ${sagas} ${whereClause}
ORDER BY ${query.order === "updatedAt" ? byUpdate : byUrgency} LIMIT ${query.limit} OFFSET ${query.offset}`,
        sql<{ readonly total: number | string }>`SELECT COUNT(*) AS total FROM ${sagas} ${whereClause}`
      ]),
      journalError("list")
    ).pipe(
      // PostgreSQL's COUNT is a bigint, which the driver hands over as text.
      Effect.map(([rows, count]) => ({ rows: storedRows(rows), total: Number(count[0]?.total ?? 0) }))
    )
  }
  PagedRows.rowPages.set(list, selectPage)

  const countOpen = () =>
    Effect.mapError(
      sql<{ readonly status: Journal.OpenStatus; readonly count: number | string }>`SELECT status, COUNT(*) AS count
FROM ${sagas} WHERE ${sql.literal(openStatusSagas)} GROUP BY status`,
      journalError("countOpen")
    ).pipe(
      Effect.map((rows) => {
        const counts: Record<Journal.OpenStatus, number> = { ...noneOpen }
        // PostgreSQL's COUNT is a bigint, which the driver hands over as text.
        for (const row of rows) counts[row.status] = Number(row.count)
        return counts as Journal.OpenCounts
      })
    )

  /** The phase of the last saga-level entry of the saga in `row` (a table or its alias). */
  const endedInJournal = (row: TableRef) => sql`(SELECT last_entry.phase FROM ${entries} AS last_entry
WHERE last_entry.saga_id = ${row}.saga_id AND last_entry.step_id IS NULL ORDER BY last_entry.seq DESC LIMIT 1)`
  // The row's status, and the journal's own: a row edited to a finished status is not finished.
  const isDone = (row: TableRef) =>
    sql`${row}.status IN ${sql.in(finished)} AND ${endedInJournal(row)} IN ${sql.in(finishingPhases)}`
  // As `isDone`, for a status `prune` may delete: not `compensation_failed`, which may have left an effect live.
  const isPrunableRow = (row: TableRef) =>
    sql`${row}.status IN ${sql.in(prunableStatuses)} AND ${endedInJournal(row)} IN ${sql.in(prunablePhases)}`
  const runRow = sql.literal("run")
  const runIdOfStep = sql.literal(`owned.saga_id || '/' || owned.step_id || '${RUN_SUFFIX}'`)

  // Every read and delete in slices: a statement holds a bounded number of parameters.
  const slicesOf = <A>(items: ReadonlyArray<A>, size: number) =>
    Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size))
  const inSlices = <A, B>(
    items: ReadonlyArray<A>,
    size: number,
    each: (slice: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, SqlError>
  ) => Effect.map(Effect.forEach(slicesOf(items, size), each), (slices) => slices.flat())
  const addressKey = ({ sagaId, stepId }: StepAddress) => JSON.stringify([sagaId, stepId])

  /**
   * What prune reads and deletes, for the cutoff `at` at the time `millis`. A saga whose lease is
   * held (a worker, or an explicit undo of one of its steps, is on it now) is not prunable. To
   * delete, PostgreSQL locks the rows it read until the deletion commits: a claim that comes in
   * between waits, then finds no saga (SQLite's write transaction already holds the file).
   */
  const pruningAt = (at: string, millis: number, toDelete: boolean): Pruning.Pruning<SqlError> => ({
    finishedBefore: Effect.map(
      sql<{ readonly sagaId: string }>`SELECT saga_id AS "sagaId" FROM ${sagas}
WHERE ${isPrunableRow(sagas)} AND updated_at < ${at} AND ${leaseIsFreeAt(null, millis)}${sql.literal(toDelete && onPg ? " FOR UPDATE" : "")}`,
      (rows) => rows.map((row) => row.sagaId)
    ),
    runsOf: (sagaIds) =>
      inSlices(sagaIds, PRUNE_SLICE, (slice) =>
        Effect.map(
          sql<{ readonly sagaId: string; readonly runId: string; readonly finished: number | string }>`SELECT
  owned.saga_id AS "sagaId", ${runRow}.saga_id AS "runId", CASE WHEN ${isDone(runRow)} THEN 1 ELSE 0 END AS "finished"
FROM (SELECT DISTINCT saga_id, step_id FROM ${entries} WHERE ${sql.in("saga_id", slice)} AND step_id IS NOT NULL) AS owned
JOIN ${sagas} AS ${runRow} ON ${runRow}.saga_id = ${runIdOfStep}`,
          (rows) => rows.map(({ finished, runId, sagaId }) => ({ sagaId, runId, finished: Number(finished) === 1 }))
        )
      ),
    journaled: (addresses) =>
      inSlices(addresses, PRUNE_SLICE / 2, (slice) => {
        const sagaIds = slice.map((address) => address.sagaId)
        const stepIds = slice.map((address) => address.stepId)
        return Effect.map(
          sql<StepAddress>`SELECT DISTINCT saga_id AS "sagaId", step_id AS "stepId" FROM ${entries}
WHERE ${sql.in("saga_id", sagaIds)} AND ${sql.in("step_id", stepIds)}`,
          // Any of the sagas with any of the steps: only the pairs asked answer.
          (rows) => {
            const found = new Set(rows.map(addressKey))
            return slice.filter((address) => found.has(addressKey(address)))
          }
        )
      }),
    remove: (sagaIds) =>
      Effect.forEach(
        slicesOf(sagaIds, PRUNE_SLICE),
        (slice) =>
          Effect.zipRight(
            sql`DELETE FROM ${entries} WHERE ${sql.in("saga_id", slice)}`,
            sql`DELETE FROM ${sagas} WHERE ${sql.in("saga_id", slice)}`
          ),
        { discard: true }
      )
  })

  const prune = (before: string) => {
    // Times are compared as the text they are stored as: `before` must be in that form too.
    const at = cutoff(before)
    if (Either.isLeft(at)) return Effect.fail(new Journal.JournalError({ operation: "prune", reason: at.left }))
    return Effect.mapError(
      sql.withTransaction(
        Effect.flatMap(Clock.currentTimeMillis, (millis) => Pruning.prune(pruningAt(at.right, millis, true)))
      ),
      journalError("prune")
    )
  }
  // Reads only: no transaction, so that a read-only connection (the CLI's `prune --dry-run`) can list.
  const prunable = (before: string) =>
    Either.match(cutoff(before), {
      onLeft: (reason) => Effect.fail(new Journal.JournalError({ operation: "prune", reason })),
      onRight: (at) =>
        Effect.mapError(
          Effect.flatMap(Clock.currentTimeMillis, (millis) =>
            Pruning.prune(pruningAt(at, millis, false), { dryRun: true })
          ),
          journalError("prune")
        )
    })

  /**
   * One statement takes the lease if it is free, lapsed or the holder's own. When it does not, a
   * read says why: no such saga, or whose lease it is (and if the lease was dropped in between,
   * the claim is tried again).
   */
  const claim = (
    sagaId: string,
    holder: Journal.Holder
  ): Effect.Effect<Option.Option<Journal.SagaRecord>, Journal.ClaimError> =>
    atStorableTime("claim", (millis) => {
      if (holdsNul(sagaId)) return Effect.succeed(Option.none())
      return Effect.mapError(
        sql`UPDATE ${sagas} SET lease_owner = ${holder.owner}, lease_expires_at = ${expiryOf(holder, millis)}
WHERE saga_id = ${sagaId} AND ${leaseIsFreeAt(holder.owner, millis)}
RETURNING ${recordColumns}`,
        journalError("claim")
      ).pipe(
        Effect.flatMap(toRecords("claim")),
        Effect.flatMap((claimed) =>
          claimed.length > 0 ? Effect.succeed(Option.some(claimed[0]!)) : whyNotClaimed(sagaId, holder)
        )
      )
    })

  const expiryOf = (holder: Journal.Holder, millis: number) => timeAfter(timeArg(millis, holder.ttlMillis))

  const whyNotClaimed = (sagaId: string, holder: Journal.Holder) =>
    Effect.flatMap(get(sagaId), (record) => {
      if (Option.isNone(record)) return Effect.succeed(Option.none())
      const lease = record.value.lease
      return lease === null ? claim(sagaId, holder) : Effect.fail(new Journal.LeaseHeld({ sagaId, ...lease }))
    })

  // On PostgreSQL the rows another worker is claiming at the same moment are skipped, not waited
  // for: many workers recover in parallel and never claim the same saga.
  const skipLocked = sql.literal(onPg ? "FOR UPDATE SKIP LOCKED" : "")
  /**
   * Claims up to `limit` sagas left behind. Rows taken of which none decodes stay held (see
   * `decodeClaimed`) and the store claims again, past them, so that the caller, for which an empty
   * answer means nothing is left, reaches the rows behind them; `passed` are the ids of those
   * already passed over, left out of the claims after, even where their leases lapse at once (a
   * lease shorter than a claim).
   */
  const notPassed = (passed: ReadonlySet<string>) =>
    passed.size === 0 ? sql.literal("") : sql` AND saga_id NOT IN ${sql.in([...passed])}`
  const claimLapsed = (
    holder: Journal.Holder,
    limit: number,
    passed: ReadonlySet<string> = new Set()
  ): Effect.Effect<ReadonlyArray<Journal.SagaRecord>, Journal.JournalError> =>
    atStorableTime("claim", (millis) => {
      const left = sql.literal(openSagas)
      return Effect.mapError(
        sql`UPDATE ${sagas} SET lease_owner = ${holder.owner}, lease_expires_at = ${expiryOf(holder, millis)}
WHERE saga_id IN (SELECT saga_id FROM ${sagas} WHERE ${left} AND ${leaseIsFreeAt(null, millis)}${notPassed(passed)}
  ORDER BY updated_at, saga_id LIMIT ${Math.max(0, Math.floor(limit))} ${skipLocked})
  AND ${leaseIsFreeAt(null, millis)}
RETURNING ${recordColumns}`,
        journalError("claim")
      ).pipe(
        Effect.flatMap((rows) =>
          Effect.flatMap(decodeClaimed(rows), (records) => {
            const taken = (rows as ReadonlyArray<{ readonly sagaId: unknown }>).map((row) => String(row.sagaId))
            return records.length === 0 && taken.length > 0
              ? claimLapsed(holder, limit, new Set([...passed, ...taken]))
              : Effect.succeed(
                  [...records].sort(
                    (a, b) => a.updatedAt.localeCompare(b.updatedAt) || a.sagaId.localeCompare(b.sagaId)
                  )
                )
          })
        )
      )
    })

  // Rows no claim takes because they were edited (a lease end out of form, a status that is no
  // status): from the index of leased rows, never a scan of all.
  const knownStatuses = sql.in(Journal.SagaStatus.literals)
  StoredRows.unclaimableLists.set(claimLapsed, (limit) =>
    Effect.mapError(
      sql`SELECT ${recordColumns} FROM ${sagas} WHERE lease_owner IS NOT NULL
  AND (status NOT IN ${knownStatuses} OR (${sql.literal(openSagas)} AND NOT COALESCE(${leaseEndInForm("lease_expires_at")}, FALSE)))
LIMIT ${Math.max(0, Math.floor(limit))}`,
      journalError("claim")
    ).pipe(Effect.map((rows) => storedRows(rows).flatMap((row) => (Either.isLeft(row) ? [row.left] : []))))
  )

  const renew = (holder: Journal.Holder) =>
    atStorableTime("renew", (millis) =>
      Effect.mapError(
        sql`UPDATE ${sagas} SET lease_expires_at = ${expiryOf(holder, millis)}
WHERE lease_owner = ${holder.owner} RETURNING saga_id`,
        journalError("renew")
      )
    ).pipe(Effect.map((rows) => rows.length))

  const release = (owner: string, sagaId?: string) =>
    holdsNul(owner) || (sagaId !== undefined && holdsNul(sagaId))
      ? Effect.void
      : Effect.mapError(
          sql`UPDATE ${sagas} SET lease_owner = NULL, lease_expires_at = NULL
WHERE lease_owner = ${owner}${sagaId === undefined ? sql.literal("") : sql` AND saga_id = ${sagaId}`}`,
          journalError("release")
        ).pipe(Effect.asVoid)

  const appendOnStore = onPg && sendNamed !== undefined ? appendOnPg(sendNamed) : append
  if (HeldBack.allowsOn(client)) HeldBack.allow(appendOnStore)
  Signing.signsWith(appendOnStore, keys)
  // A read is a round trip to the server there: a new saga's first append reads it instead.
  if (onPg) UnreadStart.allow(appendOnStore)
  return Journal.Journal.of({
    append: appendOnStore,
    claim,
    claimLapsed,
    renew,
    release,
    importSaga,
    read,
    get,
    list,
    prune,
    prunable,
    countOpen,
    ...(onPg ? { leaseNow: serverNow(sql) } : {})
  })
})

/** The server's `now()` in whole epoch milliseconds, as lease times are written: to the millisecond. */
const serverNow = (sql: SqlClient.SqlClient): Effect.Effect<number, Journal.JournalError> =>
  sql<{ readonly millis: number | string }>`SELECT floor(extract(epoch FROM now()) * 1000)::float8 AS millis`.pipe(
    Effect.map((rows) => Number(rows[0]?.millis)),
    Effect.filterOrFail(Number.isFinite, () => "the server's now() answered no time"),
    Effect.mapError(
      (error) =>
        new Journal.JournalError({
          operation: "read the server's clock",
          reason: typeof error === "string" ? error : error.message
        })
    )
  )

/** The `Journal` service on the `SqlClient` in context; runs the store's migrations first. */
export const make = Effect.zipRight(migrate, makeUnmigrated)
