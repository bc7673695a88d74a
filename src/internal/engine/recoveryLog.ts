/**
 * The log lines of a recovery pass (`Recovery.layer`) for the sagas it did not resume: each
 * names the saga, its error's tag and message, and, for one it cannot resume, what to do.
 */
import * as Effect from "effect/Effect"
import type { Recovered } from "../../Recovery.js"
import * as Unrecoverable from "./unrecoverable.js"

type Failed = Extract<Recovered, { readonly _tag: "Failed" }>

/** The message of the error, as a log line may carry it (never an input). */
const messageOf = (failed: Failed): string => {
  const error = failed.error
  switch (error._tag) {
    case "Unrecoverable":
      return `saga ${failed.sagaId} cannot be recovered here: ${Unrecoverable.loggable(error.reason)}. ${Unrecoverable.remedyOf(failed.sagaId, error.reason)}; this worker does not try it again while its journal stays where it is`
    case "InvalidSagaInput":
      return `saga ${failed.sagaId}: its input does not fit definition ${error.definition}`
    default:
      return error.message
  }
}

/**
 * Logs one saga a pass did not resume: at `Error` when its journal does not verify (someone
 * edited it), at `Warning` otherwise.
 */
export const logFailed = (failed: Failed): Effect.Effect<void> => {
  const line = `effect-saga: recovery did not resume saga ${failed.sagaId}: ${failed.error._tag}: ${messageOf(failed)}`
  const log = failed.error._tag === "JournalTampered" ? Effect.logError(line) : Effect.logWarning(line)
  return Effect.annotateLogs(log, { "saga.id": failed.sagaId, "error.tag": failed.error._tag })
}
