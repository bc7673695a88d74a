/**
 * A finished saga is the journal's to answer: its replay writes nothing and runs nothing, whatever
 * its program does now. A completed saga whose program now fails is not undone (`NonDeterminism`);
 * a compensated saga, or one whose compensation failed, whose program now succeeds is not marked
 * completed; a replay interrupted from outside leaves no `SAGA_SUSPENDED` behind. And a saga that
 * began to compensate finishes compensating, even when its program now succeeds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Layer, Option, Ref, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Outcome, Saga, SagaError, Timeline } from "../src/index.js"
import { threeStores } from "./fixtures/three-stores.js"

const stores = await threeStores("effect-saga-diverged")

/** What ran: each tool's calls and each undo. */
interface Counts {
  readonly runs: Ref.Ref<number>
  readonly undos: Ref.Ref<number>
}

/** A tool that counts its runs and undos; its undo fails when `undoFails`. */
const charge = (counts: Counts, undoFails: boolean) =>
  Compensable.make({
    name: "charge",
    input: Schema.Struct({ cents: Schema.Number }),
    success: Schema.String,
    execute: () =>
      Effect.as(
        Ref.update(counts.runs, (n) => n + 1),
        "ch-1"
      ),
    compensate: () =>
      Effect.zipRight(
        Ref.update(counts.undos, (n) => n + 1),
        undoFails ? Effect.fail("the refund was declined") : Effect.void
      )
  })

/** How a program ends after its one step. */
type Ending = "succeeds" | "fails" | "interrupts itself"

const program = (counts: Counts, undoFails: boolean, ending: Ending) =>
  Effect.gen(function* () {
    const receipt = yield* charge(counts, undoFails)({ cents: 500 })
    if (ending === "fails") return yield* Effect.fail("card declined")
    if (ending === "interrupts itself") return yield* Effect.interrupt
    return receipt
  })

/** The finished sagas: how the first run ends, and the result every replay of it answers. */
const finished = [
  { status: "completed", first: "succeeds", undoFails: false },
  { status: "compensated", first: "fails", undoFails: false },
  { status: "compensation_failed", first: "fails", undoFails: true }
] as const

const resultTag = { completed: "Completed", compensated: "Compensated", compensation_failed: "CompensationFailed" }

