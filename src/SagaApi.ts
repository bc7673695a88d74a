/**
 * Operating sagas from outside over HTTP (`effect-saga/http`): an `@effect/platform` `HttpApi` over
 * the app's `Saga`, `Journal` and `Approval` services — sagas (list, get, verify), approvals
 * (pending, approve, reject, renew), operations (resolve, compensate, compensateEffect) — its
 * OpenAPI document and docs page, the web console, a typed client, and a Node server with the rule
 * about authentication. See docs/http.md.
 *
 * NOTE: every command carries the `revision` and `digest` of the saga the caller saw, and is
 * refused with 409 when the saga has moved on since; it runs as the principal the bearer token
 * names, which the `Authority` is asked about and the journal records.
 *
 * @since 0.2.0
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpApiSwagger from "@effect/platform/HttpApiSwagger"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpRouter from "@effect/platform/HttpRouter"
import type * as HttpServer from "@effect/platform/HttpServer"
import type { ServeError } from "@effect/platform/HttpServerError"
import type * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type { Approval } from "./Approval.js"
import type { Principal } from "./Authority.js"
import type { Authentication } from "./internal/http/api.js"
import * as api from "./internal/http/api.js"
import * as authentication from "./internal/http/authentication.js"
import * as body from "./internal/http/body.js"
import * as apiClient from "./internal/http/client.js"
import * as Console from "./internal/http/console/routes.js"
import * as DocsPage from "./internal/http/docsPage.js"
import * as guard from "./internal/http/guard.js"
import * as handlers from "./internal/http/handlers.js"
import type { InvalidApiOptions } from "./internal/http/options.js"
import * as apiOptions from "./internal/http/options.js"
import type { InsecureServer } from "./internal/http/server.js"
import * as server from "./internal/http/server.js"
import * as target from "./internal/http/target.js"
import type { Journal } from "./Journal.js"
import type { Saga } from "./Saga.js"

export { Api, Authentication } from "./internal/http/api.js"
export type {
  /**
   * Any error of the API.
   *
   * @since 0.2.0
   * @category errors
   */
  ApiError,
  /**
   * Every error of `SagaApi`: the status errors (`ApiError`, `Internal`), and `InvalidApiOptions`
   * and `InsecureServer`, which its layer and its server fail to start with.
   *
   * @since 0.4.0
   * @category errors
   */
  SagaApiError
} from "./internal/http/errors.js"
export {
  /**
   * 409: the saga moved on, another worker drives it, or the step already has another answer.
   *
   * @since 0.2.0
   * @category errors
   */
  Conflict,
  /**
   * The type id every error of `SagaApi` carries: its status errors, `InvalidApiOptions`,
   * `InsecureServer`. In memory only: a status error's body on the wire is `{ _tag, message }`, and
   * the typed client's decoding sets it again.
   *
   * @since 0.4.0
   * @category type ids
   */
  ErrorTypeId,
  /**
   * 403: the `Authority` refuses the principal this command.
   *
   * @since 0.2.0
   * @category errors
   */
  Forbidden,
  /**
   * 500: the server failed to answer (a defect, such as an authentication layer that dies or names
   * a principal that cannot be one); its log says why, the body never does.
   *
   * @since 0.2.0
   * @category errors
   */
  Internal,
  /**
   * Whether a value is one of `SagaApi`'s errors, by its `ErrorTypeId`: a status error (`Malformed`,
   * `Unauthenticated`, `Forbidden`, `NotFound`, `Conflict`, `TooLarge`, `Refused`, `Unavailable`,
   * `Internal`) — as a handler fails with it, or as the typed client fails with it, decoded from a
   * response — or `InvalidApiOptions` or `InsecureServer`. A plain object with the same `_tag` (a
   * response body read as JSON) is not one. Narrow a status error by its `_tag` after it.
   *
   * @since 0.4.0
   * @category guards
   */
  isSagaApiError,
  /**
   * 400: a body, path or parameter that does not fit its schema.
   *
   * @since 0.2.0
   * @category errors
   */
  Malformed,
  /**
   * 404: no saga, step, approval request or effect by that id.
   *
   * @since 0.2.0
   * @category errors
   */
  NotFound,
  /**
   * 422: the saga's state refuses the command.
   *
   * @since 0.2.0
   * @category errors
   */
  Refused,
  /**
   * 413: the body is over the server's limit.
   *
   * @since 0.2.0
   * @category errors
   */
  TooLarge,
  /**
   * 401: no credentials, or credentials no principal holds.
   *
   * @since 0.2.0
   * @category errors
   */
  Unauthenticated,
  /**
   * 503: the store could not be used.
   *
   * @since 0.2.0
   * @category errors
   */
  Unavailable
} from "./internal/http/errors.js"
export {
  /**
   * What a command did and where the saga stands after it.
   *
   * @since 0.2.0
   * @category models
   */
  Answer,
  /**
   * The body of `approve`.
   *
   * @since 0.2.0
   * @category models
   */
  ApproveBody,
  /**
   * A command that compensated: its answer and the report.
   *
   * @since 0.2.0
   * @category models
   */
  CompensationAnswer,
  /**
   * What an explicit undo of one effect came to.
   *
   * @since 0.2.0
   * @category models
   */
  EffectUndo,
  /**
   * The run of an explicit undo asked of a saga's step, as `GET /api/sagas/:sagaId` shows it on the step.
   *
   * @since 0.5.0
   * @category models
   */
  ExplicitUndo,
  /**
   * The page of `GET /api/approvals` (`offset`, `limit`: sagas with a request waiting).
   *
   * @since 0.5.0
   * @category models
   */
  InboxParams,
  /**
   * A time as ISO-8601 text, normalized to UTC.
   *
   * @since 0.2.0
   * @category models
   */
  Instant,
  /**
   * The filters and page of `GET /api/sagas`.
   *
   * @since 0.2.0
   * @category models
   */
  ListParams,
  /**
   * An approval request waiting, with the input its saga's journal holds.
   *
   * @since 0.2.0
   * @category models
   */
  PendingApproval,
  /**
   * The body of `reject`.
   *
   * @since 0.2.0
   * @category models
   */
  RejectBody,
  /**
   * The body of `renew`.
   *
   * @since 0.2.0
   * @category models
   */
  RenewBody,
  /**
   * The body of `resolve`.
   *
   * @since 0.2.0
   * @category models
   */
  ResolveBody,
  /**
   * One saga: row, mark, steps (each with the run of an explicit undo asked of it, if one was), entries.
   *
   * @since 0.2.0
   * @category models
   */
  SagaDetail,
  /**
   * A page of sagas.
   *
   * @since 0.2.0
   * @category models
   */
  SagaPage,
  /**
   * A saga's row with its marks.
   *
   * @since 0.2.0
   * @category models
   */
  SagaSummary,
  /**
   * The position of the saga the caller saw.
   *
   * @since 0.2.0
   * @category models
   */
  Seen,
  /**
   * A step as the journal says it stands.
   *
   * @since 0.2.0
   * @category models
   */
  Step,
  /**
   * Where a saga's journal breaks.
   *
   * @since 0.2.0
   * @category models
   */
  Tamper,
  /**
   * Whether a saga's journal verifies.
   *
   * @since 0.2.0
   * @category models
   */
  Verification
} from "./internal/http/models.js"

