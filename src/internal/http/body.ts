/**
 * A command's body, checked once the router has matched an endpoint and the caller is authenticated
 * (the `BodyCheck` middleware runs inside `Authentication`): nothing of a body is read for a caller
 * without a valid token. It must be sent as `application/json`, be at most `maxBodyBytes` (413, with
 * nothing read past the limit), be JSON, and be nested at most `MAX_JSON_DEPTH` levels deep (a
 * deeper one would overflow the stack of the schemas' error formatters).
 */
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpMethod from "@effect/platform/HttpMethod"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import { BodyCheck } from "./api.js"
import { Malformed, TooLarge } from "./errors.js"

/**
 * The default limit of a request's body: 1 MiB.
 *
 * @since 0.2.0
 * @category limits
 */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

/**
 * The most levels of arrays and objects a JSON body (and the console's resolve result) may nest.
 *
 * @since 0.3.0
 * @category limits
 */
export const MAX_JSON_DEPTH = 64

const overLimit = (error: unknown): boolean =>
  Predicate.hasProperty(error, "cause") &&
  Predicate.hasProperty(error.cause, "message") &&
  error.cause.message === "maxBytes exceeded"

const tooLarge = (max: number) =>
  new TooLarge({ message: `the body is over the limit of ${max} bytes; nothing was written` })

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

/**
 * How deep `json` nests arrays and objects, counted without parsing it (and without recursion: a
 * body of 3000 `[` is counted, not followed). Brackets inside strings do not count.
 *
 * @since 0.3.0
 * @category limits
 */
export const depthOf = (json: string): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let index = 0; index < json.length; index++) {
    const char = json.charCodeAt(index)
    if (inString) {
      if (char === 0x5c) index++
      else if (char === 0x22) inString = false
    } else if (char === 0x22) inString = true
    else if (char === 0x5b || char === 0x7b) deepest = Math.max(deepest, ++depth)
    else if (char === 0x5d || char === 0x7d) depth--
  }
  return deepest
}

/** Whether a `Content-Type` names exactly `mediaType` (parameters such as `charset` aside). */
export const hasMediaType = (type: string | undefined, mediaType: string): boolean =>
  type !== undefined && type.split(";")[0]!.trim().toLowerCase() === mediaType

const notJson = new Malformed({
  message: "the body must be JSON, sent with Content-Type: application/json; nothing was written"
})

/** Reads the body (at most `max` bytes) and checks that it is JSON; the handler reads it again from the cache. */
const checkBody = (request: HttpServerRequest.HttpServerRequest, max: number) =>
  Effect.gen(function* () {
    if (!hasMediaType(request.headers["content-type"], "application/json")) return yield* notJson
    const text = yield* readText(request, max)
    if (text.trim() === "") {
      return yield* new Malformed({ message: "the body is empty: send a JSON object; nothing was written" })
    }
    if (depthOf(text) > MAX_JSON_DEPTH) {
      return yield* new Malformed({
        message: `the body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels; nothing was written`
      })
    }
    yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => new Malformed({ message: "the body is not valid JSON; nothing was written" })
    })
  })

/**
 * The `BodyCheck` middleware for bodies of at most `maxBodyBytes`: every request the API's routes
 * match that may carry a body (a `POST`) is checked, however its target was written (`/API/…`,
 * `//api/…`, `http://host/api/…`), since the router has already matched it.
 *
 * @since 0.3.0
 * @category middleware
 */
export const layer = (maxBodyBytes: number = DEFAULT_MAX_BODY_BYTES): Layer.Layer<BodyCheck> =>
  Layer.succeed(
    BodyCheck,
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      HttpMethod.hasBody(request.method) ? checkBody(request, maxBodyBytes) : Effect.void
    )
  )