for (const [name, store] of stores) {
  describe(`a finished saga's replay changes nothing, however its program ends now: ${name}`, () => {
    for (const { first, status, undoFails } of finished) {
      it.live(`${status}: a replay that succeeds, fails or interrupts itself writes nothing and runs nothing`, () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          const counts = { runs: yield* Ref.make(0), undos: yield* Ref.make(0) }
          for (const now of ["succeeds", "fails", "interrupts itself"] as const) {
            const sagaId = `diverged-${Math.random().toString(36).slice(2)}`
            const before = yield* Saga.run(sagaId, program(counts, undoFails, first))
            expect(before._tag).toBe(resultTag[status])
            const record = Option.getOrThrow(yield* journal.get(sagaId))
            expect(record.status).toBe(status)
            const [runs, undos] = [yield* Ref.get(counts.runs), yield* Ref.get(counts.undos)]

            const replay = yield* Effect.either(Saga.run(sagaId, program(counts, undoFails, now)))
            if (status !== "completed") {
              expect(Either.getOrThrow(replay)._tag).toBe(resultTag[status])
            } else if (now === "succeeds") {
              expect(Either.getOrThrow(replay)).toEqual(before)
            } else {
              const error = Either.getLeft(replay).pipe(Option.getOrThrow)
              expect(error).toBeInstanceOf(SagaError.NonDeterminism)
              expect(error).toMatchObject({ sagaId, stepId: "SAGA_COMPLETED" })
            }
            expect(Option.getOrThrow(yield* journal.get(sagaId))).toEqual(record)
            expect([yield* Ref.get(counts.runs), yield* Ref.get(counts.undos)]).toEqual([runs, undos])
          }
        }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))
      )

      if (status === "completed") {
        it.live(
          "completed: a replay that skips its executed call fails with NonDeterminism naming it, writing nothing",
          () =>
            Effect.gen(function* () {
              const journal = yield* Journal.Journal
              const counts = { runs: yield* Ref.make(0), undos: yield* Ref.make(0) }
              const sagaId = `skipped-${Math.random().toString(36).slice(2)}`
              const before = yield* Saga.run(sagaId, program(counts, undoFails, first))
              expect(before._tag).toBe("Completed")
              const record = Option.getOrThrow(yield* journal.get(sagaId))
              const stepId = (yield* journal.read(sagaId)).find((entry) => entry.phase === "EXECUTED")!.stepId
              // Not the value of a program that no longer makes the saga's call.
              const error = yield* Effect.flip(Saga.run(sagaId, Effect.succeed("another value")))
              expect(error).toBeInstanceOf(SagaError.NonDeterminism)
              expect(error).toMatchObject({
                sagaId,
                stepId,
                reason: `the program ended without replaying the journal's executed step ${stepId} (charge): it called nothing but reads, or nothing at all (a step removed, made conditional, or renamed in an earlier run)`
              })
              expect(Option.getOrThrow(yield* journal.get(sagaId))).toEqual(record)
              expect([yield* Ref.get(counts.runs), yield* Ref.get(counts.undos)]).toEqual([1, 0])
            }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))
        )
      }

      it.live(`${status}: a replay interrupted from outside leaves no SAGA_SUSPENDED behind`, () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          const counts = { runs: yield* Ref.make(0), undos: yield* Ref.make(0) }
          const sagaId = `interrupted-${Math.random().toString(36).slice(2)}`
          yield* Saga.run(sagaId, program(counts, undoFails, first))
          const record = Option.getOrThrow(yield* journal.get(sagaId))

          const inside = yield* Deferred.make<void>()
          const waiting = Effect.gen(function* () {
            yield* charge(counts, undoFails)({ cents: 500 })
            yield* Deferred.succeed(inside, undefined)
            return yield* Effect.never
          })
          const replaying = yield* Effect.fork(Saga.run(sagaId, waiting))
          yield* Deferred.await(inside)
          yield* Fiber.interrupt(replaying)
          expect(Option.getOrThrow(yield* journal.get(sagaId))).toEqual(record)
          expect(yield* Ref.get(counts.runs)).toBe(1)
        }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))
      )
    }
  })
}

describe("a saga that began to compensate finishes compensating", () => {
  it.live("a program that now succeeds does not complete it: the undo runs, the saga ends compensated", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      const counts = { runs: yield* Ref.make(0), undos: yield* Ref.make(0) }
      // A run that failed and was compensated, replayed into a saga of its own up to its
      // SAGA_COMPENSATING: the state a crash leaves once compensation began and before any undo ran.
      yield* Saga.run("failed", program(counts, false, "fails"))
      const entries = yield* journal.read("failed")
      const upToCompensating = entries.slice(0, entries.findIndex((entry) => entry.phase === "SAGA_COMPENSATING") + 1)
      yield* journal.append(
        "crashed",
        Journal.empty,
        upToCompensating.map(({ input, payload, phase, stepId, toolName }) => ({
          stepId,
          toolName,
          phase,
          input,
          payload
        }))
      )
      expect(Option.getOrThrow(yield* journal.get("crashed")).status).toBe("compensating")
      const undosBefore = yield* Ref.get(counts.undos)

      const result = yield* Saga.run("crashed", program(counts, false, "succeeds"))
      expect(result._tag).toBe("Compensated")
      expect(yield* Ref.get(counts.undos)).toBe(undosBefore + 1)
      expect(Option.getOrThrow(yield* journal.get("crashed")).status).toBe("compensated")
      expect((yield* journal.read("crashed")).map((entry) => entry.phase)).not.toContain("SAGA_COMPLETED")
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))))
  )
})

