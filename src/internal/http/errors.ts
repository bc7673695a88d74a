/**
 * The errors of the HTTP API, one class per status code (`SagaApi` re-exports them: that is their
 * public home). Every body is `{ _tag, message }`: a sentence a person can read, never a stack, a
 * receipt or a secret. Each carries `SagaApi`'s `ErrorTypeId` in memory, never on the wire: the
 * typed client decodes a body into the class, which sets it again.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { InvalidApiOptions } from "./options.js"
import type { InsecureServer } from "./server.js"

/**
 * The type id `SagaApi`'s errors carry (its status errors, `InvalidApiOptions`, `InsecureServer`;
 * `SagaApi` re-exports it: that is its public home): `SagaApi.isSagaApiError`,
 * `SagaApi.isInvalidApiOptions` and `SagaApi.isInsecureServer` check it, never a `_tag` alone that
 * a plain value could share.
 *
 * @since 0.4.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("effect-saga/SagaApi/Error")

/**
 * @since 0.4.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

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
) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
}

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
) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
}

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
) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
}

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
) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
}

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
) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
}

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
) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
}

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
) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
}

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
) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
}

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
) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
}

/**
 * Any error an API handler fails with (`Internal` is answered by the server itself, for a defect).
 *
 * @since 0.2.0
 * @category errors
 */
export type ApiError = Malformed | Unauthenticated | Forbidden | NotFound | Conflict | TooLarge | Refused | Unavailable

/**
 * Every error of `SagaApi`: its status errors, and those its layer and its server fail to start with.
 *
 * @since 0.4.0
 * @category errors
 */
export type SagaApiError = ApiError | Internal | InvalidApiOptions | InsecureServer

/**
 * Whether a value is one of `SagaApi`'s errors, by its `ErrorTypeId`: a status error (`Malformed`,
 * `Unauthenticated`, `Forbidden`, `NotFound`, `Conflict`, `TooLarge`, `Refused`, `Unavailable`,
 * `Internal`), as the server fails with it or the typed client decodes it from a response, or one
 * the API's layer or its server fails to start with (`InvalidApiOptions`, `InsecureServer`). A plain
 * object with the same `_tag` (a response body read as JSON) is not one.
 *
 * @since 0.4.0
 * @category guards
 */
export const isSagaApiError = (u: unknown): u is SagaApiError => Predicate.hasProperty(u, ErrorTypeId)
