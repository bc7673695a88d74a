/**
 * `Saga.resolve` of a step whose undo a failed compensation left not undone (its undo failed, was
 * partial, answered unknown, or could not run): the operator cleaned up by hand, or found that the
 * undo did happen, and says so. `applied` journals `COMPENSATED` (`resolved as undone by WHO`),
 * `not-applied` (an unknown undo only) `COMPENSATION_FAILED`; the saga stays `compensation_failed`
 * until it is compensated again, which counts the step undone, never runs its undo again, and ends
 * the saga `compensated` once nothing else is dirty. On every store the tests can reach.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, Layer, Schema } from "effect"
import { type Approval, Compensable, type Journal, Outcome, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { cliInProcess } from "./fixtures/cli-in-process.js"
import { clientAs, serveOn } from "./fixtures/http-saga.js"
import { entriesOf, payloadOf } from "./fixtures/journal-reads.js"
import { reserveAndWire } from "./fixtures/reserve-wire.js"
import { storesWherePossible } from "./fixtures/three-stores.js"
import { onFile } from "./fixtures/worker-on-file.js"

const stores = await storesWherePossible("effect-saga-undo-resolve")

/** How many times each tool's undo ran. */
const undos = { book: 0, hold: 0, ship: 0 }

/** A booking the hotel never cancels: its undo always fails. */
const book = Compensable.make({
  name: "book",
  input: Schema.Struct({ room: Schema.String }),
  success: Schema.String,
  execute: ({ room }) => Effect.succeed(`booking-${room}`),
  compensate: () =>
    Effect.zipRight(
      Effect.sync(() => undos.book++),
      Effect.fail(Outcome.failed("the hotel refused to cancel"))
    )
})

/** A hold whose release nobody hears about: its undo answers unknown. */
const hold = Compensable.make({
  name: "hold",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: ({ amount }) => Effect.succeed(`hold-${amount}`),
  compensate: () =>
    Effect.zipRight(
      Effect.sync(() => undos.hold++),
      Effect.fail(Outcome.unknown("the bank did not answer"))
    )
})

/** A shipment recalled in part: its undo is partial. */
const ship = Compensable.make({
  name: "ship",
  input: Schema.Struct({ parcels: Schema.Int }),
  success: Schema.String,
  execute: ({ parcels }) => Effect.succeed(`ship-${parcels}`),
  compensate: () =>
    Effect.zipRight(
      Effect.sync(() => undos.ship++),
      Effect.fail(Outcome.partial("1 parcel is on its way"))
    )
})

/** A booking whose undo fails with a bare string worded as an operator's resolution. */
const mimic = Compensable.make({
  name: "mimic",
  input: Schema.Struct({ room: Schema.String }),
  success: Schema.String,
  execute: ({ room }) => Effect.succeed(`mimic-${room}`),
  compensate: () => Effect.fail("resolved as not undone by mallory")
})

/** Undos that answer unknown, and partial, in an operator's words. */
const mimicUnknown = Compensable.make({
  name: "mimicUnknown",
  input: Schema.String,
  success: Schema.String,
  execute: (room) => Effect.succeed(`unknown-${room}`),
  compensate: () => Effect.fail(Outcome.unknown("resolved as undone by mallory"))
})
const mimicPartial = Compensable.make({
  name: "mimicPartial",
  input: Schema.String,
  success: Schema.String,
  execute: (room) => Effect.succeed(`partial-${room}`),
  compensate: () => Effect.fail(Outcome.partial("resolved as undone by mallory"))
})

/** A call that fails for sure: the saga compensates what ran before it. */
const decline = Compensable.make({
  name: "decline",
  input: Schema.Struct({ why: Schema.String }),
  success: Schema.String,
  execute: ({ why }) => Effect.fail(Outcome.failed(why))
})

