/**
 * A run whose view of the saga went stale while it replayed (its lease lapsed; an operator decided
 * an approval meanwhile, through another worker) finds a decision in the approval store that the
 * journal it read does not hold. That is no forgery: the run is refused as its next append would be
 * (`ConcurrencyConflict`, or `LeaseHeld` while the command is between its writes), never with
 * `JournalTampered`, and runs and writes nothing.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Saga, SqlStore } from "../src/index.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-run-stale-approval-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/**
 * A payout (reserve, then an irreversible wire) on SQLite without a journal key, and workers on it
 * with a lease of 30 seconds. `paused` is the store as a worker paused past its lease sees it: its
 * renewals never land. The program waits at `gate` after reserve, once `gate` is set.
 */
const setUp = Effect.gen(function* () {
  const filename = path.join(dir, `payout-${Math.random().toString(36).slice(2)}.db`)
  const store: Context.Context<Journal.Journal | Approval.Approval> = yield* Layer.build(
    SqlStore.layerSqlite({ filename })
  )
  const journal = yield* Effect.provide(Journal.Journal, store)
  const paused: Journal.Journal["Type"] = { ...journal, renew: () => Effect.succeed(0) }
  const wires: Array<number> = []
  const reserve = Compensable.make({
    name: "reserve",
    input: Schema.Int,
    success: Schema.String,
    execute: (amount) => Effect.succeed(`hold-${amount}`),
    compensate: () => Effect.void
  })
  const wire = Compensable.make({
    name: "wire",
    input: Schema.Int,
    success: Schema.String,
    reversibility: "irreversible",
    execute: (amount) => Effect.sync(() => wires.push(amount)).pipe(Effect.as(`wire-${amount}`))
  })
  const replaying = { entered: yield* Deferred.make<void>(), gate: undefined as Deferred.Deferred<void> | undefined }
  const program = Effect.gen(function* () {
    yield* reserve(4200)
    if (replaying.gate !== undefined) {
      yield* Deferred.succeed(replaying.entered, undefined)
      yield* Deferred.await(replaying.gate)
    }
    return yield* wire(4200)
  })
  const worker = (journal: Journal.Journal["Type"], owner: string) =>
    Layer.build(
      Saga.layerWith({ owner, leaseTtl: "30 seconds" }).pipe(
        Layer.provideMerge(Layer.succeedContext(Context.add(store, Journal.Journal, journal)))
      )
    )
  return { journal, paused, program, replaying, wires, worker }
})

describe("a run whose view went stale meets an operator's decision it did not read", () => {
  it.scoped("the decision was journaled since: ConcurrencyConflict, nothing run or written, not JournalTampered", () =>
    Effect.gen(function* () {
      const { journal, paused, program, replaying, wires, worker } = yield* setUp
      const a = yield* worker(paused, "worker-a")
      const first = yield* Effect.provide(Saga.run("payout-1", program), a)
      assert(first._tag === "AwaitingApproval")
      replaying.gate = yield* Deferred.make<void>()
      const replay = yield* Effect.fork(Effect.flip(Effect.provide(Saga.run("payout-1", program), a)))
      yield* Deferred.await(replaying.entered)
      yield* TestClock.adjust("31 seconds")

      const read = (yield* journal.read("payout-1")).length
      const b = yield* worker(journal, "worker-b")
      yield* Effect.provide(Saga.approve("payout-1", first.request.stepId, { by: "alice" }), b)
      const journaled = yield* journal.read("payout-1")

      yield* Deferred.succeed(replaying.gate, undefined)
      const error = yield* Fiber.join(replay)
      assert(error._tag === "ConcurrencyConflict")
      expect(error.message).toBe(
        `saga payout-1 is at revision ${journaled.length}, not ${read}: it moved on, nothing was written`
      )
      expect(yield* journal.read("payout-1")).toEqual(journaled)
      expect(wires).toEqual([])
      expect((yield* Effect.provide(Saga.run("payout-1", program), b))._tag).toBe("Completed")
      expect(wires).toEqual([4200])
    })
  )

  it.scoped("the decision is in the store and its command holds the lease: LeaseHeld, nothing run or written", () =>
    Effect.gen(function* () {
      const { journal, paused, program, replaying, wires, worker } = yield* setUp
      const a = yield* worker(paused, "worker-a")
      const first = yield* Effect.provide(Saga.run("payout-2", program), a)
      assert(first._tag === "AwaitingApproval")
      replaying.gate = yield* Deferred.make<void>()
      const replay = yield* Effect.fork(Effect.flip(Effect.provide(Saga.run("payout-2", program), a)))
      yield* Deferred.await(replaying.entered)
      yield* TestClock.adjust("31 seconds")

      // An operator's command between its two writes: the lease taken, the store decided, the journal not yet.
      yield* journal.claim("payout-2", { owner: "worker-b", ttlMillis: 30_000 })
      const { request } = first
      yield* Effect.provide(Approval.approve(request.requestId, { by: "alice", inputDigest: request.inputDigest }), a)
      const before = yield* journal.read("payout-2")

      yield* Deferred.succeed(replaying.gate, undefined)
      const error = yield* Fiber.join(replay)
      assert(error._tag === "LeaseHeld")
      expect(error.message).toMatch(
        /^saga payout-2 is being driven by worker-b \(lease until \S+\): nothing was written$/
      )
      expect(yield* journal.read("payout-2")).toEqual(before)
      expect(wires).toEqual([])
    })
  )

  it.scoped("nobody wrote and nobody holds the lease: a decision the journal lacks is still JournalTampered", () =>
    Effect.gen(function* () {
      const { journal, program, wires, worker } = yield* setUp
      const a = yield* worker(journal, "worker-a")
      const first = yield* Effect.provide(Saga.run("payout-3", program), a)
      assert(first._tag === "AwaitingApproval")
      const { request } = first
      yield* Effect.provide(Approval.approve(request.requestId, { by: "mallory", inputDigest: request.inputDigest }), a)
      const error = yield* Effect.flip(Effect.provide(Saga.run("payout-3", program), a))
      assert(error._tag === "JournalTampered")
      expect(error.problem).toBe("approval")
      expect(error.message).toContain("the approval store says step")
      expect(wires).toEqual([])
    })
  )
})
