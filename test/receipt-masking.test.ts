/**
 * A receipt is masked in the texts a tool or an undo wrote, never in the library's own words: the
 * library masks the parts that came from outside, then composes its message around them. A short
 * receipt (`t`), or one that is part of a library word, leaves every message readable.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, Redacted, Schedule, Schema, TestClock } from "effect"
import * as fc from "effect/FastCheck"
import { Compensable, CompensationReport, Journal, Outcome, Saga } from "../src/index.js"
import { maskedValue } from "../src/internal/util/maskedValue.js"
import { masked } from "../src/internal/util/masking.js"
import * as Testing from "../src/Testing.js"

describe("a receipt is masked in what a tool wrote, not in the library's words", () => {
  it.effect.prop(
    "for any receipt, a failed call's texts hold it nowhere in what the tool wrote, and the library's words around them are intact",
    [receiptArbitrary, textArbitrary, textArbitrary, fc.constantFrom(...ENDINGS)],
    ([receipt, before, after, ending]) =>
      Effect.gen(function* () {
        const wrote = `${before}${receipt}${after}`
        const shown = masked(wrote, [receipt])
        expectMasked(shown, receipt)
        const sagaId = `call-${ending}`
        const paths: Array<string> = []
        const program = catchingDeclined(callEndingWith(receipt, ending, wrote), paths)
        const result = yield* Saga.run(sagaId, program)
        const entries = yield* journalOf(sagaId)
        const payloadOf = (phase: string) => JSON.parse(entries.find((entry) => entry.phase === phase)!.payload!)
        switch (ending) {
          case "unknown":
          case "partial":
          case "died": {
            assert(result._tag === "NeedsAttention")
            const reason = {
              unknown: `outcome unknown: ${shown}`,
              partial: `partially applied; remaining: ${shown}`,
              died: `the call died (a defect: Error: ${shown}): it may or may not have run`
            }[ending]
            expect(result.unknown.map((step) => step.reason)).toEqual([reason])
            expect(payloadOf("SAGA_NEEDS_ATTENTION").unknown.map((step: { reason: string }) => step.reason)).toEqual([
              reason
            ])
            break
          }
          case "failed": {
            assert(result._tag === "Compensated")
            expect(payloadOf("FAILED")).toEqual({
              description: `failed (not applied): ${shown}`,
              defect: false,
              error: { _tag: "OutcomeFailed", reason: shown }
            })
            expect(payloadOf("SAGA_COMPENSATING").cause).toBe(`OutcomeFailed: failed (not applied): ${shown}`)
            break
          }
          case "typed": {
            // The program caught it by its tag; journaled with its tag and field names kept, it replays as the same error.
            assert(result._tag === "Compensated")
            const description = `Declined: ${new Declined({ ref: shown }).message}`
            expect(payloadOf("FAILED")).toEqual({ description, defect: false, error: { _tag: "Declined", ref: shown } })
            // The saga compensates for the step that failed: the library's error quotes its description as journaled.
            const { stepId } = entries.find((entry) => entry.phase === "FAILED")!
            expect(payloadOf("SAGA_COMPENSATING").cause).toBe(`StepFailed: step ${stepId} (pay) failed: ${description}`)
            yield* Saga.run(sagaId, program)
            // The first run's program got it as the replay does: masked, as journaled.
            expect(paths).toEqual([`declined ${shown}`, `declined ${shown}`])
            break
          }
        }
      }).pipe(Effect.provide(Testing.layer)),
    { fastCheck: { numRuns: 100 }, timeout: 60_000 }
  )

  it.effect.prop(
    "for any receipt, an undo's detail holds it nowhere in what the undo wrote, and the library's words around it are intact",
    [receiptArbitrary, textArbitrary, textArbitrary, fc.constantFrom(...ENDINGS)],
    ([receipt, before, after, ending]) =>
      Effect.gen(function* () {
        const wrote = `${before}${receipt}${after}`
        const shown = masked(wrote, [receipt])
        const result = yield* Saga.run("undo", Effect.zipRight(undoEndingWith(receipt, ending, wrote)("room-1"), stop))
        assert(result._tag === "CompensationFailed")
        const [phase, detail] = {
          failed: ["COMPENSATION_FAILED", `failed (not applied): ${shown}`],
          unknown: ["COMPENSATION_UNKNOWN", shown],
          partial: ["COMPENSATION_PARTIAL", shown],
          died: ["COMPENSATION_FAILED", `Error: ${shown}`],
          typed: ["COMPENSATION_FAILED", `Declined: ${new Declined({ ref: shown }).message}`]
        }[ending]
        const entry = (yield* journalOf("undo")).find((entry) => entry.phase === phase)!
        expect(Object.values(JSON.parse(entry.payload!))).toEqual([detail])
        expect(result.report.undone.map((step) => step.detail)).toEqual([detail])
        // Beside `undo failed`, the report leaves out the words of the outcome it repeats.
        expect(CompensationReport.format(result.report)).toContain(
          ending === "failed" ? `(${entry.stepId}) not applied: ${shown}` : detail
        )
      }).pipe(Effect.provide(Testing.layer)),
    { fastCheck: { numRuns: 100 }, timeout: 60_000 }
  )

  it.effect(
    "with the receipt `t`, the library's own outcomes read as written: a call's timeout, an undo's timeout",
    () =>
      Effect.gen(function* () {
        const slow = Compensable.make({
          name: "slow",
          input: Schema.String,
          success: Schema.String,
          timeout: "1 second",
          retry: Schedule.recurs(1),
          retryMode: "idempotency-key",
          // The first attempt sets its receipt and fails; the second never answers.
          execute: (_input, step) =>
            step.attempt === 1
              ? Effect.zipRight(step.setReceipt("t"), Effect.fail(Outcome.unknown("try again")))
              : Effect.never,
          compensate: () => Effect.void
        })
        const running = yield* Effect.fork(Saga.run("slow", slow("a")))
        yield* TestClock.adjust("2 seconds")
        const result = yield* Fiber.join(running)
        assert(result._tag === "NeedsAttention")
        expect(result.unknown[0]!.reason).toBe("outcome unknown: the call started but timed out before it answered")

        const stuck = Compensable.make({
          name: "stuck",
          input: Schema.String,
          success: Schema.String,
          timeout: "1 second",
          execute: (_input, step) => Effect.as(step.setReceipt("t"), "booked"),
          compensate: () => Effect.never
        })
        const undoing = yield* Effect.fork(Saga.run("stuck", Effect.zipRight(stuck("a"), stop)))
        yield* TestClock.adjust("2 seconds")
        const undone = yield* Fiber.join(undoing)
        assert(undone._tag === "CompensationFailed")
        expect(undone.report.undone[0]!.detail).toBe("the undo timed out")
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a text masked before keeps its <redacted> marks readable when it is masked again", () =>
    Effect.sync(() => {
      expect(masked("card <redacted> declined", ["d"])).toBe("car<redacted> <redacted> <redacted>ecline<redacted>")
      expect(masked("<redacted>acted", ["act"])).toBe("<redacted><redacted>ed")
    })
  )
})

describe("maskedValue: a copy of what a tool failed with, its texts masked, its shape kept", () => {
  const mask = (text: string) => masked(text, ["t"])

  it("keeps the class, its field names and the _tag; masks the message, the fields, what they hold and the cause", () => {
    const error = Object.assign(new Declined({ ref: "ref-t" }), {
      cause: new Error("inner t"),
      extra: { _tag: "Tagged", note: "at t", list: ["t", 1], map: new Map([["t", "t"]]), set: new Set(["t"]) },
      secret: Redacted.make("t")
    })
    const copy = maskedValue(error, mask) as typeof error
    expect(copy).toBeInstanceOf(Declined)
    expect(copy._tag).toBe("Declined")
    expect(copy.ref).toBe("ref-<redacted>")
    expect(copy.message).toBe('{ "ref": "ref-<redacted>" }')
    expect(copy.stack!.split("\n")[0]).toBe('Declined: { "ref": "ref-<redacted>" }')
    expect((copy.cause as Error).message).toBe("inner <redacted>")
    // A plain object's keys are data: masked, but its `_tag`.
    expect(copy.extra).toEqual({
      _tag: "Tagged",
      "no<redacted>e": "a<redacted> <redacted>",
      "lis<redacted>": ["<redacted>", 1],
      map: new Map([["<redacted>", "<redacted>"]]),
      "se<redacted>": new Set(["<redacted>"])
    })
    // A Redacted holds a text its holder can unwrap: a new Redacted of it masked.
    expect(Redacted.isRedacted(copy.secret)).toBe(true)
    expect(Redacted.value(copy.secret)).toBe("<redacted>")
    expect(Redacted.value(error.secret)).toBe("t")
    expect(error.ref).toBe("ref-t")
  })

  it("answers the value itself when no text changes, and keeps a cycle a cycle", () => {
    const untouched = new Error("nothing to mask")
    expect(maskedValue(untouched, (text) => masked(text, ["zz"]))).toBe(untouched)
    const cyclic: Error & { cause?: unknown } = new Error("t")
    cyclic.cause = cyclic
    const copy = maskedValue(cyclic, mask) as typeof cyclic
    expect(copy.message).toBe("<redacted>")
    expect(copy.cause).toBe(copy)
  })

  it("an error a copy cannot say (a private field) is a plain Error with its message masked whole; a deep value is cut", () => {
    class Private extends Error {
      readonly #why = "t"
      override get message() {
        return `why: ${this.#why}`
      }
    }
    const copy = maskedValue(new Private(), mask) as Error
    expect(copy).not.toBeInstanceOf(Private)
    expect(copy.message).toBe("why: <redacted>")
    let deep: Record<string, unknown> = { leaf: "t" }
    for (let level = 0; level < 100; level++) deep = { down: deep }
    const shown = JSON.stringify(maskedValue({ deep }, mask))
    expect(shown).toContain('"<redacted>"')
    expect(shown).not.toContain("leaf")
  })
})

/** How a tool's call or undo ends, quoting the receipt in what it wrote. */
const ENDINGS = ["failed", "unknown", "partial", "died", "typed"] as const
type Ending = (typeof ENDINGS)[number]

