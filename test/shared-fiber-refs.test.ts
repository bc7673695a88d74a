import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, type Fiber, FiberRef, type FiberRefs } from "effect"
import { fiberRefsNow, sharedFiberRefs } from "../src/internal/util/fiberRefsOf.js"

class Greeting extends Context.Tag("Greeting")<Greeting, string>() {}

const level = FiberRef.unsafeMake("default")

/** The calling fiber's FiberRef values now, as a step reads them. */
const refsNow: Effect.Effect<FiberRefs.FiberRefs> = Effect.withFiberRuntime((fiber) =>
  Effect.succeed(fiberRefsNow(fiber as Fiber.RuntimeFiber<unknown, unknown>))
)

describe("sharedFiberRefs (a run's steps keep one set of FiberRef values between them)", () => {
  it.effect("shares the values of a call whose refs differ only by the context, as a step's span leaves them", () =>
    Effect.gen(function* () {
      const first = yield* refsNow
      // What a step's span does to the fiber: into its context, then back to the context before.
      const outer = yield* FiberRef.get(FiberRef.currentContext)
      yield* FiberRef.set(FiberRef.currentContext, Context.add(outer, Greeting, "inside a step"))
      yield* FiberRef.set(FiberRef.currentContext, outer)
      const second = yield* refsNow
      expect(second).not.toBe(first)
      expect(sharedFiberRefs(second, first)).toBe(first)
    })
  )

  it.effect("keeps a call's own values where another ref differs", () =>
    Effect.gen(function* () {
      const first = yield* refsNow
      const second = yield* Effect.locally(refsNow, level, "another")
      expect(sharedFiberRefs(second, first)).toBe(second)
      expect(sharedFiberRefs(first, undefined)).toBe(first)
    })
  )
})
