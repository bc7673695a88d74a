/**
 * PostgreSQL starts a new saga unread (src/internal/journal/unreadStart.ts): `Saga.run` sends no
 * read before its first append, and a saga that was there already is found by that append, refused
 * before anything ran, and then read and driven as it would have been had it been read first.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Layer, Metric, Ref, Schema } from "effect"
import { Approval, Compensable, Journal, Metrics, Recovery, Saga, SagaDefinition, SqlJournal } from "../src/index.js"
import * as PgLoad from "../src/internal/sql/pgLoad.js"
import * as Postgres from "../src/Postgres.js"
import { countingTool } from "./fixtures/counting-tool.js"
import { saga } from "./fixtures/drafts.js"
import { sentStatements } from "./fixtures/pg-statements.js"
import { freshDatabase } from "./fixtures/postgres.js"

const url = await freshDatabase("effect_saga_unread")

/** A worker of its own on the test database (its own pool and lease owner). */
const worker = (owner: string) =>
  Saga.layerWith({ owner }).pipe(Layer.provideMerge(Layer.merge(SqlJournal.layer, Approval.layerMemory)))
const onServer = (owner: string) => worker(owner).pipe(Layer.provideMerge(Postgres.layerClient({ url })))

/** Two steps after a prologue that counts how often the program's beginning runs. */
const program = (prologue: Ref.Ref<number>, calls: Ref.Ref<number>) =>
  Effect.gen(function* () {
    yield* Ref.update(prologue, (n) => n + 1)
    const first = yield* countingTool("reserve", calls)({ n: 1 })
    const second = yield* countingTool("charge", calls)({ n: 2 })
    return `${first}+${second}`
  })

/** `program` as a definition started with a number of seats. */
const definitionOf = (name: string, prologue: Ref.Ref<number>, calls: Ref.Ref<number>) =>
  SagaDefinition.make(name, { input: Schema.Struct({ seats: Schema.Number }), program: () => program(prologue, calls) })

/** The phases a completed saga of two steps journals. */
const twoStepsCompleted = ["SAGA_STARTED", "INTENT", "EXECUTED", "INTENT", "EXECUTED", "SAGA_COMPLETED"]

const isAppend = (statement: string) => statement.startsWith("effect_saga_append_")
const rowsOf = (sagaId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      sql`SELECT seq, phase, hash FROM effect_saga_entries WHERE saga_id = ${sagaId} ORDER BY seq`,
      sql`SELECT revision, digest, status, lease_owner FROM effect_saga_sagas WHERE saga_id = ${sagaId}`
    ])
  )

