/**
 * The `effect-saga.recover` span of one saga recovery tries to resume. It ends as `Recovery.resume`
 * answers, for a recovery pass too: an error when the saga was not resumed, which names the
 * error's tag and says its message without the saga's input (a decoding error may quote it).
 */
import * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { RecoveryError } from "../../Recovery.js"
import { withSpanShowing } from "../observability/spans.js"
import { shownIdentifier } from "../util/identifier.js"
import { messageWithoutInput } from "./unrecoverable.js"

/** Why a saga was not resumed, as its span shows it: the error's tag and its message without input. */
class NotRecovered extends Error {
  constructor(tag: string, message: string) {
    super(message)
    this.name = tag
    // Where this copy was made says nothing of where the saga failed: the exception has no frames.
    this.stack = `${tag}: ${message}`
  }
}

/** How the span ends for `exit`: a recovery error shown without the saga's input; anything else as it is. */
const shown =
  (sagaId: string) =>
  (exit: Exit.Exit<unknown, unknown>): Exit.Exit<unknown, unknown> => {
    if (Exit.isSuccess(exit)) return exit
    const failure = Cause.failureOption(exit.cause) as Option.Option<RecoveryError>
    if (Option.isNone(failure)) return exit
    return Exit.fail(new NotRecovered(failure.value._tag, messageWithoutInput(sagaId, failure.value)))
  }

/** Runs one saga's recovery (`Recovery.resume`) in its `effect-saga.recover` span: the run (or the explicit undo) is its child. */
export const withRecoverSpan =
  (sagaId: string) =>
  <A, R>(recovery: Effect.Effect<A, RecoveryError, R>): Effect.Effect<A, RecoveryError, R> =>
    withSpanShowing(
      "effect-saga.recover",
      { attributes: { "saga.id": shownIdentifier(sagaId) }, captureStackTrace: false },
      shown(sagaId)
    )(recovery)
