// A library built on effect-saga: its exports carry no type annotations, so `check.mjs` (which compiles
// this file with `declaration: true`) fails if any type they reach cannot be named from effect-saga's
// public subpaths. It imports the root namespaces only, as most code does.
import { Toolkit as AiToolkit, Tool } from "@effect/ai"
import * as Command from "@effect/cli/Command"
import { Effect, Layer, Schema } from "effect"
import { Approval, Compensable, Journal, Metrics, Recovery, Saga, SagaDefinition, SqlStore, Toolkit } from "effect-saga"
import * as Agent from "effect-saga/ai"
import * as Cli from "effect-saga/cli"
import * as SagaApi from "effect-saga/http"
import * as Postgres from "effect-saga/postgres"
import * as Testing from "effect-saga/testing"

export const reserve = Compensable.make({
  name: "reserve",
  input: Schema.Struct({ sku: Schema.String }),
  success: Schema.String,
  execute: ({ sku }) => Effect.succeed(sku),
  compensate: () => Effect.void
})
export const reserveSpec = reserve.spec
export const program = Effect.gen(function* () {
  return yield* reserve({ sku: "a" })
})
export const wrapped = Effect.succeed(1).pipe(
  Compensable.withCompensation({ name: "wrapped", success: Schema.Number, compensate: () => Effect.void })
)
export const Checkout = SagaDefinition.make("checkout", { input: Schema.String, program: (sku) => reserve({ sku }) })
export const tools = Toolkit.make({ reserve })
export const called = Toolkit.call(tools, "reserve", { sku: "a" })

export const run = Saga.run("order-1", program)
export const status = Saga.status("order-1")
export const compensate = Saga.compensate("order-1")
export const verify = Journal.verify("order-1")

export const SagaLive = Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
export const SqliteLive = SqlStore.layerSqlite({ filename: "sagas.db" })
export const PostgresLive = Postgres.layer({ url: "postgres://localhost/sagas" })
export const RecoveryLive = Recovery.layer({ definitions: [Checkout] })
export const recovery = Recovery.make({ definitions: [Checkout] })
export const MetricsLive = Metrics.layerOpenSagas({})

export const ApiLive = SagaApi.layer
export const ApiWithLive = SagaApi.layerWith({})
export const TokensLive = SagaApi.layerTokens()
export const server = SagaApi.serve({ host: "127.0.0.1", port: 0, authentication: SagaApi.layerInsecure })
export const client = SagaApi.client({ baseUrl: "http://127.0.0.1:8080" })

export const TestLive = Testing.layer
export const explored = Testing.exploreCrashes(Checkout, "a", { world: Layer.empty })

const Hold = Tool.make("Hold", { parameters: { sku: Schema.String }, success: Schema.String })
export const agent = Agent.make(AiToolkit.make(Hold))
export const AgentLive = agent.toLayer({ Hold: ({ sku }) => Effect.succeed(sku) })
export const loop = Agent.loop({ prompt: "hold a room", toolkit: agent.toolkit })

export const cli = Command.make("app").pipe(Command.withSubcommands([Cli.command]))
