import { assert, describe, expect, it } from "@effect/vitest"
import { Cause, Data, Effect, Fiber, Option, Redacted, Schedule, Schema, TestClock } from "effect"
import type { Compensable as C } from "../src/index.js"
import { Compensable, Journal, Outcome, Saga, SagaResult, Timeline } from "../src/index.js"
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

  it.effect(
    "a call that dies may have run: its INTENT stays without an outcome, nothing is undone, the saga needs attention",
    () =>
      Effect.gen(function* () {
        const undone: Array<string> = []
        const hold = Compensable.make({
          name: "hold",
          input: Schema.Null,
          success: Schema.String,
          execute: () => Effect.succeed("held"),
          compensate: () => Effect.sync(() => undone.push("hold"))
        })
        const deaths: Record<string, Effect.Effect<string>> = {
          thrown: Effect.sync(() => {
            throw new TypeError("the answer did not parse")
          }),
          died: Effect.die(new Error("boom in step")),
          rejected: Effect.promise(() => Promise.reject(new Error("the socket closed")))
        }
        const reasons: Record<string, string> = {}
        for (const [sagaId, death] of Object.entries(deaths)) {
          const pay = Compensable.make({
            name: "pay",
            input: Schema.Null,
            success: Schema.String,
            execute: () => death,
            compensate: () => Effect.sync(() => undone.push("pay"))
          })
          const result = yield* Saga.run(sagaId, Effect.zipRight(hold(null), pay(null)))
          expect(result._tag).toBe("NeedsAttention")
          if (result._tag !== "NeedsAttention") continue
          expect(SagaResult.needsHuman(result)).toBe(true)
          expect(result.unknown.map((step) => step.toolName)).toEqual(["pay"])
          reasons[sagaId] = result.unknown[0]!.reason
          const phases = (yield* journalOf(sagaId)).map((entry) => entry.phase)
          expect(phases).toEqual(["SAGA_STARTED", "INTENT", "EXECUTED", "INTENT", "SAGA_NEEDS_ATTENTION"])
        }
        expect(reasons).toEqual({
          thrown: "the call died (a defect: TypeError: the answer did not parse): it may or may not have run",
          died: "the call died (a defect: Error: boom in step): it may or may not have run",
          rejected: "the call died (a defect: Error: the socket closed): it may or may not have run"
        })
        expect(undone).toEqual([])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a call that died is run again on resume only when the tool accepts replays of its idempotency key", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const make = (retryMode: C.RetryMode) =>
        Compensable.make({
          name: `send-${retryMode}`,
          input: Schema.Null,
          success: Schema.String,
          retryMode,
          execute: (_, step) =>
            Effect.suspend(() => {
              calls.push(`${retryMode} ${step.attempt}`)
              return step.attempt === 1 ? Effect.die(new Error("the client crashed")) : Effect.succeed("sent")
            })
        })
      for (const retryMode of ["idempotency-key", "none"] as const) {
        const program = make(retryMode)(null)
        expect((yield* Saga.run(retryMode, program))._tag).toBe("NeedsAttention")
        const resumed = yield* Saga.run(retryMode, program)
        expect(resumed._tag).toBe(retryMode === "none" ? "NeedsAttention" : "Completed")
      }
      expect(calls).toEqual(["idempotency-key 1", "idempotency-key 2", "none 1"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a resume that stops on a step again says why it is unknown as the journal did, and journals it so", () =>
    Effect.gen(function* () {
      const send = Compensable.make({
        name: "send",
        input: Schema.Null,
        success: Schema.String,
        execute: () => Effect.die(new Error("the client crashed"))
      })
      const reason = "the call died (a defect: Error: the client crashed): it may or may not have run"
      const first = yield* Saga.run("send-twice", send(null))
      expect(first).toMatchObject({ _tag: "NeedsAttention", unknown: [{ reason }] })
      // Not the generic words of a step whose worker died: the journal knows why.
      const resumed = yield* Saga.resume("send-twice", send(null))
      expect(resumed).toMatchObject({ _tag: "NeedsAttention", unknown: [{ reason }] })
      const entries = yield* journalOf("send-twice")
      expect(Array.from(Timeline.unknownReasons(entries).values())).toEqual([reason])
      // Resolved, it is unknown no more: no reason is left for it.
      yield* Saga.resolve("send-twice", resumed._tag === "NeedsAttention" ? resumed.unknown[0]!.stepId : "", {
        outcome: "applied",
        by: "carol",
        result: "sent"
      })
      expect(Timeline.unknownReasons(yield* journalOf("send-twice")).size).toBe(0)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a resume that stops on several unknown steps again says why for each, as the journal did", () =>
    Effect.gen(function* () {
      const unknown = (name: string) =>
        Compensable.make({
          name,
          input: Schema.Null,
          success: Schema.String,
          execute: () => Effect.zipRight(Effect.yieldNow(), Effect.fail(Outcome.unknown(`${name} did not answer`)))
        })
      const program = Effect.all([unknown("a")(null), unknown("b")(null)], { concurrency: "unbounded" })
      const reasons = ["outcome unknown: a did not answer", "outcome unknown: b did not answer"]
      const first = yield* Saga.run("two-unknown", program)
      assert(first._tag === "NeedsAttention")
      expect(first.unknown.map((step) => step.reason)).toEqual(reasons)
      const resumed = yield* Saga.resume("two-unknown", program)
      assert(resumed._tag === "NeedsAttention")
      expect(resumed.unknown.map((step) => step.reason)).toEqual(reasons)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a read that dies changed nothing: it is journaled FAILED (a defect) and the program fails", () =>
    Effect.gen(function* () {
      const lookup = Compensable.make({
        name: "lookup",
        input: Schema.Null,
        success: Schema.String,
        changesNothing: true,
        execute: () => Effect.die(new Error("the cache client crashed"))
      })
      const result = yield* Saga.run("dead-read", lookup(null))
      expect(result._tag).toBe("Compensated")
      const failed = (yield* journalOf("dead-read")).find((entry) => entry.phase === "FAILED")
      expect(JSON.parse(failed!.payload!)).toEqual({ description: "Error: the cache client crashed", defect: true })
      // Replayed, it dies as it did, its message printed once.
      const again = yield* Saga.run("dead-read", lookup(null))
      const printed = again._tag === "Compensated" ? Cause.pretty(again.cause) : again._tag
      expect(printed).toContain("Error: the cache client crashed")
      expect(printed).not.toContain("Error: Error:")
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

  it.effect("an attempt an injected fault stands in for counts: the tool's first call after two sees attempt 3", () =>
    Effect.gen(function* () {
      const attempts: Array<number> = []
      const flaky = Compensable.make({
        name: "struck",
        input: Schema.Null,
        success: Schema.Number,
        retry: Schedule.recurs(3),
        execute: (_, step) => Effect.sync(() => attempts.push(step.attempt))
      })
      const faults = Testing.faults({ tool: "struck", at: 1, fault: "fail" }, { tool: "struck", at: 2, fault: "fail" })
      const result = yield* Saga.run("struck", flaky(null).pipe(Effect.provide(faults)))
      expect(result).toMatchObject({ _tag: "Completed" })
      expect(attempts).toEqual([3])
      const intents = (yield* journalOf("struck")).filter((entry) => entry.phase === "INTENT")
      expect(intents.map((entry) => JSON.parse(entry.payload!).attempt)).toEqual([1])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an injected unknown fault loses the call's answer whatever it was: a typed failure too", () =>
    Effect.gen(function* () {
      class Declined extends Schema.TaggedError<Declined>()("Declined", { reason: Schema.String }) {}
      let calls = 0
      const declining = Compensable.make({
        name: "declining",
        input: Schema.Number,
        success: Schema.String,
        failure: Declined,
        onFailure: "continue",
        execute: () =>
          Effect.zipRight(
            Effect.sync(() => calls++),
            Effect.fail(new Declined({ reason: "card expired" }))
          ),
        compensate: () => Effect.void
      })
      const program = declining(1).pipe(
        Effect.catchTag("Declined", () => Effect.succeed("fallback")),
        Effect.provide(Testing.faults({ tool: "declining", fault: "unknown" }))
      )
      const result = yield* Saga.run("lost-decline", program)
      expect(calls).toBe(1)
      expect(result._tag).toBe("NeedsAttention")
      expect((yield* journalOf("lost-decline")).map((entry) => entry.phase)).toEqual([
        "SAGA_STARTED",
        "INTENT",
        "SAGA_NEEDS_ATTENTION"
      ])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "the retry schedule is fed each failed attempt's error: the declared failure, an Outcome, a timeout's Unknown",
    () =>
      Effect.gen(function* () {
        class Busy extends Schema.TaggedError<Busy>()("Busy", {}) {}
        const fed: Array<string> = []
        let attempts = 0
        const flaky = Compensable.make({
          name: "fed",
          input: Schema.Null,
          success: Schema.Number,
          failure: Busy,
          timeout: "1 second",
          retryMode: "idempotency-key",
          retry: Schedule.recurWhile((error: Busy | Outcome.Outcome) => fed.push(error._tag) < 4),
          execute: () =>
            Effect.suspend((): Effect.Effect<number, Busy | Outcome.Outcome> => {
              attempts++
              if (attempts === 1) return Effect.fail(new Busy())
              if (attempts === 2) return Effect.fail(Outcome.failed("closed"))
              if (attempts === 3) return Effect.never
              return Effect.fail(Outcome.partial("half"))
            })
        })
        const fiber = yield* Effect.fork(Saga.run("fed", flaky(null)))
        yield* TestClock.adjust("1 second")
        const result = yield* Fiber.join(fiber)
        expect(fed).toEqual(["Busy", "OutcomeFailed", "OutcomeUnknown", "OutcomePartial"])
        expect(result._tag).toBe("NeedsAttention")
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

  it.effect(
    "a failure's description names a typed error's tag, a plain object's fields; a replay without its encoding says the same",
    () =>
      Effect.gen(function* () {
        class Declined extends Schema.TaggedError<Declined>()("Declined", { why: Schema.String }) {}
        const failures: ReadonlyArray<readonly [string, unknown, string]> = [
          ["typed", new Declined({ why: "card expired" }), 'Declined: { "why": "card expired" }'],
          ["plain", { code: 42 }, '{"code":42}'],
          ["tagged", { _tag: "Declined", why: "card expired" }, 'Declined: {"why":"card expired"}'],
          [
            "data",
            new (class extends Data.TaggedError("Refused")<{ why: string }> {})({ why: "limit" }),
            'Refused: {"why":"limit"}'
          ],
          [
            "named",
            new (class extends Data.TaggedError("Refused")<{ message: string }> {})({
              message: "Refused by the bank: card expired"
            }),
            "Refused by the bank: card expired"
          ],
          ["outcome", Outcome.failed("no stock"), "failed (not applied): no stock"],
          ["text", "no stock", "no stock"]
        ]
        for (const [sagaId, error, description] of failures) {
          const seen: Array<unknown> = []
          const charge = Compensable.make({
            name: "charge",
            input: Schema.Null,
            success: Schema.String,
            execute: () => Effect.fail(error)
          })
          const program = charge(null).pipe(Effect.catchAll((failure) => Effect.sync(() => seen.push(failure))))
          yield* Saga.run(sagaId, program)
          const failed = (yield* journalOf(sagaId)).find((entry) => entry.phase === "FAILED")
          expect(JSON.parse(failed!.payload!).description).toBe(description)
          expect(Timeline.format([failed!])).toContain(`FAILED  ${description}`)
          // No `failure` schema describes the error: the replay answers an `Outcome.Failed` with the description.
          yield* Saga.run(sagaId, program)
          const replayed = sagaId === "outcome" ? "no stock" : description
          expect(seen[1]).toBeInstanceOf(Outcome.Failed)
          expect((seen[1] as Outcome.Failed).message).toBe(`failed (not applied): ${replayed}`)
        }
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
    "a huge unknown or partial outcome's reason is journaled cut at 1000 characters, as it reaches the program",
    () =>
      Effect.gen(function* () {
        const huge = "K".repeat(2 * 1024 * 1024)
        const outcomes = [
          ["unknown", Outcome.unknown(huge), `outcome unknown: ${"K".repeat(982)}…`],
          ["partial", Outcome.partial(huge), `partially applied; remaining: ${"K".repeat(969)}…`]
        ] as const
        for (const [sagaId, outcome, reason] of outcomes) {
          const ship = Compensable.make({
            name: "ship",
            input: Schema.String,
            success: Schema.String,
            maxPayloadBytes: 1000,
            execute: () => Effect.fail(outcome),
            compensate: () => Effect.void
          })
          const result = yield* Saga.run(sagaId, ship("parcel"))
          expect(result).toMatchObject({ _tag: "NeedsAttention", unknown: [{ toolName: "ship", reason }] })
          const entries = yield* Journal.Journal.pipe(Effect.flatMap((journal) => journal.read(sagaId)))
          const needs = entries.find((entry) => entry.phase === "SAGA_NEEDS_ATTENTION")!
          expect(JSON.parse(needs.payload!).unknown[0].reason).toBe(reason)
          expect(Math.max(...entries.map((entry) => entry.payload?.length ?? 0))).toBeLessThan(1200)
        }
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
          description: `Refused: refused: ${"x".repeat(100)}`,
          error: { body: "x".repeat(100) }
        })
        expect(failed[1].description).toBe(`Refused: refused: ${"x".repeat(981)}…`)
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