/** A charge whose outcome nobody hears: the saga needs attention. */
const charge = Compensable.make({
  name: "charge",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: () => Effect.fail(Outcome.unknown("the provider did not answer")),
  compensate: () => Effect.void
})

/** A call whose outcome nobody hears, and whose undo the provider refuses. */
const wire = Compensable.make({
  name: "wire",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: () => Effect.fail(Outcome.unknown("the bank did not answer")),
  compensate: () => Effect.fail(Outcome.failed("the bank refused the recall"))
})

/** The saga: `step` runs, then a call fails, and its compensation leaves `step`'s undo not undone. */
const failingAfter = <A, E, R>(step: Effect.Effect<A, E, R>) => Effect.zipRight(step, decline({ why: "card declined" }))

/** The id of the step that called `toolName`. */
const stepOf = (sagaId: string, toolName: string) =>
  Effect.map(Saga.status(sagaId), (status) => status.steps.find((step) => step.toolName === toolName)!.stepId)

/** A step's `[state, undo, undoDetail]` as `Saga.status` lists it. */
const undoShown = (sagaId: string, toolName: string) =>
  Effect.map(Saga.status(sagaId), (status) => {
    const step = status.steps.find((candidate) => candidate.toolName === toolName)!
    return [step.state, step.undo, step.undoDetail]
  })

/** How many entries the commands in `effect` wrote themselves. */
const writtenBy = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Saga.withWrites(effect), ({ written }) => written)

/** A run whose compensation leaves `toolName`'s undo not undone: the saga ends `compensation_failed`. */
const leftDirty = <A, E, R>(sagaId: string, step: Effect.Effect<A, E, R>, toolName: string) =>
  Effect.gen(function* () {
    yield* Saga.run(sagaId, failingAfter(step))
    expect((yield* Saga.status(sagaId)).status).toBe("compensation_failed")
    return yield* stepOf(sagaId, toolName)
  })

