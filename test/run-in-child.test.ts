import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, FiberRef, Option, type Tracer } from "effect"
import { runInChild } from "../src/internal/util/child.js"

class Greeting extends Context.Tag("Greeting")<Greeting, string>() {}

const level = FiberRef.unsafeMake("caller")

describe("runInChild (how a saga's program runs in a fiber of its own)", () => {
  it.effect("runs in another fiber, with the caller's services, fiber refs and span, and hands back its exit", () =>
    Effect.gen(function* () {
      const caller = yield* Effect.fiberId
      const seen = yield* runInChild(
        Effect.all({
          fiber: Effect.fiberId,
          greeting: Greeting,
          level: FiberRef.get(level),
          span: Effect.map(Effect.currentSpan, (span) => span.name)
        })
      ).pipe(
        Effect.withSpan("outer"),
        Effect.provideService(Greeting, "hello"),
        Effect.locally(level, "set by the caller")
      )
      expect(Exit.isSuccess(seen)).toBe(true)
      const value = Exit.isSuccess(seen) ? seen.value : undefined
      expect(value?.greeting).toBe("hello")
      expect(value?.level).toBe("set by the caller")
      expect(value?.span).toBe("outer")
      expect(value?.fiber).not.toEqual(caller)
    })
  )

  it.effect(
    "a child that ends without suspending has ended when the call returns: its failure and defect come back as its exit",
    () =>
      Effect.gen(function* () {
        let ran = false
        const failed = yield* runInChild(
          Effect.zipRight(
            Effect.sync(() => (ran = true)),
            Effect.fail("no")
          )
        )
        expect(ran).toBe(true)
        expect(failed).toEqual(Exit.fail("no"))
        const died = yield* runInChild(Effect.die("boom"))
        expect(died).toEqual(Exit.die("boom"))
      })
  )

  it.effect("starts at once on the caller's stack, ahead of a fiber the caller forked before it", () =>
    Effect.gen(function* () {
      const order: Array<string> = []
      // Forked first, it waits for a turn of the scheduler; with Effect.fork the child would wait behind it.
      const other = yield* Effect.fork(Effect.sync(() => order.push("forked before")))
      yield* runInChild(Effect.sync(() => order.push("child")))
      yield* Fiber.join(other)
      expect(order).toEqual(["child", "forked before"])
    })
  )

  it.effect("what the child changes in its fiber refs stays its own", () =>
    Effect.gen(function* () {
      yield* runInChild(FiberRef.set(level, "set by the child"))
      expect(yield* FiberRef.get(level)).toBe("caller")
    })
  )

  it.effect("a child that suspends is waited for, and its exit comes back once it resumes", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<number>()
      const waiting = yield* Effect.fork(runInChild(Deferred.await(gate)))
      yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(waiting))).toBe(true)
      yield* Deferred.succeed(gate, 7)
      expect(yield* Fiber.join(waiting)).toEqual(Exit.succeed(7))
    })
  )

  it.effect("interrupting the caller interrupts the child and waits for its finalizers", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const finalized: Array<string> = []
      const caller = yield* Effect.fork(
        runInChild(
          Effect.onInterrupt(Effect.zipRight(Deferred.succeed(started, undefined), Effect.never), () =>
            Effect.sync(() => finalized.push("child interrupted"))
          )
        )
      )
      yield* Deferred.await(started)
      yield* Fiber.interrupt(caller)
      expect(finalized).toEqual(["child interrupted"])
    })
  )

  it.effect("a child's span is a child of the caller's", () =>
    Effect.gen(function* () {
      const parent = yield* runInChild(
        Effect.withSpan(
          Effect.map(Effect.currentSpan, (span) => Option.map(span.parent, (parent) => (parent as Tracer.Span).name)),
          "inner"
        )
      ).pipe(Effect.withSpan("outer"))
      expect(parent).toEqual(Exit.succeed(Option.some("outer")))
    })
  )
})
