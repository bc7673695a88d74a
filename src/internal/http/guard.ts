/**
 * What every API request goes through before its handler: a body over the limit is 413 (nothing
 * read past it), a body that is not JSON is 400, and a request the API's schemas refuse is 400 with
 * the API's one error body (one line: the field, what it expects, what was sent, cut). A defect is
 * logged with the request's method and path, and answered 500: `Internal` for an API request, the
 * same sentence as text for a console page (never an empty page an operator cannot read).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpMethod from "@effect/platform/HttpMethod"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import { Api } from "./api.js"
import { decodeMessage, type Issue } from "./decodeMessage.js"
import { Internal, Malformed, TooLarge } from "./errors.js"
import { defectText, logAnswer } from "./serverLog.js"

/**
 * The default limit of a request's body: 1 MiB.
 *
 * @since 0.2.0
 * @category limits
 */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

const overLimit = (error: unknown): boolean =>
  Predicate.hasProperty(error, "cause") &&
  Predicate.hasProperty(error.cause, "message") &&
  error.cause.message === "maxBytes exceeded"

const internal = new Internal({
  message: "the server could not answer this request: its log says why (nothing in this answer does)"
})

const tooLarge = (max: number) => new TooLarge({ message: `the body is over the limit of ${max} bytes` })

/**
 * A request's body as text, at most `max` bytes: a `Content-Length` over it is `TooLarge` before
 * anything is read, and a body that runs over it is `TooLarge` with nothing read past it. The
 * console's forms are read with it too.
 *
 * @since 0.2.0
 * @category limits
 */
export const readText = (
  request: HttpServerRequest.HttpServerRequest,
  max: number
): Effect.Effect<string, TooLarge | Malformed> => {
  const length = Number(request.headers["content-length"] ?? "0")
  if (length > max) return Effect.fail(tooLarge(max))
  return request.text.pipe(
    HttpIncomingMessage.withMaxBodySize(Option.some(max)),
    Effect.mapError((error) =>
      overLimit(error) ? tooLarge(max) : new Malformed({ message: "the body could not be read" })
    )
  )
}

/** Reads the body (at most `max` bytes) and checks that it is JSON; the handler reads it again from the cache. */
const checkBody = (request: HttpServerRequest.HttpServerRequest, max: number) =>
  Effect.gen(function* () {
    const length = Number(request.headers["content-length"] ?? "0")
    if (length > max) return yield* tooLarge(max)
    const type = request.headers["content-type"] ?? "application/json"
    if (!type.toLowerCase().includes("application/json")) {
      return yield* new Malformed({ message: "the body must be JSON (Content-Type: application/json)" })
    }
    const text = yield* readText(request, max)
    if (text === "") return
    yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => new Malformed({ message: "the body is not valid JSON" })
    })
  })

/**
 * The guard as an API middleware layer, for bodies of at most `maxBodyBytes`.
 *
 * @since 0.2.0
 * @category middleware
 */
export const layer = (maxBodyBytes: number = DEFAULT_MAX_BODY_BYTES) =>
  HttpApiBuilder.middleware(Api, (app) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const checked =
        HttpMethod.hasBody(request.method) && request.url.startsWith("/api/")
          ? checkBody(request, maxBodyBytes)
          : Effect.void
      // The app's type names no error, but its failures are the API's, and the decode error of its schemas.
      const answered = (app as HttpApp.Default<unknown>).pipe(
        Effect.catchAll((error) =>
          Predicate.isTagged(error, "HttpApiDecodeError") && Predicate.hasProperty(error, "issues")
            ? Effect.fail(new Malformed({ message: decodeMessage(error.issues as ReadonlyArray<Issue>) }))
            : Effect.fail(error as never)
        )
      )
      // A defect in reading the body too is the server's failure: logged, and answered 500 with a body.
      return yield* Effect.zipRight(checked, answered).pipe(
        Effect.catchAllDefect((defect) =>
          Effect.zipRight(
            logAnswer(500, defectText(defect)),
            request.url.startsWith("/api/")
              ? Effect.fail(internal)
              : Effect.succeed(HttpServerResponse.text(internal.message, { status: 500 }))
          )
        )
      )
    })
  )
