import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Approval, Journal, Saga } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import * as Testing from "../src/Testing.js"
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
 * A 4-step saga with an approval in the middle, "crashed" after each possible number of journal
 * writes: the store keeps the writes made before the crash and refuses every one after it, as a
 * dead process would. A new Saga service on the same store then recovers the saga the way an
 * operator would (approve what waits, resolve what is unknown by asking the provider, run again).
 */
describe("resume after every crash point", () => {
  const happyPathWrites = 12

  for (let crashAfter = 0; crashAfter <= happyPathWrites; crashAfter++) {
    it.effect(`a crash after ${crashAfter} journal writes: every effect happens once, or is undone once`, () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const journal = makeMemoryJournal()
        const approvals = Approval.makeMemory()
        const crashing = storeLayer(crashingJournal(journal, crashAfter), approvals)
        const exit = yield* Effect.exit(Effect.provide(happyPath(program(world)), crashing))
        if (Exit.isSuccess(exit)) expect(exit.value).toBe("Completed")

        const final = (yield* Effect.provide(recover(world, program(world)), storeLayer(journal, approvals)))._tag
        expect(["Completed", "Compensated"]).toContain(final)
        for (const step of ["reserve", "charge", "wire", "ship"] as const) {
          expect(world.applied[step]).toBeLessThanOrEqual(1)
          if (final === "Completed") expect(world.applied[step]).toBe(1)
          expect(world.undone[step]).toBe(final === "Compensated" ? world.applied[step] : 0)
        }
        expect(Journal.verifyEntries(Effect.runSync(journal.read("order")))._tag).toBe("Intact")
      })
    )
  }

  it.effect(
    "a crash between a step's INTENT and its call: the operator says not applied, and the saga is undone once",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const journal = makeMemoryJournal()
        const approvals = Approval.makeMemory()
        const store = storeLayer(journal, approvals)
        const first = yield* Effect.provide(Saga.run("order", program(world)), store)
        assert(first._tag === "AwaitingApproval")
        yield* Effect.provide(Saga.approve("order", first.request.stepId, { by: "alice" }), store)
        const crashed = yield* Effect.provide(Saga.run("order", program(world)), store).pipe(
          Effect.provide(Testing.faults({ tool: "wire", fault: "interrupt" }))
        )
        expect(crashed._tag).toBe("Suspended")
        const final = yield* Effect.provide(recover(world, program(world)), store)
        expect(final._tag).toBe("Compensated")
        expect(world.applied).toEqual({ reserve: 1, charge: 1, wire: 0, ship: 0 })
        expect(world.undone).toEqual({ reserve: 1, charge: 1, wire: 0, ship: 0 })
      })
  )

  it.effect("the happy path makes exactly the number of journal writes this test crashes between", () =>
    Effect.gen(function* () {
      const { counter, journal } = countingJournal(makeMemoryJournal())
      const result = yield* Effect.provide(happyPath(program(makeWorld())), storeLayer(journal, Approval.makeMemory()))
      expect(result).toBe("Completed")
      expect(counter.writes).toBe(happyPathWrites)
    })
  )
})

const program = (world: World) => {
  const tools = toolsOf(world)
  return Effect.gen(function* () {
    yield* tools.reserve("A-1")
    yield* tools.charge("42.00")
    yield* tools.wire("DE89")
    return yield* tools.ship("parcel")
  })
}
