/**
 * A fiber the program forks so that it outlives the run (`Effect.forkDaemon`, `Effect.forkIn` an
 * outer scope) cannot move the saga on once its run ended: a call it makes then does not run and
 * journals nothing, and a call it had in flight when the run ended journals nothing more. Its
 * caller is told, with a defect naming the saga and the tool.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Ref, Schema, Scope, TestClock } from "effect"
import { Approval, Compensable, Journal, Saga, SqlStore } from "../src/index.js"
import { countingTool } from "./fixtures/counting-tool.js"
import { threeStores } from "./fixtures/three-stores.js"

const stores = await threeStores("effect-saga-outlived")
const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-saga-outlived-"))

/** The stores once more, the SQLite one writing each entry at once (no `EXECUTED` is held back). */
const everyEntry = [
  ["Journal.layerMemory", () => Layer.merge(Journal.layerMemory, Approval.layerMemory)],
  [
    "SqlStore.layerSqlite (flushEveryEntry)",
    () => SqlStore.layerSqlite({ filename: Path.join(dir, `${Math.random()}.db`), flushEveryEntry: true })
  ]
] as const

const newSagaId = () => `outlived-${Math.random().toString(36).slice(2)}`

/** The defect a late call dies with, or a failure of the test. */
const defectOf = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) throw new Error(`the late call succeeded with ${JSON.stringify(exit.value)}`)
  expect(Cause.isDie(exit.cause)).toBe(true)
  return Cause.pretty(exit.cause)
}

const lateCall = (sagaId: string) =>
  `effect-saga: tool charge was called in saga ${sagaId} after the saga's run had ended (from a fiber that outlived the saga's program, such as one forked with Effect.forkDaemon or Effect.forkIn): it did not run, and nothing was journaled`

for (const [name, store] of stores) {
  describe(`a call from a fiber that outlived its saga's run: ${name}`, () => {
    it.effect("made after the saga completed, it does not run and journals nothing: the saga stays completed", () =>
      Effect.gen(function* () {
        const sagaId = newSagaId()
        const calls = yield* Ref.make(0)
        const go = yield* Deferred.make<void>()
        const charge = countingTool("charge", calls)
        const program = Effect.gen(function* () {
          const late = yield* Effect.forkDaemon(Effect.zipRight(Deferred.await(go), charge({ n: 2 })))
          yield* countingTool("reserve", calls)({ n: 1 })
          return late
        })
        const result = yield* Saga.run(sagaId, program)
        if (result._tag !== "Completed") throw new Error(`the run ended ${result._tag}`)
        const journal = yield* Journal.Journal
        const before = yield* journal.read(sagaId)

        yield* Deferred.succeed(go, undefined)
        expect(defectOf(yield* Fiber.await(result.value))).toContain(lateCall(sagaId))
        expect(yield* Ref.get(calls)).toBe(1)
        expect(yield* journal.read(sagaId)).toEqual(before)
        expect(before.at(-1)?.phase).toBe("SAGA_COMPLETED")
        const status = yield* Saga.status(sagaId)
        expect(status.status).toBe("completed")
        expect(status.steps.map((step) => [step.toolName, step.state])).toEqual([["reserve", "executed"]])
      }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))
    )
  })
}

