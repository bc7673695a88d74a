/**
 * The API (and whatever else is mounted beside it: the OpenAPI document, the docs page, the console)
 * served by Node on a host and port, with the rule about running without authentication.
 */
import * as net from "node:net"
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServer from "@effect/platform/HttpServer"
import { ServeError } from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { ServeOptions } from "../../SagaApi.js"
import { given, preview } from "../util/printable.js"
import { Authentication } from "./api.js"
import { isInsecure, layerInsecure } from "./authentication.js"
import { API_HEADERS } from "./docsPage.js"
import { ErrorTypeId } from "./errors.js"
import { startingServer } from "./startingServer.js"
import { isApiTarget } from "./target.js"

/**
 * The server would accept requests from anyone: `serve` refuses to start.
 *
 * @since 0.2.0
 * @category errors
 */
export class InsecureServer extends Schema.TaggedError<InsecureServer>("effect-saga/SagaApi/InsecureServer")(
  "InsecureServer",
  { host: Schema.String, reason: Schema.String }
) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `refusing to serve on ${this.host}: ${this.reason}`
  }
}

/**
 * Whether a value is an `InsecureServer`, by its `ErrorTypeId` (and its `_tag` among `SagaApi`'s
 * errors).
 *
 * @since 0.4.0
 * @category guards
 */
export const isInsecureServer = (u: unknown): u is InsecureServer =>
  Predicate.hasProperty(u, ErrorTypeId) && Predicate.isTagged(u, "InsecureServer")

/**
 * Whether `host` is a loopback address (`127.0.0.0/8`, also IPv4-mapped as `::ffff:127.x.y.z`,
 * `::1`, `localhost`).
 *
 * @since 0.2.0
 * @category addresses
 */
export const isLoopback = (host: string): boolean => {
  if (typeof host !== "string") return false
  const bare = host.replace(/^\[|\]$/g, "")
  if (bare === "localhost") return true
  if (net.isIPv4(bare)) return bare.startsWith("127.")
  return net.isIPv6(bare) && (bare === "::1" || /^::ffff:127\./i.test(bare))
}

/**
 * The name a `Host` header gives, without its port (`[::1]:8080` is `::1`), lower-cased; `undefined`
 * for a header that is not a host and an optional port.
 */
const hostnameOf = (header: string): string | undefined => {
  const match = /^(\[[^\]]*\]|[^:[\]]*)(?::\d*)?$/.exec(header.trim())
  return match === null ? undefined : match[1]!.toLowerCase()
}

/**
 * Whether a request's `Host` header names a loopback address or `localhost` (with any port): what
 * a browser sends for a page of this server, and never for a page of another site, even one whose
 * name an attacker has made resolve to 127.0.0.1 (DNS rebinding).
 *
 * @since 0.3.0
 * @category addresses
 */
export const isLoopbackHost = (header: string | undefined): boolean => {
  const hostname = header === undefined ? undefined : hostnameOf(header)
  return hostname !== undefined && isLoopback(hostname)
}

/** The answer to a request that names another host: the API's `Forbidden` body, or its sentence as text. */
const misdirected = (request: HttpServerRequest.HttpServerRequest): HttpServerResponse.HttpServerResponse => {
  const host = request.headers.host
  const message = `this server runs without authentication and answers only requests sent to localhost, 127.0.0.1 or [::1]: Host ${host === undefined ? "is missing" : `${preview(host)} is not one`}`
  return isApiTarget(request.url)
    ? HttpServerResponse.unsafeJson({ _tag: "Forbidden", message }, { status: 403, headers: API_HEADERS })
    : HttpServerResponse.text(message, { status: 403 })
}

/**
 * What a server that runs without authentication answers first: a request whose `Host` is not a
 * loopback name is refused (403) before any route sees it, so a page of another site cannot read or
 * command through its own name rebound to this address. The console's origin check compares the
 * `Origin` with this `Host`, so a form passes it only from a loopback origin.
 */
const loopbackOnly = (app: HttpApp.Default): HttpApp.Default =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    isLoopbackHost(request.headers.host) ? app : Effect.succeed(misdirected(request))
  )

/** Why a server without authentication may not listen on `host`: the network could reach it. */
const notLoopback = (host: string): InsecureServer =>
  new InsecureServer({ host, reason: "insecure serving is allowed on a loopback address only" })

/**
 * The authentication the server runs with, or why it refuses to start: none given and not
 * `insecure: true`, or `insecure: true` on an address that is not loopback. (Given one that builds
 * `layerInsecure`'s service, `serve` refuses an address that is not loopback once it is built.)
 */
const authenticationFor = <E, R>(
  host: string,
  options: ServeOptions<E, R>
): Effect.Effect<Layer.Layer<Authentication, E, R>, InsecureServer> => {
  if (options.authentication !== undefined) return Effect.succeed(options.authentication)
  if (options.insecure !== true) {
    return Effect.fail(
      new InsecureServer({
        host,
        reason: "no authentication layer (give one, or start it insecure on a loopback address)"
      })
    )
  }
  return isLoopback(host) ? Effect.succeed(layerInsecure) : Effect.fail(notLoopback(host))
}

/**
 * Serves `app` (a layer that provides the API, `SagaApi.layer` and what is mounted beside it) with
 * the authentication `options` name, on Node's HTTP server.
 *
 * @since 0.2.0
 * @category serving
 */
export const serve = <EA, RA, E, R>(
  app: Layer.Layer<HttpApi.Api, EA, RA>,
  options: ServeOptions<E, R>
): Layer.Layer<HttpServer.HttpServer, InsecureServer | ServeError | EA | E, Exclude<RA, Authentication> | R> => {
  const host = options.host ?? "127.0.0.1"
  const port = options.port ?? 8080
  // From JavaScript, or `as any`, anything may come: a host that is not text would throw from the call.
  if (typeof host !== "string") {
    return Layer.fail(
      new ServeError({ cause: new TypeError(`host ${given(host)} is not a host: give an address or a name, as text`) })
    )
  }
  // Node throws a RangeError from `listen` for a port out of range: a crash, not an error to handle.
  if (typeof port !== "number" || !Number.isInteger(port) || port < 0 || port > 65_535) {
    return Layer.fail(
      new ServeError({
        cause: new RangeError(`port ${given(port)} is not a port: give a whole number, 0–65535 (0 picks a free one)`)
      })
    )
  }
  return Layer.unwrapScoped(
    Effect.gen(function* () {
      // Built first, so that `layerInsecure` is known by the service it builds, however it was
      // composed (`Layer.orElse(layerTokens(), () => layerInsecure)` with no tokens set builds it).
      const built = yield* Layer.build(yield* authenticationFor(host, options))
      const insecure = isInsecure(Context.get(built, Authentication))
      // Without authentication the server listens on a loopback address only (the `Host` check
      // alone does not stop a client on the network, which may send any `Host`) ...
      if (insecure && !isLoopback(host)) return yield* notLoopback(host)
      // ... and the Host must be a loopback name.
      return HttpApiBuilder.serve(insecure ? loopbackOnly : undefined).pipe(
        Layer.provide(app),
        Layer.provide(Layer.succeedContext(built)),
        Layer.provideMerge(NodeHttpServer.layer(startingServer, { host, port }))
      )
    })
  ) as Layer.Layer<HttpServer.HttpServer, InsecureServer | ServeError | EA | E, Exclude<RA, Authentication> | R>
}
