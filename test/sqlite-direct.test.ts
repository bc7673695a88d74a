/**
 * The SQLite store writes each batch of appends synchronously on its own connection, under the
 * client's lock (docs/storage.md, "Group commit"): the same guarantees as the transactions through
 * `@effect/sql`, checked here through the store's own client (test/sql-group-commit.test.ts wraps
 * the client, which takes the `@effect/sql` path).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Either, Fiber, Layer, Option, Schema } from "effect"
import { Approval, Compensable, Journal, Saga, SqlJournal, SqlStore } from "../src/index.js"
import { saga, step } from "./fixtures/drafts.js"
import { countingBegins, raw } from "./fixtures/sqlite-raw.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-direct-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("SQLite appends on the store's own connection", () => {
  it.scoped("100 sagas running at once share transactions, and no tool runs before its INTENT is committed", () =>
    Effect.gen(function* () {
      const filename = fileFor("hundred")
      const reader = yield* raw(filename)
      const sawIntent: Array<boolean> = []
      const tools = ["reserve", "charge"].map((name) =>
        Compensable.make({
          name,
          input: Schema.Struct({ n: Schema.Number }),
          success: Schema.Struct({ ok: Schema.Boolean }),
          execute: ({ n }) =>
            Effect.sync(() => {
              const row = reader
                .prepare("SELECT count(*) AS n FROM effect_saga_entries WHERE saga_id = ? AND phase = 'INTENT'")
                .get(`order-${n}`) as { readonly n: number }
              sawIntent.push(row.n === (name === "reserve" ? 1 : 2))
              return { ok: true }
            }),
          compensate: () => Effect.void
        })
      )
      const { log, value: results } = yield* countingBegins(
        Effect.all(
          Array.from({ length: 100 }, (_, n) =>
            Saga.run(
              `order-${n}`,
              Effect.gen(function* () {
                for (const tool of tools) yield* tool({ n })
              })
            )
          ),
          { concurrency: "unbounded" }
        ).pipe(Effect.provide(Saga.layer.pipe(Layer.provide(SqlStore.layerSqlite({ filename })))))
      )
      expect(results.every((result) => result._tag === "Completed")).toBe(true)
      expect(sawIntent).toEqual(Array.from({ length: 200 }, () => true))
      // 5 appends a saga (the start travels with the first INTENT): 500 transactions without batching.
      expect(log.begins).toBeLessThan(50)
      expect(log.begins).toBeGreaterThan(0)
    })
  )

  it.scoped(
    "a stale append in a batch gets its own ConcurrencyConflict; its neighbours commit in one transaction",
    () =>
      Effect.gen(function* () {
        const { journal } = yield* store(fileFor("stale"))
        const [started] = yield* journal.append("contested", Journal.empty, [saga("SAGA_STARTED")])
        const seen = { revision: 1, digest: started!.hash }
        const { log, value: outcomes } = yield* countingBegins(
          Effect.all(
            [
              ...Array.from({ length: 10 }, (_, n) =>
                journal.append(`neighbour-${n}`, Journal.empty, [saga("SAGA_STARTED")])
              ),
              journal.append("contested", seen, [step("INTENT", "first")]),
              journal.append("contested", seen, [step("INTENT", "second")])
            ].map(Effect.either),
            { concurrency: "unbounded" }
          )
        )
        expect(log.begins).toBe(1)
        expect(outcomes.slice(0, 11).every(Either.isRight)).toBe(true)
        expect(Either.getLeft(outcomes[11]!).pipe(Option.getOrThrow)).toMatchObject({
          _tag: "ConcurrencyConflict",
          expectedRevision: 1,
          actualRevision: 2
        })
        expect((yield* journal.read("contested")).map((entry) => entry.stepId)).toEqual([null, "first"])
      })
  )

  it.scoped("an append the store refuses rolls back, leaves no transaction open, and only that append fails", () =>
    Effect.gen(function* () {
      const filename = fileFor("refused")
      const { journal, sql } = yield* store(filename)
      const [, intent] = yield* journal.append("refused", Journal.empty, [saga("SAGA_STARTED"), step("INTENT", "a")])
      const [executed] = yield* journal.append("refused", { revision: 2, digest: intent!.hash }, [
        step("EXECUTED", "a")
      ])
      // Behind the library's back: the row says revision 2 again, so the insert of seq 3 hits the key.
      const db = yield* raw(filename)
      db.prepare("UPDATE effect_saga_sagas SET revision = 2, digest = ? WHERE saga_id = ?").run(intent!.hash, "refused")
      const outcomes = yield* Effect.all(
        [
          journal.append("before", Journal.empty, [saga("SAGA_STARTED")]),
          journal.append("refused", { revision: 2, digest: intent!.hash }, [step("FAILED", "a")]),
          journal.append("after", Journal.empty, [saga("SAGA_STARTED")])
        ].map(Effect.either),
        { concurrency: "unbounded" }
      )
      expect(outcomes.map(Either.isRight)).toEqual([true, false, true])
      expect(Either.getLeft(outcomes[1]!).pipe(Option.getOrThrow)).toMatchObject({ _tag: "ConcurrencyConflict" })
      expect((yield* journal.read("refused")).map((entry) => entry.hash)).toEqual([
        expect.any(String),
        intent!.hash,
        executed!.hash
      ])
      // The connection is free and outside any transaction: a transaction of the caller's own commits.
      yield* sql.withTransaction(
        sql`UPDATE effect_saga_sagas SET revision = 3, digest = ${executed!.hash} WHERE saga_id = 'refused'`
      )
      yield* journal.append("refused", { revision: 3, digest: executed!.hash }, [saga("SAGA_COMPLETED")])
      expect(Journal.verifyEntries(yield* journal.read("refused"))._tag).toBe("Intact")
    })
  )

  it.scoped("an append waits while the caller's own transaction holds the client, and does not roll back with it", () =>
    Effect.gen(function* () {
      const { journal, sql } = yield* store(fileFor("waits"))
      const opened = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const transaction = yield* Effect.fork(
        Effect.flip(
          sql.withTransaction(
            Effect.gen(function* () {
              yield* journal.append("inside", Journal.empty, [saga("SAGA_STARTED")])
              yield* Deferred.succeed(opened, undefined)
              yield* Deferred.await(release)
              return yield* Effect.fail("changed my mind")
            })
          )
        )
      )
      yield* Deferred.await(opened)
      const outside = yield* Effect.fork(journal.append("outside", Journal.empty, [saga("SAGA_STARTED")]))
      for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(outside))).toBe(true)
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(transaction)).toBe("changed my mind")
      const written = yield* Fiber.join(outside)
      expect(yield* journal.read("inside")).toEqual([])
      expect(yield* journal.read("outside")).toEqual(written)
    })
  )

  it.scoped("the store's client is an SqliteClient: its backup holds what the journal wrote", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(
        Layer.mergeAll(SqlJournal.layer, Approval.layerMemory).pipe(
          Layer.provideMerge(SqlJournal.layerSqliteClient({ filename: fileFor("backup") }))
        )
      )
      const journal = Context.get(context, Journal.Journal)
      const [entry] = yield* journal.append("backed-up", Journal.empty, [saga("SAGA_STARTED")])
      const copy = fileFor("backup-copy")
      yield* Context.get(context, SqliteClient.SqliteClient).backup(copy)
      const db = yield* raw(copy)
      expect(db.prepare("SELECT hash FROM effect_saga_entries WHERE saga_id = 'backed-up'").all()).toEqual([
        { hash: entry!.hash }
      ])
    })
  )
})

const fileFor = (name: string) => path.join(dir, `${name}.db`)

/** The journal on the store's own client for `filename`, and that client. */
const store = (filename: string) =>
  Effect.map(
    Layer.build(SqlJournal.layer.pipe(Layer.provideMerge(SqlJournal.layerSqliteClient({ filename })), Layer.orDie)),
    (context) => ({ journal: Context.get(context, Journal.Journal), sql: Context.get(context, SqlClient.SqlClient) })
  )
