import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import type { Context } from "effect"
import { Context as Ctx, Deferred, Effect, Exit, Fiber, Layer, Option, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Recovery, Saga, SagaDefinition, SqlStore } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import * as Postgres from "../src/Postgres.js"
import { freshDatabase } from "./fixtures/postgres.js"

describe("an operator's command holds the saga's lease for as long as its undos run", () => {
  for (const [name, makeStore] of stores) {
    it.scoped(`${name}: Saga.compensate: a Recovery pass and another worker's claim are refused mid-undo`, () =>
      Effect.gen(function* () {
        const { world, operator, recovery, journal } = yield* setUp(makeStore)
        yield* world.awaitingOrder("o-1", operator)
        const compensating = yield* Effect.fork(Effect.provide(Saga.compensate("o-1"), operator))

        yield* world.pastSeveralLeases
        // The refund is let go whatever the checks find: the command waits for it.
        yield* world.otherWorkersAreRefused("o-1", journal, recovery).pipe(world.thenRefund)
        const report = yield* Fiber.join(compensating)
        expect(report.status).toBe("compensated")
        expect(world.undone).toEqual(["charge", "reserve"])
        expect(yield* journal.get("o-1")).toMatchObject({ value: { status: "compensated", lease: null } })
      })
    )

    it.scoped(
      `${name}: Saga.compensate again, of a saga whose compensation failed: a Recovery pass and another worker's claim are refused mid-undo`,
      () =>
        Effect.gen(function* () {
          const { world, operator, recovery, bare, journal } = yield* setUp(makeStore)
          const stepId = yield* world.awaitingOrder("o-9", operator)
          // Rejected where no tool is registered: every undo is unavailable, the compensation fails.
          const failed = yield* Effect.provide(Saga.reject("o-9", stepId, { by: "bob", reason: "no" }), bare)
          expect(failed.status).toBe("compensation_failed")
          const compensating = yield* Effect.fork(Effect.provide(Saga.compensate("o-9"), operator))

          yield* world.pastSeveralLeases
          yield* world.otherWorkersAreRefused("o-9", journal, recovery).pipe(world.thenRefund)
          expect((yield* Fiber.join(compensating)).status).toBe("compensated")
          expect(world.undone).toEqual(["charge", "reserve"])
          expect(yield* journal.get("o-9")).toMatchObject({ value: { status: "compensated", lease: null } })
        })
    )

    it.scoped(`${name}: Saga.reject: a Recovery pass and another worker's claim are refused mid-undo`, () =>
      Effect.gen(function* () {
        const { world, operator, recovery, journal } = yield* setUp(makeStore)
        const stepId = yield* world.awaitingOrder("o-2", operator)
        const rejecting = yield* Effect.fork(
          Effect.provide(Saga.reject("o-2", stepId, { by: "bob", reason: "out of stock" }), operator)
        )

        yield* world.pastSeveralLeases
        yield* world.otherWorkersAreRefused("o-2", journal, recovery).pipe(world.thenRefund)
        expect((yield* Fiber.join(rejecting)).status).toBe("compensated")
        expect(world.undone).toEqual(["charge", "reserve"])
        expect(yield* journal.get("o-2")).toMatchObject({ value: { status: "compensated", lease: null } })
      })
    )

    it.scoped(`${name}: Saga.compensateEffect: neither its run nor the saga can be taken mid-undo`, () =>
      Effect.gen(function* () {
        const { world, operator, recovery, journal } = yield* setUp(makeStore)
        yield* world.awaitingOrder("o-3", operator)
        const status = yield* Effect.provide(Saga.status("o-3"), operator)
        const effectId = status.steps.find((step) => step.toolName === "charge")!.effectId
        const undoing = yield* Effect.fork(Effect.provide(Saga.compensateEffect(effectId), operator))

        yield* world.pastSeveralLeases
        yield* Effect.gen(function* () {
          yield* world.otherWorkersAreRefused("o-3", journal, recovery)
          const claim = yield* Effect.flip(journal.claim(`${effectId}/compensate-effect`, intruder))
          expect(claim._tag).toBe("LeaseHeld")
        }).pipe(world.thenRefund)
        expect(yield* Fiber.join(undoing)).toMatchObject({ _tag: "Settled", outcome: "completed" })
        expect(world.undone).toEqual(["charge"])
        expect(yield* journal.get(`${effectId}/compensate-effect`)).toMatchObject({
          value: { status: "completed", lease: null }
        })
        expect(yield* journal.get("o-3")).toMatchObject({ value: { status: "awaiting_approval", lease: null } })
      })
    )
  }
})

