/**
 * The clock the CLI judges leases by: the store's own. On PostgreSQL, the store for several hosts,
 * a lease is written and claimed off the database server's clock (`now()`), so `list` and `show`
 * read "now" from it too: a CLI host whose clock is off says what the workers and the server
 * agree on. On SQLite, whose processes share one host, leases are the process's clock (Effect's
 * `Clock`), and so is this.
 *
 * @since 0.4.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Journal, type JournalError } from "../../Journal.js"

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

/**
 * The lease clock of the journal in context: its `leaseNow` (PostgreSQL's `now()`), else the
 * process's `Clock`.
 *
 * @since 0.4.0
 * @category layers
 */
export const layer: Layer.Layer<LeaseClock, never, Journal> = Layer.effect(
  LeaseClock,
  Effect.map(Journal, (journal) => LeaseClock.of({ now: journal.leaseNow ?? Clock.currentTimeMillis }))
)

/**
 * "Now" by the store's clock.
 *
 * @since 0.4.0
 * @category clock
 */
export const now: Effect.Effect<number, JournalError, LeaseClock> = Effect.flatMap(LeaseClock, (clock) => clock.now)
