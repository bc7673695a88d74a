import { describe, expect, it } from "@effect/vitest"
import { Effect, Metric, MetricLabel, Schema, TestClock } from "effect"
import { Compensable, Metrics, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"

describe("durations from journaled times are never negative", () => {
  it.effect("a saga (and a step) whose end is stamped before its start, the clock set back, is recorded as 0 s", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2030-01-01T12:00:00Z"))
      const before = yield* histogram(Metrics.sagaDuration, "status", "completed")
      const steps = yield* histogram(Metrics.stepDuration, "tool", "jump")
      const result = yield* Saga.run(
        "clock-back",
        Effect.gen(function* () {
          yield* step("a")
          yield* TestClock.setTime(Date.parse("2030-01-01T11:50:00Z"))
          return yield* step("b")
        })
      )
      expect(result._tag).toBe("Completed")
      const after = yield* histogram(Metrics.sagaDuration, "status", "completed")
      expect(after.count - before.count).toBe(1)
      expect(after.sum).toBe(before.sum)
      expect(after.min).toBeGreaterThanOrEqual(0)
      // Step b's outcome is stamped 10 minutes before its INTENT: 0 s too.
      const stepsAfter = yield* histogram(Metrics.stepDuration, "tool", "jump")
      expect(stepsAfter.count - steps.count).toBe(2)
      expect(stepsAfter.sum).toBe(steps.sum)
    }).pipe(Effect.provide(Testing.layer))
  )
})

/** A step that moves the clock back by 10 minutes while it runs, the second time it is called. */
let calls = 0
const step = Compensable.make({
  name: "jump",
  input: Schema.String,
  success: Schema.String,
  execute: (text) =>
    Effect.as(++calls === 2 ? TestClock.setTime(Date.parse("2030-01-01T11:40:00Z")) : Effect.void, text),
  compensate: () => Effect.void
})

const histogram = (metric: typeof Metrics.sagaDuration, key: string, value: string) =>
  Metric.value(Metric.taggedWithLabels(metric, [MetricLabel.make(key, value)]))
