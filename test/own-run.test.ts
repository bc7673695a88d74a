import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { recordedReserve } from "./fixtures/recorded-reserve.js"

/**
 * A run or an operator's command of a saga from inside that saga's own run would wait for the run
 * to end, which waits for it: it is refused at once, naming the saga. Without that, it hung for
 * good (the saga's lock is not re-entrant, and the run waits for it uninterruptibly).
 */
const fixture = Effect.sync(() => {
  const world: Array<string> = []
  const reserve = recordedReserve(world)
  return { world, reserve }
})

/** The defect's message, if `exit` died. */
const defectOf = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) ? Cause.dieOption(exit.cause).pipe((d) => (d._tag === "Some" ? String(d.value) : "")) : ""

/** Fails the test (instead of hanging the suite) if the run never ends. */
const HANG = 5_000

describe("a saga run or commanded from inside its own run", () => {
  it.effect(
    "a run of the saga from its own program dies at once naming the saga; the outer run goes on",
    () =>
      Effect.gen(function* () {
        const { reserve, world } = yield* fixture
        const program = Effect.gen(function* () {
          yield* reserve("A")
          return yield* Effect.exit(Saga.run("order-1", reserve("B")))
        })
        const result = yield* Saga.run("order-1", program)
        expect(result._tag).toBe("Completed")
        const inner = result._tag === "Completed" ? result.value : Exit.void
        expect(defectOf(inner)).toContain("saga order-1 was run from inside its own run")
        expect(world).toEqual(["reserve A"])
      }).pipe(Effect.provide(Testing.layer)),
    HANG
  )

  it.effect(
    "a cycle A → B → A is refused where it closes",
    () =>
      Effect.gen(function* () {
        const { reserve, world } = yield* fixture
        const inB = Effect.zipRight(reserve("B"), Effect.exit(Saga.run("a", reserve("again"))))
        const result = yield* Saga.run("a", Effect.zipRight(reserve("A"), Saga.run("b", inB)))
        expect(result._tag).toBe("Completed")
        const b = result._tag === "Completed" ? result.value : undefined
        expect(b?._tag).toBe("Completed")
        const inner = b?._tag === "Completed" ? b.value : Exit.void
        expect(defectOf(inner)).toContain("saga a was run from inside its own run")
        expect(world).toEqual(["reserve A", "reserve B"])
      }).pipe(Effect.provide(Testing.layer)),
    HANG
  )

  it.effect(
    "a fiber the program left behind may run the saga again once its run has ended, as a re-run of it",
    () =>
      Effect.gen(function* () {
        const { reserve, world } = yield* fixture
        const runEnded = yield* Deferred.make<void>()
        const rerun = yield* Deferred.make<Exit.Exit<unknown, unknown>>()
        const program = Effect.gen(function* () {
          yield* reserve("A")
          // A daemon inherits what the program's fiber holds: the run it belongs to, too.
          yield* Effect.forkDaemon(
            Effect.zipRight(
              Deferred.await(runEnded),
              Effect.flatMap(Effect.exit(Saga.run("order-3", reserve("A"))), (exit) => Deferred.succeed(rerun, exit))
            )
          )
          return "booked"
        })
        const first = yield* Saga.run("order-3", program)
        expect(first._tag).toBe("Completed")
        yield* Deferred.succeed(runEnded, undefined)
        const fromDaemon = yield* Deferred.await(rerun)
        const fromOutside = yield* Saga.run("order-3", reserve("A"))
        expect(fromDaemon).toEqual(Exit.succeed(fromOutside))
        expect(fromOutside._tag).toBe("Completed")
        expect(world).toEqual(["reserve A"])
      }).pipe(Effect.provide(Testing.layer)),
    HANG
  )

  it.effect(
    "compensating or resolving the saga from its own program fails with CommandRefused",
    () =>
      Effect.gen(function* () {
        const { reserve } = yield* fixture
        const program = Effect.gen(function* () {
          yield* reserve("A")
          const compensated = yield* Effect.flip(Saga.compensate("order-2"))
          const resolved = yield* Effect.flip(
            Saga.resolve("order-2", "reserve#1", { outcome: "not-applied", by: "ops" })
          )
          return [compensated, resolved] as const
        })
        const result = yield* Saga.run("order-2", program)
        expect(result._tag).toBe("Completed")
        const [compensated, resolved] = result._tag === "Completed" ? result.value : []
        expect(compensated).toMatchObject({ _tag: "CommandRefused", sagaId: "order-2" })
        expect(compensated?.message).toContain("from inside the saga's own run")
        expect(resolved).toMatchObject({ _tag: "CommandRefused", sagaId: "order-2", stepId: "reserve#1" })
      }).pipe(Effect.provide(Testing.layer)),
    HANG
  )
})
