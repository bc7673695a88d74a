/**
 * What `Recovery.layer` says of the sagas left behind that no claim takes, because their row was
 * edited (a lease whose end is not a time, a status that is no status): without it, such a saga
 * would sit unrun and unlogged until someone ran `list` or `verify`.
 */
import * as Effect from "effect/Effect"
import type { Journal, JournalError } from "../../Journal.js"
import { listUnclaimable, type UndecodableRow } from "../journal/storedRows.js"
import { printable } from "../util/printable.js"

/** How many such sagas one pass names at most. */
const LIMIT = 100

/**
 * Logs each saga left behind that no claim takes, at `Error` (its row was edited, as a tampered
 * journal is logged): once while its row stays as it is; again once it changed, or was repaired
 * and edited again.
 */
export const makeUnclaimableLog = (journal: Journal["Type"]): Effect.Effect<void, JournalError> => {
  let told = new Map<string, string>()
  return Effect.flatMap(listUnclaimable(journal, LIMIT), (rows) => {
    const fresh = rows.filter((row) => told.get(row.sagaId) !== row.reason)
    told = new Map(rows.map((row) => [row.sagaId, row.reason]))
    return Effect.forEach(fresh, logUnclaimable, { discard: true })
  })
}

const logUnclaimable = ({ reason, sagaId }: UndecodableRow): Effect.Effect<void> =>
  Effect.annotateLogs(
    Effect.logError(
      printable(
        `effect-saga: recovery cannot take saga ${sagaId}: ${reason}; no worker claims it while its row stays so: effect-saga show ${sagaId} says what to do`
      )
    ),
    { "saga.id": sagaId, "error.tag": "JournalTampered" }
  )
