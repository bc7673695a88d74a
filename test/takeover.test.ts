import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Recovery, Saga, SagaDefinition, Timeline } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import * as UnreadStart from "../src/internal/journal/unreadStart.js"

describe("a worker that takes over a running saga", () => {
  it.scoped(
    "whose worker died and whose lease lapsed journals SAGA_RESUMED with its first write; the timeline shows it",
    () =>
      Effect.gen(function* () {
        const store = makeStore()
        const report = yield* takeOver(store, yield* makeWorld, "o-1")
        expect(report.sagas.map((saga) => saga._tag === "Resumed" && saga.result._tag)).toEqual(["Completed"])

        const entries = yield* store.journal.read("o-1")
        expect(entries.map(phaseOf)).toEqual([
          "SAGA_STARTED",
          "reserve INTENT",
          "reserve EXECUTED",
          "charge INTENT",
          // Worker b's first write: the handover is in the journal, between a's last entry and b's first.
          "SAGA_RESUMED",
          "charge INTENT",
          "charge EXECUTED",
          "ship INTENT",
          "ship EXECUTED",
          "SAGA_COMPLETED"
        ])
        expect(Timeline.format(entries).split("\n")[5]).toMatch(/^5 +\S+ +SAGA_RESUMED *$/)
        expect(Journal.verifyEntries(entries)._tag).toBe("Intact")
      })
  )

  it.scoped("journals SAGA_RESUMED once: not again when a run of its own finds the saga where it left it", () =>
    Effect.gen(function* () {
      const store = makeStore()
      const world = yield* makeWorld
      yield* world.open()
      const flaky = failingShip(store, 2)
      const a = yield* Layer.build(worker(flaky.store, "worker-a"))
      const b = yield* Layer.build(worker(flaky.store, "worker-b"))
      // Each of these runs stops at ship's INTENT, which the store refuses: the saga is left running.
      expect(yield* Effect.flip(Effect.provide(Saga.start(world.Order, "o-2", { id: "o-2" }), a))).toMatchObject({
        _tag: "JournalError"
      })
      expect(yield* statusOf(store, "o-2")).toBe("running")
      expect(yield* Effect.flip(Effect.provide(Saga.start(world.Order, "o-2", { id: "o-2" }), b))).toMatchObject({
        _tag: "JournalError"
      })
      // b's takeover wrote nothing yet: its marker waits for the next run's first write.
      expect((yield* store.journal.read("o-2")).map(phaseOf)).not.toContain("SAGA_RESUMED")
      expect((yield* Effect.provide(Saga.start(world.Order, "o-2", { id: "o-2" }), b))._tag).toBe("Completed")
      expect((yield* store.journal.read("o-2")).map(phaseOf)).toEqual([
        "SAGA_STARTED",
        "reserve INTENT",
        "reserve EXECUTED",
        "charge INTENT",
        "charge EXECUTED",
        "SAGA_RESUMED",
        "ship INTENT",
        "ship EXECUTED",
        "SAGA_COMPLETED"
      ])
    })
  )

  it.scoped("a saga its own worker left running is replayed by that worker without SAGA_RESUMED", () =>
    Effect.gen(function* () {
      const store = makeStore()
      const world = yield* makeWorld
      yield* world.open()
      const flaky = failingShip(store, 1)
      const a = yield* Layer.build(worker(flaky.store, "worker-a"))
      yield* Effect.flip(Effect.provide(Saga.start(world.Order, "o-3", { id: "o-3" }), a))
      expect(yield* statusOf(store, "o-3")).toBe("running")
      expect((yield* Effect.provide(Saga.start(world.Order, "o-3", { id: "o-3" }), a))._tag).toBe("Completed")
      const phases = (yield* store.journal.read("o-3")).map(phaseOf)
      expect(phases).not.toContain("SAGA_RESUMED")
      expect(phases.at(-1)).toBe("SAGA_COMPLETED")
    })
  )

  it.scoped(
    "on a store that starts new sagas unread, a saga its own worker left running is replayed by that worker without SAGA_RESUMED",
    () =>
      Effect.gen(function* () {
        const store = makeStore()
        const world = yield* makeWorld
        yield* world.open()
        const flaky = failingShip(store, 1)
        // As PostgreSQL's store: `run` and `start` first try the saga as new, unread, then read it.
        UnreadStart.allow(flaky.store.journal.append)
        const a = yield* Layer.build(worker(flaky.store, "worker-a"))
        expect(yield* Effect.flip(Effect.provide(Saga.start(world.Order, "o-4", { id: "o-4" }), a))).toMatchObject({
          _tag: "JournalError"
        })
        expect(yield* statusOf(store, "o-4")).toBe("running")
        expect((yield* Effect.provide(Saga.start(world.Order, "o-4", { id: "o-4" }), a))._tag).toBe("Completed")
        const phases = (yield* store.journal.read("o-4")).map(phaseOf)
        expect(phases).not.toContain("SAGA_RESUMED")
        expect(phases.at(-1)).toBe("SAGA_COMPLETED")
      })
  )

  it.scoped("a journal written before takeovers were journaled (no SAGA_RESUMED at one) verifies and replays", () =>
    Effect.gen(function* () {
      const world = yield* makeWorld
      const store = makeStore()
      yield* takeOver(store, world, "old")
      // What an earlier version wrote: the same entries without the marker, chained as they were.
      const entries = (yield* store.journal.read("old")).filter((entry) => entry.phase !== "SAGA_RESUMED")
      let previous = Journal.empty.digest
      const old = entries.map((entry, i) => {
        const { hash: _hash, mac: _mac, ...fields } = { ...entry, seq: i + 1 }
        previous = Journal.hashEntry(previous, fields)
        return { ...fields, hash: previous }
      })
      const earlier = makeStore()
      yield* earlier.journal.importSaga(old)
      expect(Journal.verifyEntries(yield* earlier.journal.read("old"))._tag).toBe("Intact")
      const c = yield* Layer.build(worker(earlier, "worker-c"))
      expect(yield* Effect.provide(Saga.start(world.Order, "old", { id: "old" }), c)).toEqual({
        _tag: "Completed",
        sagaId: "old",
        value: "ship:old"
      })
      expect(yield* earlier.journal.read("old")).toEqual(old)
      expect((yield* Effect.provide(Saga.status("old"), c)).status).toBe("completed")
    })
  )
})

