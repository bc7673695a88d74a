/**
 * Group reads: reads of sagas' rows that arrive together share one statement (`saga_id = ANY` of an
 * array), as group commit does for appends. On PostgreSQL, where each statement is a round trip, 100
 * sagas starting at once load in a few statements instead of 200.
 */
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { groupCommit } from "./groupCommit.js"

/** Runs `text` with `values` (`name` says which statement it is): the rows it returns. */
export type Run = (
  name: string,
  text: string,
  values: ReadonlyArray<unknown>
) => Effect.Effect<ReadonlyArray<unknown>, SqlError>

/**
 * Reads by saga id: `text` takes the ids as one array (`$1`) and returns rows whose `key` column is
 * the saga id, in the order each saga's rows are wanted; `one`, if given, is the statement for a
 * batch of one saga (`$1` its id). Each caller gets its saga's rows; a failed statement fails every
 * read of its batch. The wait is uninterruptible (a batch answers everyone).
 */
export const groupRead = (
  run: Run,
  name: string,
  text: string,
  key: string,
  one?: { readonly name: string; readonly text: string }
) => {
  const statementFor = (sagaIds: ReadonlyArray<string>) => {
    const distinct = [...new Set(sagaIds)]
    return one !== undefined && distinct.length === 1 ? run(one.name, one.text, distinct) : run(name, text, [distinct])
  }
  const submit = groupCommit((sagaIds: ReadonlyArray<string>) =>
    Effect.map(Effect.exit(statementFor(sagaIds)), (exit) => {
      const bySaga = Exit.map(exit, (rows) => {
        const grouped = new Map<string, Array<unknown>>()
        for (const row of rows) {
          const sagaId = (row as Record<string, string>)[key]!
          const own = grouped.get(sagaId)
          if (own === undefined) grouped.set(sagaId, [row])
          else own.push(row)
        }
        return grouped
      })
      return sagaIds.map((sagaId) => Exit.map(bySaga, (grouped) => grouped.get(sagaId) ?? []))
    })
  )
  return (sagaId: string): Effect.Effect<ReadonlyArray<unknown>, SqlError> => Effect.uninterruptible(submit(sagaId))
}
