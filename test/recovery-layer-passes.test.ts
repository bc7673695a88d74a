/**
 * `Recovery.layer`'s passes keep their period while a saga one of them resumed still runs: a long
 * saga holds back no other recovery on the worker. A pass the store fails part-way logs what it
 * did (and is counted) before the failure; `Recovery.recoverAll` then fails with the store's error.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Metric, Option, Schema, TestClock } from "effect"
import { Approval, Journal, Metrics, Recovery, Saga, SagaDefinition, type SagaResult } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import { echoStep, leftBehind, type Store } from "./fixtures/left-behind.js"

describe("Recovery.layer keeps its period", () => {
  it.scoped("a pass still running a long saga it resumed does not hold back the recovery of another", () =>
    Effect.gen(function* () {
      const store = yield* Layer.build(memoryStore(makeMemoryJournal()))
      const dead0 = yield* Layer.build(deadWorker(store, "dead0"))
      yield* Effect.forkScoped(Effect.provide(Saga.start(Long, "X", "x"), dead0))
      yield* Effect.yieldNow()
      const worker = yield* Layer.build(
        Recovery.layer({ definitions: [Long, Quick], every: "10 seconds" }).pipe(
          Layer.provideMerge(Saga.layerWith({ owner: "w1", leaseTtl: "30 seconds" })),
          Layer.provide(Layer.succeedContext(store))
        )
      )
      const statusOf = (sagaId: string) => Effect.provide(Saga.status(sagaId), worker)
      yield* TestClock.adjust("40 seconds")
      // X's lease lapsed at +30 s: a pass took it, and it sleeps for an hour.
      expect(yield* statusOf("X")).toMatchObject({ status: "running", lease: { owner: "w1" } })

      const dead2 = yield* Layer.build(deadWorker(store, "dead2"))
      yield* Effect.forkScoped(Effect.provide(Saga.start(Long, "Y", "y"), dead2))
      yield* Effect.yieldNow()
      expect(yield* statusOf("Y")).toMatchObject({ status: "running", lease: { owner: "dead2" } })
      // Y's lease lapses at +70 s; the pass at +70 s or +80 s takes it over.
      yield* TestClock.adjust("45 seconds")
      expect(yield* statusOf("Y")).toMatchObject({ status: "running", lease: { owner: "w1" } })
      expect(yield* statusOf("X")).toMatchObject({ status: "running", lease: { owner: "w1" } })
    }).pipe(Effect.provide(quiet))
  )
})

describe("a pass the store fails part-way", () => {
  it.scoped("Recovery.layer logs what it did, then the failure, and counts the pass", () =>
    Effect.gen(function* () {
      const store = yield* Layer.build(memoryStore(failingSecondClaim(makeMemoryJournal())))
      yield* leftBehind(store, "rec-A")
      const before = yield* counts
      const lines: Array<string> = []
      const keeping = Logger.make(({ logLevel, message }) => {
        lines.push(`${logLevel.label} ${(Array.isArray(message) ? message : [message]).map(String).join(" ")}`)
      })
      yield* Layer.build(
        Recovery.layer({ definitions: [Quick], every: "startup" }).pipe(
          Layer.provideMerge(Saga.layerWith({ owner: "w1", leaseTtl: "30 seconds" })),
          Layer.provide(Layer.succeedContext(store)),
          Layer.provide(Logger.replace(Logger.defaultLogger, keeping))
        )
      )
      yield* TestClock.adjust("1 second")
      expect(lines.filter((line) => line.includes("recovery"))).toEqual([
        "INFO effect-saga: recovery took 1 saga(s) left behind: 1 Completed",
        "WARN effect-saga: recovery could not read the journal: journal claim failed: the store went away"
      ])
      const after = yield* counts
      expect([after.passes - before.passes, after.claimed - before.claimed]).toEqual([1, 1])
    })
  )

  it.scoped("Recovery.recoverAll fails with the store's error", () =>
    Effect.gen(function* () {
      const store = yield* Layer.build(memoryStore(failingSecondClaim(makeMemoryJournal())))
      yield* leftBehind(store, "rec-A")
      const worker = yield* Layer.build(
        Saga.layerWith({ owner: "w1", leaseTtl: "30 seconds" }).pipe(Layer.provideMerge(Layer.succeedContext(store)))
      )
      const recovery = yield* Effect.provide(Recovery.make({ definitions: [Quick] }), worker)
      const error = yield* Effect.flip(recovery.recoverAll)
      expect(error.message).toBe("journal claim failed: the store went away")
      expect(Option.getOrThrow(yield* Effect.provide(Saga.status("rec-A"), worker).pipe(Effect.option)).status).toBe(
        "completed"
      )
    }).pipe(Effect.provide(quiet))
  )
})

const memoryStore = (journal: Journal.Journal["Type"]) =>
  Layer.merge(Layer.succeed(Journal.Journal, journal), Layer.succeed(Approval.Approval, Approval.makeMemory()))

/** A journal whose second claim fails, as a store that stops part-way through a pass. */
const failingSecondClaim = (inner: Journal.Journal["Type"]): Journal.Journal["Type"] => {
  let claims = 0
  return Journal.Journal.of({
    ...inner,
    claimLapsed: (holder, limit) =>
      ++claims === 2
        ? Effect.fail(new Journal.JournalError({ operation: "claim", reason: "the store went away" }))
        : inner.claimLapsed(holder, limit)
  })
}

/** A worker that never renews its leases: as one that died, they lapse. */
const deadWorker = (store: Store, owner: string) =>
  Saga.layerWith({ owner, leaseTtl: "30 seconds" }).pipe(
    Layer.provide(
      Layer.effect(
        Journal.Journal,
        Effect.map(Journal.Journal, (journal) => Journal.Journal.of({ ...journal, renew: () => Effect.succeed(0) }))
      )
    ),
    Layer.provide(Layer.succeedContext(store))
  )

const a = echoStep("a")
const b = echoStep("b")

const Long = SagaDefinition.make("long", {
  input: Schema.String,
  program: (s) => Effect.zipRight(Effect.zipRight(a(s), Effect.sleep("1 hour")), b(s))
})

const Quick = SagaDefinition.make("quick", { input: Schema.String, program: (s) => Effect.zipRight(a(s), b(s)) })

const quiet = Logger.replace(Logger.defaultLogger, Logger.none)

const counts = Effect.map(
  Effect.all([Metric.value(Metrics.recoveryPasses), Metric.value(Metrics.recoveryClaimed)]),
  ([passes, claimed]) => ({ passes: passes.count, claimed: claimed.count })
)

describe("Recovery.summary", () => {
  it("counts a pass's outcomes in code-point order of their names, whatever order the sagas ended in", () => {
    const ended = (sagaId: string, _tag: "Completed" | "Compensated"): Recovery.Recovered => ({
      _tag: "Resumed",
      sagaId,
      // Only its tag is counted.
      result: { _tag } as SagaResult.SagaResult<unknown, unknown>
    })
    const failed: Recovery.Recovered = {
      _tag: "Failed",
      sagaId: "f-1",
      error: new Recovery.Unrecoverable({ sagaId: "f-1", reason: "no definition" })
    }
    const first = Recovery.summary({ sagas: [failed, ended("c-1", "Compensated"), ended("a-1", "Completed")] })
    const second = Recovery.summary({ sagas: [ended("a-1", "Completed"), failed, ended("c-1", "Compensated")] })
    expect(Object.entries(first)).toEqual([
      ["Compensated", 1],
      ["Completed", 1],
      ["Failed", 1]
    ])
    expect(Object.entries(second)).toEqual(Object.entries(first))
  })
})
