/**
 * The journal on any `@effect/sql` client, and on an SQLite file as the embedded default.
 *
 * An append is a compare-and-set on the saga row's `revision` and `digest`, then its entries, in
 * one transaction; a writer that is behind gets `ConcurrencyConflict` and writes nothing, and the
 * primary key `(saga_id, seq)` refuses a duplicate entry even if the row were bypassed. Appends that
 * many fibers make at once share a transaction (group commit), each with its own outcome, and none
 * returns before its transaction has committed. See docs/storage.md.
 *
 * @since 0.1.0
 */
import type * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/sql/journal.js"
import * as migrations from "./internal/sql/migrations.js"
import * as sqlite from "./internal/sql/sqlite.js"
import type { JournalError } from "./Journal.js"
import { Journal } from "./Journal.js"
import type { KeyError } from "./Keys.js"

/**
 * How to open an SQLite file.
 *
 * - `busyTimeout`: how long a write waits for another connection's write lock before it fails with
 *   a `JournalError` (default 5 seconds).
 * - `synchronous`: when a commit reaches the disk. `"full"` (the default): every commit is flushed
 *   to the disk before the append returns, so an `INTENT` is durable before its tool runs, even
 *   across a power loss, at the price of one flush per transaction (group commit shares it).
 *   `"normal"`: a commit survives the process crashing, but an operating-system crash or a power
 *   loss may undo the last commits (the file stays consistent). See docs/storage.md.
 *
 * NOTE: the driver is synchronous: while it waits for a lock or a flush, the process's event loop
 * waits too.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqliteOptions {
  readonly filename: string
  readonly busyTimeout?: Duration.DurationInput | undefined
  readonly synchronous?: "full" | "normal" | undefined
  /**
   * Write every entry as a commit of its own, each flushed under `synchronous: "full"` (`true`), or
   * (`false`, the default) let a step's `EXECUTED` travel with the saga's next entry (the next
   * `INTENT`, the saga's end), and let a commit that holds only steps' `EXECUTED` entries (one whose
   * program waited before its next entry) return before its flush. A process killed just after a
   * tool returned, or a power loss, can then lose that step's `EXECUTED`, and the step reads as
   * unknown. See docs/storage.md and docs/recovery.md.
   *
   * @since 0.4.0
   */
  readonly flushEveryEntry?: boolean | undefined
  /**
   * Open the file read-only: nothing can be written, not even the migrations (pair it with
   * `layerUnmigrated`, after `schemaVersion` says the tables are there). Default `false`.
   */
  readonly readonly?: boolean | undefined
}

/**
 * The journal on the `SqlClient` in context (SQLite or PostgreSQL: the statements use
 * `ON CONFLICT` and `RETURNING`). Its tables are created by `@effect/sql`'s Migrator, recorded in
 * the `effect_saga_migrations` table, all in one transaction: a migration that fails leaves the
 * database as it was (one without effect-saga tables keeps none, not even that record).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Journal, SqlError | Migrator.MigrationError | KeyError, SqlClient.SqlClient> =
  Layer.effect(Journal, internal.make)

/**
 * An `SqliteClient` on `filename` as the journal wants it: WAL, a busy timeout, and write
 * transactions that take the write lock up front (`BEGIN IMMEDIATE`), so a second process waits
 * instead of failing half-way. A file that cannot be opened fails with a `JournalError`.
 * Provide it to `layer` and `SqlApproval.layer` to keep both on one connection.
 *
 * NOTE: the client is `@effect/sql-sqlite-node`'s, rebuilt on a connection of its own that `layer`
 * also reaches, to write each append synchronously under the client's lock (docs/storage.md).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqliteClient: (
  options: SqliteOptions
) => Layer.Layer<SqliteClient.SqliteClient | SqlClient.SqlClient, JournalError> = sqlite.layerClient

/**
 * The journal on the `SqlClient` in context, on tables that already exist: it never migrates (for
 * tools that only read a journal, on a read-only connection; check `schemaVersion` first).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerUnmigrated: Layer.Layer<Journal, KeyError, SqlClient.SqlClient> = Layer.effect(
  Journal,
  internal.makeUnmigrated
)

/**
 * The schema version of a store: the last migration `applied` (`undefined` when the database has
 * no effect-saga tables; 0 when its record of migrations is empty, or dropped while the journal's
 * tables exist: an edited record, which a layer refuses), and the `latest` this version of
 * effect-saga knows.
 *
 * @since 0.2.0
 * @category models
 */
export interface SchemaVersion {
  readonly applied: number | undefined
  readonly latest: number
}

/**
 * Reads the schema version of the store on the `SqlClient` in context, writing nothing.
 *
 * @since 0.2.0
 * @category migrations
 */
export const schemaVersion: Effect.Effect<SchemaVersion, JournalError, SqlClient.SqlClient> =
  migrations.schemaVersion.pipe(Effect.mapError(sqlite.journalError("open")))

/**
 * The journal on an SQLite file, created if missing: the embedded default. Several processes may
 * share the file; a file that is not a database, or stays locked past the busy timeout, fails the
 * layer's build with a `JournalError` that says which. A file this process cannot write (its
 * permissions) opens read-only when its schema is up to date: reads go on, and every write (the
 * first append, a lease released) fails with a `JournalError` saying `the database is read-only`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqlite = (options: SqliteOptions): Layer.Layer<Journal, JournalError | KeyError> =>
  layer.pipe(Layer.provide(layerSqliteClient(options)), Layer.mapError(sqlite.layerError("migrate")))
