import * as Crypto from "node:crypto"
import * as Util from "node:util"
import { assert, describe, expect, it, vi } from "@effect/vitest"
import {
  Cause,
  ConfigProvider,
  Data,
  Effect,
  Inspectable,
  Logger,
  LogLevel,
  Option,
  Redacted,
  Schedule,
  Schema,
  Tracer
} from "effect"
import { Compensable, CompensationReport, Journal, Keys, Outcome, Saga, Timeline } from "../src/index.js"
import * as Testing from "../src/Testing.js"

describe("receipts are secret control data", () => {
  it.scoped.each([
    ["Logger.json", Logger.json],
    ["Logger.logFmt", Logger.logFmt],
    ["Logger.pretty", Logger.pretty],
    ["Logger.structured", Logger.structured]
  ] as const)(
    "with %s: a receipt appears in no log line, span, error message or printed result, and the undos still receive it",
    ([, consoleLogger]) =>
      Effect.gen(function* () {
        const secret = `rcpt-${Crypto.randomUUID()}`
        const captured = yield* capture
        const { received, tools } = fixture(secret)

        const shown = yield* Effect.gen(function* () {
          const result = yield* Saga.run(
            "trip-secret",
            Effect.gen(function* () {
              yield* tools.book("room-12")
              yield* tools.refund("4200")
              yield* tools.ship("parcel-1")
              yield* tools.charge("card-1")
            })
          )
          // What an application does with the result: log it, its cause and its report.
          yield* Effect.log(result)
          yield* Effect.log("the saga ended", result)
          assert(result._tag === "CompensationFailed")
          yield* Effect.logError("compensation failed", result.cause)
          yield* Effect.logError(result.cause)
          yield* Effect.logWarning(CompensationReport.format(result.report))
          const entries = yield* journalOf("trip-secret")
          return {
            result,
            status: yield* Saga.status("trip-secret"),
            timeline: Timeline.format(entries),
            report: CompensationReport.format(result.report),
            pretty: Cause.pretty(result.cause),
            entries
          }
        }).pipe(
          Effect.withTracer(captured.tracer),
          Effect.provide(Testing.layer),
          Effect.provide(Logger.add(captured.logger)),
          Effect.provide(consoleLogger),
          Effect.provide(Logger.minimumLogLevel(LogLevel.All))
        )

        // The undos still receive the receipt, each its own.
        expect(received).toEqual({ book: [secret], refund: [`${secret}-refund`], ship: [`${secret}-ship`] })
        expect(shown.result.report.undone.map((step) => [step.toolName, step.outcome])).toEqual([
          ["ship", "unknown"],
          ["refund", "failed"],
          ["book", "completed"]
        ])
        // Not vacuous: the undos logged their whole context, and the loggers, the console and the tracer saw it.
        expect(captured.lines.some((line) => line.includes("undoing"))).toBe(true)
        expect(captured.console.join("\n")).toContain("undoing")
        expect(captured.spans.map((span) => span.name)).toContain("effect-saga.undo")
        expect(captured.spans.some((span) => span.events.some(([name]) => name.includes("undoing")))).toBe(true)
        expect(Timeline.format(shown.entries)).toContain("ship")

        const everything = {
          ...printed(shown.result),
          "Cause.pretty": shown.pretty,
          "CompensationReport.format": shown.report,
          "report details": shown.result.report.undone.map((step) => step.detail ?? "").join("\n"),
          "Saga.status": JSON.stringify(shown.status),
          "Timeline.format": shown.timeline,
          "log lines": captured.lines.join("\n"),
          console: captured.console.join("\n"),
          spans: captured.spans.map(describeSpan).join("\n")
        }
        for (const [where, text] of Object.entries(everything)) expect(text, where).not.toContain(secret)
        // What the undos' failures said is journaled as it was printed: without the receipt.
        const reasons = shown.entries.filter((entry) => entry.phase.startsWith("COMPENSATION_"))
        expect(reasons.map((entry) => entry.payload).join("\n")).toContain("<redacted>")
        expect(reasons.map((entry) => entry.payload).join("\n")).not.toContain(secret)
      })
  )

  it.scoped("an undo that writes the receipt's value into its error: the journal, report, logs and spans mask it", () =>
    Effect.gen(function* () {
      const secret = `rcpt-${Crypto.randomUUID()}`
      const captured = yield* capture
      const leaky = leakingUndo(secret, (receipt) => Outcome.failed(`cancel with ${receipt} refused`))
      const shown = yield* Effect.gen(function* () {
        const result = yield* Saga.run("leaky-undo", Effect.zipRight(leaky("a"), Effect.fail("the program failed")))
        assert(result._tag === "CompensationFailed")
        yield* Effect.logError(CompensationReport.format(result.report))
        return { result, entries: yield* journalOf("leaky-undo"), status: yield* Saga.status("leaky-undo") }
      }).pipe(
        Effect.withTracer(captured.tracer),
        Effect.provide(Testing.layer),
        Effect.provide(Logger.add(captured.logger))
      )
      const [undone] = shown.result.report.undone
      expect(undone).toMatchObject({
        outcome: "failed",
        detail: "failed (not applied): cancel with <redacted> refused"
      })
      const everything = {
        // Without a receipt key only EXECUTED holds the receipt (docs/security.md).
        journal: shown.entries
          .filter((entry) => entry.phase !== "EXECUTED")
          .map((entry) => entry.payload ?? "")
          .join("\n"),
        report: CompensationReport.format(shown.result.report),
        status: JSON.stringify(shown.status),
        "log lines": captured.lines.join("\n"),
        spans: captured.spans.map(describeSpan).join("\n")
      }
      for (const [where, text] of Object.entries(everything)) expect(text, where).not.toContain(secret)
      expect(everything.journal).toContain("cancel with <redacted> refused")
    })
  )

  it.effect("an undo's error cut at 1000 characters inside the receipt keeps no part of it", () =>
    Effect.gen(function* () {
      const secret = `tok_${Crypto.randomUUID()}`
      const leaky = leakingUndo(secret, (receipt) => new Error(`${"x".repeat(985)}${receipt}`))
      const result = yield* Saga.run("cut-undo", Effect.zipRight(leaky("a"), Effect.fail("the program failed")))
      assert(result._tag === "CompensationFailed")
      const detail = result.report.undone[0]!.detail!
      const reason = (yield* journalOf("cut-undo")).find((entry) => entry.phase === "COMPENSATION_FAILED")!.payload!
      for (const text of [detail, reason]) {
        expect(text).toContain("<redacted>")
        expect(text).not.toContain(secret.slice(0, 6))
      }
    }).pipe(Effect.provide(Testing.layer))
  )

  it.scoped(
    "an explicit undo (compensateEffect) receives the receipt; its answer, journal, logs and spans do not show it",
    () =>
      Effect.gen(function* () {
        const secret = `rcpt-${Crypto.randomUUID()}`
        const captured = yield* capture
        const { received, tools } = fixture(secret)
        const shown = yield* Effect.gen(function* () {
          yield* Saga.run("trip-explicit", tools.book("room-7"))
          const effectId = (yield* Saga.status("trip-explicit")).steps[0]!.effectId
          const answer = yield* Saga.compensateEffect(effectId)
          yield* Effect.log(answer)
          assert(answer._tag === "Settled")
          const run = yield* journalOf(answer.runId)
          return { answer, timeline: Timeline.format(run), status: yield* Saga.status(answer.runId), run }
        }).pipe(
          Effect.withTracer(captured.tracer),
          Effect.provide(Testing.layer),
          Effect.provide(Logger.add(captured.logger)),
          Effect.provide(Logger.json),
          Effect.provide(Logger.minimumLogLevel(LogLevel.All))
        )
        expect(received.book).toEqual([secret])
        expect(shown.answer).toMatchObject({ outcome: "completed" })
        expect(captured.spans.map((span) => span.name)).toContain("effect-saga.compensate-effect")
        const everything = {
          ...printed(shown.answer),
          "Timeline.format": shown.timeline,
          "Saga.status": JSON.stringify(shown.status),
          "the run's journal": JSON.stringify(shown.run),
          "log lines": captured.lines.join("\n"),
          console: captured.console.join("\n"),
          spans: captured.spans.map(describeSpan).join("\n")
        }
        for (const [where, text] of Object.entries(everything)) expect(text, where).not.toContain(secret)
      })
  )

  it.scoped(
    "a program's or an undo's failure is the saga's to report: no log line shows its cause (an input, an error's fields)",
    () =>
      Effect.gen(function* () {
        const captured = yield* capture
        const patterned = Compensable.make({
          name: "patterned",
          input: Schema.String.pipe(Schema.startsWith("ok-")),
          success: Schema.String,
          execute: (input) => Effect.succeed(input),
          compensate: () => Effect.void
        })
        // An undo that fails is the report's to tell, not a failed fiber's to log.
        const refusing = Compensable.make({
          name: "refusing",
          input: Schema.String,
          success: Schema.String,
          execute: (input) => Effect.succeed(input),
          compensate: () => Effect.fail(Outcome.failed("LEAK-UNDO-REASON"))
        })
        const result = yield* Saga.run(
          "refused-input",
          Effect.zipRight(Effect.fail("LEAK-ERROR-FIELD"), Effect.void)
        ).pipe(
          Effect.tap(() =>
            Effect.flatMap(Saga.run("failed-undo", Effect.zipRight(refusing("x"), Effect.fail("stop"))), (failed) =>
              Effect.sync(() => expect(failed._tag).toBe("CompensationFailed"))
            )
          ),
          Effect.zipRight(Saga.run("bad-input", patterned("LEAK-INPUT-PAT"))),
          Effect.withTracer(captured.tracer),
          Effect.provide(Testing.layer),
          Effect.provide(Logger.add(captured.logger)),
          Effect.provide(Logger.minimumLogLevel(LogLevel.All))
        )
        expect(result._tag).toBe("Compensated")
        // A span's exit is the run's answer (the result, to the caller): its attributes and events are exported.
        const exported = captured.spans.map((span) =>
          JSON.stringify([span.name, [...span.attributes], span.events], (_, value) =>
            typeof value === "bigint" ? String(value) : value
          )
        )
        const logged = [...captured.lines, ...captured.console, ...exported].join("\n")
        expect(logged).not.toContain("LEAK-INPUT-PAT")
        expect(logged).not.toContain("LEAK-ERROR-FIELD")
        expect(captured.lines.join("\n")).not.toContain("LEAK-UNDO-REASON")
        expect(logged).not.toContain("Fiber terminated with an unhandled error")
      })
  )

  it.scoped("a step that set a receipt and then lost its answer (NeedsAttention) does not show it either", () =>
    Effect.gen(function* () {
      const secret = `rcpt-${Crypto.randomUUID()}`
      const captured = yield* capture
      const lost = Compensable.make({
        name: "lost",
        input: Schema.String,
        success: Schema.String,
        execute: (input, step) =>
          Effect.zipRight(
            step.setReceipt(secret),
            Effect.fail(Outcome.unknown(`the provider did not answer ${input}`))
          ),
        compensate: () => Effect.void
      })
      const shown = yield* Effect.gen(function* () {
        const result = yield* Saga.run("trip-lost", lost("room-9"))
        yield* Effect.log(result)
        return { result, timeline: Timeline.format(yield* journalOf("trip-lost")) }
      }).pipe(
        Effect.withTracer(captured.tracer),
        Effect.provide(Testing.layer),
        Effect.provide(Logger.add(captured.logger)),
        Effect.provide(Logger.pretty),
        Effect.provide(Logger.minimumLogLevel(LogLevel.All))
      )
      expect(shown.result._tag).toBe("NeedsAttention")
      const everything = {
        ...printed(shown.result),
        "Timeline.format": shown.timeline,
        "log lines": captured.lines.join("\n"),
        console: captured.console.join("\n"),
        spans: captured.spans.map(describeSpan).join("\n")
      }
      for (const [where, text] of Object.entries(everything)) expect(text, where).not.toContain(secret)
    })
  )

  it.effect(
    "the receipt is stored in the journal's EXECUTED payload and in NDJSON exports: protect them like the credential",
    () =>
      Effect.gen(function* () {
        const secret = `rcpt-${Crypto.randomUUID()}`
        const { tools } = fixture(secret)
        yield* Saga.run("trip-stored", tools.book("room-3"))
        const executed = (yield* journalOf("trip-stored")).find((entry) => entry.phase === "EXECUTED")!
        expect(JSON.parse(executed.payload!)).toEqual({ result: "booking-room-3", receipt: secret })
        expect(yield* Journal.exportNdjson("trip-stored")).toContain(secret)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a retry starts without the receipt a failed attempt set: the undo gets the last attempt's, or none", () =>
    Effect.gen(function* () {
      const received: Array<Option.Option<string>> = []
      /** A booking whose attempts each set the receipt given (if any), and fail until the last. */
      const booking = (name: string, receipts: ReadonlyArray<string | undefined>) => {
        let attempt = 0
        return Compensable.make({
          name,
          input: Schema.String,
          success: Schema.String,
          retry: Schedule.recurs(receipts.length - 1),
          execute: (room, step) =>
            Effect.suspend(() => {
              const receipt = receipts[attempt++]
              const set = receipt === undefined ? Effect.void : step.setReceipt(receipt)
              // Declined: nothing was booked, whatever the attempt's receipt said.
              const outcome = attempt < receipts.length ? Effect.fail(Outcome.failed("declined")) : Effect.succeed(room)
              return Effect.zipRight(set, outcome)
            }),
          compensate: (ctx) => Effect.sync(() => received.push(Option.map(ctx.receipt, Redacted.value)))
        })
      }
      for (const [sagaId, receipts] of [
        ["retried-none", ["declined-hold", undefined]],
        ["retried-kept", ["hold-1", "hold-2", "kept"]]
      ] as const) {
        yield* Saga.run(sagaId, Effect.zipRight(booking(sagaId, receipts)("room-1"), Effect.fail("stop")))
      }
      expect(received).toEqual([Option.none(), Option.some("kept")])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a receipt that is not text (a provider's JSON typed any) is never journaled: the step is unknown, nothing shows it",
    () =>
      Effect.gen(function* () {
        const loose: ReadonlyArray<readonly [string, unknown, string]> = [
          ["number", 90817, "number"],
          ["null", null, "null"],
          ["object", { token: "LEAK-RECEIPT-OBJ" }, "object"],
          ["redacted-number", Redacted.make(4711), "number"]
        ]
        for (const [sagaId, receipt, kind] of loose) {
          const book = Compensable.make({
            name: "book",
            input: Schema.String,
            success: Schema.String,
            execute: (room, step) => Effect.as(step.setReceipt(receipt as string), `booking-${room}`),
            compensate: () => Effect.void
          })
          const result = yield* Saga.run(sagaId, book("room-1"))
          assert(result._tag === "NeedsAttention")
          expect(result.unknown).toEqual([
            {
              stepId: expect.any(String),
              toolName: "book",
              reason: `the tool ran but the receipt it set is not text (${kind}), so it cannot be journaled`
            }
          ])
          const journaled = JSON.stringify(yield* journalOf(sagaId))
          for (const shown of ["90817", "4711", "LEAK-RECEIPT-OBJ"]) expect(journaled).not.toContain(shown)
          expect(yield* Journal.verify(sagaId)).toMatchObject({ _tag: "Intact" })
        }
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("the receipt is Redacted in the undo's context: printing the context shows <redacted>", () =>
    Effect.gen(function* () {
      const secret = `rcpt-${Crypto.randomUUID()}`
      const contexts: Array<Compensable.CompensationContext<string, string>> = []
      const book = Compensable.make({
        name: "book",
        input: Schema.String,
        success: Schema.String,
        execute: (room, step) => Effect.as(step.setReceipt(secret), `booking-${room}`),
        compensate: (ctx) => Effect.sync(() => contexts.push(ctx))
      })
      yield* Saga.run("trip-ctx", Effect.zipRight(book("room-1"), Effect.fail("stop")))
      const ctx = contexts[0]!
      expect(Option.map(ctx.receipt, Redacted.value)).toEqual(Option.some(secret))
      for (const text of [
        String(ctx.receipt),
        JSON.stringify(ctx),
        Util.inspect(ctx, { depth: null }),
        Inspectable.format(ctx),
        `${ctx.receipt}`
      ]) {
        expect(text).not.toContain(secret)
      }
      expect(JSON.stringify(ctx)).toContain("<redacted>")
    }).pipe(Effect.provide(Testing.layer))
  )
})

describe("a forward call's own error never carries the receipt it set", () => {
  it.effect(
    "an error the tool's failure schema does not describe reaches the program as itself, or, quoting the receipt, as the Outcome.Failed a replay gives",
    () =>
      Effect.gen(function* () {
        class Busy extends Data.TaggedError("Busy")<{ readonly detail: string }> {}
        const secret = `rcpt-${Crypto.randomUUID()}`
        const caught: Array<string> = []
        const busy = Compensable.make({
          name: "pay",
          input: Schema.Boolean,
          success: Schema.String,
          execute: (quote, step) =>
            Effect.zipRight(
              step.setReceipt(secret),
              Effect.fail(new Busy({ detail: quote ? `busy, token ${secret}` : "busy" }))
            ),
          compensate: () => Effect.void
        })
        const program = (quote: boolean) =>
          busy(quote).pipe(
            Effect.catchTag("Busy", (error) => Effect.sync(() => void caught.push(`Busy: ${error.detail}`))),
            Effect.catchAll((error) => Effect.sync(() => void caught.push(`${error._tag}: ${error.message}`)))
          )
        // The program catches the failure and goes on: the failed call still taints the saga.
        expect((yield* Saga.run("busy", program(false)))._tag).toBe("Compensated")
        expect((yield* Saga.run("busy-quoting", program(true)))._tag).toBe("Compensated")
        expect((yield* Saga.run("busy-quoting", program(true)))._tag).toBe("Compensated")
        const quoted = 'OutcomeFailed: failed (not applied): Busy: {"detail":"busy, token <redacted>"}'
        expect(caught).toEqual(["Busy: busy", quoted, quoted])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.scoped(
    "a call that fails quoting its receipt: its FAILED entry, the compensation's cause, the report, logs and its span mask it",
    () =>
      Effect.gen(function* () {
        const secret = `rcpt-${Crypto.randomUUID()}`
        const captured = yield* capture
        const declined = failingWith(secret, (receipt) => Effect.fail(Outcome.failed(`card ${receipt} was declined`)))
        const shown = yield* Effect.gen(function* () {
          const result = yield* Saga.run("declined", declined("card-1"))
          assert(result._tag === "Compensated")
          yield* Effect.logError(CompensationReport.format(result.report))
          const entries = yield* journalOf("declined")
          // Replayed, the step fails as journaled: with the description, the receipt masked.
          const replayed = yield* Saga.run("declined", declined("card-1"))
          assert(replayed._tag === "Compensated")
          return {
            result,
            entries,
            status: yield* Saga.status("declined"),
            timeline: Timeline.format(entries),
            replayed: Cause.pretty(replayed.cause)
          }
        }).pipe(
          Effect.withTracer(captured.tracer),
          Effect.provide(Testing.layer),
          Effect.provide(Logger.add(captured.logger))
        )
        const failed = shown.entries.find((entry) => entry.phase === "FAILED")!
        // The error holds the receipt: it is journaled masked, and replayed so.
        expect(JSON.parse(failed.payload!)).toEqual({
          description: "failed (not applied): card <redacted> was declined",
          defect: false,
          error: { _tag: "OutcomeFailed", reason: "card <redacted> was declined" }
        })
        const compensating = shown.entries.find((entry) => entry.phase === "SAGA_COMPENSATING")!
        expect(JSON.parse(compensating.payload!).cause).toContain("card <redacted> was declined")
        const everything = {
          // Without a receipt key only EXECUTED holds the receipt (docs/security.md); this step has none.
          journal: shown.entries.map((entry) => entry.payload ?? "").join("\n"),
          report: CompensationReport.format(shown.result.report),
          status: JSON.stringify(shown.status),
          timeline: shown.timeline,
          "the replay's cause": shown.replayed,
          "log lines": captured.lines.join("\n"),
          // The saga's own span ends with its result, whose cause is the program's error as it was: the
          // program's to show or not (see docs/security.md).
          "step spans": captured.spans
            .filter((span) => span.name === "effect-saga.step")
            .map(describeSpan)
            .join("\n")
        }
        expect(everything["step spans"]).toContain("card <redacted> was declined")
        expect(everything["the replay's cause"]).toContain("card <redacted> was declined")
        for (const [where, text] of Object.entries(everything)) expect(text, where).not.toContain(secret)
      })
  )

  it.effect(
    "a typed error quoting its receipt is journaled masked and replays as the same error: the program takes the same path",
    () =>
      Effect.gen(function* () {
        const secret = `rcpt-${Crypto.randomUUID()}`
        const pay = declining(secret, Declined, (receipt) => new Declined({ ref: receipt }))
        const paths: Array<string> = []
        const program = pay("card-1").pipe(
          Effect.catchTag("Declined", (declined) => Effect.sync(() => paths.push(`declined ${declined.ref}`))),
          Effect.catchAll((error) => Effect.sync(() => paths.push(`another error: ${String(error)}`)))
        )
        yield* Saga.run("declined-typed", program)
        yield* Saga.run("declined-typed", program)
        // The first run's program gets the error as its replay will: as journaled, masked.
        expect(paths).toEqual(["declined <redacted>", "declined <redacted>"])
        const entries = yield* journalOf("declined-typed")
        const failed = entries.find((entry) => entry.phase === "FAILED")!
        expect(JSON.parse(failed.payload!).error).toEqual({ _tag: "Declined", ref: "<redacted>" })
        expect(entries.map((entry) => entry.payload ?? "").join("\n")).not.toContain(secret)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect.each([
    ["base64", EncodedDeclined64, (ref: string) => new EncodedDeclined64({ ref })],
    ["hex", EncodedDeclinedHex, (ref: string) => new EncodedDeclinedHex({ ref })],
    ["Redacted", RedactedDeclined, (ref: string) => new RedactedDeclined({ ref: Redacted.make(ref) })],
    ["Redacted base64", RedactedDeclined64, (ref: string) => new RedactedDeclined64({ ref: Redacted.make(ref) })]
  ] as const)(
    "a typed error whose schema encodes its receipt otherwise (%s) is journaled with the receipt masked before encoding, and the program gets it masked",
    ([encoding, schema, declined]) =>
      Effect.gen(function* () {
        const secret = `rcpt-${Crypto.randomUUID()}`
        const pay = declining(secret, schema as Schema.Schema<unknown, unknown>, declined)
        const refs: Array<string> = []
        const program = pay("card-1").pipe(
          Effect.catchAll((error) =>
            Effect.sync(() => {
              const { ref } = error as { readonly ref: string | Redacted.Redacted<string> }
              refs.push(Redacted.isRedacted(ref) ? Redacted.value(ref) : ref)
            })
          )
        )
        const sagaId = `declined-${encoding}`
        yield* Saga.run(sagaId, program)
        yield* Saga.run(sagaId, program)
        // The same error on the first run as on the replay, its reference masked: never the receipt.
        expect(refs).toEqual(["<redacted>", "<redacted>"])
        const entries = yield* journalOf(sagaId)
        const error = JSON.parse(entries.find((entry) => entry.phase === "FAILED")!.payload!).error
        expect(error._tag).toBe("EncodedDeclined")
        const stored = entries.map((entry) => entry.payload ?? "").join("\n")
        expect(stored).not.toContain(secret)
        expect(stored).not.toContain(Buffer.from(secret).toString("base64"))
        expect(stored).not.toContain(Buffer.from(secret).toString("hex"))
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a typed error whose encoded form alone shows the receipt (its parts do not hold it, joined they do) reaches the program as journaled",
    () =>
      Effect.gen(function* () {
        const secret = `rcpt-${Crypto.randomUUID()},tail`
        const pay = declining(secret, SplitDeclined, (receipt) => new SplitDeclined({ parts: receipt.split(",") }))
        const seen: Array<ReadonlyArray<string>> = []
        const program = pay("card-1").pipe(
          Effect.catchTag("SplitDeclined", (error) => Effect.sync(() => seen.push(error.parts)))
        )
        yield* Saga.run("declined-split", program)
        yield* Saga.run("declined-split", program)
        // Each part alone is no receipt, so the error as thrown was not masked: its journaled copy was.
        expect(seen).toEqual([["<redacted>"], ["<redacted>"]])
        const entries = yield* journalOf("declined-split")
        const failed = entries.find((entry) => entry.phase === "FAILED")!
        expect(JSON.parse(failed.payload!).error).toEqual({ _tag: "SplitDeclined", parts: "<redacted>" })
        expect(entries.map((entry) => entry.payload ?? "").join("\n")).not.toContain(secret)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a typed error quoting its receipt that no longer decodes masked reaches the program as its replay does",
    () =>
      Effect.gen(function* () {
        const secret = `rcpt-${Crypto.randomUUID()}`
        const pay = declining(secret, StrictDeclined, (receipt) => new StrictDeclined({ ref: receipt }))
        const seen: Array<string> = []
        const program = pay("card-1").pipe(Effect.catchAll((error) => Effect.sync(() => seen.push(String(error)))))
        yield* Saga.run("declined-strict", program)
        yield* Saga.run("declined-strict", program)
        expect(seen).toHaveLength(2)
        expect(seen[0]).toBe(seen[1])
        expect(seen[0]).toContain("<redacted>")
        expect(seen[0]).not.toContain(secret)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a program that passes a caught failure's words on to its next call resumes as journaled", () =>
    Effect.gen(function* () {
      const secret = `rcpt-${Crypto.randomUUID()}`
      const pay = declining(secret, Declined, (receipt) => new Declined({ ref: `token ${receipt}` }))
      const noted: Array<string> = []
      const note = Compensable.make({
        name: "note",
        input: Schema.String,
        success: Schema.String,
        execute: (text) =>
          Effect.sync(() => {
            noted.push(text)
            return "noted"
          }),
        compensate: () => Effect.void
      })
      const lost = Compensable.make({
        name: "lost",
        input: Schema.String,
        success: Schema.String,
        execute: () => Effect.fail(Outcome.unknown("the provider did not answer")),
        compensate: () => Effect.void
      })
      const program = pay("card-1").pipe(
        Effect.catchTag("Declined", (declined) => note(`declined: ${declined.ref}`)),
        Effect.zipRight(lost("go"))
      )
      // Run again, the program replays the failure as journaled: its next call's input is the one journaled.
      for (const _ of [1, 2]) {
        const result = yield* Saga.run("declined-noted", program)
        assert(result._tag === "NeedsAttention", JSON.stringify(result))
      }
      expect(noted).toEqual(["declined: token <redacted>"])
      const journaled = (yield* journalOf("declined-noted")).map((entry) => `${entry.input} ${entry.payload}`)
      expect(journaled.join("\n")).not.toContain(secret)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a call that dies or loses its answer quoting its receipt: the reason NeedsAttention gives masks it", () =>
    Effect.gen(function* () {
      const secret = `rcpt-${Crypto.randomUUID()}`
      const endings = [
        ["died", () => Effect.die(new Error(`cannot parse ${secret}`))],
        ["lost", () => Effect.fail(Outcome.unknown(`no answer for ${secret}`))],
        ["partial", () => Effect.fail(Outcome.partial(`release ${secret} by hand`))]
      ] as const
      for (const [sagaId, ending] of endings) {
        const result = yield* Saga.run(sagaId, failingWith(secret, ending)("card-1"))
        assert(result._tag === "NeedsAttention")
        const [reason] = result.unknown.map((step) => step.reason)
        expect(reason).toContain("<redacted>")
        const journaled = (yield* journalOf(sagaId)).map((entry) => entry.payload ?? "").join("\n")
        for (const text of [reason!, journaled]) expect(text, sagaId).not.toContain(secret)
      }
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a failure cut at 1000 characters inside the receipt keeps no part of it: masked before the cut", () =>
    Effect.gen(function* () {
      const secret = `tok_${Crypto.randomUUID()}`
      const long = failingWith(secret, (receipt) => Effect.fail(Outcome.failed(`${"x".repeat(960)}${receipt}`)))
      const result = yield* Saga.run("cut-call", long("card-1"))
      assert(result._tag === "Compensated")
      const failed = (yield* journalOf("cut-call")).find((entry) => entry.phase === "FAILED")!.payload!
      expect(JSON.parse(failed).description).toMatch(/x<redacted>$/)
      expect(failed).not.toContain(secret.slice(0, 6))
    }).pipe(Effect.provide(Testing.layer))
  )
})

describe("a receipt is capped by the tool's maxPayloadBytes", () => {
  it.effect("a receipt over it is never journaled: the step ran, so it needs attention; one at it is journaled", () =>
    Effect.gen(function* () {
      for (const [sagaId, bytes] of [
        ["at-cap", 1024],
        ["over-cap", 1025]
      ] as const) {
        const receipt = "r".repeat(bytes)
        const result = yield* Saga.run(sagaId, capped(receipt, false)("room-1"))
        const journaled = (yield* journalOf(sagaId)).map((entry) => entry.payload ?? "").join("\n")
        if (sagaId === "at-cap") {
          expect(result._tag).toBe("Completed")
          expect(journaled).toContain(receipt)
          continue
        }
        expect(result).toMatchObject({
          _tag: "NeedsAttention",
          unknown: [
            {
              toolName: "capped",
              reason: "the tool ran but the receipt it set exceeds maxPayloadBytes, so it cannot be journaled"
            }
          ]
        })
        expect(journaled).not.toContain("rrrr")
      }
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a read whose receipt is over it failed, as a read whose result is", () =>
    Effect.gen(function* () {
      const result = yield* Saga.run("read-over-cap", capped("r".repeat(5 * 1024 * 1024), true)("room-1"))
      expect(result._tag).toBe("Compensated")
      const failed = (yield* journalOf("read-over-cap")).find((entry) => entry.phase === "FAILED")!
      expect(JSON.parse(failed.payload!).description).toBe(
        "failed (not applied): the tool ran but the receipt it set exceeds maxPayloadBytes, so its result cannot be journaled"
      )
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a sealed receipt is measured as the tool set it, not sealed", () =>
    Effect.gen(function* () {
      const atCap = yield* Saga.run("sealed-at-cap", capped("r".repeat(1024), false)("room-1"))
      expect(atCap._tag).toBe("Completed")
      const executed = (yield* journalOf("sealed-at-cap")).find((entry) => entry.phase === "EXECUTED")!
      expect(JSON.parse(executed.payload!).receipt).toMatchObject({ sealed: "aes-256-gcm", kid: "k1" })
      expect(executed.payload!.length).toBeGreaterThan(1024)
      const over = yield* Saga.run("sealed-over-cap", capped("r".repeat(1025), false)("room-1"))
      expect(over._tag).toBe("NeedsAttention")
    }).pipe(
      Effect.provide(Testing.layer),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([[Keys.RECEIPT_KEYS, Keys.generate("k1")]])))
    )
  )
})

/** A tool that sets `secret` as its receipt, then ends as `ending` says (given the receipt's value). */
class Declined extends Schema.TaggedError<Declined>()("Declined", { ref: Schema.String }) {}

/** A refusal whose reference is journaled in base64, or in hex: a mask of the encoded text would not find the receipt. */
class EncodedDeclined64 extends Schema.TaggedError<EncodedDeclined64>()("EncodedDeclined", {
  ref: Schema.StringFromBase64
}) {}
class EncodedDeclinedHex extends Schema.TaggedError<EncodedDeclinedHex>()("EncodedDeclined", {
  ref: Schema.StringFromHex
}) {}

/** A refusal whose reference is typed secret: the program unwraps it, so it holds the masked text too. */
class RedactedDeclined extends Schema.TaggedError<RedactedDeclined>()("EncodedDeclined", {
  ref: Schema.Redacted(Schema.String)
}) {}
class RedactedDeclined64 extends Schema.TaggedError<RedactedDeclined64>()("EncodedDeclined", {
  ref: Schema.Redacted(Schema.StringFromBase64)
}) {}

/** A refusal whose reference is journaled joined by commas: a receipt holding a comma shows only joined. */
class SplitDeclined extends Schema.TaggedError<SplitDeclined>()("SplitDeclined", {
  parts: Schema.split(",")
}) {}

/** A refusal whose reference is a card token: masked, it is no longer one. */
class StrictDeclined extends Schema.TaggedError<StrictDeclined>()("StrictDeclined", {
  ref: Schema.String.pipe(Schema.pattern(/^rcpt-/))
}) {}

/** `pay`, whose call sets `secret` as its receipt, then fails with the typed error `declined` makes of it. */
const declining = <E, EE>(secret: string, failure: Schema.Schema<E, EE>, declined: (receipt: string) => E) =>
  Compensable.make({
    name: "pay",
    input: Schema.String,
    success: Schema.String,
    failure,
    execute: (_card, step) => Effect.zipRight(step.setReceipt(secret), Effect.fail(declined(secret))),
    compensate: () => Effect.void
  })

const failingWith = (secret: string, ending: (receipt: string) => Effect.Effect<never, unknown>) =>
  Compensable.make({
    name: "pay",
    input: Schema.String,
    success: Schema.String,
    execute: (_card, step) => Effect.zipRight(step.setReceipt(secret), ending(secret)),
    compensate: () => Effect.void
  })

/** A tool whose `maxPayloadBytes` is 1024 that sets `receipt`; `read`: it changes nothing. */
const capped = (receipt: string, read: boolean) =>
  Compensable.make({
    name: "capped",
    input: Schema.String,
    success: Schema.String,
    maxPayloadBytes: 1024,
    ...(read ? { changesNothing: true } : { compensate: () => Effect.void }),
    execute: (room, step) => Effect.as(step.setReceipt(receipt), `booking-${room}`)
  })

/**
 * Three tools that set receipts (each undo records the receipt it got and logs its whole context):
 * `book`'s undo succeeds, `refund`'s fails citing its receipt, `ship`'s loses its answer citing
 * it; `charge` fails, so the saga compensates.
 */
/** A tool that sets `secret` as its receipt, whose undo fails with the error `failure` writes the receipt's value into. */
const leakingUndo = (secret: string, failure: (receipt: string) => unknown) =>
  Compensable.make({
    name: "leaky",
    input: Schema.String,
    success: Schema.String,
    execute: (id, step) => Effect.as(step.setReceipt(secret), id),
    compensate: (ctx) => Effect.fail(failure(Redacted.value(Option.getOrThrow(ctx.receipt))))
  })

const fixture = (secret: string) => {
  const received: Record<string, Array<string>> = { book: [], refund: [], ship: [] }
  const withReceipt = (
    name: string,
    undo: (receipt: Option.Option<Redacted.Redacted<string>>) => Effect.Effect<void, unknown>
  ) =>
    Compensable.make({
      name,
      input: Schema.String,
      success: Schema.String,
      execute: (input, step) =>
        Effect.as(
          step.setReceipt(name === "book" ? secret : `${secret}-${name}`),
          `${name === "book" ? "booking" : name}-${input}`
        ),
      compensate: (ctx) =>
        Effect.gen(function* () {
          received[name]!.push(Redacted.value(Option.getOrThrow(ctx.receipt)))
          yield* Effect.log("undoing", ctx)
          yield* Effect.logDebug(ctx.receipt)
          yield* Effect.annotateCurrentSpan("ctx", ctx)
          yield* Effect.annotateCurrentSpan("receipt", ctx.receipt)
          yield* Effect.annotateLogs(Effect.logInfo("with an annotation"), "receipt", ctx.receipt)
          return yield* undo(ctx.receipt)
        })
    })
  const tools = {
    book: withReceipt("book", () => Effect.void),
    refund: withReceipt("refund", (receipt) => Effect.fail(Outcome.failed(`refund ${receipt} was declined`))),
    ship: withReceipt("ship", (receipt) => Effect.fail(Outcome.unknown(`recall of ${receipt} got no answer`))),
    charge: Compensable.make({
      name: "charge",
      input: Schema.String,
      success: Schema.String,
      execute: (card, step) =>
        Effect.zipRight(step.setReceipt(secret), Effect.fail(Outcome.failed(`${card} declined`))),
      compensate: () => Effect.void
    })
  }
  return { received, tools }
}

/** Every way a value gets printed. */
const printed = (value: unknown): Record<string, string> => ({
  String: String(value),
  "JSON.stringify": JSON.stringify(value),
  "Inspectable.format": Inspectable.format(value),
  "Inspectable.toStringUnknown": Inspectable.toStringUnknown(value),
  "util.inspect": Util.inspect(value, { depth: null }),
  "util.format": Util.format("%s %o %O %j", value, value, value, value)
})

/** A span of the native tracer: its events are where log lines inside it land. */
type RecordedSpan = Tracer.Span & { readonly events: ReadonlyArray<[string, bigint, Record<string, unknown>]> }

/** A span as a person or an exporter sees it: name, attributes, events, status and its exit. */
const describeSpan = (span: RecordedSpan): string => {
  const data = {
    name: span.name,
    attributes: Object.fromEntries(span.attributes),
    events: span.events,
    status: span.status
  }
  const replacer = (_key: string, value: unknown) => (typeof value === "bigint" ? String(value) : value)
  return [JSON.stringify(data, replacer), Util.inspect(data, { depth: null })].join("\n")
}

/** Records every log line (in every format), everything written to the console, and every span. */
const capture = Effect.gen(function* () {
  const lines: Array<string> = []
  const consoleLines: Array<string> = []
  const spans: Array<RecordedSpan> = []
  const logger = Logger.make((options) => {
    lines.push(
      Logger.jsonLogger.log(options),
      Logger.logfmtLogger.log(options),
      Logger.stringLogger.log(options),
      JSON.stringify(Logger.structuredLogger.log(options)),
      Util.inspect(Logger.structuredLogger.log(options), { depth: null }),
      Util.inspect(options.message, { depth: null }),
      Cause.pretty(options.cause)
    )
  })
  const methods = ["log", "info", "warn", "error", "debug", "trace", "group", "groupCollapsed", "dir"] as const
  yield* Effect.acquireRelease(
    Effect.sync(() =>
      methods.map((method) =>
        vi.spyOn(console, method).mockImplementation((...args: Array<unknown>) => {
          consoleLines.push(Util.format(...args))
        })
      )
    ),
    (spies) =>
      Effect.sync(() => {
        for (const spy of spies) spy.mockRestore()
      })
  )
  const base = yield* Effect.tracer
  const tracer = Tracer.make({
    span: (...args) => {
      const span = base.span(...args)
      spans.push(span as RecordedSpan)
      return span
    },
    context: (f, fiber) => base.context(f, fiber)
  })
  return { lines, console: consoleLines, spans, logger, tracer }
})

const journalOf = (sagaId: string) => Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
