import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Outcome, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { entriesOf } from "./fixtures/journal-reads.js"
import { reserveAndWire } from "./fixtures/reserve-wire.js"

describe("operator commands", () => {
  it.effect(
    "approve journals APPROVED with who and the input digest, runs nothing; the next run runs the step once",
    () =>
      Effect.gen(function* () {
        const { calls, program } = reserveAndWire()
        const waiting = yield* Saga.run("approve", program)
        assert(waiting._tag === "AwaitingApproval")
        yield* Saga.approve("approve", waiting.request.stepId, { by: "alice" })
        const approved = (yield* entriesOf("approve")).at(-1)!
        expect(approved.phase).toBe("APPROVED")
        expect(JSON.parse(approved.payload!)).toMatchObject({ by: "alice", inputDigest: waiting.request.inputDigest })
        expect(calls.wire).toBe(0)
        expect((yield* Saga.run("approve", program))._tag).toBe("Completed")
        expect((yield* Saga.run("approve", program))._tag).toBe("Completed")
        expect(calls.wire).toBe(1)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a command that names a position the saga has moved on from is refused and writes nothing", () =>
    Effect.gen(function* () {
      const { program } = reserveAndWire()
      const waiting = yield* Saga.run("stale", program)
      assert(waiting._tag === "AwaitingApproval")
      const seen = yield* Saga.status("stale")
      yield* Saga.run("stale", program)
      const before = yield* entriesOf("stale")
      const error = yield* Effect.flip(
        Saga.approve("stale", waiting.request.stepId, { by: "bob", revision: seen.revision - 1, digest: seen.digest })
      )
      expect(error._tag).toBe("ConcurrencyConflict")
      expect(yield* entriesOf("stale")).toEqual(before)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("approve is idempotent: the same approval again answers as the first; another one is a conflict", () =>
    Effect.gen(function* () {
      const { program } = reserveAndWire()
      const waiting = yield* Saga.run("twice", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Saga.approve("twice", waiting.request.stepId, { by: "alice" })
      const after = yield* Saga.status("twice")
      // An exact replay, even naming the position seen before the first approval, is a pure read.
      yield* Saga.approve("twice", waiting.request.stepId, { by: "alice", revision: after.revision - 1 })
      expect((yield* Saga.status("twice")).revision).toBe(after.revision)
      const again = yield* Effect.flip(Saga.approve("twice", waiting.request.stepId, { by: "bob" }))
      expect(again).toMatchObject({ _tag: "CommandConflict", answer: "approved by alice" })
      const rejected = yield* Effect.flip(Saga.reject("twice", waiting.request.stepId, { by: "bob", reason: "no" }))
      expect(rejected).toMatchObject({ _tag: "CommandConflict", answer: "approved by alice" })
      expect((yield* Saga.status("twice")).revision).toBe(after.revision)
      const missing = yield* Effect.flip(Saga.approve("twice", "nope", { by: "bob" }))
      expect(missing._tag).toBe("CommandRefused")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a retried approve, reject or resolve names the position its first found, the saga's now, or none; one the saga never held (or left otherwise) is ConcurrencyConflict, nothing written",
    () =>
      Effect.gen(function* () {
        const { program, unknownProgram } = reserveAndWire()
        const never = { revision: 999, digest: "zzz" }
        // approve, retried after the saga was resumed and completed.
        const waiting = yield* Saga.run("retry-approve", program)
        assert(waiting._tag === "AwaitingApproval")
        const seen = yield* Saga.status("retry-approve")
        const approve = (position: Saga.Seen) =>
          Saga.withWrites(Saga.approve("retry-approve", waiting.request.stepId, { by: "alice", ...position }))
        expect((yield* approve(seen)).written).toBe(1)
        expect((yield* Saga.run("retry-approve", program))._tag).toBe("Completed")
        const now = yield* Saga.status("retry-approve")
        for (const position of [seen, now, {}, { revision: seen.revision }, { digest: now.digest }]) {
          expect((yield* approve(position)).written).toBe(0)
        }
        const entries = yield* entriesOf("retry-approve")
        for (const position of [
          never,
          { revision: seen.revision + 1 },
          { revision: seen.revision, digest: now.digest }
        ]) {
          const error = yield* Effect.flip(approve(position))
          expect(error._tag).toBe("ConcurrencyConflict")
        }
        expect(yield* entriesOf("retry-approve")).toEqual(entries)

        // reject.
        const asked = yield* Saga.run("retry-reject", program)
        assert(asked._tag === "AwaitingApproval")
        const before = yield* Saga.status("retry-reject")
        const reject = (position: Saga.Seen) =>
          Saga.withWrites(Saga.reject("retry-reject", asked.request.stepId, { by: "bob", reason: "no", ...position }))
        expect((yield* reject(before)).value.status).toBe("compensated")
        expect((yield* reject(before)).written).toBe(0)
        expect((yield* reject({})).written).toBe(0)
        expect((yield* Effect.flip(reject(never)))._tag).toBe("ConcurrencyConflict")

        // resolve.
        const unknown = yield* Saga.run("retry-resolve", unknownProgram).pipe(
          Effect.provide(Testing.faults({ tool: "reserve", fault: "unknown" }))
        )
        assert(unknown._tag === "NeedsAttention")
        const stepId = unknown.unknown[0]!.stepId
        const unsettled = yield* Saga.status("retry-resolve")
        const resolve = (position: Saga.Seen) =>
          Saga.withWrites(Saga.resolve("retry-resolve", stepId, { outcome: "not-applied", by: "carol", ...position }))
        expect((yield* resolve(unsettled)).written).toBe(1)
        expect((yield* resolve(unsettled)).written).toBe(0)
        expect((yield* Effect.flip(resolve(never)))._tag).toBe("ConcurrencyConflict")
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an approval or renewal sent again once its approval stands no more (EXPIRED, or the saga compensated before the step ran) is refused, never answered as the first",
    () =>
      Effect.gen(function* () {
        const { calls, program } = reserveAndWire()
        // Approved with an expiry, renewed, then expired: the run journals EXPIRED and compensates.
        const waiting = yield* Saga.run("lapsed", program)
        assert(waiting._tag === "AwaitingApproval")
        const { stepId } = waiting.request
        const expiresAt = new Date(60_000).toISOString()
        const renewedTo = new Date(120_000).toISOString()
        yield* Saga.approve("lapsed", stepId, { by: "alice", expiresAt })
        yield* Saga.renewApproval("lapsed", stepId, { by: "bob", expiresAt: renewedTo })
        yield* TestClock.adjust("3 minutes")
        expect((yield* Saga.run("lapsed", program))._tag).toBe("Compensated")
        const entries = yield* entriesOf("lapsed")
        const answer = "approved by alice, then refused: its approval expired"
        const retried = yield* Effect.flip(Saga.approve("lapsed", stepId, { by: "alice", expiresAt }))
        expect(retried).toMatchObject({ _tag: "CommandConflict", answer })
        expect(retried.message).toBe(`step ${stepId} of saga lapsed was already ${answer}: nothing can revive it`)
        expect(yield* Effect.flip(Saga.approve("lapsed", stepId, { by: "carol" }))).toMatchObject({
          _tag: "CommandConflict",
          answer
        })
        expect(
          yield* Effect.flip(Saga.renewApproval("lapsed", stepId, { by: "bob", expiresAt: renewedTo }))
        ).toMatchObject({ _tag: "CommandRefused", reason: "the step was refused (EXPIRED): nothing can revive it" })
        expect(yield* entriesOf("lapsed")).toEqual(entries)

        // Approved, then the saga compensated before the step ran: no refusal is journaled for it.
        const asked = yield* Saga.run("overtaken", program)
        assert(asked._tag === "AwaitingApproval")
        const later = new Date(3_600_000).toISOString()
        yield* Saga.approve("overtaken", asked.request.stepId, { by: "alice" })
        yield* Saga.renewApproval("overtaken", asked.request.stepId, { by: "bob", expiresAt: later })
        expect((yield* Saga.compensate("overtaken")).status).toBe("compensated")
        const compensated = yield* entriesOf("overtaken")
        for (const by of ["alice", "bob"]) {
          expect(yield* Effect.flip(Saga.approve("overtaken", asked.request.stepId, { by }))).toMatchObject({
            _tag: "CommandRefused",
            reason: "the saga has begun to compensate"
          })
        }
        expect(
          yield* Effect.flip(Saga.renewApproval("overtaken", asked.request.stepId, { by: "bob", expiresAt: later }))
        ).toMatchObject({ _tag: "CommandRefused", reason: "the saga has begun to compensate" })
        expect(yield* entriesOf("overtaken")).toEqual(compensated)
        expect(calls.wire).toBe(0)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("reject journals REJECTED and compensates; running the saga again never runs the step", () =>
    Effect.gen(function* () {
      const { calls, program } = reserveAndWire()
      const waiting = yield* Saga.run("reject", program)
      assert(waiting._tag === "AwaitingApproval")
      const report = yield* Saga.reject("reject", waiting.request.stepId, { by: "carol", reason: "wrong IBAN" })
      expect(report.status).toBe("compensated")
      expect(report.undone.map((step) => [step.toolName, step.outcome])).toEqual([["reserve", "completed"]])
      const again = yield* Saga.run("reject", program)
      expect(again._tag).toBe("Compensated")
      expect(calls).toEqual({ reserve: 1, release: 1, wire: 0 })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("resolving an unknown step as applied journals its result; the resume goes on without running it", () =>
    Effect.gen(function* () {
      const { calls, unknownProgram } = reserveAndWire()
      const first = yield* Saga.run("applied", unknownProgram).pipe(
        Effect.provide(Testing.faults({ tool: "reserve", fault: "unknown" }))
      )
      assert(first._tag === "NeedsAttention")
      const stepId = first.unknown[0]!.stepId
      const bad = yield* Effect.flip(Saga.resolve("applied", stepId, { outcome: "applied", by: "dave", result: 42 }))
      expect(bad._tag).toBe("CommandRefused")
      const huge = "z".repeat(1024 * 1024)
      const tooLarge = yield* Effect.flip(
        Saga.resolve("applied", stepId, { outcome: "applied", by: "dave", result: huge })
      )
      expect(tooLarge).toMatchObject({
        _tag: "CommandRefused",
        reason: "the result is 1048578 bytes encoded, over the tool's maxPayloadBytes of 1048576"
      })
      yield* Saga.resolve("applied", stepId, { outcome: "applied", by: "dave", result: "res-found" })
      const resumed = yield* Saga.run("applied", unknownProgram)
      expect(resumed).toMatchObject({ _tag: "Completed", value: "res-found" })
      expect(calls.reserve).toBe(1)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a result resolved where the tool is not registered is not checked; the resume names the resolution", () =>
    Effect.gen(function* () {
      const { calls, unknownProgram } = reserveAndWire()
      // The worker and the operator's process share the journal; only the worker has run the tool.
      const worker = yield* Layer.build(Saga.layer)
      const operator = yield* Layer.build(Saga.layer)
      const first = yield* Saga.run("unchecked", unknownProgram).pipe(
        Effect.provide(Testing.faults({ tool: "reserve", fault: "unknown" })),
        Effect.provide(worker)
      )
      assert(first._tag === "NeedsAttention")
      const stepId = first.unknown[0]!.stepId
      // Unchecked by a schema, but never unbounded: over the default maxPayloadBytes, refused, nothing written.
      const before = yield* entriesOf("unchecked")
      const huge = "x".repeat(1024 * 1024)
      const tooLarge = yield* Effect.flip(
        Saga.resolve("unchecked", stepId, { outcome: "applied", by: "dave", result: huge }).pipe(
          Effect.provide(operator)
        )
      )
      expect(tooLarge).toMatchObject({
        _tag: "CommandRefused",
        reason: `the result is ${1024 * 1024 + 2} bytes encoded, over the default maxPayloadBytes of 1048576 (the tool is not registered in this process to name its own: resolve where it is)`
      })
      const receiptTooLarge = yield* Effect.flip(
        Saga.resolve("unchecked", stepId, {
          outcome: "applied",
          by: "dave",
          result: 42,
          receipt: Redacted.make(huge + huge)
        }).pipe(Effect.provide(operator))
      )
      expect(receiptTooLarge).toMatchObject({ _tag: "CommandRefused" })
      expect(receiptTooLarge.message).toContain(
        `the receipt is ${2 * 1024 * 1024} bytes, over the default maxPayloadBytes`
      )
      expect(receiptTooLarge.message).not.toContain("xxxx")
      expect(yield* entriesOf("unchecked")).toEqual(before)
      yield* Saga.resolve("unchecked", stepId, { outcome: "applied", by: "dave", result: 42 }).pipe(
        Effect.provide(operator)
      )
      const error = yield* Effect.flip(Saga.run("unchecked", unknownProgram).pipe(Effect.provide(worker)))
      expect(error._tag).toBe("JournalCorrupted")
      expect(error.message).toContain(
        `result dave resolved ${stepId} with (Saga.resolve, in a process where the tool was not registered to check it) does not decode with the tool's schema`
      )
      expect(calls.reserve).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
  )

  it.effect("resolving an unknown step as not applied journals FAILED; the resume compensates", () =>
    Effect.gen(function* () {
      const { calls, unknownProgram } = reserveAndWire()
      const first = yield* Saga.run("not-applied", unknownProgram).pipe(
        Effect.provide(Testing.faults({ tool: "reserve", fault: "unknown" }))
      )
      assert(first._tag === "NeedsAttention")
      const stepId = first.unknown[0]!.stepId
      yield* Saga.resolve("not-applied", stepId, { outcome: "not-applied", by: "erin" })
      const resumed = yield* Saga.run("not-applied", unknownProgram)
      expect(resumed._tag).toBe("Compensated")
      expect(calls).toMatchObject({ reserve: 1, release: 0 })
      const revision = (yield* Saga.status("not-applied")).revision
      yield* Saga.resolve("not-applied", stepId, { outcome: "not-applied", by: "erin" })
      const known = yield* Effect.flip(Saga.resolve("not-applied", stepId, { outcome: "applied", by: "erin" }))
      expect(known).toMatchObject({ _tag: "CommandConflict", answer: "resolved as not-applied by erin" })
      expect((yield* Saga.status("not-applied")).revision).toBe(revision)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "compensate asked again at the position it was asked at answers its report from the journal and writes nothing",
    () =>
      Effect.gen(function* () {
        const { calls, program } = reserveAndWire()
        yield* Saga.run("again", program)
        const seen = yield* Saga.status("again")
        const first = yield* Saga.compensate("again", { revision: seen.revision, digest: seen.digest })
        expect(first.status).toBe("compensated")
        const entries = yield* entriesOf("again")
        const replayed = yield* Saga.compensate("again", { revision: seen.revision, digest: seen.digest })
        expect(replayed).toEqual(first)
        expect(yield* Saga.compensate("again", { revision: seen.revision })).toEqual(first)
        expect(yield* entriesOf("again")).toEqual(entries)
        expect(calls.release).toBe(1)
        // The same revision with another digest is another position: the saga moved on from it.
        const other = yield* Effect.flip(Saga.compensate("again", { revision: seen.revision, digest: "0".repeat(64) }))
        expect(other._tag).toBe("ConcurrencyConflict")
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("compensate at a position the saga left by another command is refused: a rejection compensated it", () =>
    Effect.gen(function* () {
      const { program } = reserveAndWire()
      const waiting = yield* Saga.run("rejected", program)
      assert(waiting._tag === "AwaitingApproval")
      const seen = yield* Saga.status("rejected")
      yield* Saga.reject("rejected", waiting.request.stepId, { by: "carol", reason: "wrong IBAN" })
      const entries = yield* entriesOf("rejected")
      const rejected = yield* Effect.flip(Saga.compensate("rejected", { revision: seen.revision, digest: seen.digest }))
      expect(rejected._tag).toBe("ConcurrencyConflict")
      expect(yield* entriesOf("rejected")).toEqual(entries)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a compensation that failed, asked again at its position, reports the same failure and runs no undo again",
    () =>
      Effect.gen(function* () {
        let attempts = 0
        const stuck = Compensable.make({
          name: "stuck",
          input: Schema.String,
          success: Schema.String,
          execute: (sku) => Effect.succeed(`held-${sku}`),
          compensate: () =>
            Effect.suspend(() => {
              attempts++
              return Effect.fail(Outcome.failed("the warehouse refused the release"))
            })
        })
        yield* Saga.run("failed", stuck("A-1"))
        const seen = yield* Saga.status("failed")
        const failed = yield* Saga.compensate("failed", { revision: seen.revision, digest: seen.digest })
        expect(failed.status).toBe("compensation_failed")
        const entries = yield* entriesOf("failed")
        expect(yield* Saga.compensate("failed", { revision: seen.revision, digest: seen.digest })).toEqual(failed)
        expect(yield* entriesOf("failed")).toEqual(entries)
        expect(attempts).toBe(1)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("Saga.withWrites answers what the commands it ran wrote themselves: a replay wrote nothing", () =>
    Effect.gen(function* () {
      const { program } = reserveAndWire()
      const waiting = yield* Saga.run("counted", program)
      assert(waiting._tag === "AwaitingApproval")
      const approve = Saga.approve("counted", waiting.request.stepId, { by: "alice" })
      expect(yield* Saga.withWrites(approve)).toEqual({ value: undefined, written: 1 })
      expect(yield* Saga.withWrites(approve)).toEqual({ value: undefined, written: 0 })
      const rejected = yield* Saga.run("counted-2", program)
      assert(rejected._tag === "AwaitingApproval")
      const before = (yield* Saga.status("counted-2")).revision
      const both = yield* Saga.withWrites(
        Effect.zipRight(
          Saga.reject("counted-2", rejected.request.stepId, { by: "bob", reason: "no" }),
          Saga.compensate("counted-2")
        )
      )
      // REJECTED with SAGA_COMPENSATING, the undo's COMPENSATING and COMPENSATED, SAGA_COMPENSATED; compensate: nothing.
      expect(both).toMatchObject({ value: { status: "compensated" }, written: 5 })
      expect((yield* Saga.status("counted-2")).revision).toBe(before + 5)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("Saga.withWrittenRevisions answers the revisions the commands it ran wrote themselves", () =>
    Effect.gen(function* () {
      const { program } = reserveAndWire()
      const waiting = yield* Saga.run("revisions", program)
      assert(waiting._tag === "AwaitingApproval")
      const before = (yield* Saga.status("revisions")).revision
      const approve = Saga.approve("revisions", waiting.request.stepId, { by: "alice" })
      expect(yield* Saga.withWrittenRevisions(approve)).toEqual({ value: undefined, revisions: [before + 1] })
      expect(yield* Saga.withWrittenRevisions(approve)).toEqual({ value: undefined, revisions: [] })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a count around another counts the inner one's writes too", () =>
    Effect.gen(function* () {
      const { program } = reserveAndWire()
      const waiting = yield* Saga.run("nested", program)
      assert(waiting._tag === "AwaitingApproval")
      const before = (yield* Saga.status("nested")).revision
      const approve = Saga.approve("nested", waiting.request.stepId, { by: "alice" })
      const outer = yield* Saga.withWrittenRevisions(Saga.withWrites(approve))
      expect(outer).toEqual({ value: { value: undefined, written: 1 }, revisions: [before + 1] })
      expect(yield* Saga.withWrites(Saga.withWrites(approve))).toEqual({
        value: { value: undefined, written: 0 },
        written: 0
      })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "Saga.onWritten tells the entries the commands wrote however they end, beside a caller counting around it; compensateEffect's are its run's",
    () =>
      Effect.gen(function* () {
        const { program } = reserveAndWire()
        const waiting = yield* Saga.run("told", program)
        assert(waiting._tag === "AwaitingApproval")
        const before = (yield* Saga.status("told")).revision
        const told: Array<ReadonlyArray<Saga.WrittenEntry>> = []
        const tell = (entries: ReadonlyArray<Saga.WrittenEntry>) => Effect.sync(() => void told.push(entries))
        // A failure after the write: the write is told all the same, and the caller around counts it too.
        const failed = yield* Saga.withWrittenRevisions(
          Effect.either(
            Saga.onWritten(
              Effect.zipRight(Saga.approve("told", waiting.request.stepId, { by: "alice" }), Effect.fail("then lost")),
              tell
            )
          )
        )
        expect(failed.revisions).toEqual([before + 1])
        expect(told).toEqual([[{ sagaId: "told", revision: before + 1 }]])
        const reserve = (yield* Saga.status("told")).steps.find((step) => step.toolName === "reserve")!
        const undone = yield* Saga.compensateEffect(reserve.effectId).pipe(Saga.onWritten(tell))
        assert(undone._tag === "Settled")
        const run = yield* entriesOf(undone.runId)
        expect(told[1]).toEqual(run.map((entry) => ({ sagaId: undone.runId, revision: entry.seq })))
      }).pipe(Effect.provide(Testing.layer))
  )
})
