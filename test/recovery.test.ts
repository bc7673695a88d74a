import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { type Context, Deferred, Effect, Exit, Fiber, Layer, Option, Schema, Scope, TestClock } from "effect"
import { Approval, Compensable, Journal, Recovery, Saga, SagaDefinition, SqlStore } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"

/** One store that several workers share, as processes share a database. */
const makeStore = () => ({ journal: makeMemoryJournal(), approvals: Approval.makeMemory() })
type Store = ReturnType<typeof makeStore>

const storeLayer = (store: Store) =>
  Layer.merge(Layer.succeed(Journal.Journal, store.journal), Layer.succeed(Approval.Approval, store.approvals))

const worker = (store: Store, owner: string) =>
  Saga.layerWith({ owner, leaseTtl: "30 seconds" }).pipe(Layer.provideMerge(storeLayer(store)))

/**
 * A provider that applies each idempotency key once and counts calls; `charge` can be held open
 * (it says when it was entered) to catch a saga in the middle of a step.
 */
const makeWorld = Effect.gen(function* () {
  const calls = { reserve: 0, charge: 0, ship: 0 }
  const applied = new Set<string>()
  const entered = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  let hold = true
  const tool = (name: keyof typeof calls) =>
    Compensable.make({
      name,
      input: Schema.String,
      success: Schema.String,
      retryMode: "idempotency-key",
      execute: (id, step) =>
        Effect.gen(function* () {
          calls[name]++
          if (name === "charge" && hold) {
            yield* Deferred.succeed(entered, undefined)
            yield* Deferred.await(release)
          }
          applied.add(step.idempotencyKey)
          return `${name}:${id}`
        }),
      compensate: () => Effect.void
    })
  const tools = { reserve: tool("reserve"), charge: tool("charge"), ship: tool("ship") }
  const Order = SagaDefinition.make("order", {
    input: Schema.Struct({ id: Schema.String }),
    program: ({ id }) =>
      Effect.gen(function* () {
        yield* tools.reserve(id)
        yield* tools.charge(id)
        return yield* tools.ship(id)
      })
  })
  return {
    calls,
    applied,
    entered,
    Order,
    open: () => {
      hold = false
      return Deferred.succeed(release, undefined)
    }
  }
})

const recordOf = (store: Store, sagaId: string) =>
  Effect.map(store.journal.get(sagaId), (record) => Option.getOrThrow(record))

describe("a recovery pass", () => {
  it.scoped("ends when a saga it resumed is left behind again (it suspends once more): the next pass takes it", () =>
    Effect.gen(function* () {
      let runs = 0
      const noted = Compensable.make({
        name: "noted",
        input: Schema.String,
        success: Schema.String,
        execute: (id) => Effect.succeed(`noted:${id}`),
        compensate: () => Effect.void
      })
      // Its program interrupts itself after its step, on every run: it ends Suspended each time.
      const Stubborn = SagaDefinition.make("stubborn", {
        input: Schema.String,
        program: (id: string) =>
          Effect.zipRight(
            noted(id),
            Effect.suspend(() => {
              runs++
              return Effect.interrupt
            })
          )
      })
      const store = makeStore()
      const w = yield* Layer.build(
        Recovery.layer({ definitions: [Stubborn], every: "startup" }).pipe(Layer.provideMerge(worker(store, "w")))
      )
      expect((yield* Effect.provide(Saga.start(Stubborn, "again", "a-1"), w))._tag).toBe("Suspended")
      for (const pass of [1, 2]) {
        const report = yield* Effect.provide(Recovery.recoverAll, w)
        expect(report.sagas.map((saga) => [saga.sagaId, saga._tag === "Resumed" && saga.result._tag])).toEqual([
          ["again", "Suspended"]
        ])
        expect(runs).toBe(1 + pass)
        expect((yield* recordOf(store, "again")).lease).toBeNull()
      }
    })
  )
})

