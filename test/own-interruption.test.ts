import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { Approval, Compensable, Journal, Outcome, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { recordedReserve } from "./fixtures/recorded-reserve.js"
import { siblingCut } from "./fixtures/sibling-cut.js"

/** A program that times out one of its own calls (`Effect.timeout`), catches that, and goes on. */
const fixture = Effect.sync(() => {
  const world: Array<string> = []
  const reserve = recordedReserve(world)
  // A slow provider: it answers after 400 ms, long after the program stopped waiting.
  const charge = Compensable.make({
    name: "charge",
    input: Schema.Int,
    success: Schema.String,
    execute: (amount) =>
      Effect.zipRight(
        Effect.sleep("400 millis"),
        Effect.sync(() => `ch-${amount}`)
      ),
    compensate: (ctx) => Effect.sync(() => world.push(`refund ${ctx.result}`))
  })
  const wire = Compensable.make({
    name: "wire",
    input: Schema.Int,
    success: Schema.String,
    reversibility: "irreversible",
    execute: (amount) =>
      Effect.sync(() => {
        world.push(`wire ${amount}`)
        return `w-${amount}`
      })
  })
  const stock = Compensable.make({
    name: "stock",
    input: Schema.String,
    success: Schema.Int,
    changesNothing: true,
    execute: () => Effect.succeed(3)
  })
  const program = <A, E, R>(then: Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      yield* reserve("A-1")
      yield* charge(42).pipe(
        Effect.timeout("60 millis"),
        Effect.orElseSucceed(() => "gave up")
      )
      return yield* then
    })
  return { world, reserve, charge, stock, wire, program }
})

const phases = (sagaId: string) =>
  Effect.map(
    Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId)),
    (entries) => entries.map((entry) => `${entry.toolName ?? ""} ${entry.phase}`.trim())
  )

const runTimedOut = <A, E>(program: Effect.Effect<A, E, any>) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(Saga.run("s1", program))
    yield* TestClock.adjust("60 millis")
    return yield* Fiber.join(fiber)
  })

const stopped = ["SAGA_STARTED", "reserve INTENT", "reserve EXECUTED", "charge INTENT", "SAGA_NEEDS_ATTENTION"]

