import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Metric, MetricLabel, Option, Schema, TestClock, Tracer } from "effect"
import { Approval, Compensable, Journal, Metrics, Outcome, Recovery, Saga, SagaDefinition } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import * as Testing from "../src/Testing.js"
import { recording } from "./fixtures/recording-tracer.js"

describe("observability", () => {
  it.effect(
    "with Effect's own tracer, a tool's and an undo's spans have their step's and their undo's span as parent",
    () =>
      Effect.gen(function* () {
        const parents: Array<[string, string | undefined]> = []
        const parentName = (name: string) =>
          Effect.withSpan(
            Effect.flatMap(Effect.currentSpan, (span) =>
              Effect.sync(() => {
                const parent = Option.getOrUndefined(span.parent)
                parents.push([name, parent?._tag === "Span" ? parent.name : undefined])
              })
            ),
            name
          )
        const noted = Compensable.make({
          name: "noted",
          input: Schema.String,
          success: Schema.String,
          execute: (text) => Effect.as(parentName("noted.execute"), text),
          compensate: () => parentName("noted.undo")
        })
        const declined = Compensable.make({
          name: "declined",
          input: Schema.String,
          success: Schema.String,
          execute: () => Effect.fail(new Error("declined")),
          compensate: () => Effect.void
        })
        const result = yield* Saga.run("parents", Effect.zipRight(noted("a"), declined("b")))
        expect(result._tag).toBe("Compensated")
        expect(parents).toEqual([
          ["noted.execute", "effect-saga.step"],
          ["noted.undo", "effect-saga.undo"]
        ])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a saga run is one effect-saga.run span with its id and how it ended", () =>
    Effect.gen(function* () {
      const { spans, tracer } = yield* recording
      yield* Saga.run("traced", reserve("A-1")).pipe(Effect.withTracer(tracer))
      const runs = spans.filter((span) => span.name === "effect-saga.run")
      expect(runs.map(attributes)).toEqual([{ "saga.id": "traced", "workflow.id": "traced", outcome: "Completed" }])
      expect(runs[0]!.status._tag).toBe("Ended")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "each step is an effect-saga.step span inside its saga's span, with saga.id, step.id, tool and outcome",
    () =>
      Effect.gen(function* () {
        const { spans, tracer } = yield* recording
        const program = Effect.zipRight(reserve("A-1"), Effect.ignore(charge(500)))
        const result = yield* Saga.run("steps", program).pipe(Effect.withTracer(tracer))
        expect(result._tag).toBe("Compensated")
        const run = spans.find((span) => span.name === "effect-saga.run")!
        const steps = spans.filter((span) => span.name === "effect-saga.step")
        expect(steps.map(attributes)).toEqual([
          {
            "saga.id": "steps",
            "workflow.id": "steps",
            "step.id": expect.stringMatching(/^reserve:[0-9a-f]{16}#1$/),
            tool: "reserve",
            outcome: "executed"
          },
          {
            "saga.id": "steps",
            "workflow.id": "steps",
            "step.id": expect.stringMatching(/^charge:[0-9a-f]{16}#1$/),
            tool: "charge",
            outcome: "failed"
          }
        ])
        for (const step of steps)
          expect(Option.map(step.parent, (parent) => parent.spanId)).toEqual(Option.some(run.spanId))
        expect(attributes(run)).toMatchObject({ outcome: "Compensated" })
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a step that stops the saga on an unknown outcome says so on its span: outcome unknown, and why (as journaled)",
    () =>
      Effect.gen(function* () {
        const { spans, tracer } = yield* recording
        const lost = Compensable.make({
          name: "lost",
          input: Schema.String,
          success: Schema.String,
          execute: () => Effect.fail(Outcome.unknown("the provider timed out")),
          compensate: () => Effect.void
        })
        const dying = Compensable.make({
          name: "dying",
          input: Schema.String,
          success: Schema.String,
          execute: () => Effect.dieMessage("socket hang up"),
          compensate: () => Effect.void
        })
        for (const [sagaId, tool, reason] of [
          ["lost-1", lost, "outcome unknown: the provider timed out"],
          ["dying-1", dying, "the call died (a defect: RuntimeException: socket hang up): it may or may not have run"]
        ] as const) {
          expect((yield* Saga.run(sagaId, tool("x")).pipe(Effect.withTracer(tracer)))._tag).toBe("NeedsAttention")
          const step = spans.find((span) => span.name === "effect-saga.step" && attributes(span)["saga.id"] === sagaId)!
          expect(attributes(step)).toMatchObject({ outcome: "unknown", "outcome.reason": reason })
          expect((yield* Saga.status(sagaId)).steps[0]).toMatchObject({ state: "unknown", unknownReason: reason })
        }
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a step that halts the saga otherwise says so too: awaiting_approval; not_run, and why, when refused; interrupted when cut",
    () =>
      Effect.gen(function* () {
        const { spans, tracer } = yield* recording
        const wire = Compensable.make({
          name: "wire",
          input: Schema.String,
          success: Schema.String,
          reversibility: "irreversible",
          execute: (to) => Effect.succeed(`wired-${to}`)
        })
        const stepSpan = (sagaId: string, tool: string) =>
          attributes(
            spans.filter(
              (span) =>
                span.name === "effect-saga.step" &&
                attributes(span)["saga.id"] === sagaId &&
                attributes(span).tool === tool
            )[0]!
          )
        const traced = <A, E>(sagaId: string, program: Effect.Effect<A, E, any>) =>
          Saga.run(sagaId, program).pipe(Effect.withTracer(tracer))

        expect((yield* traced("waits", wire("DE00")))._tag).toBe("AwaitingApproval")
        expect(stepSpan("waits", "wire")).toMatchObject({ outcome: "awaiting_approval" })

        // A failure the program caught binds the saga to compensate: the wire is refused, not run.
        const bound = yield* traced("bound", Effect.zipRight(Effect.ignore(charge(500)), wire("DE00")))
        expect(bound._tag).toBe("Compensated")
        expect(stepSpan("bound", "wire")).toMatchObject({
          outcome: "not_run",
          "outcome.reason": expect.stringContaining("charge")
        })

        const slow = Compensable.make({
          name: "slow",
          input: Schema.String,
          success: Schema.String,
          execute: () => Effect.never,
          compensate: () => Effect.void
        })
        const fiber = yield* Effect.fork(traced("cut", slow("x")))
        yield* TestClock.adjust("1 second")
        yield* Fiber.interrupt(fiber)
        expect(stepSpan("cut", "slow")).toMatchObject({ outcome: "interrupted" })
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a step's span is a child of the span current where it is called (a span the program opened, else the run's); an undo's, of the run's",
    () =>
      Effect.gen(function* () {
        const { spans, tracer } = yield* recording
        const program = Effect.zipRight(reserve("A-1").pipe(Effect.withSpan("my-phase")), Effect.ignore(charge(500)))
        const result = yield* Saga.run("phases", program).pipe(Effect.withTracer(tracer))
        expect(result._tag).toBe("Compensated")
        const spanId = (name: string) => spans.find((span) => span.name === name)!.spanId
        const parentsOf = (name: string) =>
          spans
            .filter((span) => span.name === name)
            .map((span) => Option.getOrUndefined(Option.map(span.parent, (parent) => parent.spanId)))
        expect(parentsOf("effect-saga.step")).toEqual([spanId("my-phase"), spanId("effect-saga.run")])
        expect(parentsOf("my-phase")).toEqual([spanId("effect-saga.run")])
        expect(parentsOf("effect-saga.undo")).toEqual([spanId("effect-saga.run")])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "the run's and a step's spans are made as Effect.makeSpan makes one: the caller's span annotations and links, the parent past a span that disables propagation, the start time untimed, none at all with tracing disabled",
    () =>
      Effect.gen(function* () {
        const { spans, tracer } = yield* recording
        yield* TestClock.adjust("1 second")
        const linked = yield* Effect.makeSpan("linked")
        const hidden = { context: Tracer.DisablePropagation.context(true) }
        yield* Saga.run("made", reserve("A-1").pipe(Effect.withSpan("hidden", hidden))).pipe(
          Effect.annotateSpans("tenant", "t-1"),
          Effect.linkSpans(linked, { why: "asked" }),
          Effect.withSpan("outer"),
          Effect.withTracerTiming(false),
          Effect.withTracer(tracer)
        )
        yield* Saga.run("untraced", reserve("B-1")).pipe(Effect.withTracerEnabled(false), Effect.withTracer(tracer))
        const named = (name: string) => spans.filter((span) => span.name === name)
        const parentOf = (span: Tracer.Span) =>
          Option.getOrUndefined(Option.map(span.parent, (parent) => parent.spanId))
        const [run] = named("effect-saga.run")
        const [step] = named("effect-saga.step")
        expect([named("effect-saga.run").length, named("effect-saga.step").length]).toEqual([1, 1])
        expect([parentOf(run!), parentOf(step!)]).toEqual([named("outer")[0]!.spanId, run!.spanId])
        for (const span of [run!, step!]) {
          expect(attributes(span)).toMatchObject({ tenant: "t-1", "saga.id": "made" })
          expect(span.links).toEqual([{ _tag: "SpanLink", span: linked, attributes: { why: "asked" } }])
          expect(span.status.startTime).toBe(BigInt(0))
        }
      }).pipe(Effect.provide(Testing.layer))
  )
})

describe("a refused id on a span", () => {
  it.effect("is escaped and cut as InvalidIdentifier quotes it: no line is forged, nothing grows unbounded", () =>
    Effect.gen(function* () {
      const { spans, tracer } = yield* recording
      const forged = "order\nlevel=error msg=FORGED"
      const huge = `H\u001b[2J${"h".repeat(100_000)}`
      const overLimit = "b".repeat(513)
      for (const sagaId of [forged, huge, overLimit]) {
        const refused = yield* Effect.flip(Saga.run(sagaId, reserve("A-1")).pipe(Effect.withTracer(tracer)))
        expect(refused._tag).toBe("InvalidIdentifier")
      }
      yield* Effect.flip(Saga.approve("fine", forged, { by: "alice" }).pipe(Effect.withTracer(tracer)))
      yield* Effect.flip(Saga.compensate(forged).pipe(Effect.withTracer(tracer)))
      yield* Effect.flip(Saga.compensateEffect(`${forged}/x`).pipe(Effect.withTracer(tracer)))
      const shown = spans.flatMap((span) => [...span.attributes.values()].map(String))
      expect(shown).toContain(JSON.stringify(forged))
      expect(shown.every((value) => !value.includes("\n") && !value.includes("\u001b") && value.length <= 200)).toBe(
        true
      )
      const runs = spans.filter((span) => span.name === "effect-saga.run").map(attributes)
      expect(runs[0]).toMatchObject({ "saga.id": JSON.stringify(forged), "workflow.id": JSON.stringify(forged) })
      expect(runs[1]!["saga.id"]).toMatch(/^"H\\u001b\[2Jh+"…$/)
      // Over the 512 bytes of a saga id, though the journal keeps ids up to 1024 (explicit undos' runs).
      expect(runs[2]!["saga.id"]).toBe(`"${"b".repeat(64)}"…`)
      // An id refused only for its form is on its span as the error quotes it too.
      for (const sagaId of ["..", "order-1/pay/compensate-effect"]) {
        const refused = yield* Effect.flip(Saga.run(sagaId, reserve("A-1")).pipe(Effect.withTracer(tracer)))
        expect(refused).toMatchObject({ _tag: "InvalidIdentifier", identifier: JSON.stringify(sagaId) })
        expect(spans.at(-1)!.attributes.get("saga.id")).toBe(JSON.stringify(sagaId))
      }
      // An id that can be one is on its span as it is.
      yield* Saga.run("order 7/é", reserve("A-1")).pipe(Effect.withTracer(tracer))
      expect(spans.at(-1)!.attributes.get("saga.id")).toBe("order 7/é")
    }).pipe(Effect.provide(Testing.layer))
  )
})

describe("a definition's name that cannot be an identifier", () => {
  it.effect("is escaped in workflow.name and in Recovery's reason, never as given", () =>
    Effect.gen(function* () {
      const { spans, tracer } = yield* recording
      const forged = "def\nlevel=error msg=FORGED"
      const definition = SagaDefinition.make(forged, { input: Schema.String, program: (sku) => reserve(sku) })
      yield* Saga.start(definition, "named-badly", "A-1").pipe(Effect.withTracer(tracer))
      const run = spans.find((span) => span.name === "effect-saga.run")!
      expect(run.attributes.get("workflow.name")).toBe(JSON.stringify(forged))
      // A worker not given that definition says so, the name escaped.
      const journal = yield* Journal.Journal
      yield* journal.append("left-by-bad-name", Journal.empty, [
        {
          stepId: null,
          toolName: null,
          phase: "SAGA_STARTED",
          input: null,
          payload: JSON.stringify({ definition: forged, input: "A-2" })
        },
        { stepId: null, toolName: null, phase: "SAGA_SUSPENDED", input: null, payload: null }
      ])
      const recovery = yield* Recovery.make({ definitions: [reserving] })
      const refused = yield* Effect.flip(recovery.resume("left-by-bad-name"))
      expect(refused).toMatchObject({ _tag: "Unrecoverable" })
      expect(String((refused as { readonly reason: string }).reason)).toBe(
        `this worker was not given definition ${JSON.stringify(forged)}`
      )
    }).pipe(Effect.provide(Testing.layer))
  )
})

describe("recovery's spans", () => {
  it.effect("recoverAll and resume each put one effect-saga.recover span, with saga.id, around the saga's run", () =>
    Effect.gen(function* () {
      const { spans, tracer } = yield* recording
      const journal = yield* Journal.Journal
      const started = '{"definition":"reserving","input":"A-9"}'
      for (const sagaId of ["passed-over", "asked-for"]) {
        yield* journal.append(sagaId, Journal.empty, [
          { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: started },
          { stepId: null, toolName: null, phase: "SAGA_SUSPENDED", input: null, payload: null }
        ])
      }
      const recovery = yield* Recovery.make({ definitions: [reserving] })
      expect((yield* recovery.resume("asked-for").pipe(Effect.withTracer(tracer)))._tag).toBe("Completed")
      const pass = yield* recovery.recoverAll.pipe(Effect.withTracer(tracer))
      expect(pass.sagas.map((saga) => [saga.sagaId, saga._tag])).toEqual([["passed-over", "Resumed"]])
      const recovers = spans.filter((span) => span.name === "effect-saga.recover")
      expect(recovers.map(attributes)).toEqual([{ "saga.id": "asked-for" }, { "saga.id": "passed-over" }])
      for (const recover of recovers) {
        const runs = spans.filter(
          (span) =>
            span.name === "effect-saga.run" &&
            Option.getOrUndefined(Option.map(span.parent, (parent) => parent.spanId)) === recover.spanId
        )
        expect(runs.map(attributes)).toEqual([
          expect.objectContaining({ "saga.id": recover.attributes.get("saga.id") })
        ])
      }
    }).pipe(Effect.provide(Testing.layer))
  )
})

describe("metrics a dashboard reads besides the sagas' own", () => {
  it.effect("a recovery pass counts itself and the sagas it claimed", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      const started = '{"definition":"reserving","input":"A-9"}'
      yield* journal.append("left-behind", Journal.empty, [
        { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: started },
        { stepId: null, toolName: null, phase: "SAGA_SUSPENDED", input: null, payload: null }
      ])
      const recovery = yield* Recovery.make({ definitions: [reserving] })
      const before = yield* counts
      const first = yield* recovery.recoverAll
      expect(first.sagas.map((saga) => saga._tag)).toEqual(["Resumed"])
      yield* recovery.recoverAll
      const after = yield* counts
      expect(after.passes - before.passes).toBe(2)
      expect(after.claimed - before.claimed).toBe(1)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an explicit undo counts as an undo of its tool, not as a saga started or ended", () =>
    Effect.gen(function* () {
      expect((yield* Saga.run("undone-once", reserve("A-1")))._tag).toBe("Completed")
      const [step] = (yield* Saga.status("undone-once")).steps
      const sagas = Effect.all([Metric.value(Metrics.sagasStarted), Metric.value(sagasEnded)])
      const undone = Metric.value(Metric.taggedWithLabels(Metrics.undos, [tool("reserve"), outcome("completed")]))
      const [before, undosBefore] = yield* Effect.zip(sagas, undone)
      const answer = yield* Saga.compensateEffect(step!.effectId)
      expect(answer).toMatchObject({ _tag: "Settled", outcome: "completed" })
      const [after, undosAfter] = yield* Effect.zip(sagas, undone)
      expect(after.map((state) => state.count)).toEqual(before.map((state) => state.count))
      expect(undosAfter.count - undosBefore.count).toBe(1)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an operator's resolution of an unknown step is not counted as a step that ran", () =>
    Effect.gen(function* () {
      const lost = Compensable.make({
        name: "lost",
        input: Schema.String,
        success: Schema.String,
        execute: () => Effect.fail(Outcome.unknown("the provider did not answer")),
        compensate: () => Effect.void
      })
      const counted = Effect.all(
        ["executed", "failed", "unknown"].map((name) =>
          Effect.map(Metric.value(Metric.taggedWithLabels(Metrics.steps, [tool("lost"), outcome(name)])), (state) => [
            name,
            state.count
          ])
        )
      )
      const before = Object.fromEntries(yield* counted)
      for (const [sagaId, resolution] of [
        ["lost-applied", { outcome: "applied", by: "oncall", result: "ref-1" }],
        ["lost-not-applied", { outcome: "not-applied", by: "oncall" }]
      ] as const) {
        expect((yield* Saga.run(sagaId, lost("x")))._tag).toBe("NeedsAttention")
        const [step] = (yield* Saga.status(sagaId)).steps
        yield* Saga.resolve(sagaId, step!.stepId, resolution)
      }
      const after = Object.fromEntries(yield* counted)
      expect({
        executed: after.executed - before.executed,
        failed: after.failed - before.failed,
        unknown: after.unknown - before.unknown
      }).toEqual({ executed: 0, failed: 0, unknown: 2 })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a saga another worker holds counts a lease conflict; a saga that moved on, an append conflict", () =>
    Effect.gen(function* () {
      const before = yield* counts
      const inner = makeMemoryJournal()
      yield* inner.append(
        "held",
        Journal.empty,
        [{ stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null }],
        { owner: "another-worker", ttlMillis: 3_600_000 }
      )
      let refusals = 1
      const moving = Journal.Journal.of({
        ...inner,
        append: (sagaId, expected, drafts, holder) =>
          sagaId === "moved" && refusals-- > 0
            ? Effect.fail(new Journal.ConcurrencyConflict({ sagaId, expectedRevision: 0, actualRevision: 1 }))
            : inner.append(sagaId, expected, drafts, holder)
      })
      const stores = Layer.merge(Layer.succeed(Journal.Journal, moving), Approval.layerMemory)
      const refused = yield* Effect.all([
        Effect.flip(Saga.run("held", reserve("A-1"))),
        Effect.flip(Saga.run("moved", reserve("A-1")))
      ]).pipe(Effect.provide(Saga.layer.pipe(Layer.provide(stores))))
      expect(refused.map((error) => error._tag)).toEqual(["LeaseHeld", "ConcurrencyConflict"])
      const after = yield* counts
      expect(after.leaseConflicts - before.leaseConflicts).toBe(1)
      expect(after.appendConflicts - before.appendConflicts).toBe(1)
    })
  )
})

const attributes = (span: Tracer.Span) => Object.fromEntries(span.attributes)

const reserve = Compensable.make({
  name: "reserve",
  input: Schema.String,
  success: Schema.String,
  execute: (sku) => Effect.succeed(`res-${sku}`),
  compensate: () => Effect.void
})

const charge = Compensable.make({
  name: "charge",
  input: Schema.Int,
  success: Schema.String,
  failure: Schema.String,
  execute: (amount) => (amount > 100 ? Effect.fail("declined") : Effect.succeed("ch-1")),
  compensate: () => Effect.void
})

const tool = (name: string) => MetricLabel.make("tool", name)
const outcome = (name: string) => MetricLabel.make("outcome", name)
const sagasEnded = Metric.taggedWithLabels(Metrics.sagasEnded, [MetricLabel.make("status", "completed")])

const reserving = SagaDefinition.make("reserving", { input: Schema.String, program: (sku) => reserve(sku) })

const counts = Effect.all({
  passes: Metric.value(Metrics.recoveryPasses),
  claimed: Metric.value(Metrics.recoveryClaimed),
  leaseConflicts: Metric.value(Metrics.leaseConflicts),
  appendConflicts: Metric.value(Metrics.appendConflicts)
}).pipe(
  Effect.map(({ appendConflicts, claimed, leaseConflicts, passes }) => ({
    passes: passes.count,
    claimed: claimed.count,
    leaseConflicts: leaseConflicts.count,
    appendConflicts: appendConflicts.count
  }))
)
