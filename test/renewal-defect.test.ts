/**
 * A defect in `Journal.renew` (a driver that throws) is logged as a failed renewal is, and the
 * worker's leases go on being renewed: one defect used to stop renewal for the worker's whole life,
 * silently, and another worker took over the sagas it was still running. A defect in the release
 * of a lease left unreleased is logged too, and used to skip the renewal of the others at every tick.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, Schema, Scope, TestClock } from "effect"
import { Approval, Compensable, Journal, Saga } from "../src/index.js"
import { makeRenewal } from "../src/internal/engine/renewal.js"

describe("a defect in renew", () => {
  it.scoped("is logged as a failed renewal, and a saga started later is renewed all the same", () =>
    Effect.gen(function* () {
      let calls = 0
      const diesOnce = Layer.effect(
        Journal.Journal,
        Effect.map(Journal.Journal, (journal) =>
          Journal.Journal.of({
            ...journal,
            renew: (holder) =>
              Effect.suspend(() =>
                ++calls === 1 ? Effect.die(new Error("driver crashed once")) : journal.renew(holder)
              )
          })
        )
      )
      const shared = Layer.succeedContext(yield* Layer.build(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
      const lines: Array<string> = []
      const keeping = Logger.make(({ logLevel, message }) => {
        lines.push(`${logLevel.label} ${(Array.isArray(message) ? message : [message]).map(String).join(" ")}`)
      })
      const w1 = yield* Layer.build(
        Saga.layerWith({ owner: "w1", leaseTtl: "30 seconds" }).pipe(
          Layer.provide(diesOnce),
          Layer.provide(shared),
          Layer.provide(Logger.replace(Logger.defaultLogger, keeping))
        )
      )
      const w2 = yield* Layer.build(Saga.layerWith({ owner: "w2", leaseTtl: "30 seconds" }).pipe(Layer.provide(shared)))
      yield* Effect.forkScoped(Effect.provide(Saga.run("a", slow(null)), w1))
      yield* TestClock.adjust("15 seconds")
      yield* Effect.forkScoped(Effect.provide(Saga.run("b", slow(null)), w1))
      yield* TestClock.adjust("60 seconds")

      expect(lines).toContain("WARN effect-saga: leases were not renewed: driver crashed once")
      expect(calls).toBeGreaterThan(3)
      const b = yield* Effect.provide(Saga.status("b"), w2)
      expect(b).toMatchObject({ status: "running", lease: { owner: "w1" } })
      const taken = yield* Effect.flip(Effect.provide(Saga.run("b", slow(null)), w2))
      expect(taken._tag).toBe("LeaseHeld")
    })
  )

  it.scoped("a renewing loop that died is not left running: the next holder starts one", () =>
    Effect.gen(function* () {
      let calls = 0
      const renew = Effect.suspend(() => (++calls === 1 ? Effect.die(new Error("driver crashed once")) : Effect.void))
      const renewal = makeRenewal(renew, Duration.seconds(10), yield* Scope.Scope)
      yield* renewal.acquire
      yield* TestClock.adjust("10 seconds")
      expect(calls).toBe(1)
      renewal.release()
      yield* renewal.acquire
      yield* TestClock.adjust("30 seconds")
      expect(calls).toBe(4)
    })
  )
})

describe("a defect in the release of a lease left unreleased", () => {
  it.scoped("is logged as a failed release, and the worker's other leases are renewed all the same", () =>
    Effect.gen(function* () {
      const store = { closed: false, throws: false }
      const refused = (operation: string) =>
        Effect.fail(new Journal.JournalError({ operation, reason: "the store is closed" }))
      const flaky = Layer.effect(
        Journal.Journal,
        Effect.map(Journal.Journal, (journal) =>
          Journal.Journal.of({
            ...journal,
            append: (...args) => (store.closed ? refused("append") : journal.append(...args)),
            release: (owner, sagaId) =>
              Effect.suspend(() =>
                store.throws
                  ? Effect.die(new Error("driver crashed"))
                  : store.closed
                    ? refused("release")
                    : journal.release(owner, sagaId)
              )
          })
        )
      ).pipe(Layer.provide(Journal.layerMemory))
      const lines: Array<string> = []
      const keeping = Logger.make(({ logLevel, message }) => {
        lines.push(`${logLevel.label} ${(Array.isArray(message) ? message : [message]).map(String).join(" ")}`)
      })
      const worker = yield* Layer.build(
        Saga.layerWith({ owner: "w1", leaseTtl: "30 seconds" }).pipe(
          Layer.provideMerge(Layer.merge(flaky, Approval.layerMemory)),
          Layer.provide(Logger.replace(Logger.defaultLogger, keeping))
        )
      )
      yield* Effect.forkScoped(Effect.provide(Saga.run("busy", slow(null)), worker))
      yield* TestClock.adjust("1 second")
      // The store closes under the run of "left": its lease is left unreleased, and its release then throws.
      const closes = Compensable.make({
        name: "closes",
        input: Schema.Null,
        success: Schema.String,
        execute: () =>
          Effect.as(
            Effect.sync(() => (store.closed = true)),
            "x"
          ),
        compensate: () => Effect.void
      })
      expect((yield* Effect.exit(Effect.provide(Saga.run("left", closes(null)), worker)))._tag).toBe("Failure")
      Object.assign(store, { closed: false, throws: true })
      yield* TestClock.adjust("60 seconds")

      const busy = yield* Effect.provide(Saga.status("busy"), worker)
      expect(busy).toMatchObject({ status: "running", lease: { owner: "w1", expiresAt: "1970-01-01T00:01:30.000Z" } })
      expect(lines).toContain("WARN effect-saga: leases were not released: driver crashed")
      // The worker closes with a store that no longer throws.
      store.throws = false
    })
  )
})

const slow = Compensable.make({
  name: "slow",
  input: Schema.Null,
  success: Schema.String,
  execute: () => Effect.as(Effect.sleep("2 minutes"), "x"),
  compensate: () => Effect.void
})
