/**
 * Leases across hosts, on PostgreSQL: workers in processes of their own recover lapsed sagas in
 * parallel without claiming one twice, and a worker that stops renewing loses its saga to another.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Schema } from "effect"
import { Approval, Compensable, Journal, Recovery, Saga, SagaDefinition } from "../src/index.js"
import * as Postgres from "../src/Postgres.js"
import { makeOrder, readWorld } from "./fixtures/pg-order.js"
import { freshDatabase } from "./fixtures/postgres.js"
import { startWorker } from "./fixtures/worker-process.js"

const url = await freshDatabase("effect_saga_recovery")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-pg-recovery-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("leases across hosts on PostgreSQL", () => {
  it.scopedLive(
    "four worker processes recover 200 lapsed sagas at once: each by exactly one worker, every step once, every chain intact",
    () =>
      Effect.gen(function* () {
        const world = path.join(dir, "world.ndjson")
        const sagaIds = Array.from({ length: sagaCount }, (_, i) => `lapsed-${i}`)
        yield* leaveBehind(world, sagaIds)

        const workers = yield* Effect.forEach(["w1", "w2", "w3", "w4"], (name) =>
          startWorker<Report>(workerScript, [url, world, name], `worker ${name}`)
        )
        yield* Effect.forEach(workers, (worker) => worker.ready, { concurrency: "unbounded", discard: true })
        yield* Effect.forEach(workers, (worker) => worker.go, { discard: true })
        const reports = yield* Effect.forEach(workers, (worker) => worker.report, { concurrency: "unbounded" })

        const recovered = reports.flatMap((report) => report.sagas.map((saga) => ({ ...saga, worker: report.worker })))
        console.log(
          `recovered by worker: ${reports.map((report) => `${report.worker} ${report.sagas.length}`).join(", ")}`
        )
        expect(recovered.map((saga) => saga.sagaId).sort()).toEqual([...sagaIds].sort())
        expect(recovered.every((saga) => saga.result === "Completed")).toBe(true)

        const calls = readWorld(world)
        for (const step of ["step1", "step2", "step3"]) {
          const called = calls.filter((call) => call.step === step).map((call) => call.sagaId)
          expect(called.sort(), step).toEqual([...sagaIds].sort())
        }
        // Each saga's remaining steps were run by the worker that recovered it, and by no other.
        const recoveredBy = new Map(recovered.map((saga) => [saga.sagaId, saga.worker]))
        for (const call of calls.filter((call) => call.step !== "step1")) {
          expect(call.worker, call.sagaId).toBe(recoveredBy.get(call.sagaId))
        }

        const stored = yield* Effect.forEach(sagaIds, (sagaId) =>
          Effect.all({ record: Effect.flatMap(Journal.Journal, (j) => j.get(sagaId)), check: Journal.verify(sagaId) })
        ).pipe(Effect.provide(Postgres.layer({ url })))
        for (const { check, record } of stored) {
          expect(check._tag).toBe("Intact")
          expect(Option.getOrThrow(record)).toMatchObject({ status: "completed", lease: null })
        }
      }),
    240_000
  )

  it.scopedLive(
    "a worker that stops renewing loses its lease; its late append is a ConcurrencyConflict; the saga finishes elsewhere",
    () =>
      Effect.gen(function* () {
        const entered = yield* Deferred.make<void>()
        const resume = yield* Deferred.make<void>()
        const calls: Array<string> = []
        const step = (name: string, hold: boolean) =>
          Compensable.make({
            name,
            input: Schema.String,
            success: Schema.String,
            retryMode: "idempotency-key",
            execute: (input, context) =>
              Effect.gen(function* () {
                calls.push(`${name} attempt ${context.attempt}`)
                if (hold && context.attempt === 1) {
                  yield* Deferred.succeed(entered, undefined)
                  yield* Deferred.await(resume)
                }
                return input
              })
          })
        const first = step("first", false)
        const slow = step("slow", true)
        const last = step("last", false)
        const Paused = SagaDefinition.make("paused", {
          input: Schema.String,
          program: (input) => Effect.zipRight(first(input), Effect.zipRight(slow(input), last(input)))
        })

        // Worker a is "paused" while slow runs: its timers stop, so it renews nothing.
        const store = Postgres.layer({ url })
        const frozen = Layer.effect(
          Journal.Journal,
          Effect.map(Journal.Journal, (journal) => ({ ...journal, renew: () => Effect.succeed(0) }))
        ).pipe(Layer.provide(store))
        const approvals = Layer.effect(Approval.Approval, Approval.Approval).pipe(Layer.provide(store))
        const a = yield* Layer.build(
          Saga.layerWith({ owner: "paused-a", leaseTtl: "1 second" }).pipe(
            Layer.provide(Layer.merge(frozen, approvals))
          )
        )
        const b = yield* Layer.build(
          Recovery.layer({ definitions: [Paused], every: "startup" }).pipe(
            Layer.provideMerge(Saga.layerWith({ owner: "worker-b", leaseTtl: "30 seconds" })),
            Layer.provideMerge(store)
          )
        )

        const running = yield* Effect.fork(Effect.provide(Saga.start(Paused, "paused-1", "x"), a))
        yield* Deferred.await(entered)
        // The lease lapses by the database's clock; then worker b claims the saga and finishes it.
        let report: Recovery.RecoveryReport = { sagas: [] }
        while (report.sagas.length === 0) {
          yield* Effect.sleep("250 millis")
          report = yield* Effect.provide(Recovery.recoverAll, b)
        }
        const recovered = report.sagas[0]!
        assert(recovered._tag === "Resumed")
        expect(recovered.result._tag).toBe("Completed")

        yield* Deferred.succeed(resume, undefined)
        const late = yield* Fiber.join(running).pipe(Effect.flip)
        expect(late).toMatchObject({ _tag: "ConcurrencyConflict", sagaId: "paused-1" })
        expect(calls).toEqual(["first attempt 1", "slow attempt 1", "slow attempt 2", "last attempt 1"])
        const status = yield* Effect.provide(Saga.status("paused-1"), b)
        expect(status).toMatchObject({ status: "completed", lease: null })
        expect((yield* Effect.provide(Journal.verify("paused-1"), b))._tag).toBe("Intact")
      }),
    60_000
  )
})

const sagaCount = 200
const workerScript = fileURLToPath(new URL("./fixtures/pg-recovery-worker.ts", import.meta.url))

/**
 * Starts each saga with a worker that dies after the saga's first step: its next append never
 * reaches the database, and its lease (1 ms) has lapsed by the time anyone looks.
 */
