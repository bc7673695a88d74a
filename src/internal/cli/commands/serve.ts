/**
 * `effect-saga serve --db FILE|postgres://… [--host H] [--port N] [--register MODULE…] [--insecure]`:
 * the HTTP API, its docs and the web console over a store, until interrupted.
 *
 * @since 0.2.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as SagaApi from "../../../SagaApi.js"
import { print } from "../output.js"
import { db, register, withStore } from "../root.js"
import * as Tools from "../tools.js"

const host = Options.text("host").pipe(
  Options.withPseudoName("HOST"),
  Options.withDescription("The address to listen on (default 127.0.0.1)."),
  Options.withDefault("127.0.0.1")
)

const port = Options.integer("port").pipe(
  Options.withPseudoName("N"),
  Options.withDescription("The port to listen on (default 8080; 0 picks a free one)."),
  Options.withDefault(8080)
)

const insecure = Options.boolean("insecure").pipe(
  Options.withDescription(
    "Serve without authentication (every caller is `anonymous`): allowed on a loopback address only, and only when EFFECT_SAGA_API_TOKENS is not set."
  )
)

const TOKENS = "EFFECT_SAGA_API_TOKENS"

/**
 * The HTTP module, loaded when `serve` runs: the other commands do not load Node's HTTP server (nor
 * its WebSocket dependency, which a bundle of the CLI cannot always hold).
 */
const loadApi = Effect.promise(() => import("../../../SagaApi.js"))

/** Tokens when `EFFECT_SAGA_API_TOKENS` is set; otherwise none, and `serve` applies the insecure rule. */
const authentication = (api: typeof SagaApi) =>
  Effect.map(
    Effect.orElseSucceed(Config.option(Config.nonEmptyString(TOKENS)), () => Option.none<string>()),
    (tokens) => (Option.isSome(tokens) ? api.layerTokens(Config.redacted(TOKENS)) : undefined)
  )

const urlOf = (address: HttpServer.Address): string =>
  address._tag === "UnixAddress"
    ? address.path
    : `http://${address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname}:${address.port}`

/**
 * The `serve` command.
 *
 * @since 0.2.0
 * @category commands
 */
export const serve = Command.make("serve", { db, host, port, register, insecure }, (options) =>
  withStore(
    options.db,
    Effect.gen(function* () {
      const tools = yield* Tools.register(options.register)
      const api = yield* loadApi
      const served = yield* Layer.build(
        api.serve({
          host: options.host,
          port: options.port,
          authentication: yield* authentication(api),
          insecure: options.insecure,
          tools
        })
      )
      const url = urlOf(Context.get(served, HttpServer.HttpServer).address)
      yield* print(`serving ${url}/console (the console), ${url}/api (the API), ${url}/api/docs (its docs)`)
      return yield* Effect.never
    }),
    { access: "write" }
  )
).pipe(
  Command.withDescription(
    "Serve the HTTP API, its OpenAPI document and docs page, and the web console over the store, until interrupted. Callers authenticate with a bearer token from EFFECT_SAGA_API_TOKENS (principal=token pairs, comma-separated); without it the server refuses to start unless bound to a loopback address with --insecure. Undo commands (reject, compensate, compensate-effect) need the saga's tools, loaded with --register, as in the CLI."
  )
)
