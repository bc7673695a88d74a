/**
 * `effect-saga serve --db FILE|postgres://… [--host H] [--port N] [--register MODULE…] [--insecure]`:
 * the HTTP API, its docs and the web console over a store, until interrupted.
 *
 * @since 0.2.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as HttpServer from "@effect/platform/HttpServer"
import type { ServeError } from "@effect/platform/HttpServerError"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as SagaApi from "../../../SagaApi.js"
import { named, printable } from "../../util/printable.js"
import { decimalInteger } from "../decimal.js"
import { UsageError } from "../failure.js"
import { print } from "../output.js"
import { db, register, withStore } from "../root.js"
import * as Tools from "../tools.js"

const host = Options.text("host").pipe(
  Options.withPseudoName("HOST"),
  Options.withDescription("The address to listen on (default 127.0.0.1)."),
  Options.withDefault("127.0.0.1")
)

const port = decimalInteger("port").pipe(
  Options.withDescription("The port to listen on, 0–65535 (default 8080; 0 picks a free one)."),
  Options.withDefault(8080)
)

/** The highest TCP port. */
const MAX_PORT = 65_535

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

/** Whether `EFFECT_SAGA_API_TOKENS` is set (to something). */
const tokensSet = Effect.map(
  Effect.orElseSucceed(Config.option(Config.nonEmptyString(TOKENS)), () => Option.none<string>()),
  Option.isSome
)

/** Tokens when `EFFECT_SAGA_API_TOKENS` is set; otherwise none, and `serve` applies the insecure rule. */
const authentication = (api: typeof SagaApi) =>
  Effect.map(tokensSet, (set) => (set ? api.layerTokens(Config.redacted(TOKENS)) : undefined))

/**
 * Refuses, before the store is opened, to serve without `EFFECT_SAGA_API_TOKENS` unless started
 * `--insecure` (which `serve` then allows on a loopback address only): the line names the variable.
 */
const checkAuthentication = (host: string, insecure: boolean): Effect.Effect<void, UsageError> =>
  Effect.flatMap(tokensSet, (set) =>
    set || insecure
      ? Effect.void
      : Effect.fail(
          new UsageError({
            message: `refusing to serve on ${named(host)}: ${TOKENS} is not set (give principal=token pairs, comma-separated, or start it with --insecure on a loopback address)`
          })
        )
  )

/** A port the server can listen on, or a usage error that names the flag and the range. */
const checkPort = (value: number): Effect.Effect<void, UsageError> =>
  value >= 0 && value <= MAX_PORT
    ? Effect.void
    : Effect.fail(new UsageError({ message: `--port ${value} is not a port: give 0–${MAX_PORT} (0 picks a free one)` }))

/** Why the server could not listen, as its one line: the address and the system's reason. */
const listenFailure = (address: string) => (error: ServeError) => {
  const cause = error.cause
  const reason = cause instanceof Error ? cause.message : String(cause)
  return new UsageError({ message: `cannot serve on ${address}: ${printable(reason)}` })
}

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
  Effect.zipRight(
    Effect.zipRight(checkPort(options.port), checkAuthentication(options.host, options.insecure)),
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
        ).pipe(Effect.catchTag("ServeError", listenFailure(`${named(options.host)} port ${options.port}`)))
        const url = urlOf(Context.get(served, HttpServer.HttpServer).address)
        yield* print(`serving ${url}/console (the console), ${url}/api (the API), ${url}/api/docs (its docs)`)
        return yield* Effect.never
      }),
      {
        access: "write",
        interrupted:
          "stopped serving: the requests in flight were answered before the store closed, each saying what it journaled"
      }
    )
  )
).pipe(
  Command.withDescription(
    "Serve the HTTP API, its OpenAPI document and docs page, and the web console over the store, until interrupted. Callers authenticate with a bearer token from EFFECT_SAGA_API_TOKENS (principal=token pairs, comma-separated); without it the server refuses to start unless bound to a loopback address with --insecure. Undo commands (reject, compensate, compensate-effect) need the saga's tools, loaded with --register, as in the CLI."
  )
)