for (const [name, store] of stores) {
  describe(`resolving an undo a failed compensation left not undone: ${name}`, () => {
    const provided = <A, E>(effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>) =>
      effect.pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))

    it.effect(
      "an undo that always fails: resolved applied, a compensation again ends compensated without running it",
      () =>
        provided(
          Effect.gen(function* () {
            const sagaId = "failed-undo"
            const stepId = yield* leftDirty(sagaId, book({ room: "7" }), "book")
            const attempts = undos.book
            // As before the change: a compensation again runs nothing, and the saga stays dirty.
            expect((yield* Saga.compensate(sagaId)).status).toBe("compensation_failed")
            expect(undos.book).toBe(attempts)

            expect(yield* writtenBy(Saga.resolve(sagaId, stepId, { outcome: "applied", by: "oncall" }))).toBe(1)
            const resolved = (yield* entriesOf(sagaId)).at(-1)!
            expect([resolved.phase, resolved.stepId, payloadOf(resolved)]).toEqual([
              "COMPENSATED",
              stepId,
              { reason: "resolved as undone by oncall" }
            ])
            // Until it is compensated again, the saga stays as its compensation left it; the step reads undone.
            expect((yield* Saga.status(sagaId)).status).toBe("compensation_failed")
            expect(yield* undoShown(sagaId, "book")).toEqual(["executed", "completed", "resolved as undone by oncall"])

            // Asked again: nothing written; asked the other way: a conflict naming the first.
            expect(yield* writtenBy(Saga.resolve(sagaId, stepId, { outcome: "applied", by: "oncall" }))).toBe(0)
            const other = yield* Effect.flip(Saga.resolve(sagaId, stepId, { outcome: "applied", by: "mallory" }))
            expect(other).toMatchObject({ _tag: "CommandConflict", answer: "resolved as undone by oncall" })

            const report = yield* Saga.compensate(sagaId)
            expect(report.status).toBe("compensated")
            expect(report.undone).toEqual([
              { stepId, toolName: "book", outcome: "completed", detail: "resolved as undone by oncall" }
            ])
            expect(undos.book).toBe(attempts)
            const status = yield* Saga.status(sagaId)
            expect(status.status).toBe("compensated")
            expect(yield* undoShown(sagaId, "book")).toEqual(["executed", "completed", "resolved as undone by oncall"])
            // Once compensated, the same resolution is still a replay.
            expect(yield* writtenBy(Saga.resolve(sagaId, stepId, { outcome: "applied", by: "oncall" }))).toBe(0)
          })
        )
    )

    it.effect("an undo that answered unknown: resolved applied (it did happen), the saga ends compensated", () =>
      provided(
        Effect.gen(function* () {
          const sagaId = "unknown-undo-applied"
          const stepId = yield* leftDirty(sagaId, hold({ amount: 5 }), "hold")
          expect(yield* undoShown(sagaId, "hold")).toEqual(["executed", "unknown", "the bank did not answer"])
          const attempts = undos.hold
          yield* Saga.resolve(sagaId, stepId, { outcome: "applied", by: "oncall" })
          expect(yield* undoShown(sagaId, "hold")).toEqual(["executed", "completed", "resolved as undone by oncall"])
          expect((yield* Saga.compensate(sagaId)).status).toBe("compensated")
          expect(undos.hold).toBe(attempts)
        })
      )
    )

    it.effect("an undo that answered unknown: not-applied, then applied once undone by hand (a new resolution)", () =>
      provided(
        Effect.gen(function* () {
          const sagaId = "unknown-undo-not-applied"
          const stepId = yield* leftDirty(sagaId, hold({ amount: 6 }), "hold")
          const attempts = undos.hold
          expect(yield* writtenBy(Saga.resolve(sagaId, stepId, { outcome: "not-applied", by: "oncall" }))).toBe(1)
          const resolved = (yield* entriesOf(sagaId)).at(-1)!
          expect([resolved.phase, payloadOf(resolved)]).toEqual([
            "COMPENSATION_FAILED",
            { reason: "resolved as not undone by oncall" }
          ])
          expect(yield* undoShown(sagaId, "hold")).toEqual(["executed", "failed", "resolved as not undone by oncall"])
          expect(yield* writtenBy(Saga.resolve(sagaId, stepId, { outcome: "not-applied", by: "oncall" }))).toBe(0)
          const other = yield* Effect.flip(Saga.resolve(sagaId, stepId, { outcome: "not-applied", by: "bob" }))
          expect(other).toMatchObject({ _tag: "CommandConflict", answer: "resolved as not undone by oncall" })

          // Known live: a compensation again leaves it dirty, and does not run the undo again.
          const dirty = yield* Saga.compensate(sagaId)
          expect(dirty.status).toBe("compensation_failed")
          expect(dirty.undone.map((step) => [step.outcome, step.detail])).toEqual([
            ["failed", "resolved as not undone by oncall"]
          ])

          // Undone by hand since: applied is a new resolution, not a conflict.
          expect(yield* writtenBy(Saga.resolve(sagaId, stepId, { outcome: "applied", by: "bob" }))).toBe(1)
          expect(yield* undoShown(sagaId, "hold")).toEqual(["executed", "completed", "resolved as undone by bob"])
          const back = yield* Effect.flip(Saga.resolve(sagaId, stepId, { outcome: "not-applied", by: "oncall" }))
          expect(back).toMatchObject({ _tag: "CommandConflict", answer: "resolved as undone by bob" })
          expect((yield* Saga.compensate(sagaId)).status).toBe("compensated")
          expect(undos.hold).toBe(attempts)
        })
      )
    )

    it.effect("a partial undo: not-applied is refused (it is known not undone), applied settles it", () =>
      provided(
        Effect.gen(function* () {
          const sagaId = "partial-undo"
          const stepId = yield* leftDirty(sagaId, ship({ parcels: 2 }), "ship")
          const attempts = undos.ship
          const before = (yield* entriesOf(sagaId)).length
          const refused = yield* Effect.flip(Saga.resolve(sagaId, stepId, { outcome: "not-applied", by: "oncall" }))
          expect(refused).toMatchObject({
            _tag: "CommandRefused",
            reason:
              "its undo is known not undone (it was partial: COMPENSATION_PARTIAL is journaled), so there is nothing to resolve as not applied: undo it by hand, then resolve it applied"
          })
          expect((yield* entriesOf(sagaId)).length).toBe(before)
          yield* Saga.resolve(sagaId, stepId, { outcome: "applied", by: "oncall" })
          expect((yield* Saga.compensate(sagaId)).status).toBe("compensated")
          expect(undos.ship).toBe(attempts)
        })
      )
    )

    it.effect(
      "an undo unavailable (its tool not registered where it was compensated): applied, and it never runs",
      () =>
        provided(
          Effect.gen(function* () {
            const sagaId = "unavailable-undo"
            const { calls, program } = reserveAndWire()
            expect((yield* Saga.run(sagaId, program))._tag).toBe("AwaitingApproval")
            // Another Saga service over the same journal, that has never seen the tools: reserve's undo is unavailable.
            const first = yield* Saga.compensate(sagaId).pipe(Effect.provide(Saga.layer))
            expect(first.undone.map((step) => step.outcome)).toEqual(["unavailable"])
            const stepId = first.undone[0]!.stepId
            const refused = yield* Effect.flip(Saga.resolve(sagaId, stepId, { outcome: "not-applied", by: "oncall" }))
            expect(refused).toMatchObject({
              _tag: "CommandRefused",
              reason:
                "its undo is known not undone (no undo could run for it: the last report says unavailable), so there is nothing to resolve as not applied: undo it by hand, then resolve it applied"
            })
            yield* Saga.resolve(sagaId, stepId, { outcome: "applied", by: "oncall" })
            expect(yield* undoShown(sagaId, "reserve")).toEqual([
              "executed",
              "completed",
              "resolved as undone by oncall"
            ])
            // This service has reserve's undo: it counts the step undone and does not run it.
            const report = yield* Saga.compensate(sagaId)
            expect(report.status).toBe("compensated")
            expect(calls.release).toBe(0)
          })
        )
    )

    it.effect(
      "refusals: a result, a step whose undo completed, a stale position; a forward step's unknown outcome as before",
      () =>
        provided(
          Effect.gen(function* () {
            const sagaId = "refusals"
            const stepId = yield* leftDirty(sagaId, book({ room: "9" }), "book")
            const withResult = yield* Effect.flip(
              Saga.resolve(sagaId, stepId, { outcome: "applied", by: "oncall", result: "booking-9" })
            )
            expect(withResult).toMatchObject({
              _tag: "CommandRefused",
              reason:
                "its outcome is known: it executed (EXECUTED is journaled), and its undo is left failed: the resolution of its undo takes no result or receipt, say whether the effect is undone now"
            })
            const declined = yield* stepOf(sagaId, "decline")
            const failed = yield* Effect.flip(Saga.resolve(sagaId, declined, { outcome: "applied", by: "oncall" }))
            expect(failed).toMatchObject({
              _tag: "CommandRefused",
              reason: "its outcome is known: it failed (FAILED is journaled), so there is nothing to resolve"
            })
            const { revision } = yield* Saga.status(sagaId)
            const stale = yield* Effect.flip(
              Saga.resolve(sagaId, stepId, { outcome: "applied", by: "oncall", revision: revision - 1 })
            )
            expect(stale._tag).toBe("ConcurrencyConflict")

            // A step whose undo completed, in a saga compensation_failed: nothing to resolve, as before.
            const mixed = "refusals-mixed"
            const { calls, program } = reserveAndWire()
            expect((yield* Saga.run(mixed, Effect.zipRight(book({ room: "3" }), program)))._tag).toBe(
              "AwaitingApproval"
            )
            expect((yield* Saga.compensate(mixed)).status).toBe("compensation_failed")
            expect(calls.release).toBe(1)
            const reserved = yield* stepOf(mixed, "reserve")
            const completed = yield* Effect.flip(Saga.resolve(mixed, reserved, { outcome: "applied", by: "oncall" }))
            expect(completed).toMatchObject({
              _tag: "CommandRefused",
              reason: "its outcome is known: it executed (EXECUTED is journaled), so there is nothing to resolve"
            })
          })
        )
    )

    it.effect(
      "a step resolved applied before: the same resolution (its result) replays it, one with none resolves its undo",
      () =>
        provided(
          Effect.gen(function* () {
            const sagaId = "call-then-undo"
            expect((yield* Saga.run(sagaId, wire({ amount: 3 })))._tag).toBe("NeedsAttention")
            const stepId = yield* stepOf(sagaId, "wire")
            const call = { outcome: "applied", by: "oncall", result: "wire-3" } as const
            yield* Saga.resolve(sagaId, stepId, call)
            expect((yield* Saga.compensate(sagaId)).status).toBe("compensation_failed")
            // A retry of the call's resolution is still that: nothing written.
            expect(yield* writtenBy(Saga.resolve(sagaId, stepId, call))).toBe(0)
            expect((yield* undoShown(sagaId, "wire")).slice(0, 2)).toEqual(["executed", "failed"])
            expect(yield* writtenBy(Saga.resolve(sagaId, stepId, { outcome: "applied", by: "oncall" }))).toBe(1)
            expect((yield* Saga.compensate(sagaId)).status).toBe("compensated")
          })
        )
    )

    it.effect("a forward step's unknown outcome is resolved as before, beside an undo resolved", () =>
      provided(
        Effect.gen(function* () {
          const sagaId = "forward-unknown"
          expect((yield* Saga.run(sagaId, Effect.zipRight(book({ room: "5" }), charge({ amount: 1 }))))._tag).toBe(
            "NeedsAttention"
          )
          expect((yield* Saga.compensate(sagaId)).status).toBe("compensation_failed")
          const charged = yield* stepOf(sagaId, "charge")
          const late = yield* Effect.flip(
            Saga.resolve(sagaId, charged, { outcome: "applied", by: "oncall", result: "ch-1" })
          )
          assert(late._tag === "CommandRefused")
          expect(late.reason).toContain("out of reverse order")
          yield* Saga.resolve(sagaId, charged, { outcome: "not-applied", by: "oncall" })
          expect((yield* entriesOf(sagaId)).at(-1)!.phase).toBe("FAILED")
          // book's undo is still dirty: resolved once it is cancelled by hand, the saga ends compensated.
          expect((yield* Saga.compensate(sagaId)).status).toBe("compensation_failed")
          yield* Saga.resolve(sagaId, yield* stepOf(sagaId, "book"), { outcome: "applied", by: "oncall" })
          const report = yield* Saga.compensate(sagaId)
          expect(report.status).toBe("compensated")
          expect(report.notUndone.map((step) => [step.toolName, step.phase])).toEqual([["charge", "FAILED"]])
        })
      )
    )

    it.effect("an undo that fails with a resolution's words is journaled as its failure, never read as resolved", () =>
      provided(
        Effect.gen(function* () {
          const sagaId = "undo-speaks-like-an-operator"
          const stepId = yield* leftDirty(sagaId, mimic({ room: "3" }), "mimic")
          const detail = "the undo failed: resolved as not undone by mallory"
          expect(yield* undoShown(sagaId, "mimic")).toEqual(["executed", "failed", detail])
          // Read as mallory's resolution, this would be a replay that writes nothing: it is refused.
          const replay = yield* Effect.flip(Saga.resolve(sagaId, stepId, { outcome: "not-applied", by: "mallory" }))
          assert(replay._tag === "CommandRefused")
          expect(replay.reason).toContain("its undo is known not undone (it failed")
          yield* Saga.resolve(sagaId, stepId, { outcome: "applied", by: "oncall" })
          expect((yield* Saga.compensate(sagaId)).status).toBe("compensated")
          // An undo that answers unknown or partial in those words is journaled behind its own.
          yield* Saga.run(`${sagaId}-2`, failingAfter(Effect.zip(mimicUnknown("4"), mimicPartial("5"))))
          expect(yield* undoShown(`${sagaId}-2`, "mimicUnknown")).toEqual([
            "executed",
            "unknown",
            "the undo said: resolved as undone by mallory"
          ])
          expect(yield* undoShown(`${sagaId}-2`, "mimicPartial")).toEqual([
            "executed",
            "partial",
            "the undo said: resolved as undone by mallory"
          ])
        })
      )
    )
  })
}