describe("a call from a fiber that outlived its saga's run", () => {
  it.effect("forked into a scope outside the program, it does not run once the saga completed", () =>
    Effect.gen(function* () {
      const sagaId = newSagaId()
      const calls = yield* Ref.make(0)
      const go = yield* Deferred.make<void>()
      const outer = yield* Scope.make()
      const late = Effect.zipRight(Deferred.await(go), countingTool("charge", calls)({ n: 2 }))
      const program = Effect.zipLeft(Effect.forkIn(late, outer), countingTool("reserve", calls)({ n: 1 }))
      const result = yield* Saga.run(sagaId, program)
      if (result._tag !== "Completed") throw new Error(`the run ended ${result._tag}`)

      yield* Deferred.succeed(go, undefined)
      expect(defectOf(yield* Fiber.await(result.value))).toContain(lateCall(sagaId))
      expect(yield* Ref.get(calls)).toBe(1)
      const journal = yield* Journal.Journal
      expect((yield* journal.read(sagaId)).map((entry) => entry.phase)).toEqual([
        "SAGA_STARTED",
        "INTENT",
        "EXECUTED",
        "SAGA_COMPLETED"
      ])
      yield* Scope.close(outer, Exit.void)
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))))
  )

  it.effect("made after the run was interrupted, it does not run: the saga stays suspended, with no lease", () =>
    Effect.gen(function* () {
      const sagaId = newSagaId()
      const calls = yield* Ref.make(0)
      const go = yield* Deferred.make<void>()
      const forked = yield* Deferred.make<Fiber.RuntimeFiber<string, unknown>>()
      const program = Effect.gen(function* () {
        const late = yield* Effect.forkDaemon(
          Effect.zipRight(Deferred.await(go), countingTool("charge", calls)({ n: 2 }))
        )
        yield* countingTool("reserve", calls)({ n: 1 })
        yield* Deferred.succeed(forked, late)
        return yield* Effect.never
      })
      const run = yield* Effect.fork(Saga.run(sagaId, program))
      const late = yield* Deferred.await(forked)
      yield* Fiber.interrupt(run)

      yield* Deferred.succeed(go, undefined)
      expect(defectOf(yield* Fiber.await(late))).toContain(lateCall(sagaId))
      expect(yield* Ref.get(calls)).toBe(1)
      const journal = yield* Journal.Journal
      expect((yield* journal.read(sagaId)).at(-1)?.phase).toBe("SAGA_SUSPENDED")
      const status = yield* Saga.status(sagaId)
      expect(status.status).toBe("suspended")
      expect(status.lease).toBeNull()
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))))
  )
})

/** A tool that says it started, then answers as `answer` does once `release` is done. */
const slowTool = (started: Deferred.Deferred<void>, release: Deferred.Deferred<void>, answer: Effect.Effect<string>) =>
  Compensable.make({
    name: "slow",
    input: Schema.Struct({ n: Schema.Number }),
    success: Schema.String,
    execute: () =>
      Effect.zipRight(Deferred.succeed(started, undefined), Effect.zipRight(Deferred.await(release), answer)),
    compensate: () => Effect.void
  })

/** A saga whose program forks `slow` as a daemon and returns once the tool started: the run ends with it in flight. */
const inFlight = (answer: Effect.Effect<string>) =>
  Effect.gen(function* () {
    const sagaId = newSagaId()
    const started = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const forked = yield* Deferred.make<Fiber.RuntimeFiber<string, unknown>>()
    const program = Effect.gen(function* () {
      const late = yield* Effect.forkDaemon(slowTool(started, release, answer)({ n: 3 }))
      yield* Deferred.succeed(forked, late)
      yield* Deferred.await(started)
    })
    const result = yield* Saga.run(sagaId, program)
    const journal = yield* Journal.Journal
    const before = yield* journal.read(sagaId)
    yield* Deferred.succeed(release, undefined)
    const late = yield* Deferred.await(forked)
    // Without a bound, a late halt would block the fiber for good: the test would hang.
    const waiting = yield* Effect.fork(Effect.timeout(Fiber.await(late), "1 second"))
    yield* TestClock.adjust("1 second")
    return { sagaId, result, before, exit: yield* Fiber.join(waiting), after: yield* journal.read(sagaId) }
  })

for (const [name, store] of everyEntry) {
  describe(`a call in flight when its saga's run ended: ${name}`, () => {
    const layer = () => Saga.layer.pipe(Layer.provideMerge(store()))

    it.effect("the outcome it comes back with is not journaled after the run's end: its step stays unknown", () =>
      Effect.gen(function* () {
        const { sagaId, result, before, exit, after } = yield* inFlight(Effect.succeed("done"))
        expect(result._tag).toBe("NeedsAttention")
        expect(before.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "INTENT", "SAGA_NEEDS_ATTENTION"])
        expect(defectOf(exit)).toContain(
          `EXECUTED of step ${before[1]!.stepId} (tool slow) of saga ${sagaId} was not journaled: the saga's run had ended`
        )
        expect(after).toEqual(before)
        const status = yield* Saga.status(sagaId)
        expect(status.steps.map((step) => [step.toolName, step.state])).toEqual([["slow", "unknown"]])
      }).pipe(Effect.provide(layer()))
    )

    it.effect("one that halts the run (its outcome unknown) dies instead of waiting for a run that has ended", () =>
      Effect.gen(function* () {
        const { sagaId, exit, before, after } = yield* inFlight(Effect.die(new Error("the provider hung up")))
        expect(defectOf(exit)).toContain(
          `effect-saga: a step of saga ${sagaId} halted (NeedsAttention) after the saga's run had ended`
        )
        expect(after).toEqual(before)
      }).pipe(Effect.provide(layer()))
    )
  })
}
