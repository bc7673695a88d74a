import * as Tool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { assert, describe, expect, it } from "@effect/vitest"
import { SpanStatusCode } from "@opentelemetry/api"
import { InMemoryLogRecordExporter, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs"
import type { ResourceMetrics } from "@opentelemetry/sdk-metrics"
import { DataPointType, MetricReader } from "@opentelemetry/sdk-metrics"
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Option, Redacted, Schema, TestClock } from "effect"
import * as Agent from "../src/Agent.js"
import { Compensable, Journal, Metrics, Outcome, Recovery, Saga, SagaDefinition, Timeline } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import * as Scripted from "./fixtures/agent-scripted.js"

describe("OpenTelemetry export through @effect/opentelemetry's NodeSdk", () => {
  it.effect("a saga that compensates: spans saga → step → undo, with their parents, statuses and attributes", () =>
    Effect.gen(function* () {
      const program = Effect.gen(function* () {
        yield* reserve("A-1")
        yield* hold("room-7")
        yield* charge(500)
      })
      const [result, spans] = yield* traced("traced", program)
      expect(result._tag).toBe("CompensationFailed")

      const [run] = named(spans, "effect-saga.run")
      expect(run!.attributes).toEqual({ "saga.id": "traced", "workflow.id": "traced", outcome: "CompensationFailed" })
      expect(run!.status.code).toBe(SpanStatusCode.OK)

      const steps = named(spans, "effect-saga.step")
      expect(steps.map((span) => [span.attributes.tool, span.attributes.outcome, span.status.code])).toEqual([
        ["reserve", "executed", SpanStatusCode.OK],
        ["hold", "executed", SpanStatusCode.OK],
        ["charge", "failed", SpanStatusCode.ERROR]
      ])
      expect(steps[2]!.status.message).toBe("declined")
      expect(steps[0]!.attributes).toEqual({
        "saga.id": "traced",
        "workflow.id": "traced",
        "step.id": expect.stringMatching(/^reserve:[0-9a-f]{16}#1$/),
        tool: "reserve",
        outcome: "executed"
      })

      const undos = named(spans, "effect-saga.undo")
      expect(undos.map((span) => [span.attributes.tool, span.attributes.outcome, span.status.code])).toEqual([
        ["hold", "failed", SpanStatusCode.ERROR],
        ["reserve", "completed", SpanStatusCode.OK]
      ])
      expect(undos[0]!.status.message).toBe("the undo of hold ended failed: failed (not applied): the hotel is closed")
      expect(undos[1]!.attributes["step.id"]).toBe(steps[0]!.attributes["step.id"])

      // One trace: the steps and the undos are children of the saga's span.
      for (const span of [...steps, ...undos]) {
        expect(span.parentSpanContext?.spanId).toBe(run!.spanContext().spanId)
        expect(span.spanContext().traceId).toBe(run!.spanContext().traceId)
      }
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a tool's own span nests under its step's, and a step that halts the saga still ends its span", () =>
    Effect.gen(function* () {
      const [result, spans] = yield* traced("nested", Effect.zipRight(lookup("A-1"), wire(10)))
      expect(result._tag).toBe("AwaitingApproval")

      const [inner] = named(spans, "inventory.lookup")
      const [lookupStep, wireStep] = named(spans, "effect-saga.step")
      expect(lookupStep!.attributes.tool).toBe("lookup")
      expect(inner!.parentSpanContext?.spanId).toBe(lookupStep!.spanContext().spanId)
      // The halted step's span ended (it is exported), after the step before it, in the saga's span.
      expect(wireStep!.attributes.tool).toBe("wire")
      const [run] = named(spans, "effect-saga.run")
      expect(wireStep!.parentSpanContext?.spanId).toBe(run!.spanContext().spanId)
      expect(run!.attributes.outcome).toBe("AwaitingApproval")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an undo's own span nests under the undo's, in the trace of the saga that compensates", () =>
    Effect.gen(function* () {
      const [result, spans] = yield* traced("released", Effect.zipRight(lookup("A-2"), charge(500)))
      expect(result._tag).toBe("Compensated")
      const [undo] = named(spans, "effect-saga.undo").filter((span) => span.attributes.tool === "lookup")
      const [inner] = named(spans, "inventory.release")
      expect(inner!.parentSpanContext?.spanId).toBe(undo!.spanContext().spanId)
      expect(inner!.spanContext().traceId).toBe(named(spans, "effect-saga.run")[0]!.spanContext().traceId)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "metrics after 3 completed, 1 compensated, 1 needing attention and 1 rejected saga are exactly what ran",
    () =>
      Effect.gen(function* () {
        const otel = exporters()
        yield* Effect.gen(function* () {
          const before = points(yield* otel.collect)
          for (const id of ["done-1", "done-2", "done-3"]) yield* Saga.run(id, checkout(100))
          expect((yield* Saga.run("declined", checkout(500)))._tag).toBe("Compensated")
          expect((yield* Saga.run("lost", ship("parcel-1")))._tag).toBe("NeedsAttention")
          const waiting = yield* Saga.run("wired", payout)
          assert(waiting._tag === "AwaitingApproval")
          yield* TestClock.adjust("1 hour")
          yield* Saga.reject("wired", waiting.request.stepId, { by: "carol", reason: "wrong IBAN" })
          // Running a completed saga again replays its two steps from the journal: nothing else moves.
          expect((yield* Saga.run("done-1", checkout(100)))._tag).toBe("Completed")
          yield* Metrics.refreshOpenSagas
          const moved = changes(before, points(yield* otel.collect))
          expect(moved).toEqual({
            effect_saga_sagas_started_total: 6,
            "effect_saga_sagas_ended_total{status=completed}": 3,
            "effect_saga_sagas_ended_total{status=compensated}": 2,
            "effect_saga_sagas_halted_total{status=needs_attention}": 1,
            "effect_saga_sagas_halted_total{status=awaiting_approval}": 1,
            "effect_saga_saga_duration_seconds{status=completed}": { count: 3, sum: 4.5 },
            "effect_saga_saga_duration_seconds{status=compensated}": { count: 2, sum: 1.5 + 3600 },
            "effect_saga_steps_total{outcome=executed,tool=reserve}": 5,
            "effect_saga_steps_total{outcome=executed,tool=charge}": 3,
            "effect_saga_steps_total{outcome=failed,tool=charge}": 1,
            "effect_saga_steps_total{outcome=unknown,tool=ship}": 1,
            "effect_saga_steps_total{outcome=replayed,tool=reserve}": 1,
            "effect_saga_steps_total{outcome=replayed,tool=charge}": 1,
            "effect_saga_step_duration_seconds{tool=reserve}": { count: 5, sum: 0 },
            "effect_saga_step_duration_seconds{tool=charge}": { count: 4, sum: 6 },
            "effect_saga_undos_total{outcome=completed,tool=reserve}": 2,
            "effect_saga_approvals_total{decision=requested,tool=wire}": 1,
            "effect_saga_approvals_total{decision=rejected,tool=wire}": 1,
            "effect_saga_open_sagas{status=needs_attention}": 1
          })
          // The operator's rejection is a span of its own, and the undo it caused runs inside it.
          const spans = yield* otel.finished
          const [reject] = named(spans, "effect-saga.reject")
          expect(reject!.attributes).toEqual({
            "saga.id": "wired",
            "workflow.id": "wired",
            "step.id": waiting.request.stepId
          })
          const undo = named(spans, "effect-saga.undo").find((span) => span.attributes["saga.id"] === "wired")!
          expect(undo.parentSpanContext?.spanId).toBe(reject!.spanContext().spanId)
        }).pipe(Effect.provide(otel.layer))
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an undo compensateEffect ran, then the saga's compensation took over, is one undo, in either order", () =>
    Effect.gen(function* () {
      const otel = exporters()
      yield* Effect.gen(function* () {
        const before = points(yield* otel.collect)
        // compensateEffect first: the saga's compensation takes its answer over without running it.
        for (const id of ["explicit-first", "partial-first"]) {
          const ran = yield* Saga.run(id, id === "explicit-first" ? reserve("A-1") : drain("tank-1"))
          expect(ran._tag).toBe("Completed")
          const [step] = (yield* Saga.status(id)).steps
          yield* Saga.compensateEffect(step!.effectId)
          const report = yield* Saga.compensate(id)
          expect(report.undone[0]!.detail).toMatch(/^by compensateEffect/)
        }
        // The saga's compensation first: compensateEffect answers from it.
        yield* Saga.run("saga-first", reserve("A-2"))
        const [step] = (yield* Saga.status("saga-first")).steps
        yield* Saga.compensate("saga-first")
        expect(yield* Saga.compensateEffect(step!.effectId)).toMatchObject({
          _tag: "Settled",
          detail: "settled by the saga's compensation"
        })
        const moved = changes(before, points(yield* otel.collect))
        expect(moved["effect_saga_undos_total{outcome=completed,tool=reserve}"]).toBe(2)
        expect(moved["effect_saga_undos_total{outcome=partial,tool=drain}"]).toBe(1)
      }).pipe(Effect.provide(otel.layer))
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("the receipt's secret is in no exported span, event, metric attribute or log record", () =>
    Effect.gen(function* () {
      const otel = exporters()
      yield* Effect.gen(function* () {
        const result = yield* Saga.run(
          "secretive",
          Effect.zipRight(
            open("vault-1"),
            Effect.flatMap(charge(500), () => Effect.logInfo("charged"))
          )
        )
        expect(result._tag).toBe("Compensated")
        yield* Effect.logWarning("effect-saga test: a log line from the program's service")
        const metrics = yield* otel.collect
        const exported = JSON.stringify({
          spans: (yield* otel.finished).map((span) => ({
            name: span.name,
            attributes: span.attributes,
            events: span.events,
            status: span.status,
            links: span.links
          })),
          metrics: metrics.scopeMetrics,
          logs: otel.logs.getFinishedLogRecords().map((record) => ({
            body: record.body,
            attributes: record.attributes
          }))
        })
        expect(exported).toContain("effect-saga.undo")
        expect(exported).toContain("effect_saga_undos_total")
        expect(exported).toContain("a log line from the program's service")
        expect(exported).not.toContain(SECRET)
      }).pipe(Effect.provide(otel.layer))
      expect(opened).toEqual([SECRET])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an agent's tool call is the GenAI execute_tool span, around its step, with the tool's name and call id",
    () =>
      Effect.gen(function* () {
        const otel = exporters()
        const model = Scripted.layer(({ turn }) =>
          turn === 1 ? Scripted.calls(Scripted.call("call-1", "Lookup", { sku: "A-1" })) : Scripted.says("10 left.")
        )
        const agent = Agent.make(LookupToolkit, {})
        const live = Layer.mergeAll(
          agent.toLayer({ Lookup: () => Effect.succeed({ stock: 10 }) }),
          Agent.layerModel.pipe(Layer.provide(model.layer))
        ).pipe(Layer.provideMerge(Testing.layer))
        const [result, spans] = yield* Effect.zip(
          Saga.run("agent", Agent.loop({ prompt: "How many A-1?", toolkit: LookupToolkit })),
          otel.finished
        ).pipe(Effect.provide(Layer.merge(live, otel.layer)))
        expect(result._tag).toBe("Completed")
        const [tool] = named(spans, "execute_tool Lookup")
        expect(tool!.attributes).toEqual({
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "Lookup",
          "gen_ai.tool.call.id": "call-1"
        })
        const step = named(spans, "effect-saga.step").find((span) => span.attributes.tool === "Lookup")!
        expect(step.parentSpanContext?.spanId).toBe(tool!.spanContext().spanId)
        expect(step.attributes["step.id"]).toBe("Lookup:call-1#1")
      })
  )
})

describe("what the spans' statuses and exception events say", () => {
  it.effect(
    "a tool's huge error is cut in its step's span as the journal cuts it (1000 characters), its causes too: no trace carries it whole",
    () =>
      Effect.gen(function* () {
        const huge = "E".repeat(200_000)
        const failsHugely = Compensable.make({
          name: "failsHugely",
          input: Schema.String,
          success: Schema.String,
          failure: Schema.Defect,
          // The receipt the call set is in its error too: masked, and cut all the same.
          execute: (_input, step) =>
            Effect.zipRight(
              step.setReceipt("RCPT-123"),
              Effect.fail(new Error(`provider: ${huge}`, { cause: new Error(`upstream RCPT-123: ${huge}`) }))
            ),
          compensate: () => Effect.void
        })
        const [result, spans] = yield* traced("huge-error", failsHugely("x"))
        expect(result._tag).toBe("Compensated")
        const [step] = named(spans, "effect-saga.step")
        expect(step!.status.code).toBe(SpanStatusCode.ERROR)
        expect(step!.status.message).toBe(`provider: ${"E".repeat(989)}…`)
        const [exception] = step!.events
        expect(exception!.attributes!["exception.message"]).toBe(step!.status.message)
        const stack = String(exception!.attributes!["exception.stacktrace"])
        expect(stack).toContain(`[cause]: Error: upstream <redacted>: ${"E".repeat(978)}…`)
        expect(stack.length).toBeLessThan(10_000)
        expect(exported(spans).length).toBeLessThan(20_000)
        expect(exported(spans)).not.toContain("RCPT-123")
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a receipt quoted in the cause of a call's error is in no part of its step's span, the rendered causes included",
    () =>
      Effect.gen(function* () {
        const [result, spans] = yield* traced("refunded", refund("r-1"))
        expect(result._tag).toBe("Compensated")
        const [step] = named(spans, "effect-saga.step")
        expect(step!.status).toEqual({ code: SpanStatusCode.ERROR, message: "provider said no" })
        const [exception] = step!.events
        expect(exception!.attributes).toMatchObject({
          "exception.type": "Error",
          "exception.message": "provider said no"
        })
        // @effect/opentelemetry renders the error with its causes: the cause is there, masked.
        expect(exception!.attributes!["exception.stacktrace"]).toContain("[cause]: Error: token <redacted> rejected")
        expect(exported(spans)).not.toContain(SECRET)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an agent's execute_tool span ends as its step's does: a declared failure quoting the receipt, masked",
    () =>
      Effect.gen(function* () {
        const otel = exporters()
        const model = Scripted.layer(({ turn }) =>
          turn === 1 ? Scripted.calls(Scripted.call("call-1", "Pay", { card: "card-1" })) : Scripted.says("Declined.")
        )
        const agent = Agent.make(PayToolkit, { undo: { Pay: () => Effect.void } })
        const live = Layer.mergeAll(
          agent.toLayer({
            Pay: (_params, step) =>
              Effect.zipRight(
                step.setReceipt(SECRET),
                Effect.fail(new PayDeclined({ reason: `declined, ref ${SECRET}` }))
              )
          }),
          Agent.layerModel.pipe(Layer.provide(model.layer))
        ).pipe(Layer.provideMerge(Testing.layer))
        const spans = yield* Effect.zipRight(
          Saga.run("agent-pay", Agent.loop({ prompt: "Pay with card-1", toolkit: PayToolkit })),
          otel.finished
        ).pipe(Effect.provide(Layer.merge(live, otel.layer)))
        const [tool] = named(spans, "execute_tool Pay")
        const step = named(spans, "effect-saga.step").find((span) => span.attributes.tool === "Pay")!
        expect(step.parentSpanContext?.spanId).toBe(tool!.spanContext().spanId)
        for (const span of [tool!, step]) {
          expect(span.status.code).toBe(SpanStatusCode.ERROR)
          expect(span.status.message).toContain("declined, ref <redacted>")
          expect(span.events[0]!.attributes!["exception.type"]).toBe("PayDeclined")
        }
        expect(exported([tool!, step])).not.toContain(SECRET)
      })
  )

  it.effect(
    "a saga whose input no longer decodes: Recovery.resume's and a recovery pass's spans are errors that do not quote it",
    () =>
      Effect.gen(function* () {
        const otel = exporters()
        const journal = yield* Journal.Journal
        const started = JSON.stringify({ definition: "paying", input: CARD })
        yield* journal.append("paid", Journal.empty, [
          { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: started },
          { stepId: null, toolName: null, phase: "SAGA_SUSPENDED", input: null, payload: null }
        ])
        const recovery = yield* Recovery.make({ definitions: [paying] })
        const spans = yield* Effect.gen(function* () {
          const resumed = yield* Effect.flip(recovery.resume("paid"))
          expect(resumed._tag).toBe("Unrecoverable")
          const pass = yield* recovery.recoverAll
          expect(pass.sagas.map((saga) => [saga.sagaId, saga._tag])).toEqual([["paid", "Failed"]])
          return yield* otel.finished
        }).pipe(Effect.provide(otel.layer))
        // Recovery.resume's, then the pass's: the same status.
        const recovers = named(spans, "effect-saga.recover")
        const status = {
          code: SpanStatusCode.ERROR,
          message:
            "saga paid cannot be recovered here: its input no longer decodes with its definition's input schema (Recovery.resume of the saga, or recoverAll's report, fails with the error that says why)"
        }
        expect(recovers.map((span) => [span.attributes["saga.id"], span.status])).toEqual([
          ["paid", status],
          ["paid", status]
        ])
        for (const span of recovers) expect(span.events[0]!.attributes!["exception.type"]).toBe("Unrecoverable")
        expect(exported(spans)).not.toContain(CARD)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a replayed step's span is OK without an outcome, its journaled failure too: nothing ran", () =>
    Effect.gen(function* () {
      expect((yield* Saga.run("replayed", checkout(500)))._tag).toBe("Compensated")
      const [again, spans] = yield* traced("replayed", checkout(500))
      expect(again._tag).toBe("Compensated")
      const steps = named(spans, "effect-saga.step")
      expect(steps.map((span) => [span.attributes.tool, span.attributes.outcome, span.status, span.events])).toEqual([
        ["reserve", undefined, { code: SpanStatusCode.OK }, []],
        ["charge", undefined, { code: SpanStatusCode.OK }, []]
      ])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "undos settled without running have their span: skipped OK; failed, unknown and unavailable ERROR; taken over",
    () =>
      Effect.gen(function* () {
        const otel = exporters()
        const spans = yield* Effect.gen(function* () {
          // No undo (skipped), a receipt its undo needs never set (failed), then the failure.
          const program = Effect.zipRight(Effect.zipRight(noReceipt("a"), notify("ops")), charge(500))
          expect((yield* Saga.run("settled", program))._tag).toBe("CompensationFailed")
          // An undo that started but never journaled its outcome (a crash): unknown.
          expect((yield* Saga.run("crashed", reserve("A-1")))._tag).toBe("Completed")
          const journal = yield* Journal.Journal
          const [reserved] = (yield* Saga.status("crashed")).steps
          const position = Option.getOrThrow(yield* journal.get("crashed"))
          yield* journal.append("crashed", position, [
            { stepId: reserved!.stepId, toolName: "reserve", phase: "COMPENSATING", input: null, payload: null }
          ])
          expect((yield* Saga.compensate("crashed")).undone.map((undo) => undo.outcome)).toEqual(["unknown"])
          // Undone on request first: the saga's compensation takes its outcome over.
          expect((yield* Saga.run("requested", reserve("A-2")))._tag).toBe("Completed")
          const [requested] = (yield* Saga.status("requested")).steps
          expect(yield* Saga.compensateEffect(requested!.effectId)).toMatchObject({ outcome: "completed" })
          expect((yield* Saga.compensate("requested")).undone.map((undo) => undo.outcome)).toEqual(["completed"])
          // Compensated by a Saga service that has never seen the tool: unavailable.
          expect((yield* Saga.run("elsewhere", reserve("A-3")))._tag).toBe("Completed")
          const elsewhere = yield* Saga.compensate("elsewhere").pipe(Effect.provide(Saga.layer))
          expect(elsewhere.undone.map((undo) => undo.outcome)).toEqual(["unavailable"])
          return yield* otel.finished
        }).pipe(Effect.provide(otel.layer))
        const undos = named(spans, "effect-saga.undo").map((span) => [
          span.attributes["saga.id"],
          span.attributes.tool,
          span.attributes.outcome,
          span.status
        ])
        expect(undos).toEqual([
          ["settled", "notify", "skipped", { code: SpanStatusCode.OK }],
          [
            "settled",
            "noReceipt",
            "failed",
            {
              code: SpanStatusCode.ERROR,
              message:
                "the undo of noReceipt ended failed: the receipt its undo needs was never set: the effect cannot be undone here"
            }
          ],
          [
            "crashed",
            "reserve",
            "unknown",
            {
              code: SpanStatusCode.ERROR,
              message:
                "the undo of reserve ended unknown: COMPENSATING was journaled but no outcome: the undo may or may not have run"
            }
          ],
          // The explicit undo's own, then the saga's compensation taking it over.
          ["requested", "reserve", "completed", { code: SpanStatusCode.OK }],
          ["requested", "reserve", "completed", { code: SpanStatusCode.OK }],
          [
            "elsewhere",
            "reserve",
            "unavailable",
            {
              code: SpanStatusCode.ERROR,
              message: "the undo of reserve ended unavailable: tool reserve is not registered in this process"
            }
          ]
        ])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an undo whose journaled input no longer decodes: its span is failed and does not quote the input", () =>
    Effect.gen(function* () {
      // This service knows `card` with a number as its input; another journaled a card number's text.
      expect((yield* Saga.run("numbered", strictCard(5)))._tag).toBe("Completed")
      expect((yield* Saga.run("carded", looseCard(CARD)).pipe(Effect.provide(Saga.layer)))._tag).toBe("Completed")
      const otel = exporters()
      const [report, spans] = yield* Effect.zip(Saga.compensate("carded"), otel.finished).pipe(
        Effect.provide(otel.layer)
      )
      // The report says why, without the value the journal holds (an input never goes there): nor does the span.
      expect(report.undone).toMatchObject([
        { outcome: "failed", detail: expect.stringMatching(/^journaled input does not decode: /) }
      ])
      expect(JSON.stringify(report)).not.toContain(CARD)
      expect(
        Timeline.format(yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("carded")))
      ).not.toContain(CARD)
      const [undo] = named(spans, "effect-saga.undo")
      expect(undo!.status).toEqual({
        code: SpanStatusCode.ERROR,
        message:
          "the undo of card ended failed: journaled input does not decode with the tool's input schema (the report says why)"
      })
      expect(exported(spans)).not.toContain(CARD)
    }).pipe(Effect.provide(Testing.layer))
  )
})

// --- fixtures --------------------------------------------------------------------------------

const SECRET = "sk_live_4242_do_not_leak"

/** The NodeSdk layer over in-memory exporters, and a reader that collects Effect's metrics on demand. */
const exporters = () => {
  const spans = new InMemorySpanExporter()
  const logs = new InMemoryLogRecordExporter()
  const reader = new OnDemandReader()
  const layer = NodeSdk.layer(() => ({
    resource: { serviceName: "effect-saga-test" },
    spanProcessor: new SimpleSpanProcessor(spans),
    metricReader: reader,
    logRecordProcessor: new SimpleLogRecordProcessor({ exporter: logs })
  }))
  const collect = Effect.promise(() => reader.collect()).pipe(Effect.map((collected) => collected.resourceMetrics))
  const finished = Effect.sync(() => spans.getFinishedSpans())
  return { logs, layer, collect, finished }
}

/** A metric reader that collects when asked (what a pull exporter such as Prometheus does). */
class OnDemandReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve()
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve()
  }
}

type Point = number | { readonly count: number; readonly sum: number }

/** Every exported point of the library's metrics, keyed `name{label=value,…}` (labels sorted). */
const points = (metrics: ResourceMetrics): Map<string, Point> => {
  const found = new Map<string, Point>()
  for (const scope of metrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (!metric.descriptor.name.startsWith("effect_saga_")) continue
      for (const point of metric.dataPoints) {
        const labels = Object.entries(point.attributes)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([key, value]) => `${key}=${String(value)}`)
        const key = labels.length === 0 ? metric.descriptor.name : `${metric.descriptor.name}{${labels.join(",")}}`
        const value = point.value as number | { count: number; sum?: number }
        found.set(
          key,
          metric.dataPointType === DataPointType.HISTOGRAM
            ? { count: (value as { count: number }).count, sum: (value as { sum?: number }).sum ?? 0 }
            : (value as number)
        )
      }
    }
  }
  return found
}

/** What moved between two collections (a gauge: its value now, where it is not zero). */
const changes = (before: Map<string, Point>, after: Map<string, Point>): Record<string, Point> => {
  const moved: Record<string, Point> = {}
  for (const [key, now] of after) {
    const then = before.get(key)
    if (typeof now === "number") {
      const delta = key.startsWith("effect_saga_open_sagas") ? now : now - ((then as number | undefined) ?? 0)
      if (delta !== 0) moved[key] = delta
    } else {
      const earlier = (then as { count: number; sum: number } | undefined) ?? { count: 0, sum: 0 }
      if (now.count !== earlier.count) moved[key] = { count: now.count - earlier.count, sum: now.sum - earlier.sum }
    }
  }
  return moved
}

/**
 * Runs `program` as saga `sagaId` under the NodeSdk and answers its result and the finished spans
 * (the exporter forgets its spans when the SDK shuts down: they are read while its layer lives).
 */
const traced = <A, E, R>(sagaId: string, program: Effect.Effect<A, E, R>) => {
  const otel = exporters()
  return Effect.zip(Saga.run(sagaId, program), otel.finished).pipe(Effect.provide(otel.layer))
}

const named = (spans: ReadonlyArray<ReadableSpan>, name: string) => spans.filter((span) => span.name === name)

/** Spans as an exporter sends them: name, attributes, events (exceptions with their stacks), status. */
const exported = (spans: ReadonlyArray<ReadableSpan>): string =>
  JSON.stringify(
    spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events, status: span.status }))
  )

const reserve = Compensable.make({
  name: "reserve",
  input: Schema.String,
  success: Schema.String,
  execute: (sku) => Effect.succeed(`res-${sku}`),
  compensate: () => Effect.void
})

const hold = Compensable.make({
  name: "hold",
  input: Schema.String,
  success: Schema.String,
  execute: (room) => Effect.succeed(`hold-${room}`),
  compensate: () => Effect.fail(Outcome.failed("the hotel is closed"))
})

/** Takes 1.5 seconds of the test clock; declines amounts over 100. */
const charge = Compensable.make({
  name: "charge",
  input: Schema.Int,
  success: Schema.String,
  failure: Schema.String,
  execute: (amount) =>
    Effect.zipRight(TestClock.adjust("1500 millis"), amount > 100 ? Effect.fail("declined") : Effect.succeed("ch-1")),
  compensate: () => Effect.void
})

const ship = Compensable.make({
  name: "ship",
  input: Schema.String,
  success: Schema.String,
  execute: () => Effect.fail(Outcome.unknown("the carrier did not answer")),
  compensate: () => Effect.void
})

const wire = Compensable.make({
  name: "wire",
  input: Schema.Int,
  success: Schema.String,
  reversibility: "irreversible",
  execute: (amount) => Effect.succeed(`wire-${amount}`)
})

/** Looks the item up in a span of its own. */
const lookup = Compensable.make({
  name: "lookup",
  input: Schema.String,
  success: Schema.String,
  execute: (sku) => Effect.withSpan(Effect.succeed(`found-${sku}`), "inventory.lookup"),
  compensate: () => Effect.withSpan(Effect.void, "inventory.release")
})

/** Drains a tank; its undo can refill only half of it. */
const drain = Compensable.make({
  name: "drain",
  input: Schema.String,
  success: Schema.String,
  execute: (tank) => Effect.succeed(`drained-${tank}`),
  compensate: () => Effect.fail(Outcome.partial("half of the tank refilled"))
})

const checkout = (amount: number) => Effect.zipRight(reserve("A-1"), charge(amount))

const payout = Effect.zipRight(reserve("A-2"), wire(4200))

/** Opens a vault with a secret receipt, which its undo needs. */
const opened: Array<string> = []
const open = Compensable.make({
  name: "open",
  input: Schema.String,
  success: Schema.String,
  execute: (vault, step) => Effect.as(step.setReceipt(Redacted.make(SECRET)), `opened-${vault}`),
  compensate: (ctx) =>
    Effect.sync(() => opened.push(Option.match(ctx.receipt, { onNone: () => "", onSome: Redacted.value })))
})

const Lookup = Tool.make("Lookup", {
  description: "How many of an item are in stock",
  parameters: { sku: Schema.String },
  success: Schema.Struct({ stock: Schema.Int })
}).annotate(Tool.Readonly, true)

const LookupToolkit = AiToolkit.make(Lookup)

/** Sets its receipt, then fails with an error whose own cause quotes it. */
const refund = Compensable.make({
  name: "refund",
  input: Schema.String,
  success: Schema.String,
  failure: Schema.Defect,
  execute: (_id, step) =>
    Effect.zipRight(
      step.setReceipt(SECRET),
      Effect.fail(new Error("provider said no", { cause: new Error(`token ${SECRET} rejected`) }))
    ),
  compensate: () => Effect.void
})

/** Its undo needs a receipt, which it never sets. */
const noReceipt = Compensable.make({
  name: "noReceipt",
  input: Schema.String,
  success: Schema.String,
  receiptRequired: true,
  execute: (id) => Effect.succeed(`done-${id}`),
  compensate: () => Effect.void
})

/** Declares no undo. */
const notify = Compensable.make({
  name: "notify",
  input: Schema.String,
  success: Schema.String,
  execute: (to) => Effect.succeed(`sent-${to}`)
})

const CARD = "4111-1111-1111-1111"

/** One tool, `card`, as two services may know it: its input a number, or text. */
const strictCard = Compensable.make({
  name: "card",
  input: Schema.Number,
  success: Schema.String,
  execute: () => Effect.succeed("held"),
  compensate: () => Effect.void
})

const looseCard = Compensable.make({
  name: "card",
  input: Schema.String,
  success: Schema.String,
  execute: () => Effect.succeed("held"),
  compensate: () => Effect.void
})

/** Its input schema is a number: a saga journaled with a card number's text no longer decodes. */
const paying = SagaDefinition.make("paying", { input: Schema.Number, program: () => Effect.void })

class PayDeclined extends Schema.TaggedError<PayDeclined>()("PayDeclined", { reason: Schema.String }) {}

const Pay = Tool.make("Pay", {
  description: "Pays with a card",
  parameters: { card: Schema.String },
  success: Schema.Struct({ id: Schema.String }),
  failure: PayDeclined,
  failureMode: "return"
})

const PayToolkit = AiToolkit.make(Pay)
