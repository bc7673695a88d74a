/**
 * PostgreSQL: the statements an append sends alone, run by name, so that each connection parses and
 * plans them once (`@effect/sql-pg` sends every statement unnamed: parsed and planned each time,
 * which took longer than running the append itself). The store's client registers how.
 */
import type { SqlError } from "@effect/sql/SqlError"
import type * as Effect from "effect/Effect"

/** Runs `text` as the prepared statement `name` (prepared on first use, per connection) with `values`. */
export type RunNamed = (
  name: string,
  text: string,
  values: ReadonlyArray<unknown>
) => Effect.Effect<ReadonlyArray<unknown>, SqlError>

const registry = new WeakMap<object, RunNamed>()

/** Registers how `client` (the `SqlClient` a store layer opened) runs prepared statements. */
export const register = (client: object, run: RunNamed): void => {
  registry.set(client, run)
}

/** How `client` runs prepared statements, if its layer registered it (a client of the user's own never does). */
export const runNamedOf = (client: object): RunNamed | undefined => registry.get(client)
