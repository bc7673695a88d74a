import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import { editedMigrationsRecord } from "../util/editedMigrations.js"
import * as SqliteDriver from "./sqliteDriver.js"

/** The table the migrator records applied migrations in. */
export const migrationsTable = "effect_saga_migrations"

/**
 * Saga rows: status, `revision` (= last seq), `digest` (= last hash), lease. Two partial indexes
 * (migration 4) serve the lease paths that run on every worker all the time; neither covers a column
 * that an append within a run changes (`revision`, `digest`, `updated_at`, `lease_expires_at`), so
 * such updates stay cheap (heap-only on PostgreSQL). `list` and `prune` (operator paths) scan.
 */
export const sagasTable = "effect_saga_sagas"

/** Journal entries, one row per `(saga_id, seq)`. */
export const entriesTable = "effect_saga_entries"

/**
 * The sagas a worker may have to pick up, as the `_open` index and `claimLapsed` both say it: the
 * very same SQL text, with constants, so that the planner can match the query to the index.
 */
export const openSagas = "status IN ('running', 'compensating', 'suspended')"

/**
 * The sagas `countOpen` counts (every `Journal.OpenStatus`), as the `_by_open_status` index (migration
 * 6) and the count both say it: the same SQL text again, so that the planner matches the count to
 * the index and never scans the finished sagas.
 */
export const openStatusSagas =
  "status IN ('running', 'compensating', 'suspended', 'awaiting_approval', 'needs_attention', 'compensation_failed')"

/** Approval requests and their decisions. */
export const approvalsTable = "effect_saga_approvals"

/**
 * Every migration of the store, journal and approvals alike, in one record: the migrator runs only
 * ids above the last one applied, so two records in one table would skip each other's.
 */
const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "1_create_journal": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all(
      [
        sql`CREATE TABLE ${sql(sagasTable)} (
  saga_id TEXT NOT NULL PRIMARY KEY,
  status TEXT NOT NULL,
  revision INTEGER NOT NULL,
  digest TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
)`,
        sql`CREATE TABLE ${sql(entriesTable)} (
  saga_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  step_id TEXT,
  tool_name TEXT,
  phase TEXT NOT NULL,
  input TEXT,
  payload TEXT,
  at TEXT NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (saga_id, seq)
)`
      ],
      { discard: true }
    )
  ),
  "2_create_approvals": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all(
      [
        sql`CREATE TABLE ${sql(approvalsTable)} (
  request_id TEXT NOT NULL PRIMARY KEY,
  position INTEGER NOT NULL,
  saga_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  input TEXT NOT NULL,
  input_digest TEXT NOT NULL,
  requested_at TEXT NOT NULL,
  status TEXT NOT NULL,
  decision TEXT NOT NULL,
  registered_at TEXT NOT NULL,
  decided_at TEXT
)`,
        sql`CREATE INDEX ${sql(`${approvalsTable}_pending`)} ON ${sql(approvalsTable)} (status, position)`
      ],
      { discard: true }
    )
  ),
  // The lease of the worker driving a saga: its name and when the lease lapses (ISO-8601 UTC, so
  // that text order is time order). Both are NULL while nobody drives the saga.
  "3_add_leases": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all(
      [
        sql`ALTER TABLE ${sql(sagasTable)} ADD COLUMN lease_owner TEXT`,
        sql`ALTER TABLE ${sql(sagasTable)} ADD COLUMN lease_expires_at TEXT`
      ],
      { discard: true }
    )
  ),
  // `renew` and `release` find a worker's leases, `claimLapsed` the sagas left open (running,
  // compensating, suspended): without these, both scan every saga ever run.
  "4_index_leases_and_open_sagas": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all(
      [
        sql`CREATE INDEX ${sql(`${sagasTable}_leased`)} ON ${sql(sagasTable)} (lease_owner) WHERE lease_owner IS NOT NULL`,
        sql`CREATE INDEX ${sql(`${sagasTable}_open`)} ON ${sql(sagasTable)} (saga_id) WHERE ${sql.literal(openSagas)}`
      ],
      { discard: true }
    )
  ),
  // An entry's MAC under the journal key (`<key id>:<hex>`), NULL when no key was configured.
  "5_add_entry_macs": Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`ALTER TABLE ${sql(entriesTable)} ADD COLUMN mac TEXT`
  ),
  // `countOpen` (the gauge of open sagas by status) counts from this index alone: it holds the
  // status of the open sagas and nothing else, however many finished sagas the store keeps.
  "6_index_open_statuses": Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`CREATE INDEX ${sql(`${sagasTable}_by_open_status`)} ON ${sql(sagasTable)} (status) WHERE ${sql.literal(openStatusSagas)}`
  ),
  // Creates nothing: it records that the journal may hold entries in the format of 0.5.0, which an
  // earlier effect-saga misreads (`notStarted` on the saga entries that end a run, `changesNothing`
  // on INTENT, `boundToUndo` on REJECTED). An earlier version knows 6 at most, so it refuses the
  // store at start (`refuseUnreadable`) instead of reading those entries and writing after them.
  "7_entries_of_0_5_0": Effect.void
}

/** The last migration's number: the schema version this code reads and writes. */
export const latestMigration = Math.max(...Object.keys(migrations).map((id) => Number.parseInt(id, 10)))