describe("leases", () => {
  it.scoped(
    "Saga.reject keeps the saga's lease from its REJECTED to its compensation: nobody takes it in between",
    () =>
      Effect.gen(function* () {
        const store = makeStore()
        const undone: Array<string> = []
        const reserve = Compensable.make({
          name: "reserve",
          input: Schema.String,
          success: Schema.String,
          execute: (sku) => Effect.succeed(`res-${sku}`),
          compensate: ({ result }) => Effect.sync(() => void undone.push(result))
        })
        const wire = Compensable.make({
          name: "wire",
          input: Schema.Number,
          success: Schema.String,
          reversibility: "irreversible",
          execute: (amount) => Effect.succeed(`wire-${amount}`)
        })
        const program = Effect.zipRight(reserve("A-1"), wire(4200))
        // Another worker (an operator's console) claims the saga the moment bob's REJECTED is written.
        const alice = { owner: "worker-alice", ttlMillis: 30_000 }
        const claims: Array<string> = []
        const contended: Journal.Journal["Type"] = {
          ...store.journal,
          append: (sagaId, expected, drafts, holder) =>
            Effect.tap(store.journal.append(sagaId, expected, drafts, holder), () =>
              drafts.some((draft) => draft.phase === "REJECTED")
                ? Effect.match(store.journal.claim(sagaId, alice), {
                    onFailure: (error) => void claims.push(error._tag),
                    onSuccess: () => void claims.push("claimed")
                  })
                : Effect.void
            )
        }
        const bob = yield* Layer.build(worker({ ...store, journal: contended as typeof store.journal }, "worker-bob"))
        const waiting = yield* Effect.provide(Saga.run("order", program), bob)
        assert(waiting._tag === "AwaitingApproval")
        const report = yield* Effect.provide(
          Saga.reject("order", waiting.request.stepId, { by: "bob", reason: "wrong account" }),
          bob
        )
        expect(report.status).toBe("compensated")
        expect(claims).toEqual(["LeaseHeld"])
        expect(undone).toEqual(["res-A-1"])
        expect(yield* recordOf(store, "order")).toMatchObject({ status: "compensated", lease: null })
      })
  )

  it.scoped("two workers resuming one saga: one proceeds, the other gets LeaseHeld, and no step runs twice", () =>
    Effect.gen(function* () {
      const store = makeStore()
      const world = yield* makeWorld
      const a = yield* Layer.build(worker(store, "worker-a"))
      const b = yield* Layer.build(worker(store, "worker-b"))

      const running = yield* Effect.fork(Effect.provide(Saga.start(world.Order, "o-1", { id: "o-1" }), a))
      yield* Deferred.await(world.entered)
      const before = yield* recordOf(store, "o-1")
      expect(before.lease?.owner).toBe("worker-a")

      const resumed = yield* Effect.flip(Effect.provide(Saga.start(world.Order, "o-1", { id: "o-1" }), b))
      expect(resumed).toMatchObject({ _tag: "LeaseHeld", sagaId: "o-1", owner: "worker-a" })
      const compensated = yield* Effect.flip(Effect.provide(Saga.compensate("o-1"), b))
      expect(compensated._tag).toBe("LeaseHeld")
      expect((yield* recordOf(store, "o-1")).revision).toBe(before.revision)

      yield* world.open()
      const result = yield* Fiber.join(running)
      expect(result._tag).toBe("Completed")
      expect((yield* recordOf(store, "o-1")).lease).toBeNull()

      const replayed = yield* Effect.provide(Saga.start(world.Order, "o-1", { id: "o-1" }), b)
      expect(replayed._tag).toBe("Completed")
      expect(world.calls).toEqual({ reserve: 1, charge: 1, ship: 1 })
    })
  )

  it.scoped(
    "a saga is started once per input: the same id with another input is NonDeterminism, journal untouched",
    () =>
      Effect.gen(function* () {
        const store = makeStore()
        const world = yield* makeWorld
        yield* world.open()
        const a = yield* Layer.build(worker(store, "worker-a"))
        yield* Effect.provide(Saga.start(world.Order, "o-2", { id: "o-2" }), a)
        const before = yield* store.journal.read("o-2")
        const error = yield* Effect.flip(Effect.provide(Saga.start(world.Order, "o-2", { id: "secret-other" }), a))
        expect(error).toMatchObject({ _tag: "NonDeterminism", stepId: "SAGA_STARTED" })
        // The inputs are named by digest: an input may hold what no error, span or log may show.
        assert(error._tag === "NonDeterminism")
        expect(error.reason).toMatch(
          /^the saga was started from definition order with another input \(SHA-256 [0-9a-f]{12}…, given [0-9a-f]{12}…\)$/
        )
        expect(error.message).not.toContain("secret-other")
        expect(error.message).not.toContain('"o-2"')
        expect(yield* store.journal.read("o-2")).toEqual(before)
        expect((yield* recordOf(store, "o-2")).lease).toBeNull()
      })
  )

  it.scoped("an input that does not encode with the definition's schema is a typed error, nothing journaled", () =>
    Effect.gen(function* () {
      const store = makeStore()
      const world = yield* makeWorld
      const a = yield* Layer.build(worker(store, "worker-a"))
      const bad = { id: 42 } as unknown as { id: string }
      const error = yield* Effect.flip(Effect.provide(Saga.start(world.Order, "o-3", bad), a))
      expect(error).toMatchObject({ _tag: "InvalidSagaInput", sagaId: "o-3", definition: "order" })
      expect(yield* store.journal.get("o-3")).toEqual(Option.none())
      // One that encodes but is over the default maxPayloadBytes is refused the same way: never journaled.
      const huge = { id: "x".repeat(1024 * 1024) }
      const tooLarge = yield* Effect.flip(Effect.provide(Saga.start(world.Order, "o-4", huge), a))
      expect(tooLarge).toMatchObject({
        _tag: "InvalidSagaInput",
        sagaId: "o-4",
        reason: `its encoded input is ${1024 * 1024 + 9} bytes, over the default maxPayloadBytes of 1048576`
      })
      expect(yield* store.journal.get("o-4")).toEqual(Option.none())
    })
  )
})

