/**
 * Closing the `Saga` layer interrupts every run in flight at once: a run whose suspension is slow
 * to journal (a busy PostgreSQL pool) does not leave the others running meanwhile, starting new
 * calls of their tools.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Ref, Schema, Scope } from "effect"
import { Approval, Compensable, Journal, Saga } from "../src/index.js"

/** The memory journal, its `SAGA_SUSPENDED` appends held until `release`; `suspending` once the first is. */
const slowToSuspend = (suspending: Deferred.Deferred<void>, release: Deferred.Deferred<void>) =>
  Layer.effect(
    Journal.Journal,
    Effect.map(Journal.Journal, (journal) => ({
      ...journal,
      append: (...args: Parameters<typeof journal.append>) =>
        args[2].some((draft) => draft.phase === "SAGA_SUSPENDED")
          ? Effect.zipRight(
              Effect.zipRight(Deferred.succeed(suspending, undefined), Deferred.await(release)),
              journal.append(...args)
            )
          : journal.append(...args)
    }))
  ).pipe(Layer.provide(Journal.layerMemory))

describe("closing the Saga layer with runs in flight", () => {
  it.effect("interrupts them all at once: none starts a call while another's suspension is journaled", () =>
    Effect.gen(function* () {
      const suspending = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const calls = yield* Ref.make(0)
      const ship = Compensable.make({
        name: "ship",
        input: Schema.Int,
        success: Schema.Int,
        execute: (n) =>
          Effect.zipRight(
            Ref.update(calls, (count) => count + 1),
            Effect.as(Deferred.await(gate), n)
          ),
        compensate: () => Effect.void
      })
      const journal = slowToSuspend(suspending, release)
      const scope = yield* Scope.make()
      const services = yield* Layer.buildWithScope(
        Layer.merge(Saga.layer, journal).pipe(Layer.provide(Layer.merge(journal, Approval.layerMemory))),
        scope
      )
      const sagaIds = ["a", "b", "c"]
      const runs = yield* Effect.forEach(sagaIds, (sagaId) =>
        Effect.fork(Effect.provide(Saga.run(sagaId, Effect.zipRight(ship(1), ship(2))), services))
      )
      while ((yield* Ref.get(calls)) < sagaIds.length) yield* Effect.yieldNow()

      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* Deferred.await(suspending)
      // A run not interrupted yet would go on now: its first call answers, and its second starts.
      yield* Deferred.succeed(gate, undefined)
      yield* Effect.repeatN(Effect.yieldNow(), 100)
      const callsWhileClosing = yield* Ref.get(calls)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(closing)
      expect(callsWhileClosing).toBe(sagaIds.length)
      for (const run of runs) expect(Exit.isInterrupted(yield* Fiber.await(run))).toBe(true)
      const store = Context.get(services, Journal.Journal)
      for (const sagaId of sagaIds) {
        const entries = yield* store.read(sagaId)
        expect(entries.at(-1)?.phase).toBe("SAGA_SUSPENDED")
        expect(entries.filter((entry) => entry.phase === "INTENT")).toHaveLength(1)
      }
    })
  )
})
