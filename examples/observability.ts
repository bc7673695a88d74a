/**
 * A service running sagas with OpenTelemetry: `@effect/opentelemetry`'s `NodeSdk.layer` exports the
 * library's spans, metrics and log lines. Here the exporters print to the console; in production
 * they are the OTLP exporters of docs/observability.md. Run in CI: it ends by itself.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { ConsoleLogRecordExporter, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs"
import { ConsoleMetricExporter, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import { ConsoleSpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Schema } from "effect"
import { Approval, Compensable, Journal, Metrics, Outcome, Saga } from "effect-saga"

const reserve = Compensable.make({
  name: "reserveInventory",
  input: Schema.Struct({ sku: Schema.String, quantity: Schema.Int }),
  success: Schema.String,
  execute: ({ quantity, sku }) => Effect.succeed(`res-${sku}-${quantity}`),
  compensate: (ctx) => Effect.logInfo(`released ${ctx.result}`)
})

const charge = Compensable.make({
  name: "chargeCard",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: ({ amount }, step) =>
    amount > 10_000
      ? Effect.fail(Outcome.failed("card declined"))
      : // The receipt is control data for the undo: it is journaled, never put on a span or a log line.
        Effect.as(step.setReceipt("rcpt-charge-secret"), `ch-${amount}`),
  compensate: (ctx) => Effect.logInfo(`refunded ${ctx.result}`)
})

const checkout = (amount: number) =>
  Effect.gen(function* () {
    const reservation = yield* reserve({ sku: "A-1", quantity: 2 })
    const chargeId = yield* charge({ amount })
    return { reservation, chargeId }
  })

/** The SDK: console exporters here; the metric reader exports once more when the layer closes. */
const Telemetry = NodeSdk.layer(() => ({
  resource: { serviceName: "checkout-service", serviceVersion: "1.0.0" },
  spanProcessor: new SimpleSpanProcessor(new ConsoleSpanExporter()),
  metricReader: new PeriodicExportingMetricReader({
    exporter: new ConsoleMetricExporter(),
    exportIntervalMillis: 60_000
  }),
  logRecordProcessor: new SimpleLogRecordProcessor({ exporter: new ConsoleLogRecordExporter() })
}))

const Stores = Layer.merge(Journal.layerMemory, Approval.layerMemory)

/** The service: the saga layer on its stores, and the gauge of open sagas counted every 30 seconds. */
const Service = Layer.merge(Saga.layer, Metrics.layerOpenSagas({ every: "30 seconds" })).pipe(
  Layer.provideMerge(Stores)
)

const main = Effect.gen(function* () {
  const completed = yield* Saga.run("order-1", checkout(4200))
  const compensated = yield* Saga.run("order-2", checkout(99_000))
  // What the gauge says now (the layer counts on its own schedule).
  const open = yield* Metrics.refreshOpenSagas
  yield* Effect.logInfo(`order-1 ${completed._tag}, order-2 ${compensated._tag}; open sagas: ${JSON.stringify(open)}`)
})

Effect.runPromise(main.pipe(Effect.provide(Service), Effect.provide(Telemetry)))
