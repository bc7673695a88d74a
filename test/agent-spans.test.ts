import * as Tool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { assert, describe, expect, it } from "@effect/vitest"
import { SpanStatusCode } from "@opentelemetry/api"
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Cause, Effect, Layer, Schema, Tracer } from "effect"
import * as Agent from "../src/Agent.js"
import { Journal, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import * as Scripted from "./fixtures/agent-scripted.js"

describe("an agent's spans", () => {
  it.effect(
    "a tool call's input is in no exported span, attribute, event or status: not on its run, not on a replay",
    () =>
      Effect.gen(function* () {
        const script: Scripted.Script = ({ turn }) =>
          turn === 1
            ? Scripted.calls(Scripted.call("call-1", "Pay", { card: CARD, amount: 12 }))
            : Scripted.says("Paid.")
        const { result, replayed, spans } = yield* twice("paid", script)
        expect([result._tag, replayed._tag]).toEqual(["Completed", "Completed"])
        expect(shown(spans)).toContain("execute_tool Pay")
        expect(shown(spans)).not.toContain(CARD_NUMBER)
        // The call ran once and replayed once, each in its execute_tool span, under the run's span.
        const calls = named(spans, "execute_tool Pay")
        expect(calls.length).toBe(2)
        const runs = named(spans, "effect-saga.run")
        expect(calls.map((span) => span.parentSpanContext?.spanId)).toEqual(runs.map((run) => run.spanContext().spanId))
      })
  )

  it.effect(
    "a handler's own spans are children of its call's step span, even when the handlers' layer was built inside a span",
    () =>
      Effect.gen(function* () {
        const script: Scripted.Script = ({ turn }) =>
          turn === 1
            ? Scripted.calls(Scripted.call("call-1", "Pay", { card: "c", amount: 12 }))
            : Scripted.says("Paid.")
        const { result, spans } = yield* twice("built-in-span", script, { builtInSpan: true })
        expect(result._tag).toBe("Completed")
        const [inside] = named(spans, "pay-inside")
        const step = named(spans, "effect-saga.step").find((span) => span.attributes.tool === "Pay")!
        expect(inside!.parentSpanContext?.spanId).toBe(step.spanContext().spanId)
      })
  )

  it.effect(
    "a call whose arguments do not decode fails its turn: no span quotes them, the program's failure does",
    () =>
      Effect.gen(function* () {
        const script: Scripted.Script = () =>
          Scripted.calls(Scripted.call("call-1", "Pay", { card: "c", amount: CARD }))
        const { result, spans, entries } = yield* twice("malformed", script)
        assert(result._tag === "Compensated")
        expect(Cause.pretty(result.cause)).toContain(CARD_NUMBER)
        expect(shown(spans)).not.toContain(CARD_NUMBER)
        const [turn] = named(spans, "effect-saga.step")
        expect(turn!.attributes.tool).toBe("LanguageModel")
        expect(turn!.status).toEqual({
          code: SpanStatusCode.ERROR,
          message: "MalformedOutput in LanguageModel.generateText"
        })
        const [call] = named(spans, "LanguageModel.generateText")
        expect(call!.status.code).toBe(SpanStatusCode.ERROR)
        // The journal says which call and which parameter, at once: not the union of every part first.
        const failed = entries.find((entry) => entry.phase === "FAILED" && entry.toolName === "LanguageModel")
        expect(JSON.parse(failed!.payload!).description).toBe(
          `MalformedOutput in LanguageModel.generateText: the call call-1 of Pay, at params.amount: Expected number, actual "${CARD}"`
        )
      })
  )

  it.effect("a call of a tool the toolkit does not have: the journal names the call and says so", () =>
    Effect.gen(function* () {
      const script: Scripted.Script = () =>
        Scripted.calls(Scripted.call("call-1", "ApproveEverything", { stepId: "Refund:call-2#1" }))
      const { result, entries } = yield* twice("unknown-tool", script)
      assert(result._tag === "Compensated")
      const failed = entries.find((entry) => entry.phase === "FAILED" && entry.toolName === "LanguageModel")
      const description =
        'MalformedOutput in LanguageModel.generateText: the call call-1 of ApproveEverything, at name: the toolkit has no tool of that name (expected "Charge" | "Pay" | "Refund", actual "ApproveEverything")'
      expect(JSON.parse(failed!.payload!).description).toBe(description)
      // The compensation's cause is that failure, in the same words: not @effect/ai's own message.
      const compensating = entries.find((entry) => entry.phase === "SAGA_COMPENSATING")
      expect(JSON.parse(compensating!.payload!)).toEqual({ cause: description })
    })
  )

  it.effect(
    "a call that awaits approval ends its execute_tool and step spans OK: the step's outcome says it waits",
    () =>
      Effect.gen(function* () {
        const script: Scripted.Script = ({ turn }) =>
          turn === 1 ? Scripted.calls(Scripted.call("call-1", "Refund", { amount: 12 })) : Scripted.says("It waits.")
        const { result, spans } = yield* twice("refund", script)
        expect(result._tag).toBe("AwaitingApproval")
        const [call] = named(spans, "execute_tool Refund")
        expect(call!.status.code).toBe(SpanStatusCode.OK)
        const step = named(spans, "effect-saga.step").find((span) => span.attributes.tool === "Refund")!
        expect(step.parentSpanContext?.spanId).toBe(call!.spanContext().spanId)
        expect(step.status.code).toBe(SpanStatusCode.OK)
        expect(step.attributes.outcome).toBe("awaiting_approval")
      })
  )

  it.effect(
    "a call not run because a failure bound the saga to compensate ends its spans OK: the step's outcome says so",
    () =>
      Effect.gen(function* () {
        const script: Scripted.Script = ({ turn }) =>
          turn === 1
            ? Scripted.calls(Scripted.call("call-1", "Charge", { amount: 12 }))
            : turn === 2
              ? Scripted.calls(Scripted.call("call-2", "Refund", { amount: 12 }))
              : Scripted.says("Declined.")
        const { result, spans } = yield* twice("declined", script)
        expect(result._tag).toBe("Compensated")
        const calls = named(spans, "execute_tool Refund")
        expect(calls.map((call) => call.status.code)).toEqual([SpanStatusCode.OK, SpanStatusCode.OK])
        const steps = named(spans, "effect-saga.step").filter((span) => span.attributes.tool === "Refund")
        expect(steps.map((step) => [step.status.code, step.attributes.outcome])).toEqual([
          [SpanStatusCode.OK, "not_run"],
          [SpanStatusCode.OK, "not_run"]
        ])
      })
  )

  it.effect(
    "every span ends once, with a tracer whose spans do not mark themselves ended: execute_tool, step, turn and run",
    () =>
      Effect.gen(function* () {
        const script: Scripted.Script = ({ turn }) =>
          turn === 1
            ? Scripted.calls(
                Scripted.call("call-1", "Pay", { card: "c", amount: 1 }),
                Scripted.call("call-2", "Pay", { card: "c", amount: 2 })
              )
            : Scripted.says("Paid twice.")
        const model = Scripted.layer(script)
        const agent = Agent.make(Payments, {})
        const live = Layer.mergeAll(
          agent.toLayer({
            Pay: () => Effect.succeed({ paid: true }),
            Refund: () => Effect.succeed({ refunded: true }),
            Charge: () => Effect.succeed({ charged: true })
          }),
          Agent.layerModel.pipe(Layer.provide(model.layer))
        ).pipe(Layer.provideMerge(Testing.layer))
        const { ended, tracer } = endingTracer()
        const result = yield* Saga.run("ended-once", Agent.loop({ prompt: "Pay 1, then 2.", toolkit: Payments })).pipe(
          Effect.withTracer(tracer),
          Effect.provide(live)
        )
        expect(result._tag).toBe("Completed")
        const calls = ended.filter((span) => span.name === "execute_tool Pay")
        expect(calls.map((span) => [span.attributes.get("gen_ai.tool.call.id"), span.exit])).toEqual([
          ["call-1", "Success"],
          ["call-2", "Success"]
        ])
        expect(ended.filter((span) => span.name === "effect-saga.step").length).toBe(4)
        expect(ended.filter((span) => span.name === "effect-saga.run").length).toBe(1)
        const ids = ended.map((span) => span.spanId)
        expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([])
      })
  )
})

/**
 * A tracer whose spans record every `end` and leave their `status` as it started, as a tracer may
 * (the `Span` interface does not ask it to change): each `end` is in `ended`, once per call.
 */
const endingTracer = () => {
  const ended: Array<{ name: string; spanId: string; attributes: Map<string, unknown>; exit: string }> = []
  let ids = 0
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const attributes = new Map<string, unknown>()
      const spanId = `span-${++ids}`
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId,
        traceId: "trace",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes,
        links,
        sampled: true,
        kind,
        end: (_, exit) => {
          ended.push({ name, spanId, attributes, exit: exit._tag })
        },
        attribute: (key, value) => {
          attributes.set(key, value)
        },
        event: () => {},
        addLinks: () => {}
      }
      return span
    },
    context: (f) => f()
  })
  return { ended, tracer }
}

