import { describe, expect, it } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { Compensable, Journal, Outcome, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"

describe("concurrent branches", () => {
  it.effect("steps in concurrent branches get the same ids whatever order they arrive and finish in", () =>
    Effect.gen(function* () {
      yield* runWithClock("fast-first", fixture({ A: 10, B: 20, C: 30 }).branches)
      yield* runWithClock("slow-first", fixture({ A: 30, B: 20, C: 10 }).branches)

      const first = yield* stepsOf("fast-first")
      const second = yield* stepsOf("slow-first")
      expect(first.executed).toEqual(["A", "B", "C"])
      expect(second.executed).toEqual(["C", "B", "A"])
      expect(second.idOf).toEqual(first.idOf)
      expect(new Set(Object.values(first.idOf)).size).toBe(3)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("identical calls in parallel with distinct keys get distinct ids", () =>
    Effect.gen(function* () {
      const { reserve } = fixture()
      yield* Saga.run(
        "s1",
        Effect.all([reserve({ sku: "A" }, { key: "left" }), reserve({ sku: "A" }, { key: "right" })], {
          concurrency: "unbounded"
        })
      )
      const ids = (yield* Saga.status("s1")).steps.map((s) => s.stepId)
      expect(ids.sort()).toEqual(["reserve:left#1", "reserve:right#1"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a failing branch interrupts a sibling's call at once, whether or not its tool declares a timeout", () =>
    Effect.gen(function* () {
      for (const timeout of [undefined, "10 seconds"] as const) {
        const interrupted: Array<string> = []
        const slow = Compensable.make({
          name: "slow",
          input: Schema.String,
          success: Schema.String,
          ...(timeout === undefined ? {} : { timeout }),
          execute: () => Effect.onInterrupt(Effect.never, () => Effect.sync(() => void interrupted.push("slow"))),
          compensate: () => Effect.void
        })
        const sagaId = `sibling-${timeout ?? "none"}`
        const fiber = yield* Effect.fork(
          Saga.run(sagaId, Effect.all([slow("a"), bad("b")], { concurrency: "unbounded" }))
        )
        // No time passes: the sibling's call is interrupted when the branch fails, not at its timeout.
        yield* TestClock.adjust("1 second")
        const ended = yield* Fiber.poll(fiber)
        expect(Option.isSome(ended), `timeout ${timeout}`).toBe(true)
        expect(interrupted).toEqual(["slow"])
        expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "NeedsAttention" })
      }
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect('with mode "either", a failing branch lets its sibling\'s call finish, and the saga compensates it', () =>
    Effect.gen(function* () {
      const undone: Array<string> = []
      const slow = Compensable.make({
        name: "slow",
        input: Schema.String,
        success: Schema.String,
        execute: (input) => Effect.as(Effect.sleep("1 second"), input),
        compensate: ({ result }) => Effect.sync(() => void undone.push(result))
      })
      const program = Effect.flatMap(
        Effect.all([slow("a"), bad("b")], { concurrency: "unbounded", mode: "either" }),
        (results) => Effect.all(results)
      )
      const fiber = yield* Effect.fork(Saga.run("either", program))
      yield* TestClock.adjust("2 seconds")
      const result = yield* Fiber.join(fiber)
      expect(result._tag).toBe("Compensated")
      expect(undone).toEqual(["a"])
      const { executed } = yield* Effect.map(
        Effect.flatMap(Journal.Journal, (journal) => journal.read("either")),
        (entries) => ({ executed: entries.filter((e) => e.phase === "EXECUTED").map((e) => e.toolName) })
      )
      expect(executed).toEqual(["slow"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a call in flight that ends unknown after another branch halted keeps its own reason, in the result and the journal",
    () =>
      Effect.gen(function* () {
        const unsure = (name: string, after: Duration.DurationInput, reason: string) =>
          Compensable.make({
            name,
            input: Schema.Number,
            success: Schema.String,
            execute: () => Effect.zipRight(Effect.sleep(after), Effect.fail(Outcome.unknown(reason))),
            compensate: () => Effect.void
          })
        const slow = unsure("slow", "1 second", "the bank timed out on slow")
        const quick = unsure("quick", "10 millis", "quick's provider hung up")
        const run = yield* Effect.fork(Saga.run("two-unknown", Effect.all([slow(1), quick(1)], { concurrency: 2 })))
        yield* TestClock.adjust("2 seconds")
        const result = yield* Fiber.join(run)
        expect(result._tag).toBe("NeedsAttention")
        if (result._tag !== "NeedsAttention") return
        const reasons = Object.fromEntries(result.unknown.map((step) => [step.toolName, step.reason]))
        expect(reasons).toEqual({
          slow: "outcome unknown: the bank timed out on slow",
          quick: "outcome unknown: quick's provider hung up"
        })
        const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("two-unknown"))
        const journaled = JSON.parse(entries.find((entry) => entry.phase === "SAGA_NEEDS_ATTENTION")!.payload!)
        expect(journaled.unknown).toEqual(result.unknown)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("concurrent branches are undone in reverse completion order, not reverse start order", () =>
    Effect.gen(function* () {
      const { branches, undone } = fixture({ A: 20, B: 30, C: 10 })
      const program = Effect.zipRight(branches, Effect.fail("declined"))
      const result = yield* runWithClock("s1", program)
      expect(result._tag).toBe("Compensated")

      const { executed } = yield* stepsOf("s1")
      expect(executed).toEqual(["C", "A", "B"])
      expect(undone).toEqual(["B", "A", "C"])
      expect(undone).toEqual(executed.slice().reverse())
    }).pipe(Effect.provide(Testing.layer))
  )
})

/** A tool whose every call fails at once, "refused". */
const bad = Compensable.make({
  name: "bad",
  input: Schema.String,
  success: Schema.String,
  execute: () => Effect.fail("refused"),
  compensate: () => Effect.void
})

/**
 * `reserve` sleeps as long as `timing` says for its sku, then returns the sku; undos log it.
 * `branches` reserves every sku in its own branch, each sleeping before its call as well.
 */
const fixture = (timing: Record<string, number> = {}) => {
  const undone: Array<string> = []
  const reserve = Compensable.make({
    name: "reserve",
    input: Schema.Struct({ sku: Schema.String }),
    success: Schema.String,
    execute: ({ sku }) => Effect.as(Effect.sleep(timing[sku] ?? 0), sku),
    compensate: ({ result }) => Effect.sync(() => undone.push(result))
  })
  const branches = Effect.all(
    Object.entries(timing).map(([sku, millis]) => Effect.zipRight(Effect.sleep(millis), reserve({ sku }))),
    { concurrency: "unbounded" }
  )
  return { reserve, branches, undone }
}

/** Runs a saga in a fiber and moves the TestClock far enough for every sleep in it. */
const runWithClock = <A, E>(sagaId: string, program: Effect.Effect<A, E, Saga.CurrentSaga>) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(Saga.run(sagaId, program))
    yield* TestClock.adjust("1 minute")
    return yield* Fiber.join(fiber)
  })

/** The skus in the order their steps were journaled EXECUTED, and the step id of each sku. */
const stepsOf = (sagaId: string) =>
  Effect.map(
    Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId)),
    (entries) => {
      const idOf: Record<string, string> = {}
      for (const e of entries) if (e.phase === "INTENT") idOf[JSON.parse(e.input!).sku] = e.stepId!
      const skuOf = (stepId: string | null) => Object.keys(idOf).find((sku) => idOf[sku] === stepId)!
      return { idOf, executed: entries.filter((e) => e.phase === "EXECUTED").map((e) => skuOf(e.stepId)) }
    }
  )
