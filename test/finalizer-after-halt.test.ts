import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { Approval, Compensable, Journal, Outcome, Saga, SagaDefinition } from "../src/index.js"
import * as Testing from "../src/Testing.js"

/**
 * A program whose finalizer calls a tool (`unlock`) around a step that halts the run: the
 * finalizer's call stops as interrupted (it does not run, nothing of it is journaled) and the run
 * ends with its halt. Without that, the finalizer (uninterruptible) waited for the halt for good.
 */
const fixture = Effect.sync(() => {
  const world: Array<string> = []
  const tool = (name: string) =>
    Compensable.make({
      name,
      input: Schema.String,
      success: Schema.String,
      execute: (key) =>
        Effect.sync(() => {
          world.push(`${name} ${key}`)
          return `${name}-${key}`
        }),
      compensate: (ctx) => Effect.sync(() => world.push(`undo ${name} ${ctx.input}`))
    })
  const lock = tool("lock")
  const unlock = tool("unlock")
  const wire = Compensable.make({
    name: "wire",
    input: Schema.String,
    success: Schema.String,
    reversibility: "irreversible",
    execute: (to) =>
      Effect.sync(() => {
        world.push(`wire ${to}`)
        return `w-${to}`
      })
  })
  const ping = Compensable.make({
    name: "ping",
    input: Schema.String,
    success: Schema.String,
    execute: () => Effect.fail(Outcome.unknown("the carrier did not answer"))
  })
  // A provider that never answers: the tool's own `timeout` gives up on it.
  const slow = Compensable.make({
    name: "slow",
    input: Schema.String,
    success: Schema.String,
    timeout: "1 second",
    execute: () => Effect.never
  })
  return { world, lock, unlock, wire, ping, slow }
})

const tools = (sagaId: string) =>
  Effect.map(
    Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId)),
    (entries) => entries.flatMap((entry) => (entry.toolName === undefined ? [] : [entry.toolName]))
  )

/** Fails the test (instead of hanging the suite) if the run never ends. */
const HANG = 5_000

describe("a finalizer of the program that calls a tool once the run has halted", () => {
  it.effect(
    "stops as interrupted when the step it guards awaits approval: the run ends AwaitingApproval",
    () =>
      Effect.gen(function* () {
        const { lock, unlock, wire, world } = yield* fixture
        const program = Effect.zipRight(lock("L"), Effect.ensuring(wire("w"), Effect.ignore(unlock("L"))))
        const result = yield* Saga.run("f-pending", program)
        expect(result._tag).toBe("AwaitingApproval")
        expect(world).toEqual(["lock L"])
        expect(yield* tools("f-pending")).not.toContain("unlock")
      }).pipe(Effect.provide(Testing.layer)),
    HANG
  )

  it.effect(
    "stops as interrupted when the step it guards is rejected: the run compensates, the lock undone",
    () =>
      Effect.gen(function* () {
        const { lock, unlock, wire, world } = yield* fixture
        const program = Effect.zipRight(lock("L"), Effect.ensuring(wire("w"), Effect.ignore(unlock("L"))))
        const result = yield* Saga.run("f-rejected", program)
        expect(result._tag).toBe("Compensated")
        expect(world).toEqual(["lock L", "undo lock L"])
        expect(yield* tools("f-rejected")).not.toContain("unlock")
      }).pipe(Effect.provide(Testing.layerWith(Approval.layerRejectAll))),
    HANG
  )

  it.effect(
    "stops as interrupted in Effect.onInterrupt when the step's outcome is unknown: the run ends NeedsAttention",
    () =>
      Effect.gen(function* () {
        const { lock, ping, unlock, world } = yield* fixture
        const program = Effect.zipRight(
          lock("L"),
          Effect.onInterrupt(ping("p"), () => Effect.ignore(unlock("L")))
        )
        const result = yield* Saga.run("f-unknown", program)
        expect(result).toMatchObject({ _tag: "NeedsAttention", unknown: [{ toolName: "ping" }] })
        expect(world).toEqual(["lock L"])
        expect(yield* tools("f-unknown")).not.toContain("unlock")
      }).pipe(Effect.provide(Testing.layer)),
    HANG
  )

  it.effect(
    "stops as interrupted in acquireRelease's release when the step times out: the run ends NeedsAttention",
    () =>
      Effect.gen(function* () {
        const { lock, slow, unlock, world } = yield* fixture
        const program = Effect.scoped(
          Effect.zipRight(
            Effect.acquireRelease(lock("L"), () => Effect.ignore(unlock("L"))),
            slow("s")
          )
        )
        const fiber = yield* Effect.fork(Saga.run("f-timeout", program))
        yield* TestClock.adjust("1 second")
        const result = yield* Fiber.join(fiber)
        expect(result).toMatchObject({ _tag: "NeedsAttention", unknown: [{ toolName: "slow" }] })
        expect(world).toEqual(["lock L"])
        expect(yield* tools("f-timeout")).not.toContain("unlock")
      }).pipe(Effect.provide(Testing.layer)),
    HANG
  )
})

describe("crash exploration of a saga whose finalizer calls a tool around a step that awaits approval", () => {
  it.effect(
    "ends: every crash point recovers",
    () =>
      Effect.gen(function* () {
        const { lock, unlock, wire } = yield* fixture
        const LockedWire = SagaDefinition.make("locked-wire", {
          input: Schema.String,
          program: (to) => Effect.zipRight(lock(to), Effect.ensuring(wire(to), Effect.ignore(unlock(to))))
        })
        const summary = yield* Testing.exploreCrashes(LockedWire, "x", { world: Layer.empty, maxPoints: 5 })
        expect(summary.points).toBeGreaterThan(0)
      }),
    HANG * 4
  )
})