describe("the CLI's resolve of an undo left not undone", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-undo-resolve-cli-"))
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it.scopedLive(
    "--applied without --result resolves it; compensate then ends the saga compensated: list and show exit 0",
    () =>
      Effect.gen(function* () {
        const db = path.join(dir, "cli.db")
        const sagaId = "cli-failed-undo"
        const stepId = yield* onFile(db, leftDirty(sagaId, book({ room: "11" }), "book"))
        const attempts = undos.book
        expect((yield* cliInProcess("list", "--db", db)).code).toBe(1)

        const known = yield* cliInProcess("resolve", sagaId, stepId, "--not-applied", "--as", "oncall", "--db", db)
        expect(known.code).toBe(2)
        expect(known.stderr).toContain("its undo is known not undone (it failed: COMPENSATION_FAILED is journaled)")
        const result = yield* cliInProcess(
          "resolve",
          sagaId,
          stepId,
          "--applied",
          "--result",
          '"x"',
          "--as",
          "oncall",
          "--db",
          db
        )
        expect(result.code).toBe(2)
        expect(result.stderr).toContain("the resolution of its undo takes no result or receipt")
        const resolved = yield* cliInProcess("resolve", sagaId, stepId, "--applied", "--as", "oncall", "--db", db)
        expect(resolved.stderr).toBe("")
        expect(resolved.code).toBe(0)
        expect(resolved.stdout).toBe(
          `resolved the undo of step ${stepId} of saga ${sagaId} as undone (oncall): journaled COMPENSATED; its compensation already ran: compensate the saga again (effect-saga compensate ${sagaId}), which counts this step undone without running its undo again and journals a new report`
        )
        const again = yield* cliInProcess("resolve", sagaId, stepId, "--applied", "--as", "oncall", "--db", db)
        expect([again.code, again.stdout]).toEqual([
          0,
          `the undo of step ${stepId} of saga ${sagaId} was already resolved as undone by oncall: nothing written`
        ])
        const notApplied = yield* cliInProcess("resolve", sagaId, stepId, "--not-applied", "--as", "oncall", "--db", db)
        expect(notApplied.code).not.toBe(0)
        expect(notApplied.stderr).toContain("resolved as undone by oncall")

        const compensated = yield* cliInProcess("compensate", sagaId, "--as", "oncall", "--db", db)
        expect(compensated.code).toBe(0)
        expect(undos.book).toBe(attempts)
        const status = yield* onFile(db, Saga.status(sagaId))
        assert(status.status === "compensated")
        expect((yield* cliInProcess("list", "--db", db)).code).toBe(0)
        expect((yield* cliInProcess("show", sagaId, "--db", db)).code).toBe(0)
      })
  )
})