describe("a saga that completes without the call awaiting approval withdraws its request", () => {
  const wire = Compensable.make({
    name: "sendWire",
    input: Schema.Struct({ amount: Schema.Int }),
    success: Schema.String,
    reversibility: "irreversible",
    execute: ({ amount }) => Effect.succeed(`wire-${amount}`)
  })

  it.live("journaled REJECTED by effect-saga with SAGA_COMPLETED, off the pending list, refused to an approver", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      const approval = yield* Approval.Approval
      const counts = { runs: yield* Ref.make(0), undos: yield* Ref.make(0) }
      const first = yield* Saga.run(
        "payout",
        Effect.zipRight(charge(counts, false)({ cents: 500 }), wire({ amount: 500 }))
      )
      if (first._tag !== "AwaitingApproval") return expect.fail(`expected AwaitingApproval, got ${first._tag}`)
      const { stepId } = first.request

      // The program changed: it no longer makes the call that awaits approval.
      const second = yield* Saga.run("payout", Effect.as(charge(counts, false)({ cents: 500 }), "no wire"))
      expect(second).toMatchObject({ _tag: "Completed", value: "no wire" })
      const entries = yield* journal.read("payout")
      expect(entries.slice(-2).map((entry) => [entry.phase, entry.stepId])).toEqual([
        ["REJECTED", stepId],
        ["SAGA_COMPLETED", null]
      ])
      expect(JSON.parse(entries.at(-2)!.payload!)).toEqual({
        by: "effect-saga",
        reason: "withdrawn: the saga completed without making this call"
      })
      expect((yield* approval.pending).map((request) => request.stepId)).not.toContain(stepId)
      const refused = yield* Effect.flip(Saga.approve("payout", stepId, { by: "alice" }))
      expect(refused._tag).toBe("CommandConflict")
      expect(Option.getOrThrow(yield* journal.get("payout")).status).toBe("completed")
      expect(yield* Ref.get(counts.runs)).toBe(1)
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))))
  )
})

