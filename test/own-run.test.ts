import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
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
    "two runs that each run the other's saga inside their own: the second to wait dies at once naming both; nothing hangs",
    () =>
      Effect.gen(function* () {
        const { reserve, world } = yield* fixture
        const inA = yield* Deferred.make<void>()
        const inB = yield* Deferred.make<void>()
        // Each holds its own saga's lock, then runs the other's, once both are inside their runs.
        const programOf = (own: string, other: string, here: Deferred.Deferred<void>, there: Deferred.Deferred<void>) =>
          Effect.gen(function* () {
            yield* reserve(own)
            yield* Deferred.succeed(here, undefined)
            yield* Deferred.await(there)
            return yield* Effect.exit(Saga.run(`x-${other}`, reserve(`${own} in ${other}`)))
          })
        const [a, b] = yield* Effect.all(
          [Saga.run("x-a", programOf("a", "b", inA, inB)), Saga.run("x-b", programOf("b", "a", inB, inA))],
          { concurrency: 2 }
        )
        // The run of x-b inside x-a waited first; the run of x-a inside x-b closed the cycle: refused.
        expect(b._tag).toBe("Completed")
        const refused = b._tag === "Completed" ? b.value : Exit.void
        expect(defectOf(refused)).toBe(
          "RuntimeException: effect-saga: saga x-a was run from inside the run of saga x-b, while a run inside saga x-a's run waits for saga x-b: the runs would wait for each other to end, for good (a deadlock). Nothing ran and nothing was journaled"
        )
        // Once x-b ended, the run of x-b inside x-a went on: a run of the saga x-b completed with
        // another program (it does not replay its journal).
        expect(a._tag).toBe("Completed")
        const inner: Exit.Exit<unknown, unknown> = a._tag === "Completed" ? a.value : Exit.void
        expect(inner).toMatchObject({ _tag: "Failure", cause: { error: { _tag: "NonDeterminism", sagaId: "x-b" } } })
        expect(world).toEqual(["reserve a", "reserve b"])
      }).pipe(Effect.provide(Testing.layer)),
    HANG
  )

  it.effect(
    "compensateEffect across two runs (each undoing an effect of the other's saga), and a run against one: refused where the cycle closes; nothing hangs",
    () =>
      Effect.gen(function* () {
        const { reserve, world } = yield* fixture
        const effectOf = (sagaId: string) => Effect.map(Saga.status(sagaId), (status) => status.steps[0]!.effectId)
        // Each saga's first step, and a moment where both are inside their runs.
        const inBoth = (own: string, here: Deferred.Deferred<void>, there: Deferred.Deferred<void>) =>
          Effect.zipRight(reserve(own), Effect.zipRight(Deferred.succeed(here, undefined), Deferred.await(there)))
        const [inA, inB] = [yield* Deferred.make<void>(), yield* Deferred.make<void>()]
        const undoOther = (own: string, other: string, here: Deferred.Deferred<void>, there: Deferred.Deferred<void>) =>
          Effect.zipRight(
            inBoth(own, here, there),
            Effect.either(Effect.flatMap(effectOf(`y-${other}`), (effectId) => Saga.compensateEffect(effectId)))
          )
        const [a, b] = yield* Effect.all(
          [Saga.run("y-a", undoOther("a", "b", inA, inB)), Saga.run("y-b", undoOther("b", "a", inB, inA))],
          { concurrency: 2 }
        )
        // The undo of y-a's effect, asked inside y-b, closed the cycle: refused, typed.
        const refused = b._tag === "Completed" ? b.value : undefined
        expect(refused).toMatchObject({
          _tag: "Left",
          left: {
            _tag: "CommandRefused",
            sagaId: "y-a",
            reason:
              "compensateEffect was asked from inside the run of saga y-b, while a run inside saga y-a's run waits for saga y-b: each would wait for the other to end, for good (a deadlock); nothing was journaled: ask for it once one of the runs has ended"
          }
        })
        // The one asked first waited for y-b's run to end, then undid its effect.
        expect(a._tag === "Completed" ? a.value : undefined).toMatchObject({
          _tag: "Right",
          right: { outcome: "completed" }
        })
        expect(world).toEqual(["reserve a", "reserve b", "release res-b"])

        // A run against an undo: y-c runs y-d inside it, y-d asks for the undo of y-c's effect.
        const [inC, inD] = [yield* Deferred.make<void>(), yield* Deferred.make<void>()]
        const [c, d] = yield* Effect.all(
          [
            Saga.run("y-c", Effect.zipRight(inBoth("c", inC, inD), Effect.exit(Saga.run("y-d", reserve("d again"))))),
            Saga.run("y-d", undoOther("d", "c", inD, inC))
          ],
          { concurrency: 2 }
        )
        const sides = [c._tag === "Completed" ? c.value : undefined, d._tag === "Completed" ? d.value : undefined]
        // Whichever waited second was refused; neither hung.
        expect(
          sides.some(
            (side) =>
              (Exit.isExit(side) && Exit.isFailure(side) && defectOf(side).includes("(a deadlock)")) ||
              (Either.isEither(side) && Either.isLeft(side) && side.left._tag === "CommandRefused")
          )
        ).toBe(true)
      }).pipe(Effect.provide(Testing.layer)),
    HANG
  )

  it.effect(
    "runs nested one way only (a then b, c then b) wait for each other as they should: no refusal",
    () =>
      Effect.gen(function* () {
        const { reserve, world } = yield* fixture
        const [a, c] = yield* Effect.all(
          [
            Saga.run("x-a", Effect.zipRight(reserve("a"), Saga.run("x-b", reserve("b")))),
            Saga.run("x-c", Effect.zipRight(reserve("c"), Saga.run("x-b", reserve("b"))))
          ],
          { concurrency: 2 }
        )
        expect([a._tag, c._tag]).toEqual(["Completed", "Completed"])
        expect(world.filter((line) => line === "reserve b")).toHaveLength(1)
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