/**
 * Authentication by `verify`, which names the principal a bearer token belongs to (`undefined`:
 * none, 401). An empty or missing token is 401 without asking it. A principal whose id the journal
 * could not record (blank, a control character, over 256 bytes) and a `verify` that dies are the
 * server's fault: logged at Error, answered 500 `Internal`.
 *
 * @since 0.2.0
 * @category authentication
 */
export const layerAuthentication: (
  verify: (token: Redacted.Redacted<string>) => Effect.Effect<Principal | undefined>
) => Layer.Layer<Authentication> = authentication.layer

/**
 * Authentication by `principal=token` pairs (comma- or line-separated) read from `config`, by
 * default the redacted `EFFECT_SAGA_API_TOKENS`; tokens are compared in constant time.
 *
 * @since 0.2.0
 * @category authentication
 */
export const layerTokens: (
  config?: Config.Config<Redacted.Redacted<string>>
) => Layer.Layer<Authentication, ConfigError.ConfigError> = authentication.layerTokens

/**
 * Every request is the `anonymous` principal: what `serve` runs with when started insecure.
 *
 * NOTE: `serve` given it listens on a loopback address only (`InsecureServer` otherwise) and answers
 * only a loopback `Host`. Composed into a server of your own, nothing is checked: whoever reaches the
 * port reads and commands every saga.
 *
 * @since 0.2.0
 * @category authentication
 */
