/**
 * A failure as a span may show it, with secrets masked. A tracer renders every error of the cause
 * it ends a span with, the errors' own `cause`s included (`@effect/opentelemetry` records
 * `Cause.pretty(cause, { renderErrorCause: true })` as the exception's stack): an error handed to
 * it as it is may quote a secret in a part of it that the check of one rendering does not see.
 * So the span gets copies that hold only what a renderer shows, masked.
 */
import * as Cause from "effect/Cause"
import { masked } from "../util/masking.js"

/** An error as Effect renders it (name, message, stack, and its cause the same way), `secrets` masked. */
class MaskedError extends Error {
  constructor(shown: Cause.PrettyError, secrets: ReadonlyArray<string>) {
    const cause = shown.cause
    super(
      masked(shown.message, secrets),
      cause instanceof Error ? { cause: new MaskedError(cause as Cause.PrettyError, secrets) } : undefined
    )
    this.name = masked(shown.name, secrets)
    this.stack = masked(shown.stack ?? `${shown.name}: ${shown.message}`, secrets)
  }
}

/**
 * `cause` as a span may end with when `secrets` may be in it: each of its errors replaced by a copy
 * of what a renderer shows of it, masked (none of the original errors, whose other fields a tracer
 * may read). A cause with no error (an interruption) is kept.
 */
export const maskedCause = (cause: Cause.Cause<unknown>, secrets: ReadonlyArray<string>): Cause.Cause<unknown> => {
  const errors = Cause.prettyErrors(cause)
  if (errors.length === 0) return cause
  return errors
    .map((error): Cause.Cause<unknown> => Cause.fail(new MaskedError(error, secrets)))
    .reduce((all, one) => Cause.sequential(all, one))
}