describe("a resumed program that no longer makes an executed step's call does not complete", () => {
  const made: Array<string> = []
  const tool = (name: string) =>
    Compensable.make({
      name,
      input: Schema.Struct({ n: Schema.Int }),
      success: Schema.String,
      execute: ({ n }) =>
        Effect.sync(() => {
          made.push(`${name} ${n}`)
          return `${name}-${n}`
        }),
      compensate: ({ input }) => Effect.sync(() => made.push(`undo ${name} ${input.n}`))
    })
  const [reserve, reserveV2, charge] = [tool("reserve"), tool("reserveV2"), tool("charge")]
  /** A tool whose call never answers: a worker stopped while it was in flight leaves its outcome unknown. */
  const hanging = (name: string) =>
    Compensable.make({
      name,
      input: Schema.Struct({ n: Schema.Int }),
      success: Schema.String,
      execute: ({ n }) =>
        Effect.zipRight(
          Effect.sync(() => made.push(`${name} ${n}`)),
          Effect.never
        ),
      compensate: () => Effect.void
    })
  /** A first release's run of `sagaId` whose worker stopped while the payment was in flight: its outcome is unknown. */
  const stoppedInPay = (sagaId: string) =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(Saga.run(sagaId, Effect.zipRight(reserve({ n: 1 }), hanging("pay")({ n: 2 }))))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
    })
  const SagaLive = Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))

  it.effect("a renamed tool: NonDeterminism naming the step never replayed, no SAGA_COMPLETED", () =>
    Effect.gen(function* () {
      made.length = 0
      const journal = yield* Journal.Journal
      const waiting = Effect.zipRight(charge({ n: 2 }), Effect.never)
      const fiber = yield* Effect.fork(Saga.run("o1", Effect.zipRight(reserve({ n: 1 }), waiting)))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      expect(made).toEqual(["reserve 1", "charge 2"])
      const stepId = (yield* Saga.status("o1")).steps.find((step) => step.toolName === "reserve")!.stepId

      // A new release renamed the first step's tool: the same call, under another name.
      const renamed = Effect.zipRight(reserveV2({ n: 1 }), charge({ n: 2 }))
      const error = yield* Effect.flip(Saga.resume("o1", renamed))
      expect(error).toBeInstanceOf(SagaError.NonDeterminism)
      expect(error).toMatchObject({ stepId, reason: expect.stringContaining(`${stepId} (reserve)`) })
      const phases = (yield* journal.read("o1")).map((entry) => entry.phase)
      expect(phases).not.toContain("SAGA_COMPLETED")
      expect(phases.at(-1)).toBe("EXECUTED")

      // The same changed program again (a worker's next pass, a restarted worker) makes no new call:
      // it replays the renamed call, and still does not complete with the old step never replayed.
      const again = yield* Effect.flip(Saga.resume("o1", renamed))
      expect(again).toBeInstanceOf(SagaError.NonDeterminism)
      expect(again).toMatchObject({ stepId, reason: expect.stringContaining(`${stepId} (reserve)`) })
      expect((yield* journal.read("o1")).map((entry) => entry.phase)).toEqual(phases)
      expect(made).toEqual(["reserve 1", "charge 2", "reserveV2 1"])
      // Nor does the program as it was journaled: it would leave the renamed call's effect live.
      const old = yield* Effect.flip(Saga.resume("o1", Effect.zipRight(reserve({ n: 1 }), charge({ n: 2 }))))
      expect(old).toBeInstanceOf(SagaError.NonDeterminism)
      expect(old).toMatchObject({
        reason: expect.stringContaining("(reserveV2): it replayed the journal's other calls without it")
      })
      expect((yield* journal.read("o1")).map((entry) => entry.phase)).toEqual(phases)
      // Compensating the saga undoes both, in reverse order.
      const report = yield* Saga.compensate("o1")
      expect(report.status).toBe("compensated")
      expect(made.slice(3)).toEqual(["undo reserveV2 1", "undo charge 2", "undo reserve 1"])
    }).pipe(Effect.provide(SagaLive))
  )

  it.effect(
    "a program that no longer makes one of two executed calls: NonDeterminism, though it calls nothing new",
    () =>
      Effect.gen(function* () {
        made.length = 0
        const journal = yield* Journal.Journal
        const both = Effect.zipRight(Effect.all([charge({ n: 1 }), charge({ n: 2 })]), Effect.never)
        const fiber = yield* Effect.fork(Saga.run("o-skip", both))
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(fiber)
        const before = (yield* journal.read("o-skip")).map((entry) => entry.phase)
        const second = (yield* Saga.status("o-skip")).steps[1]!.stepId

        // A release made the second call conditional: the program replays the first and ends.
        const error = yield* Effect.flip(Saga.resume("o-skip", charge({ n: 1 })))
        expect(error).toBeInstanceOf(SagaError.NonDeterminism)
        expect(error).toMatchObject({
          stepId: second,
          reason: `the program ended without replaying the journal's executed step ${second} (charge): it replayed the journal's other calls without it (a step removed, made conditional, or renamed in an earlier run)`
        })
        expect((yield* journal.read("o-skip")).map((entry) => entry.phase)).toEqual(before)
        expect(made).toEqual(["charge 1", "charge 2"])
      }).pipe(Effect.provide(SagaLive))
  )

  it.effect("a program that replays only a read and skips an executed write: NonDeterminism, nothing written", () =>
    Effect.gen(function* () {
      made.length = 0
      const journal = yield* Journal.Journal
      const lookup = Compensable.make({
        name: "lookup",
        input: Schema.Struct({ n: Schema.Int }),
        success: Schema.String,
        changesNothing: true,
        execute: ({ n }) => Effect.succeed(`found ${n}`)
      })
      // The first release read, then wrote, then halted (an approval, a crash).
      const fiber = yield* Effect.fork(
        Saga.run("o-read", Effect.zipRight(lookup({ n: 1 }), Effect.zipRight(reserve({ n: 1 }), Effect.never)))
      )
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      const before = (yield* journal.read("o-read")).map((entry) => entry.phase)
      const write = (yield* Saga.status("o-read")).steps.find((step) => step.toolName === "reserve")!.stepId

      // The next release only reads: the write's effect would stay live, never undone.
      const error = yield* Effect.flip(Saga.resume("o-read", lookup({ n: 1 })))
      expect(error).toBeInstanceOf(SagaError.NonDeterminism)
      expect(error).toMatchObject({
        stepId: write,
        reason: `the program ended without replaying the journal's executed step ${write} (reserve): it called nothing but reads, or nothing at all (a step removed, made conditional, or renamed in an earlier run)`
      })
      // Nor does a program that calls nothing at all complete it.
      expect(yield* Effect.flip(Saga.resume("o-read", Effect.void))).toBeInstanceOf(SagaError.NonDeterminism)
      expect((yield* journal.read("o-read")).map((entry) => entry.phase)).toEqual(before)
      expect(made).toEqual(["reserve 1"])
    }).pipe(Effect.provide(SagaLive))
  )

  it.effect("a step replaced by another tool's: the same, and nothing but the new call is written", () =>
    Effect.gen(function* () {
      made.length = 0
      const journal = yield* Journal.Journal
      const fiber = yield* Effect.fork(Saga.run("o2", Effect.zipRight(reserve({ n: 1 }), Effect.never)))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      const before = (yield* journal.read("o2")).map((entry) => entry.phase)

      const error = yield* Effect.flip(Saga.resume("o2", charge({ n: 2 })))
      expect(error).toBeInstanceOf(SagaError.NonDeterminism)
      const after = (yield* journal.read("o2")).map((entry) => entry.phase)
      expect(after).toEqual([...before, "SAGA_RESUMED", "INTENT", "EXECUTED"])
      expect((yield* Saga.status("o2")).status).not.toBe("completed")
    }).pipe(Effect.provide(SagaLive))
  )

  it.effect(
    "a call whose input changed since it ran: NonDeterminism saying so, naming the journaled step, nothing written",
    () =>
      Effect.gen(function* () {
        made.length = 0
        const journal = yield* Journal.Journal
        const fiber = yield* Effect.fork(Saga.run("o3", Effect.zipRight(reserve({ n: 1 }), Effect.never)))
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(fiber)
        const stepId = (yield* Saga.status("o3")).steps[0]!.stepId
        const before = (yield* journal.read("o3")).length

        const error = yield* Effect.flip(Saga.resume("o3", reserve({ n: 9 })))
        expect(error).toBeInstanceOf(SagaError.NonDeterminism)
        expect((error as SagaError.NonDeterminism).reason).toBe(
          `the program called reserve with an input the journal holds no call of, before replaying the journal's call of reserve at ${stepId}: the input changed since that call ran (the program's code or data, or the tool's input type; for a model's turn, its prompt or the tools offered to it), or the calls come in another order`
        )
        expect(made).toEqual(["reserve 1"])
        expect((yield* journal.read("o3")).length).toBe(before)
      }).pipe(Effect.provide(SagaLive))
  )

  it.effect("a saga a failure binds to compensate still compensates when a replayed failure cuts a branch short", () =>
    Effect.gen(function* () {
      made.length = 0
      const seat = Compensable.make({
        name: "seat",
        input: Schema.Struct({ n: Schema.Int }),
        success: Schema.String,
        execute: () => Effect.zipRight(Effect.sleep("100 millis"), Effect.fail(Outcome.failed("no seat left")))
      })
      // The seat's failure comes after the room is held; replayed, it comes at once and cuts the
      // room's branch short before it is replayed. The program then makes a new call.
      const program = Effect.gen(function* () {
        yield* Effect.either(
          Effect.all([seat({ n: 1 }), Effect.zipRight(Effect.sleep("50 millis"), reserve({ n: 2 }))], {
            concurrency: "unbounded"
          })
        )
        yield* Effect.sleep("1 hour")
        return yield* charge({ n: 3 })
      })
      const first = yield* Effect.fork(Saga.run("o3", program))
      yield* TestClock.adjust("100 millis")
      yield* Fiber.interrupt(first)
      expect(made).toEqual(["reserve 2"])

      const resumed = yield* Effect.fork(Saga.resume("o3", program))
      yield* TestClock.adjust("1 hour")
      expect(yield* Fiber.join(resumed)).toMatchObject({ _tag: "Compensated" })
      expect((yield* Saga.status("o3")).status).toBe("compensated")
    }).pipe(Effect.provide(SagaLive))
  )

  it.effect(
    "a renamed tool past a step whose outcome is unknown: NeedsAttention on that step, saying the program ended without reaching it and which calls it ran",
    () =>
      Effect.gen(function* () {
        made.length = 0
        yield* stoppedInPay("o-unknown")
        const pay = (yield* Saga.status("o-unknown")).steps.find((step) => step.toolName === "pay")!
        expect(pay.state).toBe("unknown")

        // The next release renamed the payment's tool: the same call under a new name, then one more step.
        const renamed = Effect.all([reserve({ n: 1 }), tool("payV2")({ n: 2 }), charge({ n: 3 })])
        const result = yield* Saga.resume("o-unknown", renamed)
        expect(made).toEqual(["reserve 1", "pay 2", "payV2 2", "charge 3"])
        if (result._tag !== "NeedsAttention") return expect.fail(`expected NeedsAttention, got ${result._tag}`)
        const ran = (yield* Saga.status("o-unknown")).steps.filter(
          (step) => step.toolName !== "reserve" && step.toolName !== "pay"
        )
        expect(result.unknown).toEqual([
          {
            stepId: pay.stepId,
            toolName: "pay",
            reason: `INTENT was journaled but no outcome: it may or may not have run; this run's program ended without reaching it: it made a new call instead (it ran ${ran.map((step) => step.stepId).join(", ")}: a tool renamed, or a step replaced, removed or made conditional)`
          }
        ])
        expect((yield* Saga.status("o-unknown")).status).toBe("needs_attention")

        // The same release again replays its new calls: the run answers the reason journaled, unchanged.
        const again = yield* Saga.resume("o-unknown", renamed)
        expect(again).toMatchObject({ _tag: "NeedsAttention", unknown: result.unknown })
        const journaled = (yield* Saga.status("o-unknown")).steps.find((step) => step.stepId === pay.stepId)
        expect(journaled?.unknownReason).toBe(result.unknown[0]!.reason)
        expect(made).toEqual(["reserve 1", "pay 2", "payV2 2", "charge 3"])

        // The run's SAGA_NEEDS_ATTENTION journals the step unreached (the second run wrote nothing); resolved
        // as applied, that program cannot replay it (Timeline.notReplayable), and resumed, fails writing nothing.
        const journal = yield* Journal.Journal
        const stops = (yield* journal.read("o-unknown")).filter((entry) => entry.phase === "SAGA_NEEDS_ATTENTION")
        expect(stops.map((entry) => JSON.parse(entry.payload as string))).toEqual([
          { unknown: [{ ...result.unknown[0], unreached: true }] }
        ])
        expect(Timeline.notReplayable(yield* journal.read("o-unknown"))).toEqual([])
        yield* Saga.resolve("o-unknown", pay.stepId, { outcome: "applied", by: "oncall", result: "pay-2" })
        const resolved = yield* journal.read("o-unknown")
        expect(Timeline.notReplayable(resolved)).toEqual([pay.stepId])
        expect(yield* Effect.flip(Saga.resume("o-unknown", renamed))).toBeInstanceOf(SagaError.NonDeterminism)
        expect(yield* journal.read("o-unknown")).toEqual(resolved)
      }).pipe(Effect.provide(SagaLive))
  )

  it.effect(
    "a step removed past a step whose outcome is unknown, no new call made: its run journals the step unreached all the same",
    () =>
      Effect.gen(function* () {
        made.length = 0
        // The first release's run stopped on the payment, whose bank did not answer: needs_attention already.
        const unanswered = Compensable.make({
          name: "pay",
          input: Schema.Struct({ n: Schema.Int }),
          success: Schema.String,
          execute: ({ n }) =>
            Effect.zipRight(
              Effect.sync(() => made.push(`pay ${n}`)),
              Effect.fail(Outcome.unknown("the bank did not answer"))
            ),
          compensate: () => Effect.void
        })
        const first = yield* Saga.run("o-removed", Effect.zipRight(reserve({ n: 1 }), unanswered({ n: 2 })))
        expect(first._tag).toBe("NeedsAttention")
        const journal = yield* Journal.Journal
        const pay = (yield* Saga.status("o-removed")).steps.find((step) => step.toolName === "pay")!
        // The next release removed the payment: its program replays the reservation and makes no call.
        const result = yield* Saga.resume("o-removed", reserve({ n: 1 }))
        if (result._tag !== "NeedsAttention") return expect.fail(`expected NeedsAttention, got ${result._tag}`)
        expect(result.unknown[0]!.reason).toContain("this run's program ended without reaching it")
        const stops = (yield* journal.read("o-removed")).filter((entry) => entry.phase === "SAGA_NEEDS_ATTENTION")
        expect(JSON.parse(stops.at(-1)!.payload!)).toEqual({ unknown: [{ ...result.unknown[0], unreached: true }] })
        // Again, it writes nothing: the mark is journaled already.
        const before = yield* journal.read("o-removed")
        expect((yield* Saga.resume("o-removed", reserve({ n: 1 })))._tag).toBe("NeedsAttention")
        expect(yield* journal.read("o-removed")).toEqual(before)
        yield* Saga.resolve("o-removed", pay.stepId, { outcome: "applied", by: "oncall", result: "pay-2" })
        expect(Timeline.notReplayable(yield* journal.read("o-removed"))).toEqual([pay.stepId])
        expect(made).toEqual(["reserve 1", "pay 2"])
      }).pipe(Effect.provide(SagaLive))
  )

  it.effect(
    "a renamed tool past a step whose outcome is unknown, then a failure: NeedsAttention on that step, saying the program ended without reaching it",
    () =>
      Effect.gen(function* () {
        made.length = 0
        yield* stoppedInPay("o-unknown-fails")

        // The next release renamed the payment's tool, and its program fails after the new call.
        const result = yield* Saga.resume(
          "o-unknown-fails",
          Effect.zipRight(Effect.all([reserve({ n: 1 }), tool("payV2")({ n: 2 })]), Effect.fail("out of stock"))
        )
        expect(made).toEqual(["reserve 1", "pay 2", "payV2 2"])
        if (result._tag !== "NeedsAttention") return expect.fail(`expected NeedsAttention, got ${result._tag}`)
        expect(result.unknown).toHaveLength(1)
        expect(result.unknown[0]!.reason).toMatch(
          /^INTENT was journaled but no outcome: it may or may not have run; this run's program ended without reaching it: it made a new call instead \(it ran payV2:/
        )
        // Not marked unreached: resolved as applied, a resume of the failing program compensates, as any does.
        const journal = yield* Journal.Journal
        const entries = yield* journal.read("o-unknown-fails")
        const stop = entries.filter((entry) => entry.phase === "SAGA_NEEDS_ATTENTION").at(-1)!
        expect(JSON.parse(stop.payload!).unknown[0].unreached).toBeUndefined()
        const pay = result.unknown[0]!.stepId
        yield* Saga.resolve("o-unknown-fails", pay, { outcome: "applied", by: "oncall", result: "pay-2" })
        expect(Timeline.notReplayable(yield* journal.read("o-unknown-fails"))).toEqual([])
        const resumed = yield* Saga.resume(
          "o-unknown-fails",
          Effect.zipRight(Effect.all([reserve({ n: 1 }), tool("payV2")({ n: 2 })]), Effect.fail("out of stock"))
        )
        expect(resumed._tag).toBe("Compensated")
      }).pipe(Effect.provide(SagaLive))
  )

  it.effect("a step removed before a call that awaited approval: NonDeterminism naming the approved call it ran", () =>
    Effect.gen(function* () {
      made.length = 0
      const wire = Compensable.make({
        name: "wire",
        input: Schema.Struct({ n: Schema.Int }),
        success: Schema.String,
        reversibility: "irreversible",
        execute: ({ n }) => Effect.sync(() => `wire-${made.push(`wire ${n}`)}`)
      })
      const first = yield* Saga.run("o-approved", Effect.all([reserve({ n: 1 }), charge({ n: 2 }), wire({ n: 3 })]))
      if (first._tag !== "AwaitingApproval") return expect.fail(`expected AwaitingApproval, got ${first._tag}`)
      yield* Saga.approve("o-approved", first.request.stepId, { by: "alice" })
      const chargeStep = (yield* Saga.status("o-approved")).steps.find((step) => step.toolName === "charge")!

      // The next release removed the charge: the approved wire runs (it is the journal's call), then the run ends.
      const error = yield* Effect.flip(Saga.resume("o-approved", Effect.all([reserve({ n: 1 }), wire({ n: 3 })])))
      expect(made).toEqual(["reserve 1", "charge 2", "wire 3"])
      expect(error).toBeInstanceOf(SagaError.NonDeterminism)
      expect(error).toMatchObject({
        stepId: chargeStep.stepId,
        reason: `the program ended without replaying the journal's executed step ${chargeStep.stepId} (charge): it replayed the journal's other calls without it (a step removed, made conditional, or renamed in an earlier run), and ran ${first.request.stepId}, which the journal held without an outcome: a call approved, or retried by its key`
      })
    }).pipe(Effect.provide(SagaLive))
  )
})
