import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { Compensable, Journal, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { recordedReserve } from "./fixtures/recorded-reserve.js"

/**
 * A second run of a saga in the worker that runs it now (an HTTP client's retry) waits for the
 * first: its caller may stop waiting (a timeout, an interruption), and a shutdown never starts it.
 */
const fixture = Effect.sync(() => {
  const world: Array<string> = []
  const reserve = recordedReserve(world)
  // A provider that does not answer: a call cut off there has an unknown outcome.
  const charge = Compensable.make({
    name: "charge",
    input: Schema.String,
    success: Schema.String,
    execute: (amount) =>
      Effect.zipRight(
        Effect.sync(() => world.push(`charge ${amount}`)),
        Effect.never
      )
  })
  return { world, reserve, charge }
})

const phases = (journal: Journal.Journal["Type"], sagaId: string) =>
  Effect.map(journal.read(sagaId), (entries) => entries.map((entry) => `${entry.toolName ?? ""} ${entry.phase}`.trim()))

/**
 * A service whose scope the test closes, and a run of `sagaId` in it that holds the saga between
 * its first step and the next (interrupted, it suspends the saga cleanly), once it holds it.
 */
const holdingRun = (sagaId: string, reserve: ReturnType<typeof recordedReserve>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(Testing.layer, scope)
    const reserved = yield* Deferred.make<void>()
    const first = yield* Effect.fork(
      Effect.provide(
        Saga.run(
          sagaId,
          Effect.zipRight(reserve("A"), Effect.zipRight(Deferred.succeed(reserved, undefined), Effect.never))
        ),
        context
      )
    )
    yield* Deferred.await(reserved)
    return { scope, context, first }
  })

/** Closes the service with `waiter` queued behind the holding run: both end interrupted, the saga suspended after its first step. */
const closedWhileWaiting = (
  sagaId: string,
  held: Effect.Effect.Success<ReturnType<typeof holdingRun>>,
  waiter: Fiber.RuntimeFiber<unknown, unknown>
) =>
  Effect.gen(function* () {
    yield* Effect.yieldNow()
    yield* Scope.close(held.scope, Exit.void)
    expect(Exit.isInterrupted(yield* Fiber.await(held.first))).toBe(true)
    expect(Exit.isInterrupted(yield* Fiber.await(waiter))).toBe(true)
    expect(yield* phases(Context.get(held.context, Journal.Journal), sagaId)).toEqual([
      "SAGA_STARTED",
      "reserve INTENT",
      "reserve EXECUTED",
      "SAGA_SUSPENDED"
    ])
  })

/** Fails the test (instead of hanging the suite) if a run never ends. */
const HANG = 5_000

describe("a second run of a saga the worker is running", () => {
  it.effect(
    "stops waiting for the first when its caller's timeout fires, having written nothing",
    () =>
      Effect.gen(function* () {
        const { reserve } = yield* fixture
        const gate = yield* Deferred.make<void>()
        const reserved = yield* Deferred.make<void>()
        const first = yield* Effect.fork(
          Saga.run(
            "retry-1",
            Effect.zipRight(reserve("A"), Effect.zipRight(Deferred.succeed(reserved, undefined), Deferred.await(gate)))
          )
        )
        yield* Deferred.await(reserved)
        const retry = yield* Effect.fork(Effect.timeout(Saga.run("retry-1", reserve("A")), "1 second"))
        yield* TestClock.adjust("1 second")
        const timedOut = yield* Effect.either(Fiber.join(retry))
        expect(timedOut).toMatchObject({ _tag: "Left", left: { _tag: "TimeoutException" } })
        // The first run was never disturbed.
        expect(Option.isNone(yield* Fiber.poll(first))).toBe(true)
        yield* Deferred.succeed(gate, undefined)
        expect((yield* Fiber.join(first))._tag).toBe("Completed")
        const journal = yield* Journal.Journal
        expect(yield* phases(journal, "retry-1")).toEqual([
          "SAGA_STARTED",
          "reserve INTENT",
          "reserve EXECUTED",
          "SAGA_COMPLETED"
        ])
      }).pipe(Effect.provide(Testing.layer)),
    HANG
  )

  it.effect(
    "does not start once the service is closing: the saga stays suspended, resumable, with no new call",
    () =>
      Effect.gen(function* () {
        const { charge, reserve, world } = yield* fixture
        // The first run waits between steps: interrupted, it suspends the saga cleanly.
        const held = yield* holdingRun("retry-2", reserve)
        const retry = yield* Effect.fork(
          Effect.provide(Saga.run("retry-2", Effect.zipRight(reserve("A"), charge("42"))), held.context)
        )
        yield* closedWhileWaiting("retry-2", held, retry)
        expect(world).toEqual(["reserve A"])
      }),
    HANG
  )

  it.effect(
    "an operator's command on the saga the run holds is refused at once (LeaseHeld, this worker), writing nothing; the run goes on",
    () =>
      Effect.gen(function* () {
        const { reserve, world } = yield* fixture
        const held = yield* holdingRun("retry-3", reserve)
        const refused = yield* Effect.flip(Effect.provide(Saga.compensate("retry-3"), held.context))
        expect(refused._tag).toBe("LeaseHeld")
        expect(refused.message).toMatch(/^saga retry-3 is being driven by .+ \(lease until .+\): nothing was written$/)
        yield* Scope.close(held.scope, Exit.void)
        expect(Exit.isInterrupted(yield* Fiber.await(held.first))).toBe(true)
        expect(yield* phases(Context.get(held.context, Journal.Journal), "retry-3")).toEqual([
          "SAGA_STARTED",
          "reserve INTENT",
          "reserve EXECUTED",
          "SAGA_SUSPENDED"
        ])
        expect(world).toEqual(["reserve A"])
      }),
    HANG
  )

  it.effect(
    "an operator's command waiting for the saga behind another command does not start once the service is closing: it ends interrupted, writing nothing",
    () =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(Testing.layer, scope)
        const undoing = yield* Deferred.make<void>()
        const hold = Compensable.make({
          name: "hold",
          input: Schema.String,
          success: Schema.String,
          execute: (what) => Effect.succeed(what),
          compensate: () => Effect.zipRight(Deferred.succeed(undoing, undefined), Effect.never)
        })
        yield* Effect.provide(Saga.run("retry-4", hold("A")), context)
        // The first command's undo never ends: interruptible, so that closing the service ends it.
        const first = yield* Effect.fork(
          Effect.provide(Saga.withInterruptibleUndos(Saga.compensate("retry-4")), context)
        )
        yield* Deferred.await(undoing)
        const second = yield* Effect.fork(Effect.provide(Saga.compensate("retry-4"), context))
        yield* Effect.yieldNow()
        yield* Scope.close(scope, Exit.void)
        expect(Exit.isInterrupted(yield* Fiber.await(first))).toBe(true)
        expect(Exit.isInterrupted(yield* Fiber.await(second))).toBe(true)
        // What the first command wrote, and nothing of the second's.
        expect(yield* phases(Context.get(context, Journal.Journal), "retry-4")).toEqual([
          "SAGA_STARTED",
          "hold INTENT",
          "hold EXECUTED",
          "SAGA_COMPLETED",
          "SAGA_COMPENSATING",
          "hold COMPENSATING",
          "hold COMPENSATION_UNKNOWN"
        ])
      }),
    HANG
  )
})
