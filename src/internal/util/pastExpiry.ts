import * as Effect from "effect/Effect"
import { CommandRefused } from "../../SagaError.js"

/** Why `Saga.approve` and `Saga.renewApproval` refuse an `expiresAt` at or before now, quoting it. */
export const pastExpiry = (expiresAt: string): string =>
  `expiresAt ${JSON.stringify(expiresAt)} is already past: the approval would never hold`

/**
 * A command given the expiry `read` (the CLI's `--expires-at`, the API's `expiresAt`, as the journal
 * writes times) whose refusal of it as past quotes it as the operator gave it (`given`), as
 * `Saga.approve` quotes its caller's: `2021-01-01T00:00:00Z`, not `2021-01-01T00:00:00.000Z`.
 */
export const quotingAsGiven =
  (given: string | undefined, read: string | undefined) =>
  <A, E, R>(command: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    given === undefined || read === undefined || given === read
      ? command
      : Effect.mapError(command, (error) =>
          error instanceof CommandRefused && error.reason === pastExpiry(read)
            ? (new CommandRefused({ sagaId: error.sagaId, stepId: error.stepId, reason: pastExpiry(given) }) as E)
            : error
        )
