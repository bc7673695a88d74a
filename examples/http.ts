/**
 * An app that serves the saga API with a token layer, and approves a wire transfer through the
 * typed client, as a reviewer's app would; then resumes the saga, which completes.
 *
 * Run it: `npx tsx examples/http.ts`. In production the tokens come from the environment:
 * `EFFECT_SAGA_API_TOKENS="alice=…,bob=…"` and `SagaApi.layerTokens()`.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpServer from "@effect/platform/HttpServer"
import { Config, Console, Context, Effect, Layer, Redacted, Schema } from "effect"
import { Approval, Compensable, Journal, Saga } from "effect-saga"
import * as SagaApi from "effect-saga/http"

const reserveFunds = Compensable.make({
  name: "reserveFunds",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: ({ amount }) => Effect.succeed(`hold-${amount}`),
  compensate: () => Effect.void
})

const sendWireTransfer = Compensable.make({
  name: "sendWireTransfer",
  input: Schema.Struct({ amount: Schema.Int, to: Schema.String }),
  success: Schema.String,
  reversibility: "irreversible",
  execute: ({ amount }) => Effect.succeed(`wire-${amount}`)
})

const payout = Effect.gen(function* () {
  yield* reserveFunds({ amount: 4200 })
  return yield* sendWireTransfer({ amount: 4200, to: "DE89 3704 0044 0532 0130 00" })
})

// A token for the reviewer; `SagaApi.layerTokens()` reads EFFECT_SAGA_API_TOKENS instead.
const Tokens = SagaApi.layerTokens(Config.succeed(Redacted.make("alice=a-long-random-token")))

const Services = Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))

const main = Effect.gen(function* () {
  const first = yield* Saga.run("payout-1", payout)
  yield* Console.log(`the saga is ${first._tag}`)

  // The API, its docs and the console, on a free port of 127.0.0.1, for as long as this scope lives.
  const served = yield* Layer.build(SagaApi.serve({ port: 0, authentication: Tokens }))
  const { address } = Context.get(served, HttpServer.HttpServer)
  const baseUrl = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : ""
  yield* Console.log(`serving ${baseUrl}/console and ${baseUrl}/api/docs`)

  // The reviewer's app: the typed client, with the reviewer's token.
  const api = yield* SagaApi.client({ baseUrl, token: Redacted.make("a-long-random-token") })
  const [request] = yield* api.approvals.pending()
  yield* Console.log(
    `${request!.toolName} waits with ${request!.input} (sha256 ${request!.inputDigest?.slice(0, 12)}…)`
  )
  const answer = yield* api.approvals.approve({
    path: { sagaId: request!.sagaId, stepId: request!.stepId },
    payload: { revision: request!.revision, digest: request!.digest }
  })
  yield* Console.log(answer.message)

  const resumed = yield* Saga.resume("payout-1", payout)
  yield* Console.log(`resumed, the saga is ${resumed._tag}`)
})

Effect.runPromise(main.pipe(Effect.scoped, Effect.provide(Services), Effect.provide(FetchHttpClient.layer)))
