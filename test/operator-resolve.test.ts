import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger, Option, Redacted, Schema } from "effect"
import { Compensable, Journal, Keys, Outcome, Saga, SqlStore, Timeline } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { entriesOf } from "./fixtures/journal-reads.js"
import { checkout } from "./fixtures/undo-order.js"

const chargeUnknown = Testing.faults({ tool: "charge", fault: "unknown" })

describe("Saga.resolve after compensation began", () => {
  it.effect("refuses --applied once a step that ran before the unknown one was undone; --not-applied is taken", () =>
    Effect.gen(function* () {
      const { reserveThenCharge, undone } = checkout()
      const first = yield* Saga.run("late", reserveThenCharge).pipe(Effect.provide(chargeUnknown))
      assert(first._tag === "NeedsAttention")
      const stepId = first.unknown[0]!.stepId
      const report = yield* Saga.compensate("late")
      expect(report.status).toBe("compensation_failed")
      expect(undone).toEqual(["reserve"])
      const before = yield* entriesOf("late")
      const refused = yield* Effect.flip(
        Saga.resolve("late", stepId, { outcome: "applied", by: "carol", result: "ch-4200" })
      )
      expect(refused._tag).toBe("CommandRefused")
      expect(refused.message).toContain("out of reverse order")
      expect(refused.message).toContain(`undo its effect by hand (idempotency key late/${stepId})`)
      expect(yield* entriesOf("late")).toEqual(before)
      // The charge is never undone after the reservation was released.
      yield* Effect.ignore(Saga.compensate("late"))
      expect(undone).toEqual(["reserve"])
      yield* Saga.resolve("late", stepId, { outcome: "not-applied", by: "carol" })
      expect((yield* entriesOf("late")).at(-1)!.phase).toBe("FAILED")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("applied and undone by hand: journaled so at once, and a compensation again never runs its undo", () =>
    Effect.gen(function* () {
      const { reserveThenCharge, undone } = checkout()
      const first = yield* Saga.run("late-2", reserveThenCharge).pipe(Effect.provide(chargeUnknown))
      assert(first._tag === "NeedsAttention")
      const stepId = first.unknown[0]!.stepId
      expect((yield* Saga.compensate("late-2")).status).toBe("compensation_failed")
      const badResult = yield* Effect.flip(
        Saga.resolve("late-2", stepId, { outcome: "applied", by: "carol", result: 12, undone: true })
      )
      expect(badResult.message).toContain("does not fit the tool's success schema")
      // A result of megabytes is quoted cut, as a journaled reason is: the refusal stays readable.
      const huge = yield* Effect.flip(
        Saga.resolve("late-2", stepId, {
          outcome: "applied",
          by: "carol",
          result: { a: "x".repeat(1_000_000) },
          undone: true
        })
      )
      assert(huge._tag === "CommandRefused")
      expect(huge.reason).toMatch(
        /^the result does not fit the tool's success schema: Expected string, actual \{"a":"x+…$/
      )
      expect(huge.reason.length).toBeLessThan(1100)
      const before = (yield* entriesOf("late-2")).length
      const { written } = yield* Saga.withWrites(
        Saga.resolve("late-2", stepId, { outcome: "applied", by: "carol", result: "ch-4200", undone: true })
      )
      expect(written).toBe(2)
      const journaled = (yield* entriesOf("late-2")).slice(before)
      expect(journaled.map((entry) => [entry.stepId, entry.phase, Timeline.detailOf(entry)])).toEqual([
        [stepId, "EXECUTED", 'result "ch-4200"; resolved as applied by carol'],
        [stepId, "COMPENSATED", "resolved as undone by carol"]
      ])
      expect((yield* Saga.status("late-2")).steps.find((step) => step.stepId === stepId)).toMatchObject({
        state: "executed",
        undo: "completed",
        undoDetail: "resolved as undone by carol"
      })
      // The same resolution again writes nothing; the same without `undone` says otherwise: a conflict.
      const again = yield* Saga.withWrites(
        Saga.resolve("late-2", stepId, { outcome: "applied", by: "carol", result: "ch-4200", undone: true })
      )
      expect(again.written).toBe(0)
      const plain = yield* Effect.flip(
        Saga.resolve("late-2", stepId, { outcome: "applied", by: "carol", result: "ch-4200" })
      )
      expect(plain).toMatchObject({
        _tag: "CommandConflict",
        answer: "resolved as applied and undone by hand by carol"
      })
      const report = yield* Saga.compensate("late-2")
      expect(report.status).toBe("compensated")
      expect(undone).toEqual(["reserve"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("undone before the saga began to compensate is refused, nothing written", () =>
    Effect.gen(function* () {
      const { reserveThenCharge } = checkout()
      const first = yield* Saga.run("early-2", reserveThenCharge).pipe(Effect.provide(chargeUnknown))
      assert(first._tag === "NeedsAttention")
      const stepId = first.unknown[0]!.stepId
      const before = yield* entriesOf("early-2")
      const refused = yield* Effect.flip(
        Saga.resolve("early-2", stepId, { outcome: "applied", by: "carol", result: "ch-4200", undone: true })
      )
      assert(refused._tag === "CommandRefused")
      expect(refused.reason).toContain("the saga has not begun to compensate")
      // `undone` with not-applied is in no type; sent all the same, it is refused, not dropped.
      const untyped = { outcome: "not-applied", by: "carol", undone: true } as unknown as Saga.Resolution
      const notApplied = yield* Effect.flip(Saga.resolve("early-2", stepId, untyped))
      expect(notApplied).toMatchObject({ _tag: "CommandRefused" })
      expect(yield* entriesOf("early-2")).toEqual(before)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "takes --applied while nothing before the unknown step was undone (a step with no undo is passed over)",
    () =>
      Effect.gen(function* () {
        const { notifyThenCharge, undone } = checkout()
        const first = yield* Saga.run("early", notifyThenCharge).pipe(Effect.provide(chargeUnknown))
        assert(first._tag === "NeedsAttention")
        const stepId = first.unknown[0]!.stepId
        expect((yield* Saga.compensate("early")).status).toBe("compensation_failed")
        yield* Saga.resolve("early", stepId, { outcome: "applied", by: "carol", result: "ch-4200" })
        // Every reader of the journal says who resolved it, as a resolution as not applied does.
        const resolved = (yield* entriesOf("early")).at(-1)!
        expect(Timeline.detailOf(resolved)).toBe('result "ch-4200"; resolved as applied by carol')
        const report = yield* Saga.compensate("early")
        expect(report.undone.map((step) => [step.toolName, step.outcome])).toEqual([
          ["charge", "completed"],
          ["notify", "skipped"]
        ])
        expect(undone).toEqual(["charge"])
      }).pipe(Effect.provide(Testing.layer))
  )
})

const chargeUndoUnknown = Testing.faults({ tool: "charge", on: "compensate", at: 1, fault: "unknown" })

/** A completed saga whose charge was undone on request (`compensateEffect`), the undo answering unknown. */
const unknownExplicitUndo = (sagaId: string) =>
  Effect.gen(function* () {
    const { reserveThenCharge, undone } = checkout()
    const done = yield* Saga.run(sagaId, reserveThenCharge).pipe(Effect.provide(chargeUndoUnknown))
    expect(done._tag).toBe("Completed")
    const charge = (yield* Saga.status(sagaId)).steps.find((step) => step.toolName === "charge")!
    const answer = yield* Saga.compensateEffect(charge.effectId)
    expect(answer).toMatchObject({ _tag: "Settled", outcome: "unknown" })
    const runId = `${charge.effectId}/compensate-effect`
    expect((yield* Saga.status(runId)).status).toBe("needs_attention")
    return { undone, charge, runId }
  })

describe("Saga.resolve of an explicit undo that answered unknown", () => {
  it.effect(
    "not undone: the run answers failed and is completed, and the saga's own compensation undoes the effect",
    () =>
      Effect.gen(function* () {
        const { charge, runId, undone } = yield* unknownExplicitUndo("x-not")
        const refusedResult = yield* Effect.flip(
          Saga.resolve(runId, charge.stepId, { outcome: "applied", by: "carol", result: "x" })
        )
        expect(refusedResult._tag).toBe("CommandRefused")
        yield* Saga.resolve(runId, charge.stepId, { outcome: "not-applied", by: "carol" })
        // An operator answered it: nothing is left to do with the run (its answer says the effect stays).
        expect((yield* Saga.status(runId)).status).toBe("completed")
        const revision = (yield* Saga.status(runId)).revision
        // The same resolution again is a pure read; another one is a conflict.
        yield* Saga.resolve(runId, charge.stepId, { outcome: "not-applied", by: "carol" })
        const other = yield* Effect.flip(Saga.resolve(runId, charge.stepId, { outcome: "not-applied", by: "dave" }))
        expect(other).toMatchObject({ _tag: "CommandConflict", answer: "resolved as not undone by carol" })
        expect((yield* Saga.status(runId)).revision).toBe(revision)
        expect(yield* Saga.compensateEffect(charge.effectId)).toMatchObject({
          _tag: "Settled",
          outcome: "failed",
          detail: "resolved as not undone by carol"
        })
        const report = yield* Saga.compensate("x-not")
        expect(report.status).toBe("compensated")
        expect(undone).toEqual(["charge", "charge", "reserve"])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("undone: the run answers completed, the saga takes it over, and both can be pruned", () =>
    Effect.gen(function* () {
      const { charge, runId, undone } = yield* unknownExplicitUndo("x-done")
      yield* Saga.resolve(runId, charge.stepId, { outcome: "applied", by: "carol" })
      expect((yield* Saga.status(runId)).status).toBe("completed")
      const report = yield* Saga.compensate("x-done")
      expect(report.status).toBe("compensated")
      expect(report.undone.map((step) => [step.toolName, step.outcome])).toEqual([
        ["charge", "completed"],
        ["reserve", "completed"]
      ])
      expect(undone).toEqual(["charge", "reserve"])
      const journal = yield* Journal.Journal
      expect(yield* journal.countOpen()).toMatchObject({ needs_attention: 0 })
      expect([...(yield* journal.prune("2099-01-01T00:00:00Z"))].sort()).toEqual([runId, "x-done"].sort())
      const again = yield* Effect.flip(Saga.resolve(runId, charge.stepId, { outcome: "applied", by: "carol" }))
      expect(again._tag).toBe("SagaNotFound")
    }).pipe(Effect.provide(Testing.layer))
  )
})

/** reserve, then a charge whose undo needs the receipt the provider gave (`receipts`: what each undo got). */
const withReceipt = () => {
  const receipts: Array<string> = []
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
    receiptRequired: true,
    execute: (amount, step) => Effect.as(step.setReceipt(`rcpt-${amount}`), `ch-${amount}`),
    compensate: (ctx) =>
      Effect.sync(() => receipts.push(Option.match(ctx.receipt, { onNone: () => "none", onSome: Redacted.value })))
  })
  return { receipts, program: Effect.zipRight(reserve("A-1"), charge(4200)) }
}

const K1 = Keys.generate("k1")
const withKeys = (keys: string) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map([[Keys.RECEIPT_KEYS, keys]])))

describe("Saga.resolve as applied with the provider's receipt", () => {
  it.effect("journals the receipt sealed, never in the clear; the undo gets it; a replay must give the same one", () =>
    Effect.gen(function* () {
      const { program, receipts } = withReceipt()
      const first = yield* Saga.run("rcpt", program).pipe(Effect.provide(chargeUnknown))
      assert(first._tag === "NeedsAttention")
      const stepId = first.unknown[0]!.stepId
      const secret = "rcpt-secret-from-the-provider"
      const resolution = { outcome: "applied", by: "carol", result: "ch-4200", receipt: Redacted.make(secret) } as const
      yield* Saga.resolve("rcpt", stepId, resolution)
      const executed = (yield* entriesOf("rcpt")).at(-1)!
      expect(executed.phase).toBe("EXECUTED")
      expect(executed.payload).not.toContain(secret)
      expect(JSON.parse(executed.payload!).receipt).toMatchObject({ sealed: "aes-256-gcm", kid: "k1" })
      const revision = (yield* Saga.status("rcpt")).revision
      yield* Saga.resolve("rcpt", stepId, resolution)
      expect((yield* Saga.status("rcpt")).revision).toBe(revision)
      const without = yield* Effect.flip(Saga.resolve("rcpt", stepId, { ...resolution, receipt: undefined }))
      expect(without._tag).toBe("CommandConflict")
      const other = yield* Effect.flip(Saga.resolve("rcpt", stepId, { ...resolution, receipt: Redacted.make("x") }))
      expect(other._tag).toBe("CommandConflict")
      expect((yield* Saga.status("rcpt")).revision).toBe(revision)
      const report = yield* Saga.compensate("rcpt")
      expect(report.status).toBe("compensated")
      expect(receipts).toEqual([secret])
    }).pipe(Effect.provide(Testing.layer), withKeys(K1))
  )

  it.effect("asked again in a process that cannot open that receipt, it says so, not that the command differs", () =>
    Effect.gen(function* () {
      const filename = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-saga-resolve-")), "sagas.db")
      const process = () => Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))
      const { program } = withReceipt()
      const resolution = { outcome: "applied", by: "carol", result: "ch-4200", receipt: Redacted.make("r-1") } as const
      const stepId = yield* Effect.gen(function* () {
        const first = yield* Saga.run("rcpt-k", program)
        assert(first._tag === "NeedsAttention")
        const stepId = first.unknown[0]!.stepId
        yield* Saga.resolve("rcpt-k", stepId, resolution)
        return stepId
      }).pipe(Effect.provide(Layer.merge(process(), chargeUnknown)), withKeys(K1))
      const refused = yield* Effect.flip(
        Saga.resolve("rcpt-k", stepId, resolution).pipe(Effect.provide(process()), withKeys(Keys.generate("k2")))
      )
      expect(refused._tag).toBe("CommandConflict")
      expect(refused.message).toContain("its receipt cannot be opened (EFFECT_SAGA_RECEIPT_KEYS)")
      expect(refused.message).toContain("this process cannot tell whether it is the same receipt")
    })
  )

  it.effect("an empty receipt is refused: an undo could not use it", () =>
    Effect.gen(function* () {
      const { program } = withReceipt()
      const first = yield* Saga.run("empty-rcpt", program).pipe(Effect.provide(chargeUnknown))
      assert(first._tag === "NeedsAttention")
      const refused = yield* Effect.flip(
        Saga.resolve("empty-rcpt", first.unknown[0]!.stepId, {
          outcome: "applied",
          by: "carol",
          result: "ch-4200",
          receipt: Redacted.make("")
        })
      )
      expect(refused).toMatchObject({
        _tag: "CommandRefused",
        reason: "the receipt is empty: give the provider's receipt, or none"
      })
      expect((yield* entriesOf("empty-rcpt")).at(-1)!.phase).toBe("SAGA_NEEDS_ATTENTION")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a receipt over the tool's maxPayloadBytes is refused, and never repeated", () =>
    Effect.gen(function* () {
      const { program } = withReceipt()
      const first = yield* Saga.run("big-rcpt", program).pipe(Effect.provide(chargeUnknown))
      assert(first._tag === "NeedsAttention")
      const stepId = first.unknown[0]!.stepId
      const huge = "r".repeat(1024 * 1024 + 1)
      const refused = yield* Effect.flip(
        Saga.resolve("big-rcpt", stepId, {
          outcome: "applied",
          by: "carol",
          result: "ch-4200",
          receipt: Redacted.make(huge)
        })
      )
      expect(refused).toMatchObject({
        _tag: "CommandRefused",
        reason: "the receipt is 1048577 bytes, over the tool's maxPayloadBytes of 1048576"
      })
      expect((yield* entriesOf("big-rcpt")).at(-1)!.phase).toBe("SAGA_NEEDS_ATTENTION")
    }).pipe(Effect.provide(Testing.layer), withKeys(K1))
  )

  it.effect("without a receipt for a tool that requires one, the resolution is journaled and a warning says so", () =>
    Effect.gen(function* () {
      const warnings: Array<string> = []
      const { program } = withReceipt()
      const first = yield* Saga.run("no-rcpt", program).pipe(Effect.provide(chargeUnknown))
      assert(first._tag === "NeedsAttention")
      const stepId = first.unknown[0]!.stepId
      yield* Saga.resolve("no-rcpt", stepId, { outcome: "applied", by: "carol", result: "ch-4200" }).pipe(
        Effect.provide(
          Logger.add(
            Logger.make(({ logLevel, message }) => {
              if (logLevel._tag === "Warning") warnings.push(String(message))
            })
          )
        )
      )
      expect(warnings.join("\n")).toContain("declares receiptRequired: its effect can never be undone")
    }).pipe(Effect.provide(Testing.layer), withKeys(K1))
  )

  it.effect("a process that never saw the tool reads from the journal that its undo needs a receipt, and warns", () =>
    Effect.gen(function* () {
      const filename = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-saga-resolve-")), "sagas.db")
      const process = () => Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))
      const { program } = withReceipt()
      const first = yield* Saga.run("no-rcpt-2", program).pipe(Effect.provide(Layer.merge(process(), chargeUnknown)))
      assert(first._tag === "NeedsAttention")
      const stepId = first.unknown[0]!.stepId
      // An operator's process: the tool is not registered here.
      const warnings: Array<string> = []
      const status = yield* Effect.gen(function* () {
        const seen = (yield* Saga.status("no-rcpt-2")).steps.find((step) => step.stepId === stepId)!
        yield* Saga.resolve("no-rcpt-2", stepId, { outcome: "applied", by: "carol", result: "ch-4200" })
        return seen
      }).pipe(
        Effect.provide(process()),
        Effect.provide(
          Logger.add(
            Logger.make(({ logLevel, message }) => {
              if (logLevel._tag === "Warning") warnings.push(String(message))
            })
          )
        )
      )
      expect(status).toMatchObject({ state: "unknown", receiptRequired: true, unknownReason: first.unknown[0]!.reason })
      expect(warnings.join("\n")).toContain("declares receiptRequired: its effect can never be undone")
      const reserve = (yield* Saga.status("no-rcpt-2").pipe(Effect.provide(process()))).steps[0]!
      expect(reserve.receiptRequired).toBeUndefined()
    })
  )
})

describe("Saga.resolve of a step whose outcome the journal knows", () => {
  const refuse = Compensable.make({
    name: "refuse",
    input: Schema.String,
    success: Schema.String,
    execute: () => Effect.fail(Outcome.failed("declined by the provider")),
    compensate: () => Effect.void
  })

  it.effect("says what the journal holds (executed, failed), not only that it is not unknown; writes nothing", () =>
    Effect.gen(function* () {
      const { reserveThenCharge } = checkout()
      expect((yield* Saga.run("known-ok", reserveThenCharge))._tag).toBe("Completed")
      const charge = (yield* Saga.status("known-ok")).steps.find((step) => step.toolName === "charge")!
      const before = yield* entriesOf("known-ok")
      const executed = yield* Effect.flip(
        Saga.resolve("known-ok", charge.stepId, { outcome: "not-applied", by: "carol" })
      )
      expect(executed).toMatchObject({
        _tag: "CommandRefused",
        reason: "its outcome is known: it executed (EXECUTED is journaled), so there is nothing to resolve"
      })
      expect(yield* entriesOf("known-ok")).toEqual(before)

      expect((yield* Saga.run("known-failed", refuse("x")))._tag).toBe("Compensated")
      const failed = (yield* Saga.status("known-failed")).steps[0]!
      const refused = yield* Effect.flip(
        Saga.resolve("known-failed", failed.stepId, { outcome: "applied", by: "carol" })
      )
      expect(refused).toMatchObject({
        _tag: "CommandRefused",
        reason: "its outcome is known: it failed (FAILED is journaled), so there is nothing to resolve"
      })
    }).pipe(Effect.provide(Testing.layer))
  )
})