describe("a command whose write is refused after writes of its own says what it wrote", () => {
  it.scoped("Saga.compensate: ConcurrencyConflict names the entries written, never 'nothing was written'", () =>
    Effect.gen(function* () {
      const { world, operator } = yield* setUp(() => Effect.succeed(refusingCompensated()))
      yield* Deferred.succeed(world.refund, undefined)
      yield* world.awaitingOrder("o-4", operator)
      const before = (yield* Effect.provide(Saga.status("o-4"), operator)).revision
      const error = yield* Effect.flip(Effect.provide(Saga.compensate("o-4"), operator))
      assert(error._tag === "ConcurrencyConflict")
      // SAGA_COMPENSATING with the withdrawn request's REJECTED, then charge's COMPENSATING.
      expect(error.written).toBe(3)
      expect(error.message).toBe(
        `saga o-4 is at revision ${before + 4}, not ${before + 3}: it moved on after this caller wrote revisions ${before + 1}–${before + 3}; its next write was refused`
      )
      expect(error.message).not.toContain("nothing was written")
    })
  )

  it.scoped("Saga.compensateEffect: the refused write is not retried, and its error names the entries written", () =>
    Effect.gen(function* () {
      const { world, operator } = yield* setUp(() => Effect.succeed(refusingCompensated()))
      yield* Deferred.succeed(world.refund, undefined)
      yield* world.awaitingOrder("o-5", operator)
      const effectId = (yield* Effect.provide(Saga.status("o-5"), operator)).steps.find(
        (step) => step.toolName === "charge"
      )!.effectId
      const undoing = yield* Effect.fork(Effect.flip(Effect.provide(Saga.compensateEffect(effectId), operator)))
      yield* TestClock.adjust("1 minute")
      const error = yield* Fiber.join(undoing)
      assert(error._tag === "ConcurrencyConflict")
      expect(error.written).toBe(2)
      expect(error.message).toContain("it moved on after this caller wrote revisions 1–2")
      expect(world.undone).toEqual(["charge"])
    })
  )

  it("LeaseHeld and ConcurrencyConflict without `written` still say that nothing was written", () => {
    expect(new Journal.LeaseHeld({ sagaId: "s", owner: "w", expiresAt: "T" }).message).toContain("nothing was written")
    expect(new Journal.LeaseHeld({ sagaId: "s", owner: "w", expiresAt: "T", written: 1 }).message).toBe(
      "saga s is being driven by w (lease until T): this caller had written 1 entry, its next write was refused"
    )
    expect(
      new Journal.ConcurrencyConflict({ sagaId: "s", expectedRevision: 4, actualRevision: 5, written: 1 }).message
    ).toBe("saga s is at revision 5, not 4: it moved on after this caller wrote revision 4; its next write was refused")
    // The same revision under another digest: the saga moved on all the same.
    expect(
      new Journal.ConcurrencyConflict({ sagaId: "s", expectedRevision: 2, actualRevision: 2, written: 2 }).message
    ).toBe(
      "saga s is at revision 2, with another digest than this caller's: it moved on after this caller wrote revisions 1–2; its next write was refused"
    )
  })
})

describe("a command on a saga a run of the same worker is driving is refused at once, as another worker's would be", () => {
  const Busy = Schema.Struct({ id: Schema.String })
  for (const [name, makeStore] of stores) {
    it.scoped(
      `${name}: approve, reject, resolve and compensate answer LeaseHeld (this worker, its lease) and write nothing; after the run, compensate goes through`,
      () =>
        Effect.gen(function* () {
          const store = yield* makeStore()
          const context = yield* Layer.build(Saga.layerWith({ owner: "worker-a" }).pipe(Layer.provideMerge(store)))
          const release = yield* Deferred.make<void>()
          const started = yield* Deferred.make<void>()
          const ship = Compensable.make({
            name: "ship",
            input: Busy,
            success: Busy,
            execute: (input) =>
              Effect.as(Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release)), input),
            compensate: () => Effect.void
          })
          const running = yield* Effect.fork(Effect.provide(Saga.run("busy-1", ship({ id: "parcel" })), context))
          yield* Deferred.await(started)
          const journal = Ctx.get(context, Journal.Journal)
          const before = yield* journal.read("busy-1")
          const status = yield* Effect.provide(Saga.status("busy-1"), context)
          const stepId = status.steps[0]!.stepId
          const refusals = yield* Effect.all(
            [
              Saga.compensate("busy-1"),
              Saga.approve("busy-1", stepId, { by: "alice" }),
              Saga.reject("busy-1", stepId, { by: "bob", reason: "no" }),
              Saga.resolve("busy-1", stepId, { outcome: "not-applied", by: "carol" })
            ].map((command) => Effect.flip(Effect.provide(command, context)))
          )
          const lease = Option.getOrThrow(yield* journal.get("busy-1")).lease!
          expect(lease.owner).toBe("worker-a")
          for (const error of refusals) {
            assert(error._tag === "LeaseHeld")
            expect(error.message).toBe(
              `saga busy-1 is being driven by worker-a (lease until ${lease.expiresAt}): nothing was written`
            )
          }
          expect(yield* journal.read("busy-1")).toEqual(before)
          yield* Deferred.succeed(release, undefined)
          expect((yield* Fiber.join(running))._tag).toBe("Completed")
          const report = yield* Effect.provide(Saga.compensate("busy-1"), context)
          expect(report.status).toBe("compensated")
        })
    )
  }
})

