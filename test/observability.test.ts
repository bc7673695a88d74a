import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema, Tracer } from "effect"
import { Compensable, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"

describe("observability", () => {
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
})

/** A tracer that keeps every span it starts, on top of the current one. */
const recording = Effect.map(Effect.tracer, (base) => {
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (...args) => {
      const span = base.span(...args)
      spans.push(span)
      return span
    },
    context: (f, fiber) => base.context(f, fiber)
  })
  return { spans, tracer }
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
