/**
 * What every request goes through before the router: a path segment longer than a path parameter
 * may be (as sent) is 400; a request the API's schemas refuse is 400 with the API's one error body
 * (one line: the field, what it expects, what was sent, cut); a path of the API no endpoint matches
 * is 404 with that body too; every 401 says how to authenticate (`WWW-Authenticate: Bearer`). A
 * defect is logged with the request's method and path, and answered 500: `Internal` for an API
 * request, the same sentence as text for a console page (never an empty page an operator cannot
 * read). A command's body is checked later, once the caller is authenticated (`BodyCheck`).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { preview } from "../util/printable.js"
import { Api } from "./api.js"
import { decodeMessage, type Issue } from "./decodeMessage.js"
import * as DocsPage from "./docsPage.js"
import { Internal, Malformed, NotFound } from "./errors.js"
import { defectText, logAnswer } from "./serverLog.js"
import { isApiTarget, longestSegment, MAX_PATH_PARAMETER_LENGTH, pathOf } from "./target.js"

const internal = new Internal({
  message: "the server could not answer this request: its log says why (nothing in this answer does)"
})

/** An error of the API for a request of the API; for any other (a console page), its message as text. */
const refuse = (request: HttpServerRequest.HttpServerRequest, error: Internal | Malformed, status: number) =>
  isApiTarget(request.url) ? Effect.fail(error) : Effect.succeed(HttpServerResponse.text(error.message, { status }))

/** A segment no path parameter can be, as sent, or `undefined`. */
const overLong = (url: string): Malformed | undefined => {
  const longest = longestSegment(url)
  return longest <= MAX_PATH_PARAMETER_LENGTH
    ? undefined
    : new Malformed({
        message: `a segment of the path is ${longest} characters as sent, over the limit of ${MAX_PATH_PARAMETER_LENGTH} (no id is that long); nothing was written`
      })
}

/** What the router's "no route" becomes for a path of the API: the API's `NotFound`, naming the path. */
const noEndpoint = (request: HttpServerRequest.HttpServerRequest) =>
  new NotFound({
    message: `no endpoint answers ${request.method} ${preview(pathOf(request.url))}: the endpoints are listed at /api/docs`
  })

/** RFC 9110: a 401 says how to authenticate. */
const challenge = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(
    response.status === 401 ? HttpServerResponse.setHeader(response, "www-authenticate", "Bearer") : response
  )
)

/**
 * The guard as an API middleware layer.
 *
 * @since 0.2.0
 * @category middleware
 */
export const layer = HttpApiBuilder.middleware(Api, (app) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    yield* challenge
    yield* DocsPage.hardened
    const refused = overLong(request.url)
    if (refused !== undefined) return yield* refuse(request, refused, 400)
    // The app's type names no error, but its failures are the API's, the decode error of its schemas, and the router's.
    const answered = (app as HttpApp.Default<unknown>).pipe(
      Effect.catchAll((error): Effect.Effect<never, Malformed | NotFound> => {
        if (Predicate.isTagged(error, "HttpApiDecodeError") && Predicate.hasProperty(error, "issues")) {
          return Effect.fail(new Malformed({ message: decodeMessage(error.issues as ReadonlyArray<Issue>) }))
        }
        if (Predicate.isTagged(error, "RouteNotFound") && isApiTarget(request.url)) {
          return Effect.fail(noEndpoint(request))
        }
        return Effect.fail(error as never)
      })
    )
    // A defect in reading the body too is the server's failure: logged, and answered 500 with a body.
    return yield* answered.pipe(
      Effect.catchAllDefect((defect) =>
        Effect.zipRight(logAnswer(500, defectText(defect)), refuse(request, internal, 500))
      )
    )
  })
)