export const layerInsecure: Layer.Layer<Authentication> = authentication.layerInsecure

/**
 * How the API's layer runs: `tools` names the tools whose undos this process holds, as a `Set` or an
 * array (undo commands that would need another are refused with 422, a step journaled as changing
 * nothing, such as a model turn or a read, needing none; absent, nothing is checked),
 * `maxBodyBytes` the limit of a request's body, a whole number of bytes, 1 or more (default
 * `DEFAULT_MAX_BODY_BYTES`). Anything else fails the layer with `InvalidApiOptions`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly tools?: ReadonlySet<string> | ReadonlyArray<string> | undefined
  readonly maxBodyBytes?: number | undefined
}

export { InvalidApiOptions, isInvalidApiOptions } from "./internal/http/options.js"

/**
 * The default limit of a request's body: 1 MiB.
 *
 * @since 0.2.0
 * @category limits
 */
export const DEFAULT_MAX_BODY_BYTES: number = body.DEFAULT_MAX_BODY_BYTES

/**
 * The most levels of arrays and objects a request's JSON body may nest (64): a deeper one is 400
 * `Malformed` before it is decoded; the console's resolve result too.
 *
 * @since 0.3.0
 * @category limits
 */
export const MAX_JSON_DEPTH: number = body.MAX_JSON_DEPTH

/**
 * The longest path parameter the API routes, in characters as sent: a journal id at its limit
 * (`Saga.MAX_JOURNAL_ID_BYTES`, 1024 bytes), each byte percent-encoded. A longer segment of a path
 * is answered 400 `Malformed` before the router sees it (the router counts a parameter decoded).
 *
 * @since 0.2.0
 * @category limits
 */
export const MAX_PATH_PARAMETER_LENGTH: number = target.MAX_PATH_PARAMETER_LENGTH

/**
 * The API with `options`: its handlers over the `Saga`, `Journal` and `Approval` in context, the
 * OpenAPI document at `/api/openapi.json`, its docs page at `/api/docs` (Swagger UI, its assets in
 * the page: nothing from a CDN; a CSP that forbids framing), and the console at `/console`; every answer under
 * `/api` carries `nosniff` and `no-store`. Serve it with
 * `HttpApiBuilder.serve()` in your own server, or with `serve`. Options it cannot work with fail it
 * with `InvalidApiOptions` when it is built.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerWith = (
  options: Options
): Layer.Layer<HttpApi.Api, InvalidApiOptions, Saga | Journal | Approval | Authentication> =>
  layerKnowing(options, apiOptions.apiKeys)

/** The API with `options`, which may name the options in `known` and no other. */
const layerKnowing = (
  options: Options,
  known: ReadonlyArray<string>
): Layer.Layer<HttpApi.Api, InvalidApiOptions, Saga | Journal | Approval | Authentication> =>
  Layer.unwrapEffect(
    Effect.map(apiOptions.checked(options, known), (checked) =>
      Layer.mergeAll(
        guard.layer,
        // The router's own limit of a path parameter is 100 characters: ids go up to 1024 bytes, encoded.
        HttpRouter.setRouterConfig({ maxParamLength: MAX_PATH_PARAMETER_LENGTH }),
        HttpApiBuilder.middlewareOpenApi({ path: "/api/openapi.json" }),
        HttpApiSwagger.layer({ path: DocsPage.DOCS_PATH }),
        Console.layer(checked)
      ).pipe(
        Layer.provideMerge(
          HttpApiBuilder.api(api.Api).pipe(
            Layer.provide(handlers.layer(checked)),
            Layer.provide(body.layer(checked.maxBodyBytes))
          )
        )
      )
    )
  )

/**
 * The API with the default options.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<HttpApi.Api, never, Saga | Journal | Approval | Authentication> = Layer.orDie(
  layerWith({})
)

export { InsecureServer } from "./internal/http/server.js"

/**
 * Whether a value is an `InsecureServer`, by `SagaApi`'s `ErrorTypeId` (and its `_tag`).
 *
 * @since 0.4.0
 * @category guards
 */
export const isInsecureServer: (u: unknown) => u is InsecureServer = server.isInsecureServer

