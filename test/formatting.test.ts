import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Compensable, CompensationReport, Journal, Saga, SagaError, Timeline } from "../src/index.js"
import * as Mermaid from "../src/internal/cli/mermaid.js"
import * as Html from "../src/internal/http/console/html.js"
import { printable } from "../src/internal/util/printable.js"
import * as Testing from "../src/Testing.js"

/** What a terminal acts on instead of showing, a line break included. */
const raw = /[\p{Cc}\p{Bidi_Control}\u2028\u2029]/u

/** A reason sent from outside that would set the terminal's title and forge a timeline line. */
const forged = "ok\u001b]0;pwned\u0007\n2  00:00:00.000  FORGED\u202e\u2028"

describe("what a person reads", () => {
  it("every bidi control is escaped, the marks (U+061C, U+200E, U+200F) as the overrides and isolates", () => {
    const controls = Array.from({ length: 0x3000 }, (_, code) => String.fromCharCode(code)).filter((char) =>
      /\p{Bidi_Control}/u.test(char)
    )
    expect(controls.length).toBe(12)
    for (const char of controls)
      expect(printable(`a${char}b`)).toBe(`a\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}b`)
  })

  it("the console escapes every bidi control as the CLI does, the marks (U+061C, U+200E, U+200F) too", () => {
    const controls = Array.from({ length: 0x3000 }, (_, code) => String.fromCharCode(code)).filter((char) =>
      /\p{Bidi_Control}/u.test(char)
    )
    for (const char of controls) expect(Html.escape(`a${char}b`)).toBe(printable(`a${char}b`))
    // Tabs and line ends are the page's to lay out; markup is escaped as HTML.
    expect(Html.escape("a\tb\n<c>")).toBe("a\tb\n&lt;c&gt;")
  })

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

  it.effect(
    "a journaled reason cannot break its line or reach the terminal raw: the timeline and the diagram escape it",
    () =>
      Effect.gen(function* () {
        const wire = Compensable.make({
          name: "wire",
          input: Schema.Int,
          success: Schema.String,
          reversibility: "irreversible",
          execute: (amount) => Effect.succeed(`wire-${amount}`)
        })
        yield* Saga.run("forged", wire(5))
        const [step] = (yield* Saga.status("forged")).steps
        yield* Saga.reject("forged", step!.stepId, { by: "bob", reason: forged })
        const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("forged"))
        expect(entries.some((entry) => entry.payload?.includes("\\u001b"))).toBe(true)

        const timeline = Timeline.format(entries)
        const lines = timeline.split("\n")
        expect(lines).toHaveLength(entries.length + 1)
        for (const line of lines) expect(line).not.toMatch(raw)
        expect(lines.find((line) => line.includes("REJECTED"))).toContain(
          "rejected by bob: ok\\u001b]0;pwned\\u0007\\n2  00:00:00.000  FORGED\\u202e\\u2028"
        )

        const diagram = Mermaid.diagram("forged", entries).split("\n")
        for (const line of diagram) expect(line).not.toMatch(raw)
        expect(diagram).toContain(
          "  O--xS: rejected by bob: ok\\u001b]0#59;pwned\\u0007\\n2 00:00:00.000 FORGED\\u202e\\u2028"
        )
      }).pipe(Effect.provide(Testing.layer))
  )

  it("an error at one of the saga's own entries names the entry, not a step of that name", () => {
    const at = { sagaId: "s1", reason: "r" }
    expect(new SagaError.NonDeterminism({ ...at, stepId: "SAGA_STARTED" }).message).toBe(
      "saga s1 did not replay as journaled at its SAGA_STARTED entry: r"
    )
    expect(new SagaError.CommandRefused({ ...at, stepId: "SAGA_STARTED" }).message).toBe(
      "refused for saga s1 (its SAGA_STARTED entry): r"
    )
    expect(new SagaError.CommandRefused({ ...at, stepId: "charge:k#1" }).message).toBe(
      "refused for step charge:k#1 of saga s1: r"
    )
  })

  it("the compensation report escapes an undo's detail: each step stays on its line", () => {
    const report = CompensationReport.make(
      "order-9",
      [{ stepId: "charge#1", toolName: "charge", outcome: "failed", detail: "card\u001b[2J\n  completed   refund" }],
      []
    )
    expect(CompensationReport.format(report).split("\n")).toEqual([
      "saga order-9: compensation_failed",
      "  undo failed  charge (charge#1) card\\u001b[2J\\n  completed   refund"
    ])
  })

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
      "  undo failed  charge (charge#1) card network down",
      "  completed    reserve (reserve#1)",
      "  not undone (its call failed) ship (ship#1)"
    ])
  })

  it("the compensation report says it was the undo that left a step's effect live, whatever the outcome", () => {
    const report = CompensationReport.make(
      "order-9",
      [
        { stepId: "refund#1", toolName: "refund", outcome: "partial", detail: "3 of 5 items" },
        { stepId: "release#1", toolName: "release", outcome: "unknown", detail: "timed out" },
        { stepId: "notify#1", toolName: "notify", outcome: "unavailable" },
        { stepId: "audit#1", toolName: "audit", outcome: "skipped" }
      ],
      [{ stepId: "ship#1", toolName: "ship", phase: "UNKNOWN" }]
    )
    expect(CompensationReport.format(report).split("\n")).toEqual([
      "saga order-9: compensation_failed",
      "  undo partial refund (refund#1) 3 of 5 items",
      "  undo unknown release (release#1) timed out",
      "  unavailable  notify (notify#1)",
      "  skipped      audit (audit#1)",
      "  not undone: outcome unknown ship (ship#1)"
    ])
  })

  it("the compensation report does not repeat the words of a failed undo's outcome after its answer", () => {
    const report = CompensationReport.make(
      "order-9",
      [
        { stepId: "refund#1", toolName: "refund", outcome: "failed", detail: "failed (not applied): the bank refused" },
        { stepId: "release#1", toolName: "release", outcome: "unknown", detail: "no answer in 30s" }
      ],
      []
    )
    expect(CompensationReport.format(report).split("\n")).toEqual([
      "saga order-9: compensation_failed",
      "  undo failed  refund (refund#1) not applied: the bank refused",
      "  undo unknown release (release#1) no answer in 30s"
    ])
    expect(report.undone[0]?.detail).toBe("failed (not applied): the bank refused")
  })
})
