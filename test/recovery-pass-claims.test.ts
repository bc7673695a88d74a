/**
 * A recovery pass gives back every claim it holds however it ends: interrupted (a timeout around
 * it, a shutdown) or failed part-way, the sagas it claimed and had not resumed are free for the next
 * pass at once, not held by leases the worker renews while it stays busy.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import type { Context } from "effect"
import { Effect, Exit, Fiber, HashMap, Layer, Logger, Option, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Recovery, Saga, SagaDefinition, SqlStore } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import { editedLeaseEnds, lapsedLeaseEnds } from "./fixtures/editedLeaseEnds.js"
import { tickingClock } from "./fixtures/tickingClock.js"
import { warningsLogged } from "./fixtures/warnings.js"

describe("a recovery pass gives back the claims it holds however it ends", () => {
  for (const [name, makeStore] of stores) {
    it.scoped(
      `${name}: interrupted, the sagas it had claimed and not reached are free, and the next pass resumes them`,
      () =>
        Effect.gen(function* () {
          const store = yield* Layer.build(makeStore())
          const ids = ["r-0", "r-1", "r-2", "r-3"]
          yield* leftSuspended(store, ids)
          const worker = yield* Layer.build(workerOn(store, "w2"))
          const recovery = yield* Effect.provide(Recovery.make({ definitions: [Slow], concurrency: 1 }), worker)

          const pass = yield* Effect.fork(recovery.recoverAll)
          yield* TestClock.adjust("100 millis")
          expect(Exit.isInterrupted(yield* Fiber.interrupt(pass))).toBe(true)
          const after = yield* Effect.forEach(ids, (sagaId) => recordOf(store, sagaId))
          expect(after.map((record) => [record.sagaId, record.status, record.lease])).toEqual(
            ids.map((sagaId) => [sagaId, "suspended", null])
          )

          const next = yield* Effect.fork(recovery.recoverAll)
          yield* TestClock.adjust("5 seconds")
          const report = yield* Fiber.join(next)
          expect(report.sagas.map((saga) => [saga.sagaId, saga._tag])).toEqual(ids.map((sagaId) => [sagaId, "Resumed"]))
        })
    )
  }

  for (const [name, makeStore] of stores) {
    it.scoped(
      `${name}: sagas that suspend again on every resume do not hide the sagas behind them, batch after batch`,
      () =>
        Effect.gen(function* () {
          const store = yield* Layer.build(makeStore())
          const first = yield* Layer.build(workerOn(store, "w1"))
          stoppedOnce = false
          // Left behind first (least recently updated): two sagas whose program stops every time.
          for (const sagaId of ["a-stops-0", "a-stops-1"])
            yield* Effect.provide(Saga.start(Stops, sagaId, sagaId), first)
          yield* TestClock.adjust("1 second")
          yield* Effect.provide(Saga.start(StopsOnce, "b-goes-on", "b-goes-on"), first)
          const worker = yield* Layer.build(workerOn(store, "w2"))
          const recovery = yield* Effect.provide(
            Recovery.make({ definitions: [Stops, StopsOnce], batchSize: 2 }),
            worker
          )

          const report = yield* recovery.recoverAll
          expect(report.sagas.map((saga) => saga.sagaId)).toEqual(["a-stops-0", "a-stops-1", "b-goes-on"])
          expect((yield* recordOf(store, "b-goes-on")).status).toBe("completed")
          // The two that stopped again were held to the end of the pass, then given back for the next.
          for (const sagaId of ["a-stops-0", "a-stops-1"]) {
            expect(yield* recordOf(store, sagaId)).toMatchObject({ status: "suspended", lease: null })
          }
        })
    )
  }

  it.scoped(
    "on SQLite: a claimed row that does not decode is logged and left out, its claim kept until it lapses: the pass reaches the sagas behind it",
    () =>
      Effect.gen(function* () {
        const filename = path.join(dir, `undecodable-${Math.random().toString(36).slice(2)}.db`)
        const store = yield* Layer.build(SqlStore.layerSqlite({ filename }))
        yield* leftSuspended(store, ["a-first", "b-broken", "c-behind"])
        const file = new Database(filename)
        file.prepare("UPDATE effect_saga_sagas SET created_at = 'garbage' WHERE saga_id = 'b-broken'").run()
        const leaseOf = (sagaId: string) =>
          file.prepare("SELECT lease_owner AS owner FROM effect_saga_sagas WHERE saga_id = ?").get(sagaId)
        const { annotations, warnings, logger } = warningsLogged()
        const worker = yield* Layer.build(workerOn(store, "w2"))
        // One saga a claim: a batch of the broken row alone must not end the pass.
        const recovery = yield* Effect.provide(Recovery.make({ definitions: [Slow], batchSize: 1 }), worker)
        // A pass, the clock moved on by the second each saga it resumes sleeps.
        const pass = (resumes: number) =>
          Effect.gen(function* () {
            const recovering = yield* Effect.fork(
              recovery.recoverAll.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
            )
            for (let resumed = 0; resumed < resumes; resumed++) yield* TestClock.adjust("1 second")
            return (yield* Fiber.join(recovering)).sagas.map((saga) => saga.sagaId)
          })
        expect(yield* pass(2)).toEqual(["a-first", "c-behind"])
        expect(warnings).toEqual([
          'effect-saga: not recovered: the stored row of saga b-broken does not decode: createdAt "garbage" is not a time as the store writes one (2025-01-31T12:00:00.000Z)'
        ])
        // Annotated as every saga a pass did not resume is: an alert keyed on the saga finds it.
        expect(annotations).toEqual([{ "saga.id": "b-broken", "error.tag": "JournalError" }])
        // Still held by this worker until its lease lapses: a pass meanwhile does not claim it again.
        expect(leaseOf("b-broken")).toEqual({ owner: "w2" })
        expect(yield* pass(0)).toEqual([])
        expect(warnings).toHaveLength(1)
        // Once its lease lapsed, a pass claims it again, and says so again.
        yield* TestClock.adjust("2 seconds")
        expect(yield* pass(0)).toEqual([])
        expect(warnings).toHaveLength(2)
        file.close()
        for (const sagaId of ["a-first", "c-behind"]) {
          expect(yield* recordOf(store, sagaId)).toMatchObject({ status: "completed", lease: null })
        }
      })
  )

  it.scoped(
    "on SQLite: with leases shorter than a claim, a row that does not decode first does not keep the pass from the sagas behind it",
    () =>
      Effect.gen(function* () {
        const filename = path.join(dir, `short-lease-${Math.random().toString(36).slice(2)}.db`)
        const store = yield* Layer.build(SqlStore.layerSqlite({ filename }))
        yield* leftSuspended(store, ["a-first", "b-broken", "c-behind"])
        const file = new Database(filename)
        file
          .prepare(
            "UPDATE effect_saga_sagas SET created_at = 'garbage', updated_at = '1900-01-01T00:00:00.000Z' WHERE saga_id = 'b-broken'"
          )
          .run()
        file.close()
        const { warnings, logger } = warningsLogged()
        const worker = yield* Layer.build(
          Saga.layerWith({ owner: "w2", leaseTtl: "1 millis" }).pipe(Layer.provideMerge(Layer.succeedContext(store)))
        )
        const recovery = yield* Effect.provide(Recovery.make({ definitions: [Replays], batchSize: 1 }), worker)
        // Each reading of the clock is 5 ms on: every lease lapses before the next claim.
        const clock = yield* Effect.clock
        const report = yield* recovery.recoverAll.pipe(
          Effect.withClock(
            tickingClock({ from: clock.unsafeCurrentTimeMillis(), step: 5, sleep: (duration) => clock.sleep(duration) })
          ),
          Effect.provide(Logger.replace(Logger.defaultLogger, logger))
        )
        expect(report.sagas.map((saga) => [saga.sagaId, saga._tag])).toEqual([
          ["a-first", "Resumed"],
          ["c-behind", "Resumed"]
        ])
        expect(warnings.length).toBeGreaterThan(0)
        for (const warning of warnings) expect(warning).toContain("the stored row of saga b-broken does not decode")
      })
  )

  it.scoped(
    "on SQLite: a lease whose end was edited out of the stored form never lapses, wherever it sorts: the saga is not claimed, run or overwritten",
    () =>
      Effect.gen(function* () {
        const filename = path.join(dir, `edited-lease-${Math.random().toString(36).slice(2)}.db`)
        const store = yield* Layer.build(SqlStore.layerSqlite({ filename }))
        const [edits, lapsed] = [editedLeaseEnds, lapsedLeaseEnds]
        yield* leftSuspended(store, ["a-healthy", ...Object.keys(edits), ...Object.keys(lapsed)])
        const file = new Database(filename)
        const leaseOf = (sagaId: string) =>
          file
            .prepare(
              "SELECT lease_owner AS owner, lease_expires_at AS expiresAt FROM effect_saga_sagas WHERE saga_id = ?"
            )
            .get(sagaId)
        for (const [sagaId, expiresAt] of Object.entries({ ...edits, ...lapsed })) {
          file
            .prepare("UPDATE effect_saga_sagas SET lease_owner = 'w9', lease_expires_at = ? WHERE saga_id = ?")
            .run(expiresAt, sagaId)
        }
        const worker = yield* Layer.build(workerOn(store, "w2"))
        const recovery = yield* Effect.provide(Recovery.make({ definitions: [Replays] }), worker)
        const report = yield* recovery.recoverAll
        expect(report.sagas.map((saga) => [saga.sagaId, saga._tag])).toEqual([
          ["a-healthy", "Resumed"],
          ["i-leap-day", "Resumed"]
        ])
        for (const [sagaId, expiresAt] of Object.entries(edits)) {
          expect(leaseOf(sagaId)).toEqual({ owner: "w9", expiresAt })
          const refused = yield* Effect.flip(Effect.provide(recovery.resume(sagaId), worker))
          expect(refused).toMatchObject({ _tag: "JournalTampered", sagaId, problem: "row" })
          expect(leaseOf(sagaId)).toEqual({ owner: "w9", expiresAt })
        }
        file.close()
      })
  )

  it.scoped(
    "on SQLite: a claimed row that does not decode, its saga id edited to hold a terminal's escape, is logged escaped, on one line",
    () =>
      Effect.gen(function* () {
        const filename = path.join(dir, `undecodable-id-${Math.random().toString(36).slice(2)}.db`)
        const store = yield* Layer.build(SqlStore.layerSqlite({ filename }))
        yield* leftSuspended(store, ["forged"])
        const file = new Database(filename)
        file
          .prepare(
            "UPDATE effect_saga_sagas SET saga_id = 'x' || char(27) || '[2J' || char(10) || 'y', created_at = 'garbage' WHERE saga_id = 'forged'"
          )
          .run()
        file.close()
        const { annotations, warnings, logger } = warningsLogged()
        const worker = yield* Layer.build(workerOn(store, "w2"))
        const recovery = yield* Effect.provide(Recovery.make({ definitions: [Slow] }), worker)
        const report = yield* recovery.recoverAll.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        expect(report.sagas).toEqual([])
        expect(warnings).toEqual([
          'effect-saga: not recovered: the stored row of saga x\\u001b[2J\\ny does not decode: createdAt "garbage" is not a time as the store writes one (2025-01-31T12:00:00.000Z)'
        ])
        // The annotation keeps the id as the store holds it: a structured logger escapes it itself.
        expect(annotations).toEqual([{ "saga.id": "x\u001b[2J\ny", "error.tag": "JournalError" }])
      })
  )

  it.scoped("on SQLite: a saga id edited to hold a terminal's escape is logged escaped, on one line", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, `unclaimable-id-${Math.random().toString(36).slice(2)}.db`)
      const store = yield* Layer.build(SqlStore.layerSqlite({ filename }))
      yield* leftSuspended(store, ["forged"])
      const file = new Database(filename)
      file
        .prepare(
          "UPDATE effect_saga_sagas SET saga_id = 'x' || char(27) || '[2J' || char(10) || 'y', status = 'weird', lease_owner = 'w9' WHERE saga_id = 'forged'"
        )
        .run()
      file.close()
      const errors: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Error") errors.push(String(message))
      })
      yield* Layer.build(
        Recovery.layer({ definitions: [Replays], every: "startup" }).pipe(
          Layer.provide(workerOn(store, "w2")),
          Layer.provide(Logger.replace(Logger.defaultLogger, logger))
        )
      )
      yield* TestClock.adjust("1 second")
      expect(errors).toHaveLength(1)
      expect(errors[0]).toContain("recovery cannot take saga x\\u001b[2J\\ny:")
      expect(errors[0]).not.toContain("\u001b")
      expect(errors[0]).not.toContain("\n")
    })
  )

  it.scoped(
    "on SQLite: Recovery.layer names each saga left behind that no claim takes (its row edited), once while its row stays so",
    () =>
      Effect.gen(function* () {
        const filename = path.join(dir, `unclaimable-${Math.random().toString(36).slice(2)}.db`)
        const store = yield* Layer.build(SqlStore.layerSqlite({ filename }))
        yield* leftSuspended(store, ["a-healthy", "b-lease", "c-status"])
        const file = new Database(filename)
        const edit = (statement: string) => file.prepare(statement).run()
        edit("UPDATE effect_saga_sagas SET lease_owner = 'w9', lease_expires_at = '0garbage' WHERE saga_id = 'b-lease'")
        edit(
          "UPDATE effect_saga_sagas SET status = 'weird', lease_owner = 'w9', lease_expires_at = '1960-01-01T00:00:00.000Z' WHERE saga_id = 'c-status'"
        )
        const errors: Array<readonly [string, Record<string, unknown>]> = []
        const logger = Logger.make(({ annotations, logLevel, message }) => {
          if (logLevel._tag === "Error")
            errors.push([String(message), Object.fromEntries(HashMap.toEntries(annotations))])
        })
        yield* Layer.build(
          Recovery.layer({ definitions: [Replays], every: "10 seconds" }).pipe(
            Layer.provide(workerOn(store, "w2")),
            Layer.provide(Logger.replace(Logger.defaultLogger, logger))
          )
        )
        yield* TestClock.adjust("1 second")
        const line = (sagaId: string, why: string) => [
          `effect-saga: recovery cannot take saga ${sagaId}: the stored row of saga ${sagaId} does not decode: ${why}; no worker claims it while its row stays so: effect-saga show ${sagaId} says what to do`,
          { "saga.id": sagaId, "error.tag": "JournalTampered" }
        ]
        const leaseLine = line(
          "b-lease",
          `lease's expiresAt "0garbage" is not a time as the store writes one (2025-01-31T12:00:00.000Z)`
        )
        expect(errors).toEqual([leaseLine, line("c-status", `status "weird" is not a known status`)])
        expect(yield* recordOf(store, "a-healthy")).toMatchObject({ status: "completed" })

        // Passes after it say nothing more while the rows stay so; a row edited again is named again.
        yield* TestClock.adjust("20 seconds")
        expect(errors).toHaveLength(2)
        edit("UPDATE effect_saga_sagas SET lease_expires_at = '1960-02-30T00:00:00.000Z' WHERE saga_id = 'b-lease'")
        yield* TestClock.adjust("10 seconds")
        expect(errors.slice(2)).toEqual([
          line(
            "b-lease",
            `lease's expiresAt "1960-02-30T00:00:00.000Z" is not a time as the store writes one (2025-01-31T12:00:00.000Z)`
          )
        ])
        file.close()
      })
  )

  it.scoped("failed part-way (a journal error on a later batch), the saga it could not resume is free", () =>
    Effect.gen(function* () {
      const inner = makeMemoryJournal()
      let claims = 0
      const failingSecondClaim = Journal.Journal.of({
        ...inner,
        claimLapsed: (holder, limit) =>
          ++claims === 2
            ? Effect.fail(new Journal.JournalError({ operation: "claim", reason: "the store went away" }))
            : inner.claimLapsed(holder, limit)
      })
      const store = yield* Layer.build(
        Layer.merge(
          Layer.succeed(Journal.Journal, failingSecondClaim),
          Layer.succeed(Approval.Approval, Approval.makeMemory())
        )
      )
      // Started as a plain program: no pass can resume it (Unrecoverable).
      const first = yield* Layer.build(workerOn(store, "w1"))
      const plain = yield* Effect.fork(
        Effect.provide(Effect.timeout(Saga.run("p-1", slowly("p-1")), "500 millis"), first)
      )
      yield* TestClock.adjust("1 second")
      yield* Fiber.await(plain)
      yield* leftSuspended(store, ["s-1"])

      const worker = yield* Layer.build(workerOn(store, "w2"))
      const recovery = yield* Effect.provide(Recovery.make({ definitions: [Slow], batchSize: 1 }), worker)
      const error = yield* Effect.flip(recovery.recoverAll)
      expect(error._tag).toBe("JournalError")
      expect(yield* recordOf(store, "p-1")).toMatchObject({ status: "suspended", lease: null })
    })
  )
})

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-recovery-pass-claims-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

type StoreContext = Context.Context<Journal.Journal | Approval.Approval>

const stores: ReadonlyArray<readonly [string, () => Layer.Layer<Journal.Journal | Approval.Approval, unknown>]> = [
  [
    "in memory",
    () =>
      Layer.merge(
        Layer.succeed(Journal.Journal, makeMemoryJournal()),
        Layer.succeed(Approval.Approval, Approval.makeMemory())
      )
  ],
  [
    "on SQLite",
    () => SqlStore.layerSqlite({ filename: path.join(dir, `claims-${Math.random().toString(36).slice(2)}.db`) })
  ]
]

/** A worker with 2-second leases over `store`. */
const workerOn = (store: StoreContext, owner: string) =>
  Saga.layerWith({ owner, leaseTtl: "2 seconds" }).pipe(Layer.provideMerge(Layer.succeedContext(store)))