/**
 * Where `serve` listens (`host`, default `127.0.0.1`; `port`, default 8080, 0 picks a free one), who
 * may call it (`authentication`, or `insecure: true` on a loopback address), and the API's `Options`.
 *
 * @since 0.2.0
 * @category models
 */
export interface ServeOptions<E = never, R = never> extends Options {
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly authentication?: Layer.Layer<Authentication, E, R> | undefined
  readonly insecure?: boolean | undefined
}

/**
 * Whether a host is a loopback address (`127.0.0.0/8`, `::1`, `localhost`).
 *
 * @since 0.2.0
 * @category addresses
 */
export const isLoopback: (host: string) => boolean = server.isLoopback

/**
 * The API, its docs and the console on Node's HTTP server at `host:port` (default
 * `127.0.0.1:8080`; port 0 picks a free one, `HttpServer.HttpServer`'s `address` says which). It
 * refuses to start with `InsecureServer` without an `authentication` layer, unless bound to a
 * loopback address with `insecure: true`, and with `layerInsecure` on any other address; with `ServeError` for a `host` that is not text or a
 * `port` that is not a whole number from 0 to 65535, or an address it cannot listen on; and with
 * `InvalidApiOptions` for the API's options, as `layerWith`.
 *
 * @since 0.2.0
 * @category serving
 */
export const serve = <E = never, R = never>(
  options: ServeOptions<E, R>
): Layer.Layer<
  HttpServer.HttpServer,
  InsecureServer | ServeError | InvalidApiOptions | E,
  Saga | Journal | Approval | R
> => server.serve(layerKnowing(options, apiOptions.serveKeys), options)

/**
 * The typed client: one method per endpoint, grouped as the API is (`sagas`, `approvals`,
 * `operations`), failing with the API's errors.
 *
 * @since 0.2.0
 * @category client
 */
export interface Client {
  /** Reading sagas. */
  readonly sagas: {
    /** `GET /api/sagas`: a page of sagas, what needs a person first. */
    readonly list: ClientOf["sagas"]["list"]
    /** `GET /api/sagas/:sagaId`: one saga. */
    readonly get: ClientOf["sagas"]["get"]
    /** `GET /api/sagas/:sagaId/verify`: whether its journal verifies. */
    readonly verify: ClientOf["sagas"]["verify"]
  }
  /** Deciding approvals. */
  readonly approvals: {
    /** `GET /api/approvals`: the requests waiting, oldest first. */
    readonly pending: ClientOf["approvals"]["pending"]
    /** `POST …/approve`. */
    readonly approve: ClientOf["approvals"]["approve"]
    /** `POST …/reject`. */
    readonly reject: ClientOf["approvals"]["reject"]
    /** `POST …/renew`. */
    readonly renew: ClientOf["approvals"]["renew"]
  }
  /** Settling and undoing. */
  readonly operations: {
    /** `POST …/resolve`. */
    readonly resolve: ClientOf["operations"]["resolve"]
    /** `POST /api/sagas/:sagaId/compensate`. */
    readonly compensate: ClientOf["operations"]["compensate"]
    /** `POST …/compensate-effect`. */
    readonly compensateEffect: ClientOf["operations"]["compensateEffect"]
  }
}

/**
 * The client `HttpApiClient` derives from the API.
 *
 * @since 0.2.0
 * @category client
 */
export type ClientOf =
  typeof api.Api extends HttpApi.HttpApi<infer _Id, infer Groups, infer E, infer _R>
    ? HttpApiClient.Client<Groups, E, never>
    : never

/**
 * A typed client of the API at `baseUrl`, sending `token` as its bearer token; it needs an
 * `HttpClient` (`FetchHttpClient.layer`, `NodeHttpClient.layerUndici`). Its errors are the API's,
 * decoded. A saga or step id of `.` or `..` (which a URL takes as a step of its path) fails with
 * `Malformed` before anything is sent.
 *
 * @since 0.2.0
 * @category client
 */
export const client = (options: {
  readonly baseUrl: string | URL
  readonly token?: string | Redacted.Redacted<string> | undefined
}): Effect.Effect<Client, never, HttpClient.HttpClient> => {
  const token = options.token
  return HttpApiClient.make(api.Api, {
    baseUrl: options.baseUrl,
    transformClient: token === undefined ? undefined : HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
  }).pipe(Effect.map(apiClient.guarded))
}
