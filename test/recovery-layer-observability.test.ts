/**
 * What a service's on-call engineer sees of `Recovery.layer`'s background passes. Their
 * `effect-saga.recover` spans are root spans, even when the layer is built inside a span of the
 * service's own (its start-up's): recovery for the life of the service does not hang off one
 * trace. `effect_saga_recovery_claimed_total` moves as each batch is claimed, while the pass still
 * runs the sagas it claimed; the pass itself is counted, and logged, when it ends (not at all when
 * it is interrupted).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Logger, Metric, Option, Schema, TestClock, type Tracer } from "effect"
import { Approval, Journal, Metrics, Recovery, Saga, SagaDefinition } from "../src/index.js"
import { echoStep, leftBehind, type Store } from "./fixtures/left-behind.js"
import { recording } from "./fixtures/recording-tracer.js"

describe("Recovery.layer's background passes are root spans", () => {
  it.scoped("built inside the service's start-up span, neither the start-up pass nor a later one is its child", () =>
    Effect.gen(function* () {
      const { spans, tracer } = yield* recording
      const store = yield* Layer.build(memoryStore)
      yield* leftBehind(store, "at-start")
      yield* Effect.withTracer(serviceStart(store), tracer)
      yield* TestClock.adjust("1 second")
      yield* leftBehind(store, "later")
      yield* TestClock.adjust("10 seconds")

      const parentOf = (name: string, sagaId: string) => {
        const span = spans.find((span) => span.name === name && span.attributes.get("saga.id") === sagaId)
        return span === undefined
          ? "no span"
          : Option.getOrUndefined(Option.map(span.parent, (parent) => parent.spanId))
      }
      expect([parentOf("effect-saga.recover", "at-start"), parentOf("effect-saga.recover", "later")]).toEqual([
        undefined,
        undefined
      ])
      // The spans under a background recover span are still its children.
      const recover = spans.find(
        (span) => span.name === "effect-saga.recover" && span.attributes.get("saga.id") === "later"
      )
      expect(parentOf("effect-saga.run", "later")).toBe(recover!.spanId)
    }).pipe(Effect.provide(quiet))
  )

  it.scoped(
    "recoverAll's recover span stays a child of its caller's span; the run its own, made in a span or not",
    () =>
      Effect.gen(function* () {
        const { spans, tracer } = yield* recording
        const store = yield* Layer.build(memoryStore)
        yield* leftBehind(store, "asked")
        const worker = yield* Layer.build(
          Saga.layerWith({ owner: "w1", leaseTtl: "30 seconds" }).pipe(Layer.provideMerge(Layer.succeedContext(store)))
        )
        const recovery = yield* Effect.provide(Recovery.make({ definitions: [Quick] }), worker).pipe(
          Effect.withSpan("setup"),
          Effect.withTracer(tracer)
        )
        yield* recovery.recoverAll.pipe(Effect.withSpan("caller"), Effect.withTracer(tracer))
        const [caller, recover, run] = ["caller", "effect-saga.recover", "effect-saga.run"].map((name) =>
          spans.find((span) => span.name === name)
        )
        const parentOf = (span: Tracer.Span | undefined) => Option.map(span!.parent, (parent) => parent.spanId)
        expect([parentOf(recover), parentOf(run)]).toEqual([Option.some(caller!.spanId), Option.some(recover!.spanId)])
      })
  )
})

describe("Recovery.layer's metrics and log line while a pass runs", () => {
  it.scoped(
    "the sagas a pass claimed are counted while it still runs them; the pass and its log line when it ends",
    () =>
      Effect.gen(function* () {
        const store = yield* Layer.build(memoryStore)
        yield* leftBehind(store, "first", "long")
        yield* leftBehind(store, "second", "long")
        const lines: Array<string> = []
        const keeping = Logger.make(({ message }) => {
          lines.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
        })
        const before = yield* counts
        const worker = yield* Layer.build(
          Recovery.layer({ definitions: [Long], every: "startup", concurrency: 1 }).pipe(
            Layer.provideMerge(Saga.layerWith({ owner: "w1", leaseTtl: "30 seconds" })),
            Layer.provide(Layer.succeedContext(store)),
            Layer.provide(Logger.replace(Logger.defaultLogger, keeping))
          )
        )
        const leaseOwners = Effect.forEach(["first", "second"], (sagaId) =>
          Effect.map(Effect.provide(Saga.status(sagaId), worker), (status) => status.lease?.owner)
        )
        // One saga at a time: the first sleeps for 10 minutes, the second waits for it.
        yield* TestClock.adjust("1 minute")
        const running = yield* counts
        expect(yield* leaseOwners).toEqual(["w1", "w1"])
        expect([running.claimed - before.claimed, running.passes - before.passes]).toEqual([2, 0])
        expect(lines.filter((line) => line.includes("recovery took"))).toEqual([])

        yield* TestClock.adjust("30 minutes")
        const ended = yield* counts
        expect([ended.claimed - before.claimed, ended.passes - before.passes]).toEqual([2, 1])
        expect(lines.filter((line) => line.includes("recovery took"))).toEqual([
          "effect-saga: recovery took 2 saga(s) left behind: 2 Completed"
        ])
      })
  )
})

describe("recoverAll's metrics when its pass is interrupted", () => {
  it.scoped("the sagas it claimed are counted; the pass is not", () =>
    Effect.gen(function* () {
      const store = yield* Layer.build(memoryStore)
      yield* leftBehind(store, "first", "long")
      yield* leftBehind(store, "second", "long")
      const worker = yield* Layer.build(
        Saga.layerWith({ owner: "w1", leaseTtl: "30 seconds" }).pipe(Layer.provideMerge(Layer.succeedContext(store)))
      )
      const recovery = yield* Effect.provide(Recovery.make({ definitions: [Long], concurrency: 1 }), worker)
      const before = yield* counts
      const pass = yield* Effect.fork(recovery.recoverAll)
      yield* TestClock.adjust("1 minute")
      yield* Fiber.interrupt(pass)
      const after = yield* counts
      expect([after.claimed - before.claimed, after.passes - before.passes]).toEqual([2, 0])
    })
  )
})

/** A service's start-up, in a span of its own: it builds its worker with `Recovery.layer`. */
const serviceStart = (store: Store) =>
  Layer.build(
    Recovery.layer({ definitions: [Quick], every: "10 seconds" }).pipe(
      Layer.provideMerge(Saga.layerWith({ owner: "w1", leaseTtl: "30 seconds" })),
      Layer.provide(Layer.succeedContext(store))
    )
  ).pipe(Effect.withSpan("boot"))

const memoryStore = Layer.merge(Journal.layerMemory, Approval.layerMemory)

const a = echoStep("a")
const b = echoStep("b")

const Quick = SagaDefinition.make("quick", { input: Schema.String, program: (s) => Effect.zipRight(a(s), b(s)) })

const Long = SagaDefinition.make("long", {
  input: Schema.String,
  program: (s) => Effect.zipRight(Effect.zipRight(a(s), Effect.sleep("10 minutes")), b(s))
})

const quiet = Logger.replace(Logger.defaultLogger, Logger.none)

const counts = Effect.map(
  Effect.all([Metric.value(Metrics.recoveryPasses), Metric.value(Metrics.recoveryClaimed)]),
  ([passes, claimed]) => ({ passes: passes.count, claimed: claimed.count })
)