class Declined extends Schema.TaggedError<Declined>()("Declined", { ref: Schema.String }) {}

const endWith = (ending: Ending, wrote: string): Effect.Effect<never, Outcome.Outcome | Declined> => {
  switch (ending) {
    case "failed":
      return Effect.fail(Outcome.failed(wrote))
    case "unknown":
      return Effect.fail(Outcome.unknown(wrote))
    case "partial":
      return Effect.fail(Outcome.partial(wrote))
    case "died":
      return Effect.die(new Error(wrote))
    case "typed":
      return Effect.fail(new Declined({ ref: wrote }))
  }
}

/** Words of the library a receipt may be part of: in its messages, its error tags, its marks. */
const LIBRARY_WORDS = [
  "outcome unknown: ",
  "failed (not applied): ",
  "partially applied; remaining: ",
  "the call died (a defect: Error: ",
  "): it may or may not have run",
  "OutcomeFailed",
  "Declined",
  "ref",
  "the call started but timed out before it answered",
  "the undo timed out",
  "<redacted>"
]

/** A receipt: one or two characters, part of a library word, or a longer text. */
const receiptArbitrary = fc.oneof(
  fc.string({ minLength: 1, maxLength: 2 }),
  fc
    .constantFrom(...LIBRARY_WORDS)
    .chain((word) =>
      fc
        .tuple(fc.nat({ max: word.length - 1 }), fc.integer({ min: 1, max: word.length }))
        .map(([start, length]) => word.slice(start, start + length))
    ),
  fc.string({ minLength: 3, maxLength: 16 })
)