/** One store that several workers share, as processes share a database. */
const makeStore = () => ({ journal: makeMemoryJournal(), approvals: Approval.makeMemory() })
type Store = { readonly journal: Journal.Journal["Type"]; readonly approvals: Approval.Approval["Type"] }

const worker = (store: Store, owner: string) =>
  Saga.layerWith({ owner, leaseTtl: "30 seconds" }).pipe(
    Layer.provideMerge(
      Layer.merge(Layer.succeed(Journal.Journal, store.journal), Layer.succeed(Approval.Approval, store.approvals))
    )
  )

/** The store, refusing the first `times` appends that carry ship's INTENT (a write that failed). */
const failingShip = (store: Store, times: number) => {
  let left = times
  const journal: Journal.Journal["Type"] = {
    ...store.journal,
    append: (sagaId, expected, drafts, holder) =>
      Effect.suspend(() => {
        if (left > 0 && drafts.some((draft) => draft.toolName === "ship" && draft.phase === "INTENT")) {
          left--
          return Effect.fail(new Journal.JournalError({ operation: "append", reason: "the disk is full" }))
        }
        return store.journal.append(sagaId, expected, drafts, holder)
      })
  }
  return { store: { ...store, journal } }
}

/**
 * Worker a runs order `sagaId` and "dies" while charge is in flight (nothing it does reaches the
 * store any more); once its lease lapsed, worker b's recovery takes the saga over.
 */
const takeOver = (store: Store, world: World, sagaId: string) =>
  Effect.gen(function* () {
    const dead = { value: false }
    const killed = Effect.fail(new Journal.JournalError({ operation: "append", reason: "the process was killed" }))
    const dying: Journal.Journal["Type"] = {
      ...store.journal,
      append: (...args) => (dead.value ? killed : store.journal.append(...args)),
      renew: (...args) => (dead.value ? killed : store.journal.renew(...args)),
      release: (...args) => (dead.value ? killed : store.journal.release(...args))
    }
    const a = yield* Layer.build(worker({ ...store, journal: dying }, "worker-a"))
    yield* Effect.fork(Effect.provide(Saga.start(world.Order, sagaId, { id: sagaId }), a))
    yield* Deferred.await(world.entered)
    dead.value = true
    yield* world.open()
    const b = yield* Layer.build(
      Recovery.layer({ definitions: [world.Order], every: "startup" }).pipe(
        Layer.provideMerge(worker(store, "worker-b"))
      )
    )
    yield* TestClock.adjust("31 seconds")
    return yield* Effect.provide(Recovery.recoverAll, b)
  })

const statusOf = (store: Store, sagaId: string) =>
  Effect.map(store.journal.get(sagaId), (record) => (record._tag === "Some" ? record.value.status : undefined))

const phaseOf = (entry: Journal.Entry) => (entry.toolName === null ? entry.phase : `${entry.toolName} ${entry.phase}`)

type World = Effect.Effect.Success<typeof makeWorld>

/** Three steps, each applied once per idempotency key; `charge` is held open until `open` (it says when it was entered). */
const makeWorld = Effect.gen(function* () {
  const entered = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  let hold = true
  const tool = (name: string) =>
    Compensable.make({
      name,
      input: Schema.String,
      success: Schema.String,
      retryMode: "idempotency-key",
      execute: (id) =>
        Effect.gen(function* () {
          if (name === "charge" && hold) {
            yield* Deferred.succeed(entered, undefined)
            yield* Deferred.await(release)
          }
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
    entered,
    Order,
    open: () =>
      Effect.suspend(() => {
        hold = false
        return Deferred.succeed(release, undefined)
      })
  }
})
