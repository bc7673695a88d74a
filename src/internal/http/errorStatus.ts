/**
 * The engine's typed errors as the API's: each to the status code that says what the caller can do
 * about it, with the engine's own message (which names no receipt and no secret).
 */
import * as Effect from "effect/Effect"
import type { AlreadyDecided, ApprovalMismatch, ApprovalNotFound, NotApproved } from "../../Approval.js"
import type { CommandError } from "../../Saga.js"
import type { EffectNotFound } from "../../SagaError.js"
import type { ApiError } from "./errors.js"
import { Conflict, Forbidden, Malformed, NotFound, Refused, Unavailable } from "./errors.js"
import { logAnswer } from "./serverLog.js"

/**
 * What the services an API handler calls can fail with.
 *
 * @since 0.2.0
 * @category models
 */
export type EngineError =
  | CommandError
  | EffectNotFound
  | ApprovalNotFound
  | AlreadyDecided
  | NotApproved
  | ApprovalMismatch

/**
 * The API error for an engine error: 400 a refused identifier, 403 the authority's no, 404 an
 * unknown saga, request or effect, 409 a saga that moved on or a step already answered, 422 a
 * command the saga's state refuses (a journal that does not verify included), 503 the store (its
 * cause is not in the answer: `asApi` logs it).
 *
 * @since 0.2.0
 * @category errors
 */
export const toApiError = (error: EngineError): Malformed | Forbidden | NotFound | Conflict | Refused | Unavailable => {
  const message = error.message
  switch (error._tag) {
    case "InvalidIdentifier":
      return new Malformed({ message })
    case "Unauthorized":
      return new Forbidden({ message })
    case "SagaNotFound":
    case "EffectNotFound":
    case "ApprovalNotFound":
      return new NotFound({ message })
    case "ConcurrencyConflict":
      return new Conflict({ message: `${message}: read the saga again` })
    case "LeaseHeld":
    case "CommandConflict":
    case "AlreadyDecided":
    case "ApprovalMismatch":
      return new Conflict({ message })
    case "CommandRefused":
    case "NotApproved":
    case "JournalTampered":
    case "JournalCorrupted":
      return new Refused({ message })
    case "JournalError":
      return new Unavailable({ message: `the store could not be used (${error.operation})` })
  }
}

const apiTags: ReadonlySet<string> = new Set([
  "Malformed",
  "Unauthenticated",
  "Forbidden",
  "NotFound",
  "Conflict",
  "TooLarge",
  "Refused",
  "Unavailable"
])

/**
 * Fails `effect` with the API's errors only: an engine error is mapped by `toApiError`, an API
 * error passes as it is.
 *
 * @since 0.2.0
 * @category errors
 */
export const asApi = <A, E extends EngineError | ApiError, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, EngineError> | ReturnType<typeof toApiError>, R> =>
  effect.pipe(
    // The caller learns only that the store could not be used: the operator reads why in the log.
    Effect.tapError((error) => (error._tag === "JournalError" ? logAnswer(503, error.message) : Effect.void)),
    Effect.mapError((error) =>
      apiTags.has(error._tag) ? (error as Exclude<E, EngineError>) : toApiError(error as EngineError)
    )
  )
