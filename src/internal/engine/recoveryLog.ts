/**
 * The log lines of a recovery pass (`Recovery.layer`): how many sagas it took and what became of
 * them, then a line for each saga it did not resume, naming the saga, its error's tag and message,
 * and, for one it cannot resume, what to do.
 */
import * as Effect from "effect/Effect"
import type { Recovered, RecoveryReport } from "../../Recovery.js"
import * as RecoveryMemory from "./recoveryMemory.js"
import * as Unrecoverable from "./unrecoverable.js"

type Failed = Extract<Recovered, { readonly _tag: "Failed" }>

/** What a line about a saga recovery remembers (`recoveryMemory.ts`) ends with. */
const notAgain = "this worker does not try it again while its journal stays where it is"

/** The message of the error, as a log line may carry it (never an input). */
const messageOf = (failed: Failed): string => {
  const error = failed.error
  switch (error._tag) {
    case "Unrecoverable":
      return `${Unrecoverable.messageWithoutInput(failed.sagaId, error)}; ${Unrecoverable.remedyOf(failed.sagaId, error.reason)}; ${notAgain}`
    case "InvalidSagaInput":
      return Unrecoverable.messageWithoutInput(failed.sagaId, error)
    default:
      return RecoveryMemory.answersAgainWhereItIs(error) ? `${error.message}; ${notAgain}` : error.message
  }
}

/**
 * Logs one saga a pass did not resume: at `Error` when its journal does not verify (someone
 * edited it), at `Warning` otherwise.
 */
const logFailed = (failed: Failed): Effect.Effect<void> => {
  const line = `effect-saga: recovery did not resume saga ${failed.sagaId}: ${failed.error._tag}: ${messageOf(failed)}`
  const log = failed.error._tag === "JournalTampered" ? Effect.logError(line) : Effect.logWarning(line)
  return Effect.annotateLogs(log, { "saga.id": failed.sagaId, "error.tag": failed.error._tag })
}

/** Logs a pass that took any saga: the counts (`Recovery.summary`) at `Info`, then each one it did not resume. */
export const logPass = (report: RecoveryReport, counts: Record<string, number>): Effect.Effect<void> => {
  if (report.sagas.length === 0) return Effect.void
  const outcomes = Object.entries(counts).map(([outcome, count]) => `${count} ${outcome}`)
  const taken = Effect.logInfo(
    `effect-saga: recovery took ${report.sagas.length} saga(s) left behind: ${outcomes.join(", ")}`
  )
  const failed = report.sagas.filter((saga): saga is Failed => saga._tag === "Failed")
  return Effect.zipRight(taken, Effect.forEach(failed, logFailed, { discard: true }))
}
