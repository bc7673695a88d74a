/**
 * The clock the CLI judges leases by: the store's own. On PostgreSQL, the store for several hosts,
 * a lease is written and claimed off the database server's clock (`now()`), so `list` and `show`
 * read "now" from it too: a CLI host whose clock is off says what the workers and the server
 * agree on. On SQLite, whose processes share one host, leases are the process's clock (Effect's
 * `Clock`), and so is this.
 *
 * @since 0.4.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { JournalError } from "../../Journal.js"

/**
 * "Now", in epoch milliseconds, as the store judges a lease.
 *
 * @since 0.4.0
 * @category services
 */
export class LeaseClock extends Context.Tag("effect-saga/cli/LeaseClock")<
  LeaseClock,
  { readonly now: Effect.Effect<number, JournalError> }
>() {}

/** The server's `now()`, in whole epoch milliseconds (as lease times are written: to the millisecond). */
const serverNow = (sql: SqlClient.SqlClient): Effect.Effect<number, JournalError> =>
  sql<{ readonly millis: number | string }>`SELECT floor(extract(epoch FROM now()) * 1000)::float8 AS millis`.pipe(
    Effect.map((rows) => Number(rows[0]?.millis)),
    Effect.filterOrFail(Number.isFinite, () => "the server's now() answered no time"),
    Effect.mapError(
      (error) =>
        new JournalError({
          operation: "read the server's clock",
          reason: typeof error === "string" ? error : error.message
        })
    )
  )

/**
 * The lease clock of the store on the `SqlClient` in context.
 *
 * @since 0.4.0
 * @category layers
 */
export const layer: Layer.Layer<LeaseClock, never, SqlClient.SqlClient> = Layer.effect(
  LeaseClock,
  Effect.map(SqlClient.SqlClient, (sql) =>
    LeaseClock.of({ now: sql.onDialectOrElse({ pg: () => serverNow(sql), orElse: () => Clock.currentTimeMillis }) })
  )
)

/**
 * "Now" by the store's clock.
 *
 * @since 0.4.0
 * @category clock
 */
export const now: Effect.Effect<number, JournalError, LeaseClock> = Effect.flatMap(LeaseClock, (clock) => clock.now)