const noted = Compensable.make({
  name: "noted",
  input: Schema.String,
  success: Schema.String,
  execute: (id) => Effect.succeed(`noted-${id}`),
  compensate: () => Effect.void
})

/** A step, then a second of work outside any step. */
const slowly = (id: string) => Effect.zipRight(noted(id), Effect.sleep("1 second"))

const Slow = SagaDefinition.make("slow", { input: Schema.String, program: slowly })

/** A saga whose program stops (is interrupted) on every run: left suspended each time, nothing written. */
const Stops = SagaDefinition.make("stops", { input: Schema.String, program: () => Effect.interrupt })

/** The saga `Slow` started, as a pass that has nothing left to wait for replays it: its step, journaled. */
const Replays = SagaDefinition.make("slow", { input: Schema.String, program: (id: string) => noted(id) })

let stoppedOnce = false
/** A saga whose program stops the first time only. */
const StopsOnce = SagaDefinition.make("stops-once", {
  input: Schema.String,
  program: (id) =>
    Effect.suspend(() => {
      if (stoppedOnce) return Effect.asVoid(noted(id))
      stoppedOnce = true
      return Effect.interrupt
    })
})

/** Starts each saga on a first worker and interrupts it half-way: each is left suspended, its lease dropped. */
const leftSuspended = (store: StoreContext, ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const first = yield* Layer.build(workerOn(store, "w1"))
    const runs = yield* Effect.forEach(ids, (sagaId) =>
      Effect.fork(Effect.provide(Effect.timeout(Saga.start(Slow, sagaId, sagaId), "500 millis"), first))
    )
    yield* TestClock.adjust("1 second")
    yield* Effect.forEach(runs, Fiber.await)
    for (const sagaId of ids) expect(yield* recordOf(store, sagaId)).toMatchObject({ status: "suspended", lease: null })
  })

const recordOf = (store: StoreContext, sagaId: string) =>
  Effect.provide(
    Effect.flatMap(Journal.Journal, (journal) => journal.get(sagaId)),
    store
  ).pipe(
    Effect.map((record) => {
      assert(Option.isSome(record))
      return record.value
    })
  )