/** The PostgreSQL advisory lock that serializes the store's migrations across hosts (any fixed number). */
const migrationLock = 7_305_020_417

const runMigrations = Migrator.make({})({
  loader: Migrator.fromRecord(migrations),
  table: migrationsTable
})

/**
 * Brings the store's tables up to date through `@effect/sql`'s Migrator, in one transaction that
 * holds the creation of the migrations table too (the Migrator creates it before its own): a
 * migration that fails leaves the store as it was, never an empty record of migrations (which would
 * read as one edited). A migration that fails is a typed `MigrationError` here (the Migrator itself
 * makes it a defect). On PostgreSQL, processes that start at once take turns on an advisory lock
 * held by that transaction (two creations of the table at once can collide); on SQLite its write
 * lock already serializes them.
 */
export const migrate: Effect.Effect<void, SqlError | Migrator.MigrationError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql.onDialectOrElse({
      pg: () =>
        sql.withTransaction(
          sql`SELECT pg_advisory_xact_lock(${migrationLock})`.pipe(
            Effect.zipRight(holdsTable(migrationsTable)),
            // The Migrator's own table, as it would create it: its probe for the table fails
            // (and so aborts this transaction) when the table is missing.
            Effect.tap(
              () => sql`CREATE TABLE IF NOT EXISTS ${sql(migrationsTable)} (
  migration_id integer primary key,
  created_at timestamp with time zone not null default now(),
  name text not null
)`
            ),
            Effect.flatMap((keptBefore) => refuseUnreadable(keptBefore)),
            Effect.zipRight(runMigrations),
            Effect.asVoid
          )
        ),
      orElse: () =>
        sql
          .withTransaction(
            Effect.asVoid(
              Effect.zipRight(
                Effect.suspend(() => refuseUnreadable()),
                runMigrations
              )
            )
          )
          .pipe(
            // A file the store switched to WAL as it opened it is switched back if this fails.
            Effect.onExit((exit) =>
              Exit.isSuccess(exit) ? Effect.sync(() => SqliteDriver.keepWal(sql)) : SqliteDriver.undoWalSwitch(sql)
            )
          )
    })
).pipe(
  Effect.catchSomeDefect((defect) =>
    Predicate.isTagged(defect, "MigrationError")
      ? Option.some(Effect.fail(defect as Migrator.MigrationError))
      : Option.none()
  ),
  Effect.asVoid
)

/**
 * What the store's record of migrations holds: the last migration `applied` (`undefined` with no
 * table, 0 with an empty one), whether the table is there (`kept`), and whether it was `edited`:
 * emptied or dropped while the journal's tables exist.
 */
const recordOfMigrations = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const kept = yield* holdsTable(migrationsTable)
  const rows = kept
    ? yield* sql<{ readonly version: unknown }>`SELECT MAX(migration_id) AS version FROM ${sql(migrationsTable)}`
    : []
  const applied = kept ? Number(rows[0]?.version ?? 0) : undefined
  const edited = (applied === undefined || applied === 0) && (yield* holdsTable(sagasTable))
  return { applied, kept, edited }
})

/**
 * The schema version the store's migrations table records, next to the latest this code knows:
 * `undefined` when there is no such table and no journal's (not an effect-saga journal), 0 when it
 * records none (the table emptied, or dropped while the journal's tables exist: an edited record).
 */
export const schemaVersion = Effect.map(recordOfMigrations, ({ applied, edited }) => ({
  applied: edited ? 0 : applied,
  latest: latestMigration
}))

/** Whether the store holds the table `name`. */
const holdsTable = (name: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql.onDialectOrElse({
        pg: () => sql<{ readonly present: unknown }>`SELECT to_regclass(${name}) IS NOT NULL AS present`,
        orElse: () =>
          sql<{ readonly present: unknown }>`SELECT count(*) > 0 AS present FROM sqlite_master
WHERE type = 'table' AND name = ${name}`
      }),
      (rows) => Boolean(rows[0]?.present)
    )
  )

/**
 * Refuses tables a newer effect-saga migrated: this code would write rows in a shape the newer one
 * may not read (an old worker left running through a rolling upgrade). Refuses too the tables of a
 * journal whose record of migrations was emptied or dropped: migrating them again would fail on a
 * table that exists, in words that read as another application's. Nothing is written. `keptBefore`:
 * whether the record's table was there before this transaction created it (PostgreSQL's, as the
 * Migrator would), so that a dropped record is said to be missing, not empty.
 */
const refuseUnreadable = (keptBefore?: boolean) =>
  Effect.flatMap(recordOfMigrations, ({ applied, edited, kept }): Effect.Effect<void, Migrator.MigrationError> => {
    if (edited) {
      return Effect.fail(
        new Migrator.MigrationError({
          reason: "bad-state",
          message: editedMigrationsRecord(undefined, (keptBefore ?? kept) ? "is empty" : "is missing")
        })
      )
    }
    return applied === undefined || applied <= latestMigration
      ? Effect.void
      : Effect.fail(
          new Migrator.MigrationError({
            reason: "bad-state",
            message: `the journal has schema version ${applied}, newer than this effect-saga's ${latestMigration}: upgrade effect-saga (nothing was written)`
          })
        )
  })
