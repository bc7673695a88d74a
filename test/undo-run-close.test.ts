/**
 * Closing the run of an explicit undo that ended `compensation_failed` (its undo failed, was
 * rejected, was partial, or could not run): `Saga.resolve(runId, stepId, …)` says the effect is
 * undone now (`applied`: the run answers `completed`) or stays as it is, knowingly (`not-applied`:
 * the run keeps its answer). Either way the run ends `completed`: it no longer counts as open, and
 * the saga's own compensation takes its answer over as before. On every store the tests can reach.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { Approval, Compensable, Journal, Outcome, Saga } from "../src/index.js"
import { entriesOf } from "./fixtures/journal-reads.js"
import { storesWherePossible } from "./fixtures/three-stores.js"

const stores = await storesWherePossible("effect-saga-undo-run-close")

/** The undos that ran, in order. */
const undone: Array<string> = []
/** How many more times the refund's undo fails before it works. */
let refundFailures = 0

/** A room whose cancellation needs a human's approval. */
const room = Compensable.make({
  name: "room",
  input: Schema.String,
  success: Schema.String,
  approveExplicitUndo: true,
  execute: (name) => Effect.succeed(`room-${name}`),
  compensate: () => Effect.sync(() => undone.push("room"))
})

/** A payment whose refund the bank refuses while `refundFailures` lasts. */
const refund = Compensable.make({
  name: "pay",
  input: Schema.Int,
  success: Schema.String,
  execute: (amount) => Effect.succeed(`pay-${amount}`),
  compensate: () =>
    refundFailures-- > 0
      ? Effect.fail(Outcome.failed("the bank refused the refund"))
      : Effect.sync(() => undone.push("pay"))
})

/** Seats released in part. */
const seats = Compensable.make({
  name: "seats",
  input: Schema.Int,
  success: Schema.String,
  execute: (count) => Effect.succeed(`seats-${count}`),
  compensate: () => Effect.fail(Outcome.partial("2 of 3 seats still held"))
})

/** A hold released by the saga's compensation only once `released` is done (an explicit undo of it fails). */
let released: Deferred.Deferred<void> | undefined
let holdUndos = 0
const hold = Compensable.make({
  name: "hold",
  input: Schema.Int,
  success: Schema.String,
  execute: (amount) => Effect.succeed(`hold-${amount}`),
  compensate: () =>
    holdUndos++ === 0
      ? Effect.fail(Outcome.failed("the bank refused"))
      : Effect.andThen(Deferred.await(released!), () => undone.push("hold"))
})

/** A ping whose undo never hears back: unknown. */
const ping = Compensable.make({
  name: "ping",
  input: Schema.String,
  success: Schema.String,
  execute: (to) => Effect.succeed(`ping-${to}`),
  compensate: () => Effect.fail(Outcome.unknown("the carrier did not answer"))
})

/** A letter sent: no undo. */
const mail = Compensable.make({
  name: "mail",
  input: Schema.String,
  success: Schema.String,
  execute: (to) => Effect.succeed(`mail-${to}`)
})

/** A completed saga of one step, and that step's effect id and run. */
const completed = <A, E>(sagaId: string, step: Effect.Effect<A, E, Saga.CurrentSaga>) =>
  Effect.gen(function* () {
    expect((yield* Saga.run(sagaId, step))._tag).toBe("Completed")
    const only = (yield* Saga.status(sagaId)).steps[0]!
    return { stepId: only.stepId, effectId: only.effectId, runId: `${only.effectId}/compensate-effect` }
  })

/** How many sagas and runs are open `compensation_failed`. */
const dirtyCount = Effect.map(
  Effect.flatMap(Journal.Journal, (journal) => journal.countOpen()),
  (counts) => counts.compensation_failed
)