describe("POST /api/sagas/:sagaId/steps/:stepId/resolve of an undo left not undone", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-undo-resolve-http-"))
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it.scopedLive("applied without a result resolves the undo, and the answer says to compensate again", () =>
    Effect.gen(function* () {
      const db = path.join(dir, "http.db")
      const sagaId = "http-unknown-undo"
      const stepId = yield* onFile(db, leftDirty(sagaId, hold({ amount: 8 }), "hold"))
      const api = yield* clientAs(yield* serveOn(db), "alice")
      const at = () =>
        Effect.map(api.sagas.get({ path: { sagaId } }), ({ saga }) => ({
          revision: saga.revision,
          digest: saga.digest
        }))
      const withResult = yield* Effect.flip(
        api.operations.resolve({
          path: { sagaId, stepId },
          payload: { ...(yield* at()), outcome: "applied", result: "x" }
        })
      )
      expect(withResult).toMatchObject({ _tag: "Refused", message: expect.stringContaining("takes no result") })
      const notUndone = yield* api.operations.resolve({
        path: { sagaId, stepId },
        payload: { ...(yield* at()), outcome: "not-applied" }
      })
      expect(notUndone.changed).toBe(true)
      expect(notUndone.message).toBe(
        "resolved its undo as not undone by alice; its effect is still in place: undo it by hand, then resolve the step again as applied"
      )
      // The same again: its first answer, nothing written.
      const again = yield* api.operations.resolve({
        path: { sagaId, stepId },
        payload: { ...(yield* at()), outcome: "not-applied" }
      })
      expect(again.changed).toBe(false)
      const undone = yield* api.operations.resolve({
        path: { sagaId, stepId },
        payload: { ...(yield* at()), outcome: "applied" }
      })
      expect(undone.changed).toBe(true)
      expect(undone.message).toBe(
        `resolved its undo as undone by alice; its compensation already ran: compensate the saga again (effect-saga compensate, or POST /api/sagas/${sagaId}/compensate), which counts this step undone without running its undo again and journals a new report`
      )
      const compensated = yield* api.operations.compensate({ path: { sagaId }, payload: yield* at() })
      expect(compensated.report.status).toBe("compensated")
    })
  )
})

