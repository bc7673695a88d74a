/**
 * PostgreSQL: the statements an append sends alone, run by name, so that each connection parses and
 * plans them once (`@effect/sql-pg` sends every statement unnamed: parsed and planned each time,
 * which took longer than running the append itself). The store's client registers how.
 */
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"

/** Runs `text` as the prepared statement `name` (prepared on first use, per connection) with `values`. */
export type RunNamed = (
  name: string,
  text: string,
  values: ReadonlyArray<unknown>
) => Effect.Effect<ReadonlyArray<unknown>, SqlError>

/** `RunNamed` as a callback, for a path that waits in one `Effect.async` of its own: `done` gets the rows or the error. */
export type SendNamed = (
  name: string,
  text: string,
  values: ReadonlyArray<unknown>,
  done: (error: SqlError | undefined, rows: ReadonlyArray<unknown>) => void
) => void

const registry = new WeakMap<object, { readonly run: RunNamed; readonly send: SendNamed }>()

/** Registers how `client` (the `SqlClient` a store layer opened) sends prepared statements. */
export const register = (client: object, send: SendNamed): void => {
  const run: RunNamed = (name, text, values) =>
    Effect.async((resume) =>
      send(name, text, values, (error, rows) => resume(error === undefined ? Effect.succeed(rows) : Effect.fail(error)))
    )
  registry.set(client, { run, send })
}

/** How `client` runs prepared statements, if its layer registered it (a client of the user's own never does). */
export const runNamedOf = (client: object): RunNamed | undefined => registry.get(client)?.run

/** How `client` sends prepared statements with a callback, if its layer registered it. */
export const sendNamedOf = (client: object): SendNamed | undefined => registry.get(client)?.send
