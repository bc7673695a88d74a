import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { afterAll, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Context, type Duration, Effect, Either, Layer, Option, Schema } from "effect"
import { Approval, Compensable, Journal, Saga, SqlJournal } from "../src/index.js"
import { saga, step } from "./fixtures/drafts.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-group-commit-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("group commit on an SQLite file", () => {
  it.scoped(
    "100 sagas running at once share transactions, no tool runs before its INTENT is committed, and all of it survives a reopen",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("hundred")
        const counter = { transactions: 0 }
        yield* Effect.scoped(open(counted(filename, counter))) // creates the tables
        const { calls, sawIntent, tools } = fixture(yield* raw(filename))
        const results = yield* Effect.scoped(
          Effect.gen(function* () {
            counter.transactions = 0
            return yield* Effect.all(
              Array.from({ length: 100 }, (_, n) =>
                Saga.run(
                  `order-${n}`,
                  Effect.gen(function* () {
                    for (const tool of tools) yield* tool({ n })
                  })
                )
              ),
              { concurrency: "unbounded" }
            )
          }).pipe(
            Effect.provide(
              Saga.layer.pipe(Layer.provide(Layer.merge(counted(filename, counter), Approval.layerMemory)))
            )
          )
        )
        expect(results.every((result) => result._tag === "Completed")).toBe(true)
        expect(calls.length).toBe(300)
        expect(sawIntent).toEqual(Array.from({ length: 300 }, () => true))
        // 7 appends a saga (the start travels with the first INTENT): 700 transactions without batching.
        expect(counter.transactions).toBeLessThan(70)

        const journal = yield* open(SqlJournal.layerSqlite({ filename }))
        for (let n = 0; n < 100; n++) {
          const entries = yield* journal.read(`order-${n}`)
          expect(entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
          expect(entries.map((entry) => entry.phase)).toEqual([
            "SAGA_STARTED",
            "INTENT",
            "EXECUTED",
            "INTENT",
            "EXECUTED",
            "INTENT",
            "EXECUTED",
            "SAGA_COMPLETED"
          ])
          expect(Journal.verifyEntries(entries)).toMatchObject({ _tag: "Intact", entries: 8 })
          expect(Option.getOrThrow(yield* journal.get(`order-${n}`))).toMatchObject({
            status: "completed",
            revision: 8,
            digest: entries[7]!.hash
          })
        }
      })
  )

  it.scoped("a stale append in the same batch gets ConcurrencyConflict and writes nothing; its neighbours commit", () =>
    Effect.gen(function* () {
      const counter = { transactions: 0 }
      const journal = yield* open(counted(fileFor("stale"), counter))
      const [started] = yield* journal.append("contested", Journal.empty, [saga("SAGA_STARTED")])
      const seen = { revision: 1, digest: started!.hash }
      counter.transactions = 0

      const outcomes = yield* Effect.all(
        [
          ...Array.from({ length: 20 }, (_, n) =>
            journal.append(`neighbour-${n}`, Journal.empty, [saga("SAGA_STARTED")])
          ),
          journal.append("contested", seen, [step("INTENT", "first")]),
          journal.append("contested", seen, [step("INTENT", "second")]),
          journal.append("contested", Journal.empty, [saga("SAGA_STARTED")])
        ].map(Effect.either),
        { concurrency: "unbounded" }
      )

      expect(counter.transactions).toBe(1)
      expect(outcomes.slice(0, 21).every(Either.isRight)).toBe(true)
      expect(outcomes.slice(21).map((outcome) => Either.getLeft(outcome).pipe(Option.getOrThrow))).toMatchObject([
        { _tag: "ConcurrencyConflict", sagaId: "contested", expectedRevision: 1, actualRevision: 2 },
        { _tag: "ConcurrencyConflict", sagaId: "contested", expectedRevision: 0, actualRevision: 2 }
      ])
      const contested = yield* journal.read("contested")
      expect(contested.map((entry) => [entry.seq, entry.stepId])).toEqual([
        [1, null],
        [2, "first"]
      ])
      expect(Journal.verifyEntries(contested)._tag).toBe("Intact")
      for (let n = 0; n < 20; n++) {
        expect((yield* journal.read(`neighbour-${n}`)).map((entry) => entry.phase)).toEqual(["SAGA_STARTED"])
      }
    })
  )

  it.scoped(
    "an append the store refuses fails the batch's transaction; the batch is retried one append at a time and only that one fails",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("refused")
        const counter = { transactions: 0 }
        const journal = yield* open(counted(filename, counter))
        const [, second] = yield* journal.append("rolled-back", Journal.empty, [
          saga("SAGA_STARTED"),
          step("INTENT", "a")
        ])
        yield* journal.append("rolled-back", { revision: 2, digest: second!.hash }, [step("EXECUTED", "a")])
        // Behind the library's back: the saga row says revision 2 again, so the compare-and-set
        // matches and the insert of seq 3 hits the primary key.
        const db = yield* raw(filename)
        db.prepare("UPDATE effect_saga_sagas SET revision = 2, digest = ? WHERE saga_id = ?").run(
          second!.hash,
          "rolled-back"
        )
        counter.transactions = 0

        const outcomes = yield* Effect.all(
          [
            journal.append("before", Journal.empty, [saga("SAGA_STARTED")]),
            journal.append("rolled-back", { revision: 2, digest: second!.hash }, [step("FAILED", "a")]),
            journal.append("after", Journal.empty, [saga("SAGA_STARTED")])
          ].map(Effect.either),
          { concurrency: "unbounded" }
        )

        expect(counter.transactions).toBe(1 + 3)
        expect(Either.isRight(outcomes[0]!) && Either.isRight(outcomes[2]!)).toBe(true)
        expect(Either.getLeft(outcomes[1]!).pipe(Option.getOrThrow)).toMatchObject({
          _tag: "ConcurrencyConflict",
          expectedRevision: 2,
          actualRevision: 3
        })
        expect((yield* journal.read("rolled-back")).map((entry) => entry.phase)).toEqual([
          "SAGA_STARTED",
          "INTENT",
          "EXECUTED"
        ])
        expect((yield* journal.read("before")).length).toBe(1)
        expect((yield* journal.read("after")).length).toBe(1)
      })
  )

  it.scoped(
    "a lock held past the busy timeout fails every append of the batch after one wait, and writes nothing",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("locked")
        const counter = { transactions: 0 }
        const journal = yield* open(counted(filename, counter, "50 millis"))
        const holder = yield* raw(filename)
        holder.exec("BEGIN IMMEDIATE")
        counter.transactions = 0
        const appendAll = Effect.all(
          ["a", "b", "c"].map((sagaId) => Effect.either(journal.append(sagaId, Journal.empty, [saga("SAGA_STARTED")]))),
          { concurrency: "unbounded" }
        )

        const locked = yield* appendAll
        expect(counter.transactions).toBe(1)
        for (const outcome of locked) {
          const error = Either.getLeft(outcome).pipe(Option.getOrThrow)
          expect(error).toMatchObject({ _tag: "JournalError", operation: "append" })
          expect(error.message).toContain("locked")
        }
        expect(yield* journal.read("a")).toEqual([])

        holder.exec("ROLLBACK")
        expect((yield* appendAll).every(Either.isRight)).toBe(true)
        expect((yield* journal.read("c")).map((entry) => entry.phase)).toEqual(["SAGA_STARTED"])
      })
  )

  it.scoped(
    "an append alone is committed in a transaction of its own before it returns, without the clock moving",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("alone")
        const counter = { transactions: 0 }
        const journal = yield* open(counted(filename, counter))
        const reader = yield* raw(filename)
        counter.transactions = 0
        let position = Journal.empty
        for (const [index, drafts] of [
          [saga("SAGA_STARTED"), step("INTENT", "a")],
          [step("EXECUTED", "a")]
        ].entries()) {
          const written = yield* journal.append("alone", position, drafts)
          position = { revision: written.at(-1)!.seq, digest: written.at(-1)!.hash }
          // Another connection sees only what is committed.
          expect(
            reader.prepare("SELECT count(*) AS n FROM effect_saga_entries WHERE saga_id = ?").get("alone")
          ).toEqual({
            n: position.revision
          })
          expect(counter.transactions).toBe(index + 1)
        }
      })
  )

  it.scoped("synchronous is FULL unless NORMAL is asked for", () =>
    Effect.gen(function* () {
      const modes = yield* Effect.forEach(["normal", "full", undefined] as const, (synchronous, index) =>
        Effect.flatMap(
          Layer.build(SqlJournal.layerSqliteClient({ filename: fileFor(`synchronous-${index}`), synchronous })),
          (context) => Context.get(context, SqlClient.SqlClient)<{ readonly synchronous: number }>`PRAGMA synchronous`
        )
      )
      // SQLite's codes: 1 is NORMAL, 2 is FULL.
      expect(modes.map((rows) => rows[0]?.synchronous)).toEqual([1, 2, 2])
    })
  )

  it.scoped(
    "an append inside the caller's own transaction is written in it and rolls back with it, never taking another append along",
    () =>
      Effect.gen(function* () {
        const context = yield* Layer.build(counted(fileFor("nested"), { transactions: 0 }))
        const journal = Context.get(context, Journal.Journal)
        const sql = Context.get(context, SqlClient.SqlClient)
        const [failed, other] = yield* Effect.all(
          [
            Effect.flip(
              sql.withTransaction(
                Effect.zipRight(
                  journal.append("nested", Journal.empty, [saga("SAGA_STARTED")]),
                  Effect.fail("changed my mind")
                )
              )
            ),
            journal.append("other", Journal.empty, [saga("SAGA_STARTED")])
          ],
          { concurrency: "unbounded" }
        )
        expect(failed).toBe("changed my mind")
        expect(yield* journal.read("nested")).toEqual([])
        expect(yield* journal.read("other")).toEqual(other)
        const [entry] = yield* sql.withTransaction(journal.append("nested", Journal.empty, [saga("SAGA_STARTED")]))
        expect(yield* journal.read("nested")).toEqual([entry])
      })
  )
})