describe("a call the program interrupted itself", () => {
  for (const [name, approvals] of [
    ["stops the run before an irreversible call, even one approved at once", Approval.layerAutoApprove],
    ["undoes nothing when the next call's approval is refused", Approval.layerRejectAll]
  ] as const) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const { program, wire, world } = yield* fixture
        const result = yield* runTimedOut(program(wire(42)))
        expect(result).toMatchObject({ _tag: "NeedsAttention", unknown: [{ toolName: "charge" }] })
        expect(world).toEqual(["reserve A-1"])
        expect(yield* phases("s1")).toEqual(stopped)
      }).pipe(Effect.provide(Testing.layerWith(approvals)))
    )
  }

  it.effect("stops the run before the next compensable call", () =>
    Effect.gen(function* () {
      const { program, reserve, world } = yield* fixture
      const result = yield* runTimedOut(program(reserve("B-2")))
      expect(result).toMatchObject({
        _tag: "NeedsAttention",
        unknown: [{ toolName: "charge", reason: expect.stringContaining("the program interrupted the call") }]
      })
      expect(world).toEqual(["reserve A-1"])
      expect(yield* phases("s1")).toEqual(stopped)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a program that returns after catching does not complete", () =>
    Effect.gen(function* () {
      const { program } = yield* fixture
      const result = yield* runTimedOut(program(Effect.succeed("done")))
      expect(result).toMatchObject({
        _tag: "NeedsAttention",
        unknown: [{ toolName: "charge", reason: expect.stringContaining("the program interrupted the call") }]
      })
      expect(yield* phases("s1")).toEqual(stopped)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a read may still run after it; the run then stops before anything that changes something", () =>
    Effect.gen(function* () {
      const { program, reserve, stock, world } = yield* fixture
      const result = yield* runTimedOut(program(Effect.zipRight(stock("A-1"), reserve("B-2"))))
      expect(result).toMatchObject({ _tag: "NeedsAttention", unknown: [{ toolName: "charge" }] })
      expect(world).toEqual(["reserve A-1"])
      expect(yield* phases("s1")).toEqual([...stopped.slice(0, -1), "stock INTENT", "stock EXECUTED", stopped.at(-1)])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a program that fails after catching undoes nothing", () =>
    Effect.gen(function* () {
      const { program, world } = yield* fixture
      const result = yield* runTimedOut(program(Effect.fail("giving up")))
      expect(result).toMatchObject({
        _tag: "NeedsAttention",
        unknown: [{ toolName: "charge", reason: expect.stringContaining("the program interrupted the call") }]
      })
      expect(world).toEqual(["reserve A-1"])
      expect(yield* phases("s1")).toEqual(stopped)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a finalizer of the interrupted call may still call a tool: it runs, then the run ends NeedsAttention",
    () =>
      Effect.gen(function* () {
        const { charge, reserve, world } = yield* fixture
        const program = charge(42).pipe(
          Effect.onInterrupt(() => Effect.orDie(reserve("cleanup"))),
          Effect.timeout("60 millis"),
          Effect.orElseSucceed(() => "gave up")
        )
        const result = yield* runTimedOut(program)
        expect(result).toMatchObject({ _tag: "NeedsAttention" })
        expect(world).toEqual(["reserve cleanup"])
        expect((yield* phases("s1")).at(-1)).toBe("SAGA_NEEDS_ATTENTION")
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an interruption of the run itself still suspends the saga", () =>
    Effect.gen(function* () {
      const { program, reserve } = yield* fixture
      const fiber = yield* Effect.fork(Saga.run("s1", program(reserve("B-2"))))
      yield* TestClock.adjust("10 millis")
      yield* Fiber.interrupt(fiber)
      expect((yield* Saga.status("s1")).status).toBe("suspended")
      expect((yield* phases("s1")).at(-1)).toBe("SAGA_SUSPENDED")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a finalizer of the program still runs its call when the run itself is interrupted mid-call", () =>
    Effect.gen(function* () {
      const { reserve, world } = yield* fixture
      const blocked = Compensable.make({
        name: "blocked",
        input: Schema.String,
        success: Schema.String,
        execute: () => Effect.never,
        compensate: () => Effect.void
      })
      const program = Effect.ensuring(blocked("x"), Effect.orDie(reserve("cleanup")))
      const fiber = yield* Effect.fork(Saga.run("s2", program))
      yield* TestClock.adjust("10 millis")
      yield* Fiber.interrupt(fiber)
      expect(world).toEqual(["reserve cleanup"])
      expect((yield* phases("s2")).at(-1)).toBe("SAGA_SUSPENDED")
    }).pipe(Effect.provide(Testing.layer))
  )
})

describe("a halt inside a finalizer of the program", () => {
  it.effect(
    "a finalizer's call whose outcome is unknown ends the run NeedsAttention instead of blocking it for good",
    () =>
      Effect.gen(function* () {
        const ping = Compensable.make({
          name: "ping",
          input: Schema.String,
          success: Schema.String,
          execute: () => Effect.fail(Outcome.unknown("the carrier did not answer"))
        })
        const result = yield* Saga.run("f1", Effect.ensuring(Effect.fail("boom"), Effect.ignore(ping("x"))))
        expect(result).toMatchObject({ _tag: "NeedsAttention", unknown: [{ toolName: "ping" }] })
        expect((yield* phases("f1")).at(-1)).toBe("SAGA_NEEDS_ATTENTION")
      }).pipe(Effect.provide(Testing.layer))
  )
})

describe("a call a failing Effect.all sibling cut", () => {
  it.effect(
    "is cut again on resume, even when its tool retries by key; resolved, the saga compensates (docs/recovery.md)",
    () =>
      Effect.gen(function* () {
        const { world, attempts, program } = siblingCut()
        const first = yield* Saga.run("cut", program)
        assert(first._tag === "NeedsAttention")
        expect(first.unknown.map((step) => step.toolName)).toEqual(["hold"])
        // The replay answers the sibling's failure at once, while the retried call is in flight.
        const again = yield* Saga.run("cut", program)
        expect(again).toMatchObject({ _tag: "NeedsAttention", unknown: [{ toolName: "hold" }] })
        expect(attempts.hold).toBe(2)
        // Resolved from the provider's record of that key, the saga compensates: the hold is released.
        yield* Saga.resolve("cut", first.unknown[0]!.stepId, { outcome: "applied", result: "h-A", by: "oncall" })
        const resumed = yield* Saga.run("cut", program)
        expect(resumed._tag).toBe("Compensated")
        expect(world).toEqual(["release h-A"])
        expect(attempts.hold).toBe(2)
      }).pipe(Effect.provide(Testing.layer))
  )
})
