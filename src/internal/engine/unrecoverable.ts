/**
 * Why recovery cannot resume a saga (`Recovery.Unrecoverable`'s `reason`), and what an operator
 * can do about it: the log line of a recovery pass says both, once.
 */
import type { RecoveryError } from "../../Recovery.js"
import { shownIdentifier } from "../util/identifier.js"
import { shellWord } from "../util/shellWord.js"

const notFromDefinition = "it was not started from a definition"
const missingDefinitionPrefix = "this worker was not given definition "
const undecodableInputPrefix = "its input no longer decodes"

/** A saga started with `Saga.run` and a plain program: no journal names the program. */
export const notStartedFromDefinition = notFromDefinition

/**
 * A saga started from definition `name`, which this worker's `Recovery` was not given: a name
 * that cannot be an identifier (a control character forging a log line) is escaped.
 */
export const missingDefinition = (name: string): string => `${missingDefinitionPrefix}${shownIdentifier(name)}`

/** A saga whose journaled input its definition's schema no longer decodes; `detail` says why (and may quote the input). */
export const undecodableInput = (detail: string): string => `${undecodableInputPrefix}: ${detail}`

/**
 * The reason as a log line may carry it: a decoding error may quote the input, and inputs never
 * go to the log (see observability.md), so that detail is left to the report.
 */
export const loggable = (reason: string): string =>
  reason.startsWith(undecodableInputPrefix)
    ? `${undecodableInputPrefix} with its definition's input schema (Recovery.resume of the saga, or recoverAll's report, fails with the error that says why)`
    : reason

/**
 * A recovery error's message as a span or a log line may carry it (never the saga's input): an
 * `Unrecoverable` one's reason `loggable`, an `InvalidSagaInput` one's without the encoding error.
 */
export const messageWithoutInput = (sagaId: string, error: RecoveryError): string => {
  switch (error._tag) {
    case "Unrecoverable":
      return `saga ${sagaId} cannot be recovered here: ${loggable(error.reason)}`
    case "InvalidSagaInput":
      return `saga ${sagaId}: its input does not fit definition ${error.definition}`
    default:
      return error.message
  }
}

const compensate = (sagaId: string): string =>
  `or compensate it (Saga.compensate, or effect-saga compensate ${shellWord(sagaId)})`

/** What an operator can do about a saga recovery cannot resume, for `reason`. */
export const remedyOf = (sagaId: string, reason: string): string => {
  if (reason === notFromDefinition) {
    return `no Recovery can resume it (it was started with Saga.run and a plain program): it stays where it is, with no lease, until its program is run again under its id (Saga.run or Saga.resume), ${compensate(sagaId)}`
  }
  if (reason.startsWith(missingDefinitionPrefix)) {
    const name = reason.slice(missingDefinitionPrefix.length)
    return `give definition ${name} to a worker's Recovery (Recovery.layer({ definitions: [...] })), whose next pass resumes it, or run it with Saga.start and that definition, ${compensate(sagaId)}`
  }
  return `a worker whose definition decodes its input, or Saga.resume with its program, can go on with it, ${compensate(sagaId)}`
}