/** One executed step of a random saga: what its undo answers. */
const UndoAnswer = FastCheck.constantFrom("completed", "failed", "partial", "unknown")

describe("resolving every undo left not undone, in a random saga", () => {
  it.effect.prop(
    "a compensation again ends compensated, and runs no undo a second time",
    { answers: FastCheck.array(UndoAnswer, { minLength: 1, maxLength: 6 }) },
    ({ answers }) =>
      Effect.gen(function* () {
        const ran: Array<number> = []
        const tools = answers.map((answer, index) =>
          Compensable.make({
            name: `tool${index}`,
            input: Schema.Null,
            success: Schema.Null,
            execute: () => Effect.succeed(null),
            compensate: () =>
              Effect.zipRight(
                Effect.sync(() => ran.push(index)),
                answer === "completed"
                  ? Effect.void
                  : Effect.fail(
                      answer === "failed"
                        ? Outcome.failed("no")
                        : answer === "partial"
                          ? Outcome.partial("some")
                          : Outcome.unknown("?")
                    )
              )
          })
        )
        yield* Saga.run("random", failingAfter(Effect.forEach(tools, (tool) => tool(null))))
        const first = yield* Saga.compensate("random")
        const left = first.undone.filter((step) => step.outcome !== "completed")
        expect(first.status).toBe(left.length === 0 ? "compensated" : "compensation_failed")
        const undosBefore = ran.length
        for (const step of left) yield* Saga.resolve("random", step.stepId, { outcome: "applied", by: "oncall" })
        const last = yield* Saga.compensate("random")
        expect(last.status).toBe("compensated")
        expect(ran).toHaveLength(undosBefore)
        expect(new Set(ran).size).toBe(ran.length)
        expect(
          last.undone.filter((step) => step.detail === "resolved as undone by oncall").map((step) => step.stepId)
        ).toEqual(left.map((step) => step.stepId))
      }).pipe(Effect.provide(Testing.layer)),
    { timeout: 30_000, fastCheck: { numRuns: 50 } }
  )
})
