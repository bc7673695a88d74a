import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, TestClock } from "effect"
import { Approval, Journal, Saga, SagaError } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import type { World } from "./fixtures/order-world.js"
import {
  countingJournal,
  crashingJournal,
  happyPath,
  makeWorld,
  recover,
  storeLayer,
  toolsOf
} from "./fixtures/order-world.js"

/**
 * A call that defers its approval (what an agent's tool calls do) answers `ApprovalPending` where
 * it is made and lets the program go on; it runs where the program settles it, once approved. A
 * replay must answer the same at both places whatever happened since, or a journaled model turn
 * built on the first answer would no longer match.
 */
describe("a call that defers its approval", () => {
  it.effect(
    "answers ApprovalPending where it is made on every run, runs once where it is settled, after the approval",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const store = storeLayer(makeMemoryJournal(), Approval.makeMemory())
        yield* Effect.gen(function* () {
          const waiting = yield* Saga.run("order", program(world))
          assert(waiting._tag === "AwaitingApproval")
          expect(waiting.request).toMatchObject({ stepId: "wire:wire#1", toolName: "wire" })
          // The program went on past the pending call: the charge ran before the saga halted.
          expect(world.applied).toEqual({ reserve: 1, charge: 1, wire: 0, ship: 0 })

          yield* Saga.approve("order", waiting.request.stepId, { by: "alice" })
          const done = yield* Saga.run("order", program(world))
          assert(done._tag === "Completed")
          expect(done.value).toEqual({ whereCalled: "ApprovalPending", settled: "wire-done", shipped: "ship-done" })
          expect(world.applied).toEqual({ reserve: 1, charge: 1, wire: 1, ship: 1 })

          // A replay of the finished saga answers exactly the same, and runs nothing.
          const again = yield* Saga.run("order", program(world))
          assert(again._tag === "Completed")
          expect(again.value).toEqual(done.value)
          expect(world.applied).toEqual({ reserve: 1, charge: 1, wire: 1, ship: 1 })
        }).pipe(Effect.provide(store))
      })
  )

  const happyPathWrites = 12

  for (let crashAfter = 0; crashAfter <= happyPathWrites; crashAfter++) {
    it.effect(`a crash after ${crashAfter} journal writes: each effect once, the same answers at each place`, () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const journal = makeMemoryJournal()
        const approvals = Approval.makeMemory()
        const exit = yield* Effect.exit(
          Effect.provide(happyPath(program(world)), storeLayer(crashingJournal(journal, crashAfter), approvals))
        )
        if (Exit.isSuccess(exit)) expect(exit.value).toBe("Completed")

        const final = yield* Effect.provide(recover(world, program(world)), storeLayer(journal, approvals))
        assert(final._tag === "Completed")
        expect(final.value).toEqual({ whereCalled: "ApprovalPending", settled: "wire-done", shipped: "ship-done" })
        expect(world.applied).toEqual({ reserve: 1, charge: 1, wire: 1, ship: 1 })
        expect(Journal.verifyEntries(Effect.runSync(journal.read("order")))._tag).toBe("Intact")
      })
    )
  }

  it.effect("the happy path makes exactly the number of journal writes the crash test sweeps", () =>
    Effect.gen(function* () {
      const { counter, journal } = countingJournal(makeMemoryJournal())
      const result = yield* Effect.provide(happyPath(program(makeWorld())), storeLayer(journal, Approval.makeMemory()))
      expect(result).toBe("Completed")
      expect(counter.writes).toBe(happyPathWrites)
    })
  )

  it.effect("a call the program never settles runs when the program ends, once approved", () =>
    Effect.gen(function* () {
      const world = makeWorld()
      const tools = toolsOf(world)
      const forgetful = Effect.gen(function* () {
        const saga = yield* Saga.CurrentSaga
        yield* Effect.flip(saga.step(tools.wire.spec, "DE89", "wire", { deferApproval: true }))
        return yield* tools.ship("parcel")
      })
      yield* Effect.gen(function* () {
        const waiting = yield* Saga.run("forgetful", forgetful)
        assert(waiting._tag === "AwaitingApproval")
        expect(world.applied).toEqual({ reserve: 0, charge: 0, wire: 0, ship: 1 })
        yield* Saga.approve("forgetful", waiting.request.stepId, { by: "alice" })
        expect((yield* Saga.run("forgetful", forgetful))._tag).toBe("Completed")
        expect(world.applied).toEqual({ reserve: 0, charge: 0, wire: 1, ship: 1 })
      }).pipe(Effect.provide(storeLayer(makeMemoryJournal(), Approval.makeMemory())))
    })
  )

  it.effect(
    "an approval that expired before the call was settled refuses it: the saga compensates, the call never runs",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const store = Saga.layerWith({ approvalTtl: "1 hour" }).pipe(
          Layer.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory))
        )
        yield* Effect.gen(function* () {
          const waiting = yield* Saga.run("late", program(world))
          assert(waiting._tag === "AwaitingApproval")
          yield* Saga.approve("late", waiting.request.stepId, { by: "alice" })
          yield* TestClock.adjust("2 hours")
          const late = yield* Saga.run("late", program(world))
          assert(late._tag === "Compensated")
          expect(late.cause.toString()).toContain("expired")
          expect(world.applied).toEqual({ reserve: 1, charge: 1, wire: 0, ship: 0 })
          expect(world.undone).toEqual({ reserve: 1, charge: 1, wire: 0, ship: 0 })
        }).pipe(Effect.provide(store))
      })
  )

  it.effect(
    "a program that fails while a call awaits approval compensates what ran; its request is withdrawn, the call never runs",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const tools = toolsOf(world)
        const approvals = Approval.makeMemory()
        const failing = Effect.gen(function* () {
          const saga = yield* Saga.CurrentSaga
          yield* tools.reserve("A-1")
          yield* Effect.flip(saga.step(tools.wire.spec, "DE89", "wire", { deferApproval: true }))
          return yield* Effect.fail("out of stock")
        })
        yield* Effect.gen(function* () {
          const result = yield* Saga.run("failing", failing)
          assert(result._tag === "Compensated")
          expect(world.undone).toEqual({ reserve: 1, charge: 0, wire: 0, ship: 0 })
          // Its request was withdrawn when compensation began: nobody can approve it any more.
          expect(yield* approvals.pending).toEqual([])
          const error = yield* Effect.flip(Saga.approve("failing", "wire:wire#1", { by: "alice" }))
          expect(error).toMatchObject({ _tag: "CommandConflict", answer: expect.stringContaining("withdrawn") })
          expect(world.applied.wire).toBe(0)
        }).pipe(Effect.provide(storeLayer(makeMemoryJournal(), approvals)))
      })
  )
})

/** Reserve, ask to wire (deferred), charge meanwhile, settle the wire, ship with its result. */
const program = (world: World) => {
  const tools = toolsOf(world)
  return Effect.gen(function* () {
    const saga = yield* Saga.CurrentSaga
    yield* tools.reserve("A-1")
    const pending = yield* Effect.flip(saga.step(tools.wire.spec, "DE89", "wire", { deferApproval: true }))
    assert(pending instanceof SagaError.ApprovalPending)
    yield* tools.charge("42.00")
    const settled = (yield* saga.settle(pending.stepId)) as string
    const shipped = yield* tools.ship(settled)
    return { whereCalled: pending._tag, settled, shipped }
  })
}
