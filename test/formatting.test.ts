import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Compensable, CompensationReport, Journal, Saga, Timeline } from "../src/index.js"
import * as Testing from "../src/Testing.js"

describe("what a person reads", () => {
  it.effect("the timeline has one aligned line per entry, shows results and reasons, and never the receipt", () =>
    Effect.gen(function* () {
      const book = Compensable.make({
        name: "book",
        input: Schema.String,
        success: Schema.String,
        execute: (room, step) => Effect.as(step.setReceipt("secret-provider-ref"), `booking-${room}`),
        compensate: () => Effect.void
      })
      yield* Saga.run("timeline", Effect.zipRight(book("12"), Effect.fail("overbooked")))
      const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("timeline"))
      const lines = Timeline.format(entries).split("\n")
      expect(lines[0]).toMatch(/^seq\s+time\s+step\s+tool\s+phase\s+detail$/)
      expect(lines).toHaveLength(entries.length + 1)
      expect(lines.find((line) => line.includes("EXECUTED"))).toContain('result "booking-12"')
      expect(lines.find((line) => line.includes("SAGA_COMPENSATING"))).toContain("overbooked")
      expect(Timeline.format(entries)).not.toContain("secret-provider-ref")
      const phaseColumn = lines[0]!.indexOf("phase")
      for (const [index, line] of lines.slice(1).entries())
        expect(line.indexOf(entries[index]!.phase)).toBe(phaseColumn)
    }).pipe(Effect.provide(Testing.layer))
  )

  it("the compensation report says what was undone and what was not, and whether anything may be dirty", () => {
    const report = CompensationReport.make(
      "order-9",
      [
        { stepId: "charge#1", toolName: "charge", outcome: "failed", detail: "card network down" },
        { stepId: "reserve#1", toolName: "reserve", outcome: "completed" }
      ],
      [{ stepId: "ship#1", toolName: "ship", phase: "FAILED" }]
    )
    expect(report.status).toBe("compensation_failed")
    expect(CompensationReport.dirty(report).map((step) => step.stepId)).toEqual(["charge#1"])
    expect(CompensationReport.format(report).split("\n")).toEqual([
      "saga order-9: compensation_failed",
      "  failed      charge (charge#1) card network down",
      "  completed   reserve (reserve#1)",
      "  not undone: it failed ship (ship#1)"
    ])
  })
})
