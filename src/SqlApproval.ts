/**
 * Persisted approvals: requests, decisions and the input digests they name, in the same database
 * as the SQL journal, so an operator can decide from another process and the saga sees it on resume.
 * `SqlStore` provides the journal and the approvals together on one database.
 *
 * A database that fails while a request is registered, read or decided fails with a `JournalError`
 * that says which operation and why.
 *
 * @since 0.1.0
 */
import type * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Layer from "effect/Layer"
import { Approval } from "./Approval.js"
import * as internal from "./internal/sql/approval.js"
import type { Journal, JournalError } from "./Journal.js"
import type { KeyError } from "./Keys.js"
import type * as SqlJournal from "./SqlJournal.js"
import * as SqlStore from "./SqlStore.js"

/**
 * Approvals on the `SqlClient` in context, behaving as `Approval.layerMemory` does: a request
 * registers once and waits for `approve` or `reject`, a decision is never overwritten, `pending`
 * lists undecided requests oldest first. Its table is migrated with the journal's.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Approval, SqlError | Migrator.MigrationError | KeyError, SqlClient.SqlClient> =
  Layer.effect(Approval, internal.make)

/**
 * Persisted approvals on the `SqlClient` in context, on tables that already exist: it never
 * migrates (see `SqlJournal.layerUnmigrated`).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerUnmigrated: Layer.Layer<Approval, KeyError, SqlClient.SqlClient> = Layer.effect(
  Approval,
  internal.makeUnmigrated
)

/**
 * The journal and persisted approvals on one SQLite file.
 *
 * @deprecated Use `SqlStore.layerSqlite`, the same layer under a name that says it provides the
 * journal too.
 * @since 0.1.0
 * @category layers
 */
export const layerSqlite: (
  options: SqlJournal.SqliteOptions
) => Layer.Layer<Approval | Journal, JournalError | KeyError> = SqlStore.layerSqlite
