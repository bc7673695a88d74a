/**
 * The store on PostgreSQL, the store for several hosts: `effect-saga/postgres`. The same tables,
 * migrations and guarantees as on SQLite, with lease times read off the database's clock and lapsed
 * sagas claimed with `FOR UPDATE SKIP LOCKED`. See docs/storage.md.
 *
 * NOTE: this entry needs `@effect/sql-pg` (and `pg`, which comes with it) beside the core peers,
 * and `@types/pg` to type-check with `skipLibCheck: false`. Imported without them, it fails with
 * one line naming what to install. `effect-saga` itself never loads them.
 *
 * @since 0.3.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type { Approval } from "./Approval.js"
import * as postgres from "./internal/sql/postgres.js"
import { layerError } from "./internal/sql/sqlite.js"
import type { Journal, JournalError } from "./Journal.js"
import type { KeyError } from "./Keys.js"
import * as SqlJournal from "./SqlJournal.js"
import * as SqlStore from "./SqlStore.js"

/**
 * How to reach a PostgreSQL server: `url` (a `postgres://` URL, kept `Redacted`) and the pool's
 * `maxConnections` (default 10).
 *
 * @since 0.3.0
 * @category models
 */
export interface Options {
  /** `postgres://user:password@host:port/database` (kept `Redacted`: it may hold a password). */
  readonly url: string | Redacted.Redacted<string>
  /** The most connections the pool opens (default 10). */
  readonly maxConnections?: number | undefined
  /**
   * Write every entry as a commit of its own, each flushed (`true`), or (`false`, the default) let a
   * step's `EXECUTED` travel with the saga's next entry (the next `INTENT`, the saga's end), and let
   * a commit that holds only steps' `EXECUTED` entries (one whose program waited before its next
   * entry) return before its WAL flush (`synchronous_commit = off` for that transaction alone). A
   * process killed just after a tool returned, or a server crash, can then lose that step's
   * `EXECUTED`, and the step reads as unknown. See docs/storage.md and docs/recovery.md.
   *
   * @since 0.4.0
   */
  readonly flushEveryEntry?: boolean | undefined
}

/**
 * A `PgClient` for the store; a server that cannot be reached fails with a `JournalError`. Provide
 * it to `SqlJournal.layer`, `SqlApproval.layer` and services of your own to keep them on one pool.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerClient: (options: Options) => Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, JournalError> =
  postgres.layerClient

/**
 * The journal and persisted approvals on one PostgreSQL pool, its migrations run first: what
 * `Saga.layer` needs (it was `SqlStore.layerPg` before 0.3.0).
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Approval | Journal, JournalError | KeyError> =>
  SqlStore.layer.pipe(Layer.provide(layerClient(options)))

/**
 * The journal alone on PostgreSQL (it was `SqlJournal.layerPg` before 0.3.0).
 *
 * @since 0.3.0
 * @category layers
 */
export const layerJournal = (options: Options): Layer.Layer<Journal, JournalError | KeyError> =>
  SqlJournal.layer.pipe(Layer.provide(layerClient(options)), Layer.mapError(layerError("migrate")))
