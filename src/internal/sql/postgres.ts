import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import type { Pool, QueryResult } from "pg"
import { JournalError } from "../../Journal.js"
import type { Options } from "../../Postgres.js"
import * as HeldBack from "../journal/heldBack.js"
import * as OptionalPeer from "../util/optionalPeer.js"
import { given } from "../util/printable.js"
import { withoutSecrets } from "../util/secretUrl.js"
import * as Prepared from "./prepared.js"
import { describeFailure } from "./sqlite.js"
import * as Unflushed from "./unflushed.js"

/** What `effect-saga/postgres` needs beside the core peers, as the README states it. */
export const peer: OptionalPeer.Peer = {
  entry: "effect-saga/postgres",
  install: "@effect/sql-pg@^0.53.0 pg@^8.16.3"
}

// Loaded when `effect-saga/postgres` is imported: a missing driver is one line naming what to
// install, at the import, rather than a resolution stack or a failure at the first connection.
const driver = await OptionalPeer.load(peer, () => import("@effect/sql-pg/PgClient"))
const { default: pg } = await OptionalPeer.load(peer, () => import("pg"))

/** The URL without its password, for messages. */
const printable = (url: Redacted.Redacted<string>): string => withoutSecrets(Redacted.value(url), "an unreadable URL")

/** A `pg` pool on `url` that answered `SELECT 1`, ended with its scope. */
const acquirePool = (url: Redacted.Redacted<string>, options: Options) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const pool = new pg.Pool({
          connectionString: Redacted.value(url),
          max: options.maxConnections ?? 10,
          application_name: "effect-saga"
        })
        // A connection that breaks while idle is dropped by the pool; the next query gets a new one.
        pool.on("error", () => {})
        await pool.query("SELECT 1").catch(async (error: unknown) => {
          await pool.end()
          throw error
        })
        return pool
      },
      catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
  ).pipe(
    Effect.timeoutFail({
      duration: "5 seconds",
      onTimeout: () =>
        new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
    })
  )

/** Sends a statement by name on `pool`: prepared by each connection the first time it runs it. */
const sendNamedOn =
  (pool: Pool): Prepared.SendNamed =>
  (name, text, values, done) =>
    pool.query({ name, text, values: [...values] }, (error: Error | undefined, result: QueryResult) =>
      error
        ? done(new SqlError({ cause: error, message: "Failed to execute statement" }), [])
        : done(undefined, result.rows)
    )

/** Why `options` cannot open a pool (JavaScript callers, or `as any`), `undefined` when they can. */
const optionsProblem = (options: Options): string | undefined => {
  if (!Predicate.isRecord(options)) return `the PostgreSQL options must be an object, not ${String(options)}`
  const { flushEveryEntry, maxConnections, url } = options
  // An empty URL would not fail: `pg` would connect to the `PG*` variables' server, or localhost's,
  // and migrate it (`Redacted.make(process.env.DATABASE_URL ?? "")` with the variable unset).
  const text = Redacted.isRedacted(url) ? Redacted.value(url) : url
  if (typeof text !== "string" || text.trim() === "") {
    return "the PostgreSQL option url must be a non-empty connection string (or a Redacted one)"
  }
  if (maxConnections !== undefined && !(Number.isSafeInteger(maxConnections) && maxConnections > 0)) {
    return `the PostgreSQL option maxConnections must be a whole number of 1 or more, not ${given(maxConnections)}`
  }
  if (flushEveryEntry !== undefined && typeof flushEveryEntry !== "boolean") {
    return `the PostgreSQL option flushEveryEntry must be true or false, not ${JSON.stringify(flushEveryEntry)}`
  }
  return undefined
}

/**
 * A `PgClient` on `options.url`, on a pool of our own so that appends can run prepared statements
 * on it; a server that cannot be reached fails with a `JournalError` for `open`.
 */
export const layerClient = (options: Options): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, JournalError> => {
  const refused = optionsProblem(options)
  if (refused !== undefined) return Layer.fail(new JournalError({ operation: "open", reason: refused }))
  const url = Redacted.isRedacted(options.url) ? options.url : Redacted.make(options.url)
  return Layer.scopedContext(
    Effect.gen(function* () {
      const pool = yield* acquirePool(url, options)
      const client = yield* driver.fromPool({ acquire: Effect.succeed(pool), applicationName: "effect-saga" })
      Prepared.register(client, sendNamedOn(pool))
      if (options.flushEveryEntry !== true) {
        Unflushed.allow(client)
        HeldBack.allowOn(client)
      }
      return Context.make(driver.PgClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    })
  ).pipe(
    Layer.provide(Reactivity.layer),
    Layer.mapError(
      (error) => new JournalError({ operation: "open", reason: `${printable(url)}: ${describeFailure(error)}` })
    )
  )
}
