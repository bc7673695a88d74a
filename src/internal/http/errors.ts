/**
 * The errors of the HTTP API, one class per status code (`SagaApi` re-exports them: that is their
 * public home). Every body is `{ _tag, message }`: a sentence a person can read, never a stack, a
 * receipt or a secret.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"

const body = { message: Schema.String }

/**
 * 400: a body, a path or a parameter that does not fit its schema, or an identifier the engine
 * refuses. Nothing was written.
 *
 * @since 0.2.0
 * @category errors
 */
export class Malformed extends Schema.TaggedError<Malformed>("effect-saga/SagaApi/Malformed")(
  "Malformed",
  body,
  HttpApiSchema.annotations({ status: 400 })
) {}

/**
 * 401: no credentials, or credentials no principal holds.
 *
 * @since 0.2.0
 * @category errors
 */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>("effect-saga/SagaApi/Unauthenticated")(
  "Unauthenticated",
  body,
  HttpApiSchema.annotations({ status: 401 })
) {}

/**
 * 403: the `Authority` refuses the principal this command. Nothing was written.
 *
 * @since 0.2.0
 * @category errors
 */
export class Forbidden extends Schema.TaggedError<Forbidden>("effect-saga/SagaApi/Forbidden")(
  "Forbidden",
  body,
  HttpApiSchema.annotations({ status: 403 })
) {}

/**
 * 404: no saga, step, approval request or effect by that id.
 *
 * @since 0.2.0
 * @category errors
 */
export class NotFound extends Schema.TaggedError<NotFound>("effect-saga/SagaApi/NotFound")(
  "NotFound",
  body,
  HttpApiSchema.annotations({ status: 404 })
) {}

/**
 * 409: the saga moved on since the `revision`/`digest` the caller sent, another worker drives it,
 * or the step already has another answer. Nothing was written: read the saga again.
 *
 * @since 0.2.0
 * @category errors
 */
export class Conflict extends Schema.TaggedError<Conflict>("effect-saga/SagaApi/Conflict")(
  "Conflict",
  body,
  HttpApiSchema.annotations({ status: 409 })
) {}

/**
 * 413: the request's body is over the server's limit. Nothing was read past it.
 *
 * @since 0.2.0
 * @category errors
 */
export class TooLarge extends Schema.TaggedError<TooLarge>("effect-saga/SagaApi/TooLarge")(
  "TooLarge",
  body,
  HttpApiSchema.annotations({ status: 413 })
) {}

/**
 * 422: the saga's state refuses the command (approving a step that is not awaiting approval,
 * resolving a step whose outcome is known, acting on a journal that does not verify, undoing a
 * step whose tool this server does not hold). Nothing was written.
 *
 * @since 0.2.0
 * @category errors
 */
export class Refused extends Schema.TaggedError<Refused>("effect-saga/SagaApi/Refused")(
  "Refused",
  body,
  HttpApiSchema.annotations({ status: 422 })
) {}

/**
 * 503: the store could not be read or written. Nothing is known to have been written.
 *
 * @since 0.2.0
 * @category errors
 */
export class Unavailable extends Schema.TaggedError<Unavailable>("effect-saga/SagaApi/Unavailable")(
  "Unavailable",
  body,
  HttpApiSchema.annotations({ status: 503 })
) {}

/**
 * 500: the server failed to answer (a defect of its own code or of the app's, such as an
 * authentication layer that dies or names a principal that cannot be one). The server's log says
 * why, at Error; the body never does.
 *
 * @since 0.2.0
 * @category errors
 */
export class Internal extends Schema.TaggedError<Internal>("effect-saga/SagaApi/Internal")(
  "Internal",
  body,
  HttpApiSchema.annotations({ status: 500 })
) {}

/**
 * Any error an API handler fails with (`Internal` is answered by the server itself, for a defect).
 *
 * @since 0.2.0
 * @category errors
 */
export type ApiError = Malformed | Unauthenticated | Forbidden | NotFound | Conflict | TooLarge | Refused | Unavailable