const leaveBehind = (world: string, sagaIds: ReadonlyArray<string>) => {
  const store = Postgres.layer({ url })
  const dying = Layer.effect(
    Journal.Journal,
    Effect.map(Journal.Journal, (journal) => ({
      ...journal,
      append: (...args: Parameters<typeof journal.append>) =>
        args[2].some((draft) => draft.phase === "INTENT" && draft.toolName === "step2")
          ? Effect.fail(new Journal.JournalError({ operation: "append", reason: "the process died" }))
          : journal.append(...args),
      release: () => Effect.void
    }))
  ).pipe(Layer.provide(store))
  const approvals = Layer.effect(Approval.Approval, Approval.Approval).pipe(Layer.provide(store))
  const Dead = Saga.layerWith({ owner: "dead", leaseTtl: "1 millis" }).pipe(
    Layer.provide(Layer.merge(dying, approvals))
  )
  const Order = makeOrder(world, "dead")
  return Effect.forEach(sagaIds, (sagaId) => Effect.flip(Saga.start(Order, sagaId, { sagaId })), {
    concurrency: 20
  }).pipe(
    Effect.tap((errors) => expect(errors.every((error) => error._tag === "JournalError")).toBe(true)),
    Effect.provide(Dead)
  )
}

interface Report {
  readonly worker: string
  readonly sagas: ReadonlyArray<{ readonly sagaId: string; readonly result: string }>
}
