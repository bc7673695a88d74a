import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, Redacted, Schedule, Schema, TestClock } from "effect"
import type { Compensable as C } from "../src/index.js"
import { Compensable, Journal, Outcome, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"

describe("steps", () => {
  it.effect("withCompensation makes any Effect a named, journaled, undoable step (data-first and data-last)", () =>
    Effect.gen(function* () {
      const undone: Array<string> = []
      const program = Effect.gen(function* () {
        const first = yield* Compensable.withCompensation(Effect.succeed("a-1"), {
          name: "createA",
          success: Schema.String,
          compensate: (ctx) => Effect.sync(() => undone.push(ctx.result))
        })
        const second = yield* Effect.succeed("b-1").pipe(
          Compensable.withCompensation({
            name: "createB",
            success: Schema.String,
            compensate: (ctx) => Effect.sync(() => undone.push(ctx.result))
          })
        )
        yield* Effect.fail("boom")
        return [first, second]
      })
      const result = yield* Saga.run("wc", program)
      expect(result._tag).toBe("Compensated")
      expect(undone).toEqual(["b-1", "a-1"])
      const phases = (yield* journalOf("wc")).map((entry) => `${entry.toolName ?? "saga"} ${entry.phase}`)
      expect(phases).toContain("createA EXECUTED")
      expect(phases).toContain("createB COMPENSATED")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("the undo gets its own idempotency key, the journaled input, the result and the receipt", () =>
    Effect.gen(function* () {
      const seen: Array<C.CompensationContext<{ readonly n: number }, string>> = []
      let forwardKey = ""
      const tool = Compensable.make({
        name: "book",
        input: Schema.Struct({ n: Schema.Number }),
        success: Schema.String,
        execute: ({ n }, step) =>
          Effect.gen(function* () {
            forwardKey = step.idempotencyKey
            yield* step.setReceipt(`provider-ref-${n}`)
            return `booking-${n}`
          }),
        compensate: (ctx) => Effect.sync(() => seen.push(ctx))
      })
      yield* Saga.run("ctx", Effect.zipRight(tool({ n: 7 }), Effect.fail("stop")))
      const ctx = seen[0]!
      expect(ctx.input).toEqual({ n: 7 })
      expect(ctx.inputJson).toBe('{"n":7}')
      expect(ctx.result).toBe("booking-7")
      expect(ctx.sagaId).toBe("ctx")
      expect(ctx.idempotencyKey).not.toBe(forwardKey)
      expect(ctx.idempotencyKey).toBe(`ctx/${ctx.stepId}/undo`)
      expect(Option.map(ctx.receipt, Redacted.value)).toEqual(Option.some("provider-ref-7"))
      expect(String(Option.getOrThrow(ctx.receipt))).not.toContain("provider-ref")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a call that times out after it started has an unknown outcome: the saga needs attention", () =>
    Effect.gen(function* () {
      const slow = Compensable.make({
        name: "slow",
        input: Schema.Null,
        success: Schema.String,
        timeout: "5 seconds",
        execute: () => Effect.as(Effect.sleep("1 minute"), "late"),
        compensate: () => Effect.void
      })
      const fiber = yield* Effect.fork(Saga.run("timeout", slow(null)))
      yield* TestClock.adjust("6 seconds")
      const result = yield* Fiber.join(fiber)
      expect(result._tag).toBe("NeedsAttention")
      if (result._tag === "NeedsAttention") expect(result.unknown[0]!.toolName).toBe("slow")
      const phases = (yield* journalOf("timeout")).map((entry) => entry.phase)
      expect(phases).toEqual(["SAGA_STARTED", "INTENT", "SAGA_NEEDS_ATTENTION"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("retries happen before EXECUTED, within one INTENT", () =>
    Effect.gen(function* () {
      let attempts = 0
      const flaky = Compensable.make({
        name: "flaky",
        input: Schema.Null,
        success: Schema.Number,
        retry: Schedule.recurs(3),
        execute: () =>
          Effect.suspend(() => (++attempts < 3 ? Effect.fail(Outcome.failed("busy")) : Effect.succeed(attempts)))
      })
      const result = yield* Saga.run("retry", flaky(null))
      expect(result).toMatchObject({ _tag: "Completed", value: 3 })
      const phases = (yield* journalOf("retry")).map((entry) => entry.phase)
      expect(phases).toEqual(["SAGA_STARTED", "INTENT", "EXECUTED", "SAGA_COMPLETED"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("each retry sees the next attempt number", () =>
    Effect.gen(function* () {
      const attempts: Array<number> = []
      const flaky = Compensable.make({
        name: "attempts",
        input: Schema.Null,
        success: Schema.Number,
        retry: Schedule.recurs(3),
        execute: (_, step) =>
          Effect.suspend(() => {
            attempts.push(step.attempt)
            return attempts.length < 3 ? Effect.fail(Outcome.failed("busy")) : Effect.succeed(step.attempt)
          })
      })
      expect(yield* Saga.run("attempts", flaky(null))).toMatchObject({ _tag: "Completed", value: 3 })
      expect(attempts).toEqual([1, 2, 3])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a replayed failure is the same error the program saw the first time", () =>
    Effect.gen(function* () {
      class OutOfStock extends Schema.TaggedError<OutOfStock>()("OutOfStock", { sku: Schema.String }) {}
      const seen: Array<unknown> = []
      const reserve = Compensable.make({
        name: "reserveStock",
        input: Schema.String,
        success: Schema.String,
        failure: OutOfStock,
        execute: (sku) =>
          sku === "gone" ? Effect.fail(new OutOfStock({ sku })) : Effect.fail(Outcome.failed("closed"))
      })
      const program = Effect.gen(function* () {
        for (const sku of ["gone", "shop"]) {
          yield* reserve(sku).pipe(Effect.catchAll((error) => Effect.sync(() => seen.push(error))))
        }
      })
      yield* Saga.run("replayed-failure", program)
      yield* Saga.run("replayed-failure", program)
      expect(seen).toHaveLength(4)
      expect(seen[2]).toEqual(seen[0])
      expect(seen[2]).toBeInstanceOf(OutOfStock)
      expect(seen[3]).toEqual(seen[1])
      expect((seen[3] as Outcome.Failed).reason).toBe("closed")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a read whose result cannot be journaled fails (Outcome.Failed), never waits for an operator", () =>
    Effect.gen(function* () {
      const seen: Array<unknown> = []
      const lookup = Compensable.make({
        name: "lookup",
        input: Schema.Int,
        success: Schema.String,
        maxPayloadBytes: 1000,
        changesNothing: true,
        execute: (size) => Effect.succeed("x".repeat(size))
      })
      const program = lookup(5000).pipe(Effect.catchAll((error) => Effect.sync(() => seen.push(error))))
      const result = yield* Saga.run("big-read", program)
      expect(result._tag).not.toBe("NeedsAttention")
      expect(seen[0]).toBeInstanceOf(Outcome.Failed)
      expect((seen[0] as Outcome.Failed).reason).toBe(
        "the tool ran but its result exceeds maxPayloadBytes, so its result cannot be journaled"
      )
      const phases = (yield* Journal.Journal.pipe(Effect.flatMap((journal) => journal.read("big-read")))).map(
        (entry) => entry.phase
      )
      expect(phases.slice(0, 3)).toEqual(["SAGA_STARTED", "INTENT", "FAILED"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a huge failure is journaled cut: its message at 1000 characters, its encoding only within maxPayloadBytes",
    () =>
      Effect.gen(function* () {
        class Refused extends Schema.TaggedError<Refused>()("Refused", { body: Schema.String }) {
          override get message() {
            return `refused: ${this.body}`
          }
        }
        const seen: Array<unknown> = []
        const charge = Compensable.make({
          name: "charge",
          input: Schema.Int,
          success: Schema.String,
          failure: Refused,
          maxPayloadBytes: 10_000,
          execute: (size) => Effect.fail(new Refused({ body: "x".repeat(size) }))
        })
        const program = Effect.forEach([100, 5_000_000], (size) =>
          charge(size).pipe(Effect.catchAll((error) => Effect.sync(() => seen.push(error))))
        )
        yield* Saga.run("huge-failure", program)
        const failed = (yield* Journal.Journal.pipe(Effect.flatMap((journal) => journal.read("huge-failure"))))
          .filter((entry) => entry.phase === "FAILED")
          .map((entry) => JSON.parse(entry.payload!))
        expect(failed[0]).toMatchObject({
          description: `refused: ${"x".repeat(100)}`,
          error: { body: "x".repeat(100) }
        })
        expect(failed[1].description).toBe(`refused: ${"x".repeat(990)}…`)
        expect(failed[1].error).toBeUndefined()

        yield* Saga.run("huge-failure", program)
        expect(seen[2]).toEqual(seen[0])
        expect(seen[3]).toBeInstanceOf(Outcome.Failed)
        expect((seen[3] as Outcome.Failed).reason).toBe(failed[1].description)
      }).pipe(Effect.provide(Testing.layer))
  )
  it.effect("an unknown outcome is retried only when the tool accepts replays of its idempotency key", () =>
    Effect.gen(function* () {
      const keys: Array<string> = []
      const make = (retryMode: C.RetryMode) =>
        Compensable.make({
          name: `send-${retryMode}`,
          input: Schema.Null,
          success: Schema.String,
          retry: Schedule.recurs(2),
          retryMode,
          execute: (_, step) =>
            Effect.suspend(() => {
              keys.push(step.idempotencyKey)
              return keys.length === 1 || retryMode === "none"
                ? Effect.fail(Outcome.unknown("lost"))
                : Effect.succeed("ok")
            })
        })
      const safe = yield* Saga.run("idem", make("idempotency-key")(null))
      expect(safe._tag).toBe("Completed")
      expect(keys).toHaveLength(2)
      expect(keys[0]).toBe(keys[1])
      keys.length = 0
      const unsafe = yield* Saga.run("no-idem", make("none")(null))
      expect(unsafe._tag).toBe("NeedsAttention")
      expect(keys).toHaveLength(1)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("running a saga id again replays it: executed steps return their journaled results without running", () =>
    Effect.gen(function* () {
      let calls = 0
      const counter = Compensable.make({
        name: "count",
        input: Schema.Null,
        success: Schema.Number,
        execute: () => Effect.sync(() => ++calls)
      })
      const first = yield* Saga.run("replay", counter(null))
      const before = yield* journalOf("replay")
      const second = yield* Saga.run("replay", counter(null))
      expect(first).toMatchObject({ _tag: "Completed", value: 1 })
      expect(second).toMatchObject({ _tag: "Completed", value: 1 })
      expect(calls).toBe(1)
      expect(yield* journalOf("replay")).toEqual(before)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a compensated saga run again reports the same compensation and writes nothing", () =>
    Effect.gen(function* () {
      let undos = 0
      const tool = Compensable.make({
        name: "t",
        input: Schema.Null,
        success: Schema.String,
        execute: () => Effect.succeed("x"),
        compensate: () => Effect.sync(() => undos++)
      })
      const program = Effect.zipRight(tool(null), Effect.fail("no"))
      const first = yield* Saga.run("again", program)
      const before = yield* journalOf("again")
      const second = yield* Saga.run("again", program)
      expect(first._tag).toBe("Compensated")
      expect(second._tag).toBe("Compensated")
      if (second._tag === "Compensated") expect(second.report.undone.map((step) => step.outcome)).toEqual(["completed"])
      expect(undos).toBe(1)
      expect(yield* journalOf("again")).toEqual(before)
    }).pipe(Effect.provide(Testing.layer))
  )
})

const journalOf = (sagaId: string) => Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