const fileFor = (name: string) => path.join(dir, `${name}.db`)

/** The SQLite client on `filename`, counting the write transactions opened through it. */
const sqlClient = (filename: string, counter: { transactions: number }, busyTimeout?: Duration.DurationInput) =>
  Layer.effect(
    SqlClient.SqlClient,
    Effect.map(SqlClient.SqlClient, (sql) => {
      const client: SqlClient.SqlClient = Object.assign((...args: Array<any>) => (sql as any)(...args), sql, {
        withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.suspend(() => {
            counter.transactions++
            return sql.withTransaction(effect)
          }),
        withoutTransforms: () => client
      })
      return client
    })
  ).pipe(Layer.provide(SqlJournal.layerSqliteClient({ filename, busyTimeout })), Layer.orDie)

/** `SqlJournal.layer` on a client that counts its write transactions (the client is provided too). */
const counted = (filename: string, counter: { transactions: number }, busyTimeout?: Duration.DurationInput) =>
  SqlJournal.layer.pipe(Layer.provideMerge(sqlClient(filename, counter, busyTimeout)), Layer.orDie)

const open = <E>(layer: Layer.Layer<Journal.Journal, E>) => Effect.map(Layer.build(layer), Context.get(Journal.Journal))

/** A raw better-sqlite3 connection to the file: another reader, or someone editing it behind the library's back. */
const raw = (filename: string) =>
  Effect.acquireRelease(
    Effect.sync(() => new Database(filename)),
    (db) => Effect.sync(() => db.close())
  )

/**
 * Three tools that log their calls and, as they run, look for their INTENT through `reader`, a
 * connection of its own: it must be committed already.
 */
const fixture = (reader: Database.Database) => {
  const calls: Array<string> = []
  const sawIntent: Array<boolean> = []
  const tools = ["reserve", "charge", "ship"].map((name) =>
    Compensable.make({
      name,
      input: Schema.Struct({ n: Schema.Number }),
      success: Schema.String,
      execute: ({ n }, step) =>
        Effect.sync(() => {
          const intent = reader
            .prepare("SELECT 1 FROM effect_saga_entries WHERE saga_id = ? AND step_id = ? AND phase = 'INTENT'")
            .get(step.sagaId, step.stepId)
          sawIntent.push(intent !== undefined)
          calls.push(`${name}:${n}`)
          return `${name}-${n}`
        }),
      compensate: () => Effect.void
    })
  )
  return { calls, sawIntent, tools }
}
