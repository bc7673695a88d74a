/**
 * The whole store on one SQL database: the journal and the persisted approvals on one client,
 * which is what `Saga.layer` needs. `layerSqlite({ filename })` is the embedded default;
 * `Postgres.layer({ url })` (from `effect-saga/postgres`) is the store for several hosts. See
 * docs/storage.md.
 *
 * To put services of your own on the same client, provide one client layer
 * (`SqlJournal.layerSqliteClient`, `Postgres.layerClient`) to `SqlJournal.layer`,
 * `SqlApproval.layer` and yours.
 *
 * @since 0.2.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Layer from "effect/Layer"
import { Approval } from "./Approval.js"
import * as approval from "./internal/sql/approval.js"
import * as sqlite from "./internal/sql/sqlite.js"
import type { Journal, JournalError } from "./Journal.js"
import type { KeyError } from "./Keys.js"
import * as SqlJournal from "./SqlJournal.js"

/**
 * The journal and persisted approvals on the `SqlClient` in context, its migrations run first (a
 * migration that fails is a `JournalError`).
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<Approval | Journal, JournalError | KeyError, SqlClient.SqlClient> = Layer.merge(
  SqlJournal.layer,
  Layer.effect(Approval, approval.make)
).pipe(Layer.mapError(sqlite.layerError("migrate")))

/**
 * The journal and persisted approvals on one SQLite file through one connection, created if
 * missing: the embedded default. Several local processes may share the file.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerSqlite = (
  options: SqlJournal.SqliteOptions
): Layer.Layer<Approval | Journal, JournalError | KeyError> =>
  layer.pipe(Layer.provide(SqlJournal.layerSqliteClient(options)))
