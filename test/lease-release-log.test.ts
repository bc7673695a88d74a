import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Logger, Option, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Saga, SqlJournal } from "../src/index.js"

/** A journal (in memory unless `store` says) that fails every write once `closed` is set, as a store closed under a run does. */
const closing = (closed: { value: boolean }, store: Layer.Layer<Journal.Journal, unknown> = Journal.layerMemory) =>
  Layer.effect(
    Journal.Journal,
    Effect.map(Journal.Journal, (journal) => {
      const refused = (operation: string) =>
        Effect.fail(new Journal.JournalError({ operation, reason: "the store is closed" }))
      return {
        ...journal,
        append: (...args: Parameters<typeof journal.append>) =>
          closed.value ? refused("append") : journal.append(...args),
        release: (...args: Parameters<typeof journal.release>) =>
          closed.value ? refused("release") : journal.release(...args)
      }
    })
  ).pipe(Layer.provide(store))

/** Each line logged, as its level and its messages (several are shown apart, with ` | `). */
const keeping = (lines: Array<string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.label} ${(Array.isArray(message) ? message : [message]).map(String).join(" | ")}`)
    })
  )

// The store closes while the step runs: its outcome cannot be journaled, nor the lease released.
const closesWhileRunning = (closed: { value: boolean }) =>
  Compensable.make({
    name: "closes",
    input: Schema.Struct({}),
    success: Schema.String,
    execute: () => Effect.sync(() => (closed.value = true)).pipe(Effect.as("done")),
    compensate: () => Effect.void
  })

/** A call that takes an hour: its saga keeps the worker busy, renewing its leases. */
const takesAnHour = Compensable.make({
  name: "takesAnHour",
  input: Schema.Struct({}),
  success: Schema.String,
  execute: () => Effect.as(Effect.sleep("1 hour"), "done"),
  compensate: () => Effect.void
})

describe("a lease the journal could not release", () => {
  it.effect("is logged as one message: what will happen, then why, after a colon", () => {
    const lines: Array<string> = []
    const closed = { value: false }
    const closes = closesWhileRunning(closed)
    return Effect.gen(function* () {
      yield* Effect.exit(Saga.run("closing", closes({})))
      expect(lines).toContain(
        "WARN effect-saga: the lease of saga closing was not released; the worker's next renewal drops it (a process that ends first, as a CLI command does, leaves it to lapse when it expires): journal release failed: the store is closed"
      )
    }).pipe(
      Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(closing(closed), Approval.layerMemory)))),
      Effect.provide(keeping(lines))
    )
  })

  it.effect("a worker's leases left unreleased when its service closes: one message, the reason after a colon", () => {
    const lines: Array<string> = []
    const closed = { value: false }
    return Effect.gen(function* () {
      // The store closes before the worker does: its leases cannot be released.
      yield* Effect.scoped(
        Effect.zipRight(
          Layer.build(Saga.layer.pipe(Layer.provideMerge(Layer.merge(closing(closed), Approval.layerMemory)))),
          Effect.sync(() => (closed.value = true))
        )
      )
      expect(lines).toContain("WARN effect-saga: leases were not released: journal release failed: the store is closed")
    }).pipe(Effect.provide(keeping(lines)))
  })

  it.effect("is dropped at the worker's next renewal, while it renews the others: the saga can be recovered", () => {
    const closed = { value: false }
    const closes = closesWhileRunning(closed)
    return Effect.gen(function* () {
      const journal = yield* Journal.Journal
      const leaseOf = (sagaId: string) => Effect.map(journal.get(sagaId), (record) => Option.getOrThrow(record).lease)
      const busy = yield* Effect.fork(Saga.run("busy", takesAnHour({})))
      yield* TestClock.adjust("1 second")
      expect(yield* leaseOf("busy")).toMatchObject({ owner: "worker-1" })
      // The run of "left" ends while the store fails: the saga is left running, its lease held.
      expect((yield* Effect.exit(Saga.run("left", closes({}))))._tag).toBe("Failure")
      closed.value = false
      expect(Option.getOrThrow(yield* journal.get("left"))).toMatchObject({
        status: "running",
        lease: { owner: "worker-1" }
      })
      // The worker stays busy past the lease's 30 seconds, renewing every 10.
      yield* TestClock.adjust("1 minute")
      expect(yield* leaseOf("left")).toBeNull()
      expect(yield* leaseOf("busy")).toMatchObject({ owner: "worker-1" })
      const claimed = yield* journal.claimLapsed({ owner: "another-worker", ttlMillis: 30_000 }, 10)
      expect(claimed.map((record) => record.sagaId)).toEqual(["left"])
      yield* Fiber.interrupt(busy)
    }).pipe(
      Effect.provide(
        Saga.layerWith({ owner: "worker-1" }).pipe(
          Layer.provideMerge(Layer.merge(closing(closed), Approval.layerMemory))
        )
      )
    )
  })

  it.effect("is not dropped while a new run of its saga holds it in the worker", () => {
    const closed = { value: false }
    let calls = 0
    // Closes the store on its first call only; retried with its key, it runs again.
    const closesOnce = Compensable.make({
      name: "closesOnce",
      input: Schema.Struct({}),
      success: Schema.String,
      retryMode: "idempotency-key",
      execute: () => Effect.sync(() => (closed.value = ++calls === 1)).pipe(Effect.as("done")),
      compensate: () => Effect.void
    })
    const program = Effect.zipRight(closesOnce({}), takesAnHour({}))
    return Effect.gen(function* () {
      const journal = yield* Journal.Journal
      expect((yield* Effect.exit(Saga.run("again", program)))._tag).toBe("Failure")
      closed.value = false
      // Run again, it retries the call and then holds the lease for an hour: renewed, never dropped.
      const again = yield* Effect.fork(Saga.run("again", program))
      yield* TestClock.adjust("1 minute")
      expect(calls).toBe(2)
      expect(Option.getOrThrow(yield* journal.get("again")).lease).toMatchObject({ owner: "worker-1" })
      expect(yield* journal.claimLapsed({ owner: "another-worker", ttlMillis: 30_000 }, 10)).toEqual([])
      yield* Fiber.interrupt(again)
    }).pipe(
      Effect.provide(
        Saga.layerWith({ owner: "worker-1" }).pipe(
          Layer.provideMerge(Layer.merge(closing(closed), Approval.layerMemory))
        )
      )
    )
  })
})

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-lease-release-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe.each([
  ["in memory", () => Journal.layerMemory],
  ["on SQLite", () => SqlJournal.layerSqlite({ filename: path.join(dir, `${crypto.randomUUID()}.db`) })]
])("a lease the journal could not release, %s, the worker then idle", (_, store) => {
  it.effect("is dropped at the next tick, and the timer then stops", () => {
    const closed = { value: false }
    const closes = closesWhileRunning(closed)
    return Effect.gen(function* () {
      const journal = yield* Journal.Journal
      expect((yield* Effect.exit(Saga.run("left", closes({}))))._tag).toBe("Failure")
      closed.value = false
      // Nothing else runs: the tick a third of the lease after the run drops it.
      yield* TestClock.adjust("10 seconds")
      expect(Option.getOrThrow(yield* journal.get("left"))).toMatchObject({ status: "running", lease: null })
      const claimed = yield* journal.claimLapsed({ owner: "another-worker", ttlMillis: 30_000 }, 10)
      expect(claimed.map((record) => record.sagaId)).toEqual(["left"])
      expect(Chunk.size(yield* TestClock.sleeps())).toBe(0)
    }).pipe(
      Effect.provide(
        Saga.layerWith({ owner: "worker-1" }).pipe(
          Layer.provideMerge(Layer.merge(closing(closed, store()), Approval.layerMemory))
        )
      )
    )
  })

  it.effect("refused again, is tried at every tick, renewed at none, the timer pending until it is dropped", () => {
    const closed = { value: false }
    const closes = closesWhileRunning(closed)
    return Effect.gen(function* () {
      const journal = yield* Journal.Journal
      const leaseOf = (sagaId: string) => Effect.map(journal.get(sagaId), (record) => Option.getOrThrow(record).lease)
      expect((yield* Effect.exit(Saga.run("left", closes({}))))._tag).toBe("Failure")
      const held = yield* leaseOf("left")
      expect(held).toMatchObject({ owner: "worker-1" })
      // The store still refuses releases at the next two ticks: the lease stays as it was, and the timer pending.
      yield* TestClock.adjust("20 seconds")
      expect(yield* leaseOf("left")).toEqual(held)
      expect(Chunk.size(yield* TestClock.sleeps())).toBe(1)
      closed.value = false
      yield* TestClock.adjust("10 seconds")
      expect(yield* leaseOf("left")).toBeNull()
      expect(Chunk.size(yield* TestClock.sleeps())).toBe(0)
    }).pipe(
      Effect.provide(
        Saga.layerWith({ owner: "worker-1" }).pipe(
          Layer.provideMerge(Layer.merge(closing(closed, store()), Approval.layerMemory))
        )
      )
    )
  })
})
