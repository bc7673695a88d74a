import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Schedule, Schema, TestClock } from "effect"
import { Compensable, SagaDefinition } from "../src/index.js"
import * as Testing from "../src/Testing.js"

/** The explored runs log as the caller does: through its loggers, at its level, at its time. */
describe("Testing.exploreCrashes logging", () => {
  it.effect(
    "its runs log through the caller's logger and minimum level, stamped by the caller's clock, not the explorer's",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(callerTime)
        const { lines, logger } = capturing()
        const summary = yield* Testing.exploreCrashes(Noted, "a-1", { world: Layer.empty }).pipe(
          Effect.provide(
            Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(LogLevel.Warning))
          )
        )
        expect(summary.points).toBeGreaterThan(1)
        // Every run logged its warnings here (the uncrashed one and each crashed one), none of its info lines.
        expect(lines.filter((line) => line.message === "noting a-1").length).toBeGreaterThanOrEqual(summary.points)
        expect(lines.every((line) => line.level === "WARN")).toBe(true)
        // The runs' own TestClock starts at 1970 and moves a second for each retry: the lines keep the caller's time.
        expect(new Set(lines.map((line) => line.date))).toEqual(new Set([new Date(callerTime).toISOString()]))
      })
  )

  it.effect("exploreCrashesProperty's runs log through the caller's logger too", () =>
    Effect.gen(function* () {
      const { lines, logger } = capturing()
      const summaries = yield* Testing.exploreCrashesProperty(Noted, { world: Layer.empty, runs: 2, seed: 7 }).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      expect(summaries.length).toBe(2)
      expect(lines.filter((line) => line.level === "INFO").length).toBeGreaterThan(0)
      expect(lines.filter((line) => line.level === "WARN").length).toBeGreaterThan(0)
    })
  )
})

const callerTime = Date.parse("2030-01-02T03:04:05.000Z")

/** A logger that keeps each line's level, message and date. */
const capturing = () => {
  const lines: Array<{ readonly level: string; readonly message: string; readonly date: string }> = []
  const logger = Logger.make(({ date, logLevel, message }) => {
    const text = Array.isArray(message) ? message.join(" ") : String(message)
    lines.push({ level: logLevel.label, message: text, date: date.toISOString() })
  })
  return { lines, logger }
}

/** A step that logs an info line and a warning, and fails its first call, retried a second later. */
const note = Compensable.make({
  name: "note",
  input: Schema.String,
  success: Schema.String,
  retry: Schedule.spaced("1 second").pipe(Schedule.intersect(Schedule.recurs(1))),
  execute: (text) => {
    let calls = 0
    return Effect.gen(function* () {
      yield* Effect.logInfo(`noting ${text}`)
      yield* Effect.logWarning(`noting ${text}`)
      if (calls++ === 0) return yield* Effect.fail("busy")
      return text
    })
  },
  compensate: () => Effect.void
})

const Noted = SagaDefinition.make("noted", { input: Schema.String, program: (text: string) => note(text) })
