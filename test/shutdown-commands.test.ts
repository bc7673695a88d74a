import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import type { Context } from "effect"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Schema, Scope, TestClock } from "effect"
import { Approval, Compensable, Journal, Saga, SqlStore } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"

describe("closing the Saga layer waits for an operator's command in flight", () => {
  for (const [name, makeStore] of stores) {
    it.scoped(`${name}: Saga.compensate: its undo runs to its end, the next one too, then the lease is dropped`, () =>
      Effect.gen(function* () {
        const { world, operator, closeOperator, other } = yield* setUp(makeStore)
        yield* world.awaitingOrder("c-1")
        const compensating = yield* Effect.fork(Effect.provide(Saga.compensate("c-1"), operator))
        yield* world.refundStarted

        const closing = yield* Effect.fork(closeOperator)
        // Past several leases: the closing worker still renews the lease of the command it waits for.
        yield* Effect.repeatN(TestClock.adjust("1 second"), 9)
        expect(Option.isNone(yield* Fiber.poll(closing))).toBe(true)
        const meanwhile = yield* Effect.flip(Effect.provide(Saga.compensate("c-1"), other))
        expect(meanwhile).toMatchObject({ _tag: "LeaseHeld", owner: "operator" })

        yield* Deferred.succeed(world.refund, undefined)
        yield* Fiber.join(closing)
        expect(Exit.isInterrupted(yield* Fiber.await(compensating))).toBe(true)
        expect(world.undone).toEqual(["charge", "reserve"])
        expect(yield* world.record("c-1")).toMatchObject({ status: "compensated", lease: null })
      })
    )

    it.scoped(`${name}: Saga.compensateEffect: its undo runs to its end, then both leases are dropped`, () =>
      Effect.gen(function* () {
        const { world, operator, closeOperator } = yield* setUp(makeStore)
        yield* world.awaitingOrder("c-2")
        const status = yield* Effect.provide(Saga.status("c-2"), operator)
        const effectId = status.steps.find((step) => step.toolName === "charge")!.effectId
        yield* Effect.fork(Effect.provide(Saga.compensateEffect(effectId), operator))
        yield* world.refundStarted

        const closing = yield* Effect.fork(closeOperator)
        yield* Effect.repeatN(TestClock.adjust("1 second"), 9)
        expect(Option.isNone(yield* Fiber.poll(closing))).toBe(true)

        yield* Deferred.succeed(world.refund, undefined)
        yield* Fiber.join(closing)
        expect(world.undone).toEqual(["charge"])
        expect(yield* world.record(`${effectId}/compensate-effect`)).toMatchObject({
          status: "completed",
          lease: null
        })
        expect(yield* world.record("c-2")).toMatchObject({ status: "awaiting_approval", lease: null })
      })
    )

    it.scoped(
      `${name}: under Saga.withInterruptibleUndos, the undo in flight is interrupted and journaled unknown`,
      () =>
        Effect.gen(function* () {
          const { world, operator, closeOperator } = yield* setUp(makeStore)
          yield* world.awaitingOrder("c-3")
          yield* Effect.fork(Effect.provide(Saga.withInterruptibleUndos(Saga.compensate("c-3")), operator))
          yield* world.refundStarted

          // The refund is never let go: closing interrupts it.
          yield* closeOperator
          const entries = yield* world.entries("c-3")
          expect(entries.slice(-2).map((entry) => [entry.phase, entry.toolName, entry.payload])).toEqual([
            ["COMPENSATING", "charge", expect.any(String)],
            ["COMPENSATION_UNKNOWN", "charge", JSON.stringify({ reason: "the undo was interrupted" })]
          ])
          expect(world.undone).toEqual([])
          expect(yield* world.record("c-3")).toMatchObject({ status: "compensating", lease: null })
        })
    )
  }
})

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-shutdown-commands-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

type StoreContext = Context.Context<Journal.Journal | Approval.Approval>
type Store = Layer.Layer<Journal.Journal | Approval.Approval, unknown>

/** Each makes the layer of one store: every build of it opens the same store again. */
const stores: ReadonlyArray<readonly [string, () => Store]> = [
  [
    "in memory",
    () => {
      const journal = makeMemoryJournal()
      const approval = Approval.makeMemory()
      return Layer.merge(Layer.succeed(Journal.Journal, journal), Layer.succeed(Approval.Approval, approval))
    }
  ],
  [
    "on SQLite",
    () => SqlStore.layerSqlite({ filename: path.join(dir, `close-${Math.random().toString(36).slice(2)}.db`) })
  ]
]

/**
 * A shop whose charge's undo (a refund) waits for `refund`, and two workers on one store with a
 * lease of 3 seconds: the operator's, with its own connection to the store, closed by
 * `closeOperator` (the worker, then its store), and another one.
 */
const setUp = (makeStore: () => Store) =>
  Effect.gen(function* () {
    const store = makeStore()
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
    const worker = (owner: string, opened: StoreContext) =>
      Layer.build(
        Layer.effectDiscard(Effect.flatMap(Saga.Saga, (saga) => saga.register([reserve, charge, ship]))).pipe(
          Layer.provideMerge(Saga.layerWith({ owner, leaseTtl: "3 seconds" })),
          Layer.provideMerge(Layer.succeedContext(opened))
        )
      )
    const operatorScope = yield* Scope.make()
    const operator = yield* Scope.extend(
      Effect.flatMap(Layer.build(store), (opened) => worker("operator", opened)),
      operatorScope
    )
    // A test that fails lets the refund go, so that its scope can close.
    yield* Effect.addFinalizer(() => Deferred.succeed(refund, undefined))
    const otherStore = yield* Layer.build(store)
    const other = yield* worker("other", otherStore)
    const world = {
      refund,
      undone,
      refundStarted: Deferred.await(refunding),
      /** Starts order `sagaId` on the operator's worker: it stops at ship's approval. */
      awaitingOrder: (sagaId: string) =>
        Effect.map(
          Effect.provide(
            Saga.run(sagaId, Effect.zipRight(reserve(sagaId), Effect.zipRight(charge(sagaId), ship(sagaId)))),
            operator
          ),
          (result) => assert(result._tag === "AwaitingApproval")
        ),
      record: (sagaId: string) =>
        Effect.map(
          Effect.provide(
            Effect.flatMap(Journal.Journal, (journal) => journal.get(sagaId)),
            otherStore
          ),
          Option.getOrThrow
        ),
      entries: (sagaId: string) =>
        Effect.provide(
          Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId)),
          otherStore
        )
    }
    return { world, operator, other, closeOperator: Scope.close(operatorScope, Exit.void) }
  })
