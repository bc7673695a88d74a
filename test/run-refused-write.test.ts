/**
 * A run (`Saga.start`, `Saga.resume`, a run `Recovery` drives) whose write is refused after entries
 * of its own names them, as an operator's command does: it never says "nothing was written".
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Either, Fiber, Layer, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Recovery, Saga, SagaDefinition, SqlStore } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"

describe("a run whose write is refused after entries of its own says what it wrote", () => {
  for (const [name, makeStore] of stores) {
    it.scoped(
      `${name}: its lease lapsed mid-step and Recovery took the saga over: ConcurrencyConflict names the run's revisions`,
      () =>
        Effect.gen(function* () {
          const { journal, paused, world, worker } = yield* setUp(makeStore)
          const a = yield* worker(paused, "worker-a")
          const running = yield* Effect.fork(Effect.either(Effect.provide(Saga.start(world.Order, "o-1", "o-1"), a)))
          yield* Deferred.await(world.entered)
          yield* TestClock.adjust("31 seconds")

          const b = yield* worker(journal, "worker-b")
          const recovery = yield* Effect.provide(Recovery.make({ definitions: [world.Order] }), b)
          const report = yield* recovery.recoverAll
          expect(report.sagas.map((saga) => saga._tag === "Resumed" && saga.result._tag)).toEqual(["Completed"])
          // What worker a wrote: every entry before worker b's SAGA_RESUMED.
          const entries = yield* journal.read("o-1")
          const ownCount = entries.findIndex((entry) => entry.phase === "SAGA_RESUMED")
          expect(ownCount).toBeGreaterThan(1)

          yield* world.letTheFirstChargeAnswer
          const error = Either.flip(yield* Fiber.join(running)).pipe(Either.getOrThrow)
          assert(error._tag === "ConcurrencyConflict")
          expect(error.written).toBe(ownCount)
          expect(error.message).toBe(
            `saga o-1 is at revision ${entries.length}, not ${ownCount}: it moved on after this caller wrote revisions 1–${ownCount}; its next write was refused`
          )
          expect(yield* journal.read("o-1")).toEqual(entries)
        })
    )

    it.scoped(
      `${name}: a resume whose lease lapsed and another worker claimed: LeaseHeld names the entries this resume wrote`,
      () =>
        Effect.gen(function* () {
          const { journal, paused, world, worker } = yield* setUp(makeStore)
          const a = yield* worker(paused, "worker-a")
          // A first run takes reserve and is interrupted: suspended, its journal at `before`.
          const first = Effect.zipRight(world.reserve("o-2"), Effect.interrupt)
          expect((yield* Effect.provide(Saga.run("o-2", first), a))._tag).toBe("Suspended")
          const before = (yield* journal.read("o-2")).length

          const resuming = yield* Effect.fork(
            Effect.either(Effect.provide(Saga.resume("o-2", world.Order.program("o-2", "o-2")), a))
          )
          yield* Deferred.await(world.entered)
          // SAGA_RESUMED and charge's INTENT.
          const written = (yield* journal.read("o-2")).length - before
          expect(written).toBe(2)
          yield* TestClock.adjust("31 seconds")
          yield* journal.claim("o-2", { owner: "worker-b", ttlMillis: 30_000 })

          yield* world.letTheFirstChargeAnswer
          const error = Either.flip(yield* Fiber.join(resuming)).pipe(Either.getOrThrow)
          assert(error._tag === "LeaseHeld")
          expect(error.written).toBe(2)
          expect(error.message).toMatch(
            /^saga o-2 is being driven by worker-b \(lease until \S+\): this caller had written 2 entries, its next write was refused$/
          )
        })
    )
  }

  it.scoped("a run that wrote nothing before its write was refused still says that nothing was written", () =>
    Effect.gen(function* () {
      const { journal, world, worker } = yield* setUp(stores[0]![1])
      const a = yield* worker(journal, "worker-a")
      const first = Effect.zipRight(world.reserve("o-3"), Effect.interrupt)
      expect((yield* Effect.provide(Saga.run("o-3", first), a))._tag).toBe("Suspended")
      yield* journal.claim("o-3", { owner: "worker-b", ttlMillis: 30_000 })
      const error = yield* Effect.flip(Effect.provide(Saga.resume("o-3", world.Order.program("o-3", "o-3")), a))
      assert(error._tag === "LeaseHeld")
      expect(error.written).toBeUndefined()
      expect(error.message).toContain("nothing was written")
    })
  )
})

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-run-refused-write-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

type Store = Layer.Layer<Journal.Journal | Approval.Approval, unknown>

const stores: ReadonlyArray<readonly [string, () => Store]> = [
  [
    "in memory",
    () =>
      Layer.merge(
        Layer.succeed(Journal.Journal, makeMemoryJournal()),
        Layer.succeed(Approval.Approval, Approval.makeMemory())
      )
  ],
  [
    "on SQLite",
    () => SqlStore.layerSqlite({ filename: path.join(dir, `run-${Math.random().toString(36).slice(2)}.db`) })
  ]
]

/**
 * An order (reserve, charge, ship; each retried with its idempotency key) whose first charge call
 * waits until it is let go, and workers on one store with a lease of 30 seconds. `paused` is the
 * store as a worker paused past its lease sees it: its renewals never land.
 */
const setUp = (makeStore: () => Store) =>
  Effect.gen(function* () {
    const store: Context.Context<Journal.Journal | Approval.Approval> = yield* Layer.build(makeStore())
    const journal = yield* Effect.provide(Journal.Journal, store)
    const paused: Journal.Journal["Type"] = { ...journal, renew: () => Effect.succeed(0) }
    const entered = yield* Deferred.make<void>()
    const answer = yield* Deferred.make<void>()
    let charges = 0
    const tool = (name: string, execute: (id: string) => Effect.Effect<string>) =>
      Compensable.make({
        name,
        input: Schema.String,
        success: Schema.String,
        retryMode: "idempotency-key",
        execute,
        compensate: () => Effect.void
      })
    const reserve = tool("reserve", (id) => Effect.succeed(`reserve:${id}`))
    const charge = tool("charge", (id) =>
      charges++ > 0
        ? Effect.succeed(`charge:${id}`)
        : Effect.zipRight(Deferred.succeed(entered, undefined), Effect.as(Deferred.await(answer), `charge:${id}`))
    )
    const ship = tool("ship", (id) => Effect.succeed(`ship:${id}`))
    const Order = SagaDefinition.make("order", {
      input: Schema.String,
      program: (id) => Effect.zipRight(reserve(id), Effect.zipRight(charge(id), ship(id)))
    })
    const worker = (journal: Journal.Journal["Type"], owner: string) =>
      Layer.build(
        Saga.layerWith({ owner, leaseTtl: "30 seconds" }).pipe(
          Layer.provideMerge(Layer.succeedContext(Context.add(store, Journal.Journal, journal)))
        )
      )
    const world = {
      Order,
      reserve,
      entered: entered,
      letTheFirstChargeAnswer: Deferred.succeed(answer, undefined)
    }
    return { journal, paused, world, worker }
  })