describe("Saga.withInterruptibleUndos: interrupting an operator's command interrupts its undo", () => {
  it.scoped("compensate: the undo in flight is journaled unknown, no other starts, the lease is dropped", () =>
    Effect.gen(function* () {
      const { world, operator, journal } = yield* setUp(stores[0]![1])
      yield* world.awaitingOrder("o-6", operator)
      const compensating = yield* Effect.fork(
        Effect.provide(Saga.withInterruptibleUndos(Saga.compensate("o-6")), operator)
      )
      yield* world.refundStarted
      const exit = yield* Fiber.interrupt(compensating)
      expect(Exit.isInterrupted(exit)).toBe(true)
      const entries = yield* journal.read("o-6")
      expect(entries.slice(-2).map((entry) => [entry.phase, entry.toolName, entry.payload])).toEqual([
        ["COMPENSATING", "charge", expect.any(String)],
        ["COMPENSATION_UNKNOWN", "charge", JSON.stringify({ reason: "the undo was interrupted" })]
      ])
      expect(world.undone).toEqual([])
      expect(yield* journal.get("o-6")).toMatchObject({ value: { status: "compensating", lease: null } })
    })
  )

  it.scoped("reject: the same; asked again, the command goes on with the undos left", () =>
    Effect.gen(function* () {
      const { world, operator, journal } = yield* setUp(stores[0]![1])
      const stepId = yield* world.awaitingOrder("o-7", operator)
      const rejection = { by: "bob", reason: "out of stock" }
      const rejecting = yield* Effect.fork(
        Effect.provide(Saga.withInterruptibleUndos(Saga.reject("o-7", stepId, rejection)), operator)
      )
      yield* world.refundStarted
      expect(Exit.isInterrupted(yield* Fiber.interrupt(rejecting))).toBe(true)
      expect(world.undone).toEqual([])
      const report = yield* Effect.provide(Saga.reject("o-7", stepId, rejection), operator)
      expect(report.undone.map((step) => [step.toolName, step.outcome])).toEqual([
        ["charge", "unknown"],
        ["reserve", "completed"]
      ])
      expect(world.undone).toEqual(["reserve"])
      expect(yield* journal.get("o-7")).toMatchObject({ value: { status: "compensation_failed", lease: null } })
    })
  )

  it.scoped("outside it, interrupting the command waits for the undo, and the compensation ends", () =>
    Effect.gen(function* () {
      const { world, operator, journal } = yield* setUp(stores[0]![1])
      yield* world.awaitingOrder("o-8", operator)
      const compensating = yield* Effect.fork(Effect.provide(Saga.compensate("o-8"), operator))
      yield* world.refundStarted
      const interrupting = yield* Effect.fork(Fiber.interrupt(compensating))
      yield* Deferred.succeed(world.refund, undefined)
      yield* Fiber.join(interrupting)
      expect(world.undone).toEqual(["charge", "reserve"])
      expect(yield* journal.get("o-8")).toMatchObject({ value: { status: "compensated", lease: null } })
    })
  )
})

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-operator-lease-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

type StoreContext = Context.Context<Journal.Journal | Approval.Approval>
type Store = Layer.Layer<Journal.Journal | Approval.Approval, unknown>

/** PostgreSQL too when `EFFECT_SAGA_PG_URL` gives one: its leases are judged by the server's clock. */
const pgUrl = process.env.EFFECT_SAGA_PG_URL === undefined ? undefined : await freshDatabase("operator_lease")

const stores: ReadonlyArray<readonly [string, () => Effect.Effect<Store>]> = [
  ["in memory", () => Effect.sync(() => memoryStore(makeMemoryJournal()))],
  ...(pgUrl === undefined ? [] : [["on PostgreSQL", () => Effect.sync(() => Postgres.layer({ url: pgUrl }))] as const]),
  [
    "on SQLite",
    () =>
      Effect.sync(() =>
        SqlStore.layerSqlite({ filename: path.join(dir, `lease-${Math.random().toString(36).slice(2)}.db`) })
      )
  ]
]