describe("PostgreSQL: a new saga is started unread", () => {
  it.live("a new saga's run sends no read: every statement is an append", () =>
    Effect.gen(function* () {
      const prologue = yield* Ref.make(0)
      const calls = yield* Ref.make(0)
      const [result, sent] = yield* sentStatements(Saga.run("new", program(prologue, calls)))
      expect(result).toMatchObject({ _tag: "Completed", value: "reserve-done+charge-done" })
      expect(sent.length).toBeGreaterThan(0)
      expect(sent.filter((statement) => !isAppend(statement))).toEqual([])
      expect(yield* Ref.get(prologue)).toBe(1)
    }).pipe(Effect.provide(onServer("w-new")), Effect.scoped)
  )

  it.live(
    "a run of a saga that exists: its first append is refused, then it is read and answered from the journal; no tool runs again, no conflict is counted",
    () =>
      Effect.gen(function* () {
        const prologue = yield* Ref.make(0)
        const calls = yield* Ref.make(0)
        const first = yield* Saga.run("again", program(prologue, calls))
        const conflicts = yield* Metric.value(Metrics.appendConflicts)
        const before = yield* rowsOf("again")
        const [second, sent] = yield* sentStatements(Saga.run("again", program(prologue, calls)))
        expect(second).toEqual(first)
        expect(yield* Ref.get(calls)).toBe(2)
        // The program's beginning ran up to its first write, found the saga there, then ran again as a replay.
        expect(yield* Ref.get(prologue)).toBe(3)
        // The refused append (its compare-and-set, then the row's position), then the load.
        expect(isAppend(sent[0]!)).toBe(true)
        expect(sent.indexOf(PgLoad.oneSaga.text)).toBe(2)
        expect(yield* rowsOf("again")).toEqual(before)
        expect(yield* Metric.value(Metrics.appendConflicts)).toEqual(conflicts)
      }).pipe(Effect.provide(onServer("w-again")), Effect.scoped)
  )

  it.live(
    "a saga its worker left running after a refused append is run again by that worker without SAGA_RESUMED",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // While the disk is full, the store refuses every append that holds an entry of the tool `flaky`.
        yield* sql`CREATE TABLE disk_full (since text)`
        yield* sql`INSERT INTO disk_full VALUES ('now')`
        yield* sql.unsafe(`CREATE FUNCTION refuse_flaky() RETURNS trigger AS $$
          BEGIN
            IF NEW.step_id LIKE 'flaky:%' AND EXISTS (SELECT 1 FROM disk_full) THEN RAISE EXCEPTION 'the disk is full'; END IF;
            RETURN NEW;
          END $$ LANGUAGE plpgsql`)
        yield* sql`CREATE TRIGGER refuse_flaky BEFORE INSERT ON effect_saga_entries FOR EACH ROW EXECUTE FUNCTION refuse_flaky()`
        const calls = yield* Ref.make(0)
        const flaky = Effect.zipRight(countingTool("reserve", calls)({ n: 1 }), countingTool("flaky", calls)({ n: 2 }))
        expect(yield* Effect.flip(Saga.run("left", flaky))).toMatchObject({ _tag: "JournalError" })
        const [, row] = yield* rowsOf("left")
        expect(row).toMatchObject([{ status: "running" }])
        yield* sql`DELETE FROM disk_full`
        // Its first append, unread, finds the saga there; then it is read: this worker left it here.
        expect(yield* Saga.run("left", flaky)).toMatchObject({ _tag: "Completed", value: "flaky-done" })
        const [entries] = yield* rowsOf("left")
        expect(entries!.map((entry) => entry.phase)).toEqual(twoStepsCompleted)
      }).pipe(Effect.provide(onServer("w-left")), Effect.scoped)
  )

  it.live("a saga started from a definition, run again with another input: NonDeterminism, nothing written", () =>
    Effect.gen(function* () {
      const calls = yield* Ref.make(0)
      const prologue = yield* Ref.make(0)
      const Book = definitionOf("book", prologue, calls)
      yield* Saga.start(Book, "booked", { seats: 1 })
      const before = yield* rowsOf("booked")
      const error = yield* Effect.flip(Saga.start(Book, "booked", { seats: 2 }))
      expect(error).toMatchObject({ _tag: "NonDeterminism", sagaId: "booked", stepId: "SAGA_STARTED" })
      expect(yield* Ref.get(calls)).toBe(2)
      expect(yield* rowsOf("booked")).toEqual(before)
    }).pipe(Effect.provide(onServer("w-definition")), Effect.scoped)
  )

  it.live("Recovery reads first: the load is its run's first statement, the program's beginning runs once", () =>
    Effect.gen(function* () {
      const prologue = yield* Ref.make(0)
      const calls = yield* Ref.make(0)
      const Book = definitionOf("recovered", prologue, calls)
      const first = yield* Saga.start(Book, "recovered", { seats: 1 })
      const recovery = yield* Recovery.make({ definitions: [Book] })
      yield* Ref.set(prologue, 0)
      const [resumed, sent] = yield* sentStatements(recovery.resume("recovered"))
      expect(resumed).toEqual(first)
      expect(yield* Ref.get(prologue)).toBe(1)
      expect(yield* Ref.get(calls)).toBe(2)
      expect(sent.filter(isAppend)).toEqual([])
    }).pipe(Effect.provide(onServer("w-recovery")), Effect.scoped)
  )

  it.live("a saga another worker drives (its lease is live): LeaseHeld, no tool runs, nothing written", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      yield* journal.append("leased", Journal.empty, [saga("SAGA_STARTED")], { owner: "other", ttlMillis: 60_000 })
      const before = yield* rowsOf("leased")
      const calls = yield* Ref.make(0)
      const error = yield* Effect.flip(Saga.run("leased", program(yield* Ref.make(0), calls)))
      expect(error).toMatchObject({ _tag: "LeaseHeld", sagaId: "leased", owner: "other" })
      expect(yield* Ref.get(calls)).toBe(0)
      expect(yield* rowsOf("leased")).toEqual(before)
    }).pipe(Effect.provide(onServer("w-leased")), Effect.scoped)
  )

  it.live("a saga whose row was deleted, its entries left: JournalTampered, no tool runs, nothing written", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const calls = yield* Ref.make(0)
      yield* Saga.run("rowless", program(yield* Ref.make(0), calls))
      yield* sql`DELETE FROM effect_saga_sagas WHERE saga_id = 'rowless'`
      const before = yield* rowsOf("rowless")
      const error = yield* Effect.flip(Saga.run("rowless", program(yield* Ref.make(0), calls)))
      expect(error).toMatchObject({ _tag: "JournalTampered", sagaId: "rowless", problem: "row" })
      expect(yield* Ref.get(calls)).toBe(2)
      expect(yield* rowsOf("rowless")).toEqual(before)
    }).pipe(Effect.provide(onServer("w-rowless")), Effect.scoped)
  )

  it.live("a run that finds the saga driven by another worker mid-step: LeaseHeld; that worker completes it", () =>
    Effect.gen(function* () {
      const calls = yield* Ref.make(0)
      const inside = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const held = Compensable.make({
        name: "hold",
        input: Schema.Struct({ n: Schema.Number }),
        success: Schema.String,
        execute: () =>
          Effect.zipRight(Deferred.succeed(inside, undefined), Effect.as(Deferred.await(release), "held-done")),
        compensate: () => Effect.void
      })
      const a = yield* Layer.build(worker("held-a"))
      const b = yield* Layer.build(worker("held-b"))
      const first = yield* Effect.fork(Saga.run("held", held({ n: 1 })).pipe(Effect.provide(a)))
      yield* Deferred.await(inside)
      const error = yield* Effect.flip(Saga.run("held", countingTool("hold", calls)({ n: 1 })).pipe(Effect.provide(b)))
      expect(error).toMatchObject({ _tag: "LeaseHeld", sagaId: "held", owner: "held-a" })
      expect(yield* Ref.get(calls)).toBe(0)
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(first)).toMatchObject({ _tag: "Completed", value: "held-done" })
    }).pipe(Effect.scoped, Effect.provide(Postgres.layerClient({ url })))
  )

  it.live(
    "two workers start the same new saga at once: each tool runs once; the other run answers from the journal or meets the lease",
    () =>
      Effect.gen(function* () {
        const calls = yield* Ref.make(0)
        for (let round = 0; round < 5; round++) {
          const sagaId = `raced-${round}`
          yield* Ref.set(calls, 0)
          // Both workers are up before either run starts, so that the two runs overlap.
          const a = yield* Layer.build(worker(`a-${round}`))
          const b = yield* Layer.build(worker(`b-${round}`))
          const runOn = (context: typeof a) =>
            Effect.either(Saga.run(sagaId, program(Ref.unsafeMake(0), calls)).pipe(Effect.provide(context)))
          const outcomes = yield* Effect.all([runOn(a), runOn(b)], { concurrency: "unbounded" })
          expect(yield* Ref.get(calls)).toBe(2)
          const completed = outcomes.filter(Either.isRight)
          expect(completed.length).toBeGreaterThanOrEqual(1)
          for (const outcome of completed) expect(outcome.right).toMatchObject({ _tag: "Completed", sagaId })
          // The other either found the winner still driving it, or answered from its journal.
          for (const outcome of outcomes.filter(Either.isLeft)) {
            expect(outcome.left).toMatchObject({ _tag: "LeaseHeld", sagaId })
          }
          const [entries, row] = yield* rowsOf(sagaId)
          expect(entries!.map((entry) => entry.phase)).toEqual(twoStepsCompleted)
          expect(row).toMatchObject([{ status: "completed", revision: 6 }])
        }
      }).pipe(Effect.scoped, Effect.provide(Postgres.layerClient({ url })))
  )
})