for (const [name, store] of stores) {
  describe(`closing an explicit undo's run that ended compensation_failed: ${name}`, () => {
    const provided = <A, E>(effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>) =>
      effect.pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))

    it.effect("a rejected undo kept as decided: not-applied closes the run, the effect stays", () =>
      provided(
        Effect.gen(function* () {
          undone.length = 0
          const { effectId, runId, stepId } = yield* completed("trip", room("sea view"))
          expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ _tag: "AwaitingApproval" })
          yield* Saga.reject(runId, stepId, { by: "alice", reason: "keep the room" })
          expect((yield* Saga.status(runId)).status).toBe("compensation_failed")
          expect(yield* dirtyCount).toBe(1)

          const { written } = yield* Saga.withWrites(Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob" }))
          expect(written).toBe(1)
          const detail = "resolved as not undone by bob (its answer was: rejected by alice: keep the room)"
          const run = yield* Saga.status(runId)
          expect(run.status).toBe("completed")
          expect(run.steps[0]).toMatchObject({ undo: "failed", undoDetail: detail })
          expect(yield* dirtyCount).toBe(0)
          expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ _tag: "Settled", outcome: "failed", detail })
          expect(undone).toEqual([])

          // The same resolution again writes nothing; another person's is a conflict.
          const again = yield* Saga.withWrites(Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob" }))
          expect(again.written).toBe(0)
          const other = yield* Effect.flip(Saga.resolve(runId, stepId, { outcome: "not-applied", by: "carol" }))
          expect(other).toMatchObject({ _tag: "CommandConflict", answer: detail })
          // The saga itself is untouched: it completed, and its step stays executed.
          expect((yield* Saga.status("trip")).status).toBe("completed")
        })
      )
    )

    it.effect("not-applied, then applied once the effect was undone by hand: the saga takes that over", () =>
      provided(
        Effect.gen(function* () {
          undone.length = 0
          const { effectId, runId, stepId } = yield* completed("trip-2", room("garden"))
          yield* Saga.compensateEffect(effectId)
          yield* Saga.reject(runId, stepId, { by: "alice", reason: "keep it" })
          yield* Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob" })
          yield* Saga.resolve(runId, stepId, { outcome: "applied", by: "bob" })
          const run = yield* Saga.status(runId)
          expect(run.status).toBe("completed")
          expect(run.steps[0]).toMatchObject({ undo: "completed", undoDetail: "resolved as undone by bob" })
          expect((yield* entriesOf(runId)).slice(-2).map((entry) => entry.phase)).toEqual([
            "COMPENSATED",
            "SAGA_COMPLETED"
          ])
          // Undone now: not-applied again says otherwise, a conflict.
          const back = yield* Effect.flip(Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob" }))
          expect(back).toMatchObject({ _tag: "CommandConflict", answer: "resolved as undone by bob" })
          const report = yield* Saga.compensate("trip-2")
          expect(report.status).toBe("compensated")
          expect(report.undone).toMatchObject([
            { outcome: "completed", detail: "by compensateEffect: resolved as undone by bob" }
          ])
          expect(undone).toEqual([])
        })
      )
    )

    it.effect("an undo that failed: applied closes it; a result or a receipt is refused, nothing written", () =>
      provided(
        Effect.gen(function* () {
          refundFailures = 1
          const { effectId, runId, stepId } = yield* completed("pay-1", refund(40))
          expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ outcome: "failed" })
          const before = yield* entriesOf(runId)
          const withResult = yield* Effect.flip(
            Saga.resolve(runId, stepId, { outcome: "applied", by: "bob", result: "x" })
          )
          assert(withResult._tag === "CommandRefused")
          expect(withResult.reason).toContain("takes no result or receipt")
          expect(yield* entriesOf(runId)).toEqual(before)
          const wrong = yield* Effect.flip(Saga.resolve(runId, "nope", { outcome: "applied", by: "bob" }))
          expect(wrong).toMatchObject({ _tag: "CommandRefused", reason: "the run has no such step" })
          yield* Saga.resolve(runId, stepId, { outcome: "applied", by: "bob" })
          expect((yield* Saga.status(runId)).status).toBe("completed")
          expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ outcome: "completed" })
        })
      )
    )

    it.effect("an undo that failed, kept: the saga's own compensation still undoes the effect itself", () =>
      provided(
        Effect.gen(function* () {
          undone.length = 0
          refundFailures = 1
          const { effectId, runId, stepId } = yield* completed("pay-2", refund(41))
          yield* Saga.compensateEffect(effectId)
          yield* Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob" })
          // The run's step says what its answer says: closed, and what the undo answered.
          expect((yield* Saga.status(runId)).steps[0]).toMatchObject({
            undo: "failed",
            undoDetail:
              "resolved as not undone by bob (its answer was: failed (not applied): the bank refused the refund)"
          })
          expect((yield* Saga.compensateEffect(effectId)) as unknown).toMatchObject({
            outcome: "failed",
            detail: "resolved as not undone by bob (its answer was: failed (not applied): the bank refused the refund)"
          })
          expect((yield* Saga.compensate("pay-2")).status).toBe("compensated")
          expect(undone).toEqual(["pay"])
        })
      )
    )

    it.effect("once the saga's own compensation undid the effect, not-applied is refused: applied closes it", () =>
      provided(
        Effect.gen(function* () {
          undone.length = 0
          refundFailures = 1
          const { effectId, runId, stepId } = yield* completed("pay-4", refund(43))
          expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ outcome: "failed" })
          expect((yield* Saga.compensate("pay-4")).status).toBe("compensated")
          expect(undone).toEqual(["pay"])
          const before = yield* entriesOf(runId)
          const kept = yield* Effect.flip(Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob" }))
          assert(kept._tag === "CommandRefused")
          expect(kept.reason).toBe(
            "the saga's own compensation has undone the effect since (COMPENSATED): it is not in place; close the run applied"
          )
          expect(yield* entriesOf(runId)).toEqual(before)
          yield* Saga.resolve(runId, stepId, { outcome: "applied", by: "bob" })
          expect((yield* Saga.status(runId)).status).toBe("completed")
          expect(undone).toEqual(["pay"])
        })
      )
    )

    it.effect("while the saga's own compensation undoes the effect, not-applied is refused; applied closes it", () =>
      provided(
        Effect.gen(function* () {
          undone.length = 0
          holdUndos = 0
          released = yield* Deferred.make<void>()
          const { effectId, runId, stepId } = yield* completed("hold-1", hold(5))
          expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ outcome: "failed" })
          const compensating = yield* Effect.fork(Saga.compensate("hold-1"))
          // Until the saga journals its undo's COMPENSATING.
          while ((yield* Saga.status("hold-1")).steps[0]!.undo !== "started") yield* Effect.yieldNow()
          const during = yield* Effect.flip(Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob" }))
          assert(during._tag === "CommandRefused")
          expect(during.reason).toBe(
            "the saga's own compensation began to undo the effect and its outcome is not journaled yet (it may still run): it may not be in place; once the saga says how its undo ended (effect-saga show), close the run"
          )
          yield* Deferred.succeed(released, undefined)
          expect((yield* Fiber.join(compensating)).status).toBe("compensated")
          expect(undone).toEqual(["hold"])
          yield* Saga.resolve(runId, stepId, { outcome: "applied", by: "bob" })
          expect((yield* Saga.status(runId)).status).toBe("completed")
        })
      )
    )

    it.effect("a run that answered the saga's own unknown undo: refused kept until the saga says, then closed", () =>
      provided(
        Effect.gen(function* () {
          const { effectId, runId, stepId } = yield* completed("ping-1", ping("acme"))
          expect((yield* Saga.compensate("ping-1")).status).toBe("compensation_failed")
          expect(yield* Saga.compensateEffect(effectId)).toMatchObject({
            outcome: "unknown",
            detail: "settled by the saga's compensation"
          })
          expect((yield* Saga.status(runId)).status).toBe("needs_attention")
          const unknownYet = yield* Effect.flip(Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob" }))
          expect(unknownYet).toMatchObject({ _tag: "CommandRefused" })
          expect((unknownYet as { reason: string }).reason).toContain("its outcome is unknown")
          // Nor applied: the saga's step says how its undo ended first, and the run then says the same.
          const appliedYet = yield* Effect.flip(Saga.resolve(runId, stepId, { outcome: "applied", by: "bob" }))
          expect(appliedYet).toMatchObject({
            _tag: "CommandRefused",
            reason: `this run answers with the saga's own undo of ${stepId}, which the saga's journal does not say is undone: resolve it in the saga first (effect-saga show ping-1 says how), then close this run the same way`
          })
          // The saga's step resolved first (undone by hand), then the run the same way.
          yield* Saga.resolve("ping-1", stepId, { outcome: "applied", by: "bob" })
          yield* Saga.resolve(runId, stepId, { outcome: "applied", by: "bob" })
          expect((yield* Saga.status(runId)).status).toBe("completed")
          expect((yield* Saga.compensate("ping-1")).status).toBe("compensated")
          const open = yield* Effect.flatMap(Journal.Journal, (journal) => journal.countOpen())
          expect(open).toMatchObject({ needs_attention: 0, compensation_failed: 0 })
        })
      )
    )

    it.effect("the same close from a position the run never held is ConcurrencyConflict, not a replay", () =>
      provided(
        Effect.gen(function* () {
          refundFailures = 1
          const { effectId, runId, stepId } = yield* completed("pay-6", refund(45))
          yield* Saga.compensateEffect(effectId)
          const before = yield* Saga.status(runId)
          const seen = { revision: before.revision, digest: before.digest }
          yield* Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob", ...seen })
          const after = yield* Saga.status(runId)
          // From where it was first sent, from where the run is now, or from none: a replay.
          for (const at of [seen, { revision: after.revision, digest: after.digest }, {}]) {
            const again = yield* Saga.withWrites(
              Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob", ...at })
            )
            expect(again.written).toBe(0)
          }
          const elsewhere = yield* Effect.flip(
            Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob", revision: 999, digest: seen.digest })
          )
          expect(elsewhere._tag).toBe("ConcurrencyConflict")
          expect((yield* Saga.status(runId)).revision).toBe(after.revision)
        })
      )
    )

    it.effect("undone (a call's resolution) is refused on a run, whichever the outcome, nothing written", () =>
      provided(
        Effect.gen(function* () {
          refundFailures = 1
          const { effectId, runId, stepId } = yield* completed("pay-5", refund(44))
          yield* Saga.compensateEffect(effectId)
          const before = yield* entriesOf(runId)
          const withUndone = yield* Effect.flip(
            Saga.resolve(runId, stepId, { outcome: "applied", by: "bob", undone: true })
          )
          expect(withUndone).toMatchObject({
            _tag: "CommandRefused",
            reason: "undone does not go with the resolution of an undo: applied alone says the effect is undone now"
          })
          const untyped = { outcome: "not-applied", by: "bob", undone: true } as unknown as Saga.Resolution
          expect(yield* Effect.flip(Saga.resolve(runId, stepId, untyped))).toMatchObject({ _tag: "CommandRefused" })
          expect(yield* entriesOf(runId)).toEqual(before)
        })
      )
    )

    it.effect("a partial undo: not-applied is refused (part of it is undone), applied closes it", () =>
      provided(
        Effect.gen(function* () {
          const { effectId, runId, stepId } = yield* completed("seats-1", seats(3))
          expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ outcome: "partial" })
          const refused = yield* Effect.flip(Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob" }))
          assert(refused._tag === "CommandRefused")
          expect(refused.reason).toContain("undo the rest by hand, then resolve it applied")
          expect((yield* Saga.status(runId)).status).toBe("compensation_failed")
          yield* Saga.resolve(runId, stepId, { outcome: "applied", by: "bob" })
          expect((yield* Saga.status(runId)).status).toBe("completed")
        })
      )
    )

    it.effect("no undo declared (unavailable, no step journaled in the run): either way closes it", () =>
      provided(
        Effect.gen(function* () {
          const { effectId, runId, stepId } = yield* completed("mail-1", mail("a@example.com"))
          expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ outcome: "unavailable" })
          expect((yield* entriesOf(runId)).map((entry) => entry.phase)).toEqual([
            "SAGA_STARTED",
            "SAGA_COMPENSATION_FAILED"
          ])
          yield* Saga.resolve(runId, stepId, { outcome: "not-applied", by: "bob" })
          const run = yield* Saga.status(runId)
          expect(run.status).toBe("completed")
          expect(run.steps[0]).toMatchObject({ stepId, undo: "unavailable" })
          expect(run.steps[0]!.undoDetail).toMatch(/^resolved as not undone by bob \(its answer was: /)
        })
      )
    )

    it.effect(
      "a run awaiting approval whose effect the saga's compensation undid since answers so and withdraws its request",
      () =>
        provided(
          Effect.gen(function* () {
            undone.length = 0
            const { effectId, runId, stepId } = yield* completed("trip-w", room("garden"))
            expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ _tag: "AwaitingApproval" })
            const waiting = (pending: ReadonlyArray<{ readonly sagaId: string }>) =>
              pending.filter((request) => request.sagaId === runId).length
            expect(waiting(yield* Approval.pending)).toBe(1)
            expect((yield* Saga.compensate("trip-w")).status).toBe("compensated")
            expect(undone).toEqual(["room"])

            const answer = yield* Saga.compensateEffect(effectId)
            expect(answer).toMatchObject({
              _tag: "Settled",
              outcome: "completed",
              detail: "settled by the saga's compensation"
            })
            const reason = "withdrawn: the saga's own compensation settled this effect before its undo was approved"
            const phases = (yield* entriesOf(runId)).map((entry) => entry.phase)
            expect(phases.slice(-2)).toEqual(["REJECTED", "SAGA_COMPLETED"])
            expect(waiting(yield* Approval.pending)).toBe(0)
            const approving = yield* Effect.flip(Saga.approve(runId, stepId, { by: "alice" }))
            expect(approving).toMatchObject({ _tag: "CommandConflict", answer: reason })
            // Asked again, a pure read: nothing more is written, and the undo ran once.
            expect((yield* Saga.withWrites(Saga.compensateEffect(effectId))).written).toBe(0)
            expect(undone).toEqual(["room"])
          })
        )
    )

    it.effect(
      "a crash between a run's withdrawal and the approval store: asked again, the run drops its request there",
      () => {
        // The approval store is cut off while the run withdraws, as a crash between the two would leave it.
        let cutOff = true
        const flaky = Layer.effect(
          Approval.Approval,
          Effect.map(Approval.Approval, (approval) =>
            Approval.Approval.of({
              ...approval,
              reject: (requestId, decision) =>
                cutOff
                  ? Effect.fail(new Journal.JournalError({ operation: "reject", reason: "the host died" }))
                  : approval.reject(requestId, decision)
            })
          )
        )
        const layer = Saga.layer.pipe(Layer.provideMerge(flaky.pipe(Layer.provideMerge(store()))))
        return Effect.gen(function* () {
          const { effectId, runId } = yield* completed("trip-c", room("loft"))
          expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ _tag: "AwaitingApproval" })
          expect((yield* Saga.compensate("trip-c")).status).toBe("compensated")
          expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ _tag: "Settled", outcome: "completed" })
          const waiting = Effect.map(
            Approval.pending,
            (pending) => pending.filter((request) => request.sagaId === runId).length
          )
          // Journaled REJECTED, but still pending in the store.
          expect((yield* entriesOf(runId)).map((entry) => entry.phase).slice(-2)).toEqual([
            "REJECTED",
            "SAGA_COMPLETED"
          ])
          expect(yield* waiting).toBe(1)
          cutOff = false
          expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ _tag: "Settled", outcome: "completed" })
          expect(yield* waiting).toBe(0)
        }).pipe(Effect.provide(layer))
      }
    )

    it.effect("a run with nothing to resolve is refused: its undo completed, or it awaits approval", () =>
      provided(
        Effect.gen(function* () {
          refundFailures = 0
          const done = yield* completed("pay-3", refund(42))
          expect(yield* Saga.compensateEffect(done.effectId)).toMatchObject({ outcome: "completed" })
          const finished = yield* Effect.flip(
            Saga.resolve(done.runId, done.stepId, { outcome: "not-applied", by: "bob" })
          )
          expect(finished).toMatchObject({
            _tag: "CommandRefused",
            reason: "the undo completed (the run is completed): there is nothing to resolve"
          })
          const waiting = yield* completed("trip-3", room("attic"))
          yield* Saga.compensateEffect(waiting.effectId)
          const early = yield* Effect.flip(
            Saga.resolve(waiting.runId, waiting.stepId, { outcome: "applied", by: "bob" })
          )
          expect(early).toMatchObject({
            _tag: "CommandRefused",
            reason: "the run has no answer to resolve yet (it is awaiting_approval)"
          })
        })
      )
    )
  })
}