const memoryStore = (journal: Journal.Journal["Type"]): Store =>
  Layer.merge(Layer.succeed(Journal.Journal, journal), Layer.succeed(Approval.Approval, Approval.makeMemory()))

/** A memory store that refuses every append carrying COMPENSATED, as if another worker had written first. */
const refusingCompensated = (): Store => {
  const journal = makeMemoryJournal()
  return memoryStore({
    ...journal,
    append: (sagaId, expected, drafts, holder) =>
      drafts.some((draft) => draft.phase === "COMPENSATED")
        ? Effect.fail(
            new Journal.ConcurrencyConflict({
              sagaId,
              expectedRevision: expected.revision,
              actualRevision: expected.revision + 1
            })
          )
        : journal.append(sagaId, expected, drafts, holder)
  })
}

const intruder = { owner: "intruder", ttlMillis: 3_000 }

/**
 * A shop whose charge's undo (a refund) waits for `refund`, and two workers on one store with a
 * lease of 3 seconds: the operator's, and one that runs Recovery.
 */
const setUp = (makeStore: () => Effect.Effect<Store>) =>
  Effect.gen(function* () {
    const store: StoreContext = yield* Layer.build(yield* makeStore())
    const refund = yield* Deferred.make<void>()
    const refunding = yield* Deferred.make<void>()
    const undone: Array<string> = []
    const tool = (name: string, undo: Effect.Effect<void>) =>
      Compensable.make({
        name,
        input: Schema.String,
        success: Schema.String,
        execute: (id) => Effect.succeed(`${name}-${id}`),
        compensate: () =>
          Effect.zipRight(
            undo,
            Effect.sync(() => void undone.push(name))
          )
      })
    const reserve = tool("reserve", Effect.void)
    const charge = tool("charge", Effect.zipRight(Deferred.succeed(refunding, undefined), Deferred.await(refund)))
    const ship = Compensable.make({
      name: "ship",
      input: Schema.String,
      success: Schema.String,
      reversibility: "irreversible",
      execute: (id) => Effect.succeed(`parcel-${id}`)
    })
    const Order = SagaDefinition.make("order", {
      input: Schema.String,
      program: (id) => Effect.zipRight(reserve(id), Effect.zipRight(charge(id), ship(id)))
    })
    const worker = (owner: string) =>
      Layer.build(
        Layer.effectDiscard(Effect.flatMap(Saga.Saga, (saga) => saga.register([reserve, charge, ship]))).pipe(
          Layer.provideMerge(Saga.layerWith({ owner, leaseTtl: "3 seconds" })),
          Layer.provideMerge(Layer.succeedContext(store))
        )
      )
    const operator = yield* worker("operator")
    const recovery = yield* worker("recovery")
    const world = {
      refund,
      undone,
      /** Starts order `sagaId`, which stops at ship's approval; answers ship's step id. */
      awaitingOrder: (sagaId: string, on: typeof operator) =>
        Effect.map(Effect.provide(Saga.start(Order, sagaId, sagaId), on), (result) => {
          assert(result._tag === "AwaitingApproval")
          return result.request.stepId
        }),
      refundStarted: Deferred.await(refunding),
      /** Once the refund runs, moves the clock past several leases, a second at a time. */
      pastSeveralLeases: Effect.zipRight(Deferred.await(refunding), Effect.repeatN(TestClock.adjust("1 second"), 9)),
      thenRefund: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.ensuring(effect, Deferred.succeed(refund, undefined)),
      /** Recovery finds nothing to take, and a claim and an operator's command are LeaseHeld. */
      otherWorkersAreRefused: (sagaId: string, store: Journal.Journal["Type"], on: typeof recovery) =>
        Effect.gen(function* () {
          const recover = yield* Effect.provide(Recovery.make({ definitions: [Order] }), on)
          expect((yield* recover.recoverAll).sagas).toEqual([])
          expect((yield* Effect.flip(store.claim(sagaId, intruder)))._tag).toBe("LeaseHeld")
          const compensate = yield* Effect.flip(Effect.provide(Saga.compensate(sagaId), on))
          expect(compensate).toMatchObject({ _tag: "LeaseHeld", owner: "operator" })
        })
    }
    // A worker that has none of the tools: a compensation there finds every undo unavailable.
    const bare = yield* Layer.build(
      Saga.layerWith({ owner: "bare", leaseTtl: "3 seconds" }).pipe(Layer.provideMerge(Layer.succeedContext(store)))
    )
    return { world, operator, recovery, bare, journal: yield* Effect.provide(Journal.Journal, store) }
  })
