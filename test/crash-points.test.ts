import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Schema } from "effect"
import { Approval, Compensable, Journal, Saga } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/memoryJournal.js"
import * as Testing from "../src/Testing.js"

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
        const exit = yield* Effect.exit(Effect.provide(happyPath(world), crashing))
        if (Exit.isSuccess(exit)) expect(exit.value).toBe("Completed")

        const final = yield* Effect.provide(recover(world), storeLayer(journal, approvals))
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
        const final = yield* Effect.provide(recover(world), store)
        expect(final).toBe("Compensated")
        expect(world.applied).toEqual({ reserve: 1, charge: 1, wire: 0, ship: 0 })
        expect(world.undone).toEqual({ reserve: 1, charge: 1, wire: 0, ship: 0 })
      })
  )

  it.effect("the happy path makes exactly the number of journal writes this test crashes between", () =>
    Effect.gen(function* () {
      const journal = makeMemoryJournal()
      let writes = 0
      const counting = {
        ...journal,
        append: (...args: Parameters<typeof journal.append>) => {
          writes++
          return journal.append(...args)
        }
      }
      const result = yield* Effect.provide(happyPath(makeWorld()), storeLayer(counting, Approval.makeMemory()))
      expect(result).toBe("Completed")
      expect(writes).toBe(happyPathWrites)
    })
  )
})

type StepName = "reserve" | "charge" | "wire" | "ship"

/** A provider that applies each idempotency key once, and counts what it really did. */
const makeWorld = () => {
  const applied: Record<StepName, number> = { reserve: 0, charge: 0, wire: 0, ship: 0 }
  const undone: Record<StepName, number> = { reserve: 0, charge: 0, wire: 0, ship: 0 }
  const keys = new Set<string>()
  const apply = (step: StepName, key: string) =>
    Effect.sync(() => {
      if (!keys.has(key)) {
        keys.add(key)
        applied[step]++
      }
      return `${step}-done`
    })
  const undo = (step: StepName, key: string) =>
    Effect.sync(() => {
      if (!keys.has(key)) {
        keys.add(key)
        undone[step]++
      }
    })
  return { applied, undone, keys, apply, undo }
}

type World = ReturnType<typeof makeWorld>

const toolsOf = (world: World) => {
  const compensable = (name: "reserve" | "charge" | "ship") =>
    Compensable.make({
      name,
      input: Schema.String,
      success: Schema.String,
      retryMode: "idempotency-key",
      execute: (_, step) => world.apply(name, step.idempotencyKey),
      compensate: (ctx) => world.undo(name, ctx.idempotencyKey)
    })
  const wire = Compensable.make({
    name: "wire",
    input: Schema.String,
    success: Schema.String,
    reversibility: "irreversible",
    execute: (_, step) => world.apply("wire", step.idempotencyKey)
  })
  return { reserve: compensable("reserve"), charge: compensable("charge"), ship: compensable("ship"), wire }
}

const program = (world: World) => {
  const tools = toolsOf(world)
  return Effect.gen(function* () {
    yield* tools.reserve("A-1")
    yield* tools.charge("42.00")
    yield* tools.wire("DE89")
    return yield* tools.ship("parcel")
  })
}

/** Run, approve what waits, run again. */
const happyPath = (world: World) =>
  Effect.gen(function* () {
    const first = yield* Saga.run("order", program(world))
    assert(first._tag === "AwaitingApproval")
    yield* Saga.approve("order", first.request.stepId, { by: "alice" })
    return (yield* Saga.run("order", program(world)))._tag
  })

/** What an operator does after the crash, until the saga is finished. */
const recover = (world: World) =>
  Effect.gen(function* () {
    for (let round = 0; round < 10; round++) {
      const result = yield* Saga.run("order", program(world))
      switch (result._tag) {
        case "AwaitingApproval":
          yield* Saga.approve("order", result.request.stepId, { by: "alice" })
          break
        case "NeedsAttention":
          for (const step of result.unknown) {
            const happened = world.keys.has(`order/${step.stepId}`)
            yield* Saga.resolve(
              "order",
              step.stepId,
              happened
                ? { outcome: "applied", by: "oncall", result: `${step.toolName}-done` }
                : { outcome: "not-applied", by: "oncall" }
            )
          }
          break
        case "Suspended":
          break
        default:
          return result._tag
      }
    }
    return "did not finish"
  })

const crashingJournal = (journal: Journal.Journal["Type"], crashAfter: number): Journal.Journal["Type"] => {
  let writes = 0
  return { ...journal, append: (...args) => (writes++ < crashAfter ? journal.append(...args) : Effect.interrupt) }
}

const storeLayer = (journal: Journal.Journal["Type"], approvals: Approval.Approval["Type"]) =>
  Saga.layer.pipe(
    Layer.provide(Layer.merge(Layer.succeed(Journal.Journal, journal), Layer.succeed(Approval.Approval, approvals)))
  )