describe("shutdown and recovery", () => {
  it.scoped(
    "closing the service's scope interrupts the sagas in flight: Suspended, lease dropped, recovered elsewhere",
    () =>
      Effect.gen(function* () {
        const store = makeStore()
        const world = yield* makeWorld
        const scope = yield* Scope.make()
        const a = yield* Layer.buildWithScope(worker(store, "worker-a"), scope)
        const running = yield* Effect.fork(Effect.provide(Saga.start(world.Order, "o-4", { id: "o-4" }), a))
        yield* Deferred.await(world.entered)

        yield* Scope.close(scope, Exit.void)
        const exit = yield* Fiber.await(running)
        expect(Exit.isInterrupted(exit) || (Exit.isSuccess(exit) && exit.value._tag === "Suspended")).toBe(true)
        const suspended = yield* recordOf(store, "o-4")
        expect(suspended).toMatchObject({ status: "suspended", lease: null })

        yield* world.open()
        const b = yield* Layer.build(
          Recovery.layer({ definitions: [world.Order], every: "startup" }).pipe(
            Layer.provideMerge(worker(store, "worker-b"))
          )
        )
        const report = yield* Effect.provide(Recovery.recoverAll, b)
        // The layer's own pass at start-up may have taken it first; either way it ran once.
        const status = yield* recordOf(store, "o-4")
        expect(status).toMatchObject({ status: "completed", lease: null })
        expect(report.sagas.every((saga) => saga._tag === "Resumed")).toBe(true)
        expect(world.calls.reserve).toBe(1)
        expect(world.calls.ship).toBe(1)
        // charge was interrupted mid-call and retried with the same key: the provider applied it once.
        expect(world.calls.charge).toBe(2)
        expect([...world.applied].filter((key) => key.includes("charge")).length).toBe(1)
      })
  )

  it.scoped("a worker that dies mid-saga keeps its lease until it lapses; then another worker recovers the saga", () =>
    Effect.gen(function* () {
      const store = makeStore()
      const world = yield* makeWorld
      // Worker a "dies" while charge is in flight: nothing it does reaches the store any more.
      const dead = { value: false }
      const killed = Effect.fail(new Journal.JournalError({ operation: "append", reason: "the process was killed" }))
      const dying: Journal.Journal["Type"] = {
        ...store.journal,
        append: (...args) => (dead.value ? killed : store.journal.append(...args)),
        renew: (...args) => (dead.value ? killed : store.journal.renew(...args)),
        release: (...args) => (dead.value ? killed : store.journal.release(...args))
      }
      const a = yield* Layer.build(worker({ ...store, journal: dying as typeof store.journal }, "worker-a"))
      yield* Effect.fork(Effect.provide(Saga.start(world.Order, "o-5", { id: "o-5" }), a))
      yield* Deferred.await(world.entered)
      dead.value = true
      yield* world.open()

      const b = yield* Layer.build(
        Recovery.layer({ definitions: [world.Order], every: "startup" }).pipe(
          Layer.provideMerge(worker(store, "worker-b"))
        )
      )
      expect((yield* Effect.provide(Recovery.recoverAll, b)).sagas).toEqual([])
      expect((yield* recordOf(store, "o-5")).lease?.owner).toBe("worker-a")

      yield* TestClock.adjust("31 seconds")
      const report = yield* Effect.provide(Recovery.recoverAll, b)
      expect(report.sagas.map((saga) => [saga.sagaId, saga._tag === "Resumed" && saga.result._tag])).toEqual([
        ["o-5", "Completed"]
      ])
      expect(yield* recordOf(store, "o-5")).toMatchObject({ status: "completed", lease: null })
      expect(world.calls).toEqual({ reserve: 1, charge: 2, ship: 1 })
      expect(Journal.verifyEntries(yield* store.journal.read("o-5"))._tag).toBe("Intact")
    })
  )

  it.scoped(
    "an explicit undo a dead worker left behind is settled by Recovery as unknown: the undo is never run again, a person decides",
    () =>
      Effect.gen(function* () {
        const store = makeStore()
        // Worker a dies once its undo has run: the run's outcome entry never reaches the store.
        const dead = { value: false }
        let undoCalls = 0
        const book = Compensable.make({
          name: "book",
          input: Schema.String,
          success: Schema.String,
          execute: (room) => Effect.succeed(`booking-${room}`),
          compensate: () =>
            Effect.sync(() => {
              undoCalls++
              dead.value = true
            })
        })
        const killed = Effect.fail(new Journal.JournalError({ operation: "append", reason: "the process was killed" }))
        const dying: Journal.Journal["Type"] = {
          ...store.journal,
          append: (...args) => (dead.value ? killed : store.journal.append(...args)),
          release: (...args) => (dead.value ? killed : store.journal.release(...args))
        }
        const withBook = (layer: Layer.Layer<Saga.Saga | Journal.Journal | Approval.Approval, unknown>) =>
          Layer.effectDiscard(Effect.flatMap(Saga.Saga, (saga) => saga.register([book]))).pipe(
            Layer.provideMerge(layer)
          )
        const a = yield* Layer.build(withBook(worker({ ...store, journal: dying as typeof store.journal }, "worker-a")))
        yield* Effect.provide(Saga.run("trip", book("room-12")), a)
        const { effectId } = (yield* Effect.provide(Saga.status("trip"), a)).steps[0]!
        yield* Effect.exit(Effect.provide(Saga.compensateEffect(effectId), a))
        const runId = `${effectId}/compensate-effect`
        expect((yield* store.journal.read(runId)).map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "COMPENSATING"])

        const b = yield* Layer.build(
          Recovery.layer({ definitions: [], every: "startup" }).pipe(
            Layer.provideMerge(withBook(worker(store, "worker-b")))
          )
        )
        yield* TestClock.adjust("31 seconds")
        const [settled] = (yield* Effect.provide(Recovery.recoverAll, b)).sagas
        assert(settled?._tag === "Settled")
        expect(settled.sagaId).toBe(runId)
        expect(settled.result).toEqual({
          _tag: "Settled",
          effectId,
          runId,
          outcome: "unknown",
          detail: "the undo started but its outcome was never journaled"
        })
        // Its outcome is not assumed either way: the undo is not run again, the run needs a person.
        expect(undoCalls).toBe(1)
        expect(yield* recordOf(store, runId)).toMatchObject({ status: "needs_attention", lease: null })
        // Asked again, the answer is the same, read from the run's last entry.
        expect(yield* Effect.provide(Saga.compensateEffect(effectId), b)).toEqual(settled.result)
        expect(undoCalls).toBe(1)
        expect(Journal.verifyEntries(yield* store.journal.read(runId))._tag).toBe("Intact")
        // The run reads as the saga's own compensation would: the undo's outcome is unknown, the
        // step is the applied effect it undoes (not a call awaiting an approval nobody asked for).
        expect((yield* store.journal.read(runId)).map((entry) => entry.phase)).toEqual([
          "SAGA_STARTED",
          "COMPENSATING",
          "COMPENSATION_UNKNOWN",
          "SAGA_NEEDS_ATTENTION"
        ])
        const run = yield* Effect.provide(Saga.status(runId), b)
        expect(run.steps).toEqual([
          {
            stepId: expect.any(String),
            toolName: "book",
            effectId,
            state: "executed",
            undo: "unknown",
            undoDetail: "the undo started but its outcome was never journaled"
          }
        ])
      })
  )

  it.scoped("recovery leaves alone what it cannot resume, says why, and drops the lease for a worker that can", () =>
    Effect.gen(function* () {
      const store = makeStore()
      const world = yield* makeWorld
      yield* world.open()
      const a = yield* Layer.build(worker(store, "worker-a"))
      const plain = Effect.flatMap(Saga.CurrentSaga, () => Effect.interrupt)
      expect((yield* Effect.provide(Saga.run("plain", plain), a))._tag).toBe("Suspended")
      const Other = SagaDefinition.make("other", { input: Schema.Number, program: () => Effect.interrupt })
      expect((yield* Effect.provide(Saga.start(Other, "other-1", 1), a))._tag).toBe("Suspended")

      const b = yield* Layer.build(
        Recovery.layer({ definitions: [world.Order], every: "startup" }).pipe(
          Layer.provideMerge(worker(store, "worker-b"))
        )
      )
      const report = yield* Effect.provide(Recovery.recoverAll, b)
      const reasons = Object.fromEntries(
        report.sagas.map((saga) => [saga.sagaId, saga._tag === "Failed" ? saga.error.message : saga._tag])
      )
      expect(reasons).toEqual({
        plain: "saga plain cannot be recovered here: it was not started from a definition",
        "other-1": "saga other-1 cannot be recovered here: this worker was not given definition other"
      })
      expect((yield* recordOf(store, "plain")).lease).toBeNull()
      expect((yield* recordOf(store, "other-1")).lease).toBeNull()
    })
  )

  it.scoped("the Recovery layer recovers at start-up, in the background", () =>
    Effect.gen(function* () {
      const store = makeStore()
      const world = yield* makeWorld
      const scope = yield* Scope.make()
      const a = yield* Layer.buildWithScope(worker(store, "worker-a"), scope)
      yield* Effect.fork(Effect.provide(Saga.start(world.Order, "o-6", { id: "o-6" }), a))
      yield* Deferred.await(world.entered)
      yield* Scope.close(scope, Exit.void)
      yield* world.open()

      yield* Layer.build(
        Recovery.layer({ definitions: [world.Order] }).pipe(Layer.provideMerge(worker(store, "worker-b")))
      )
      const done = yield* Effect.repeat(recordOf(store, "o-6"), {
        until: (record) => record.status === "completed",
        times: 1000
      })
      expect(done.status).toBe("completed")
      expect(world.calls.ship).toBe(1)
    })
  )

  it.scoped("a worker restarted under the same name takes its own sagas back at once", () =>
    Effect.gen(function* () {
      const store = makeStore()
      yield* store.journal.append(
        "mine",
        Journal.empty,
        [{ stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null }],
        { owner: "host-1", ttlMillis: 30_000 }
      )
      expect((yield* recordOf(store, "mine")).lease?.owner).toBe("host-1")
      yield* Layer.build(worker(store, "host-1"))
      expect((yield* recordOf(store, "mine")).lease).toBeNull()
      const claimed = yield* store.journal.claimLapsed({ owner: "host-1", ttlMillis: 30_000 }, 10)
      assert(claimed.length === 1)
      expect(claimed[0]!.sagaId).toBe("mine")
    })
  )
})