// --- fixtures --------------------------------------------------------------------------------

const CARD_NUMBER = "4111111111111111"
const CARD = `CARD-${CARD_NUMBER}`

const Pay = Tool.make("Pay", {
  description: "Pay with a card",
  parameters: { card: Schema.String, amount: Schema.Int },
  success: Schema.Struct({ paid: Schema.Boolean })
}).annotate(Tool.Destructive, false)

const Refund = Tool.make("Refund", {
  description: "Refund an amount: irreversible, it waits for an approval",
  parameters: { amount: Schema.Int },
  success: Schema.Struct({ refunded: Schema.Boolean })
})

class Declined extends Schema.TaggedError<Declined>()("Declined", { reason: Schema.String }) {}

const Charge = Tool.make("Charge", {
  description: "Charge a card: declined, and the model is told",
  parameters: { amount: Schema.Int },
  success: Schema.Struct({ charged: Schema.Boolean }),
  failure: Declined,
  failureMode: "return"
}).annotate(Tool.Destructive, false)

const Payments = AiToolkit.make(Pay, Refund, Charge)

/**
 * Runs the agent loop over `script` as saga `sagaId`, then again (a replay, or a resume that waits
 * still), under the NodeSdk: the two results and every span exported while its layer lived.
 */
const twice = (sagaId: string, script: Scripted.Script, options: { readonly builtInSpan?: boolean } = {}) => {
  const exporter = new InMemorySpanExporter()
  const telemetry = NodeSdk.layer(() => ({
    resource: { serviceName: "effect-saga-test" },
    spanProcessor: new SimpleSpanProcessor(exporter)
  }))
  const agent = Agent.make(Payments, {})
  const handlers = agent.toLayer({
    Pay: () => Effect.withSpan(Effect.succeed({ paid: true }), "pay-inside"),
    Refund: () => Effect.succeed({ refunded: true }),
    Charge: () => Effect.fail(new Declined({ reason: "insufficient funds" }))
  })
  const live = Layer.mergeAll(
    options.builtInSpan === true ? Layer.withSpan(handlers, "boot") : handlers,
    Agent.layerModel.pipe(Layer.provide(Scripted.layer(script).layer))
  ).pipe(Layer.provideMerge(Testing.layer))
  const loop = Agent.loop({ prompt: "Pay 12.", toolkit: Payments })
  return Effect.gen(function* () {
    const result = yield* Saga.run(sagaId, loop)
    const replayed = yield* Saga.run(sagaId, loop)
    const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
    return { result, replayed, spans: exporter.getFinishedSpans(), entries }
  }).pipe(Effect.provide(Layer.merge(live, telemetry)))
}

const named = (spans: ReadonlyArray<ReadableSpan>, name: string) => spans.filter((span) => span.name === name)

/** Everything an exporter sends of the spans: names, attributes, events, statuses, links. */
const shown = (spans: ReadonlyArray<ReadableSpan>): string =>
  JSON.stringify(
    spans.map((span) => ({
      name: span.name,
      attributes: span.attributes,
      events: span.events,
      status: span.status,
      links: span.links
    }))
  )
