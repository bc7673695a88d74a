import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeKeyedLock } from "../src/internal/util/keyedLock.js"
import { Mutex } from "../src/internal/util/mutex.js"

describe("Mutex", () => {
  it.effect("serializes holders in arrival order", () =>
    Effect.gen(function* () {
      const mutex = new Mutex()
      const order: Array<number> = []
      const gate = yield* Deferred.make<void>()
      const first = yield* Effect.fork(
        mutex.withLock(
          Effect.zipRight(
            Deferred.await(gate),
            Effect.sync(() => order.push(1))
          )
        )
      )
      yield* Effect.yieldNow()
      const others = yield* Effect.fork(
        Effect.all(
          [2, 3, 4].map((n) => mutex.withLock(Effect.sync(() => order.push(n)))),
          { concurrency: "unbounded" }
        )
      )
      yield* Effect.yieldNow()
      expect(order).toEqual([])
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(others)
      expect(order).toEqual([1, 2, 3, 4])
      expect(mutex.idle).toBe(true)
    })
  )

  it.effect("a waiter interrupted before its turn leaves the queue and the lock stays usable", () =>
    Effect.gen(function* () {
      const mutex = new Mutex()
      const gate = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(mutex.withLock(Deferred.await(gate)))
      yield* Effect.yieldNow()
      const waiter = yield* Effect.fork(mutex.withLock(Effect.die("must not run")))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(waiter)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      expect(yield* mutex.withLock(Effect.succeed("free"))).toBe("free")
      expect(mutex.idle).toBe(true)
    })
  )

  it.effect(
    "withLockUninterruptible: the holder is not cut by an interruption, a waiter still is, and failures release the lock",
    () =>
      Effect.gen(function* () {
        const mutex = new Mutex()
        const gate = yield* Deferred.make<void>()
        const done: Array<string> = []
        const holder = yield* Effect.fork(
          mutex.withLockUninterruptible(
            Effect.zipRight(
              Deferred.await(gate),
              Effect.sync(() => done.push("holder"))
            )
          )
        )
        yield* Effect.yieldNow()
        const waiter = yield* Effect.fork(mutex.withLockUninterruptible(Effect.sync(() => done.push("waiter"))))
        yield* Effect.yieldNow()
        const interruptingHolder = yield* Effect.fork(Fiber.interrupt(holder))
        yield* Fiber.interrupt(waiter)
        expect(mutex.idle).toBe(false)
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(interruptingHolder)
        expect(done).toEqual(["holder"])
        expect(mutex.idle).toBe(true)
        expect(yield* Effect.flip(mutex.withLockUninterruptible(Effect.fail("no")))).toBe("no")
        expect(yield* mutex.withLockUninterruptible(Effect.succeed("free"))).toBe("free")
        expect(mutex.idle).toBe(true)
      })
  )

  it.effect("tryLock takes only a lock nobody holds or waits for; unlock hands it to the next waiter", () =>
    Effect.gen(function* () {
      const mutex = new Mutex()
      expect(mutex.tryLock()).toBe(true)
      expect(mutex.tryLock()).toBe(false)
      const waiter = yield* Effect.fork(mutex.withLock(Effect.succeed("waited")))
      yield* Effect.yieldNow()
      mutex.unlock()
      expect(mutex.tryLock()).toBe(false)
      expect(yield* Fiber.join(waiter)).toBe("waited")
      expect(mutex.idle).toBe(true)
    })
  )
})

describe("makeKeyedLock", () => {
  /** `withLockMasked` as a run calls it: under the caller's mask, waiting as interruptible as the caller. */
  const masked = <A, E>(locks: ReturnType<typeof makeKeyedLock>, key: string, effect: Effect.Effect<A, E>) =>
    Effect.uninterruptibleMask((restore) => locks.withLockMasked(key, effect, restore))

  it.effect(
    "withLockMasked serializes holders of one key, frees the key whatever the exit, and keeps nothing after",
    () =>
      Effect.gen(function* () {
        const locks = makeKeyedLock()
        const order: Array<string> = []
        const gate = yield* Deferred.make<void>()
        const first = yield* Effect.fork(
          masked(
            locks,
            "a",
            Effect.zipRight(
              Deferred.await(gate),
              Effect.sync(() => order.push("a1"))
            )
          )
        )
        yield* Effect.yieldNow()
        const second = yield* Effect.fork(
          masked(
            locks,
            "a",
            Effect.sync(() => order.push("a2"))
          )
        )
        expect(
          yield* masked(
            locks,
            "b",
            Effect.sync(() => order.push("b"))
          )
        ).toBe(1)
        yield* Effect.yieldNow()
        expect(order).toEqual(["b"])
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(first)
        yield* Fiber.join(second)
        expect(order).toEqual(["b", "a1", "a2"])
        expect(yield* Effect.flip(masked(locks, "a", Effect.fail("no")))).toBe("no")
        expect(yield* masked(locks, "a", Effect.succeed("free"))).toBe("free")
        expect(locks.size()).toBe(0)
      })
  )

  it.effect(
    "withLockMasked: a waiter whose caller is interruptible is interrupted in line, and its effect never runs",
    () =>
      Effect.gen(function* () {
        const locks = makeKeyedLock()
        const order: Array<string> = []
        const gate = yield* Deferred.make<void>()
        const first = yield* Effect.fork(masked(locks, "a", Deferred.await(gate)))
        yield* Effect.yieldNow()
        const waiter = yield* Effect.fork(
          masked(
            locks,
            "a",
            Effect.sync(() => order.push("waiter"))
          )
        )
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(waiter)
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(first)
        expect(order).toEqual([])
        expect(locks.size()).toBe(0)
      })
  )
})