describe("leases across connections to one SQLite file", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-leases-"))
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  /** A worker with a connection of its own, as another process would have. */
  const sqliteWorker = (filename: string, owner: string) =>
    Saga.layerWith({ owner, leaseTtl: "30 seconds" }).pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))

  const recordIn = (context: Context.Context<Journal.Journal>, sagaId: string) =>
    Effect.provide(
      Effect.flatMap(Journal.Journal, (journal) => Effect.map(journal.get(sagaId), Option.getOrThrow)),
      context
    )

  it.scoped("two workers resume one saga: one proceeds, the other gets LeaseHeld; every step runs once", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "two-workers.db")
      const world = yield* makeWorld
      const a = yield* Layer.build(sqliteWorker(filename, "worker-a"))
      const b = yield* Layer.build(sqliteWorker(filename, "worker-b"))
      const running = yield* Effect.fork(Effect.provide(Saga.start(world.Order, "s-1", { id: "s-1" }), a))
      yield* Deferred.await(world.entered)

      const refused = yield* Effect.flip(Effect.provide(Saga.start(world.Order, "s-1", { id: "s-1" }), b))
      expect(refused).toMatchObject({ _tag: "LeaseHeld", owner: "worker-a" })
      yield* world.open()
      expect((yield* Fiber.join(running))._tag).toBe("Completed")
      expect((yield* Effect.provide(Saga.start(world.Order, "s-1", { id: "s-1" }), b))._tag).toBe("Completed")
      expect(world.calls).toEqual({ reserve: 1, charge: 1, ship: 1 })
      expect((yield* recordIn(b, "s-1")).lease).toBeNull()
    })
  )

  it.scoped("a worker shut down mid-saga leaves it suspended; a worker on another connection recovers it", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "shutdown.db")
      const world = yield* makeWorld
      const scope = yield* Scope.make()
      const a = yield* Layer.buildWithScope(sqliteWorker(filename, "worker-a"), scope)
      yield* Effect.fork(Effect.provide(Saga.start(world.Order, "s-2", { id: "s-2" }), a))
      yield* Deferred.await(world.entered)
      yield* Scope.close(scope, Exit.void)
      yield* world.open()

      const b = yield* Layer.build(
        Recovery.layer({ definitions: [world.Order], every: "startup" }).pipe(
          Layer.provideMerge(sqliteWorker(filename, "worker-b"))
        )
      )
      yield* Effect.provide(Recovery.recoverAll, b)
      expect(yield* recordIn(b, "s-2")).toMatchObject({ status: "completed", lease: null })
      expect(world.calls).toEqual({ reserve: 1, charge: 2, ship: 1 })
      expect((yield* Effect.provide(Journal.verify("s-2"), b))._tag).toBe("Intact")
    })
  )
})