/** What a tool writes around its receipt (printable, on one line). */
const textArbitrary = fc.string({ maxLength: 12 })

/** No piece of `text` between its `<redacted>` marks holds `receipt`. */
const expectMasked = (text: string, receipt: string) => {
  for (const piece of text.split("<redacted>")) expect(piece).not.toContain(receipt)
}

/** A call that sets `receipt`, then ends as `ending` says, quoting it in `wrote`. */
const callEndingWith = (receipt: string, ending: Ending, wrote: string) =>
  Compensable.make({
    name: "pay",
    input: Schema.String,
    success: Schema.String,
    failure: Declined,
    execute: (_card, step) => Effect.zipRight(step.setReceipt(receipt), endWith(ending, wrote)),
    compensate: () => Effect.void
  })("card-1")

/** The call, its `Declined` caught by the program, which records what it read from it. */
const catchingDeclined = <A, E, R>(call: Effect.Effect<A, E, R>, paths: Array<string>) =>
  Effect.catchIf(
    call,
    (error): error is Extract<E, Declined> => error instanceof Declined,
    (declined) => Effect.sync(() => paths.push(`declined ${declined.ref}`))
  )

/** A tool that sets `receipt` and whose undo ends as `ending` says, quoting the receipt it gets in `wrote`. */
const undoEndingWith = (receipt: string, ending: Ending, wrote: string) =>
  Compensable.make({
    name: "book",
    input: Schema.String,
    success: Schema.String,
    execute: (room, step) => Effect.as(step.setReceipt(receipt), `booking-${room}`),
    compensate: (ctx) => {
      expect(Option.map(ctx.receipt, Redacted.value)).toEqual(Option.some(receipt))
      return endWith(ending, wrote)
    }
  })

/** A program's own failure after its steps: the saga compensates. */
const stop = Effect.fail("the program stops here")

const journalOf = (sagaId: string) => Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
