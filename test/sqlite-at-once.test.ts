/**
 * On the store's own SQLite connection an append is done at once, in the caller's fiber, while
 * nothing else uses the connection and appends arrive one at a time (src/internal/sql/sqliteAppend.ts);
 * otherwise it goes through group commit. The saga's load reads at once on an idle connection too.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Either, Fiber, Layer, Option, Schema } from "effect"
import { Approval, Compensable, Journal, Saga, SqlJournal } from "../src/index.js"
import { appendsAtOnce } from "../src/internal/journal/synchronous.js"
import { PROBE_EVERY } from "../src/internal/sql/sqliteAppend.js"
import { saga, step } from "./fixtures/drafts.js"
import { countingBegins, raw } from "./fixtures/sqlite-raw.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-at-once-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("SQLite appends done at once", () => {
  it.scoped("appends go through group commit until a batch shows them alone, then at once, every 16th probing", () =>
    Effect.gen(function* () {
      const { journal, atOnce } = yield* store("pace")
      // A fresh store has not seen appends arrive alone yet.
      expect(atOnce("first", Journal.empty, [saga("SAGA_STARTED")])).toBeUndefined()
      yield* journal.append("first", Journal.empty, [saga("SAGA_STARTED")])
      const answers = Array.from({ length: PROBE_EVERY }, (_, n) =>
        atOnce(`alone-${n}`, Journal.empty, [saga("SAGA_STARTED")])
      )
      expect(answers.slice(0, PROBE_EVERY - 1).every((answer) => answer !== undefined && Either.isRight(answer))).toBe(
        true
      )
      expect(answers[PROBE_EVERY - 1]).toBeUndefined()
      // What the twin answered is what the file holds.
      const written = answers[0] as Either.Either<ReadonlyArray<Journal.Entry>, Journal.AppendError>
      expect(yield* journal.read("alone-0")).toEqual(Either.getOrThrow(written))
      expect(yield* journal.read(`alone-${PROBE_EVERY - 1}`)).toEqual([])
    })
  )

  it.scoped("a stale append done at once is a ConcurrencyConflict and writes nothing", () =>
    Effect.gen(function* () {
      const { journal, atOnce } = yield* primed("stale")
      const [started] = yield* journal.append("contested", Journal.empty, [saga("SAGA_STARTED")])
      const seen = { revision: 1, digest: started!.hash }
      expect(Either.isRight(atOnce("contested", seen, [step("INTENT", "first")])!)).toBe(true)
      expect(Either.getLeft(atOnce("contested", seen, [step("INTENT", "second")])!)).toEqual(
        Option.some(new Journal.ConcurrencyConflict({ sagaId: "contested", expectedRevision: 1, actualRevision: 2 }))
      )
      expect((yield* journal.read("contested")).map((entry) => entry.stepId)).toEqual([null, "first"])
    })
  )

  it.scoped("a key violation behind the row's back is a ConcurrencyConflict, rolled back", () =>
    Effect.gen(function* () {
      const { journal, atOnce, filename } = yield* primed("behind")
      const [, intent] = yield* journal.append("behind", Journal.empty, [saga("SAGA_STARTED"), step("INTENT", "a")])
      yield* journal.append("behind", { revision: 2, digest: intent!.hash }, [step("EXECUTED", "a")])
      const db = yield* raw(filename)
      db.prepare("UPDATE effect_saga_sagas SET revision = 2, digest = ? WHERE saga_id = ?").run(intent!.hash, "behind")
      expect(Either.getLeft(atOnce("behind", { revision: 2, digest: intent!.hash }, [step("FAILED", "a")])!)).toEqual(
        Option.some(new Journal.ConcurrencyConflict({ sagaId: "behind", expectedRevision: 2, actualRevision: 3 }))
      )
      expect(db.inTransaction).toBe(false)
      expect((yield* journal.read("behind")).map((entry) => entry.phase)).toEqual([
        "SAGA_STARTED",
        "INTENT",
        "EXECUTED"
      ])
      // The connection is left outside any transaction: the next append at once commits.
      expect(Either.isRight(atOnce("after", Journal.empty, [saga("SAGA_STARTED")])!)).toBe(true)
    })
  )

  it.scoped("while a transaction holds the connection nothing is done at once, and a read waits for it", () =>
    Effect.gen(function* () {
      const { journal, atOnce, sql } = yield* primed("held")
      const opened = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const transaction = yield* Effect.fork(
        Effect.flip(
          sql.withTransaction(
            Effect.gen(function* () {
              yield* journal.append("inside", Journal.empty, [saga("SAGA_STARTED")])
              // Inside the caller's own transaction: not at once (it must roll back with it).
              expect(atOnce("inside-too", Journal.empty, [saga("SAGA_STARTED")])).toBeUndefined()
              yield* Deferred.succeed(opened, undefined)
              yield* Deferred.await(release)
              return yield* Effect.fail("changed my mind")
            })
          )
        )
      )
      yield* Deferred.await(opened)
      // Another fiber's transaction is open on the connection: neither at once nor a read of its rows.
      expect(atOnce("outside", Journal.empty, [saga("SAGA_STARTED")])).toBeUndefined()
      const read = yield* Effect.fork(journal.read("inside"))
      for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(read))).toBe(true)
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(transaction)).toBe("changed my mind")
      expect(yield* Fiber.join(read)).toEqual([])
      expect(yield* journal.read("outside")).toEqual([])
    })
  )

  it.scoped("a saga alone is journaled at once; 100 sagas after it still share transactions", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(
        Layer.mergeAll(SqlJournal.layer, Approval.layerMemory).pipe(
          Layer.provideMerge(SqlJournal.layerSqliteClient({ filename: fileFor("sagas") })),
          Layer.orDie
        )
      )
      const journal = Context.get(context, Journal.Journal)
      const twin = appendsAtOnce.get(journal.append)!
      const answers = { atOnce: 0, declined: 0 }
      appendsAtOnce.set(journal.append, (...args) => {
        const answer = twin(...args)
        if (answer === undefined) answers.declined++
        else answers.atOnce++
        return answer
      })
      const sagas = yield* Layer.build(Saga.layer.pipe(Layer.provide(Layer.succeedContext(context))))
      const alone = yield* countingBegins(Effect.provide(Saga.run("alone", program(0)), sagas))
      expect(alone.value._tag).toBe("Completed")
      // Three appends (the start travels with the first INTENT, each EXECUTED with the saga's next
      // entry), each its own transaction; the first goes through group commit (a fresh store), the
      // two after it at once.
      expect(alone.log.begins).toBe(3)
      expect(answers).toEqual({ atOnce: 2, declined: 1 })
      const together = yield* countingBegins(
        Effect.provide(
          Effect.all(
            Array.from({ length: 100 }, (_, n) => Saga.run(`together-${n}`, program(n))),
            { concurrency: "unbounded" }
          ),
          sagas
        )
      )
      expect(together.value.every((result) => result._tag === "Completed")).toBe(true)
      // 300 appends: a transaction each at once, far fewer through group commit's batches.
      expect(together.log.begins).toBeLessThan(50 + PROBE_EVERY)
      expect(answers.declined).toBeGreaterThan(240)
    })
  )
})

const tools = ["reserve", "charge"].map((name) =>
  Compensable.make({
    name,
    input: Schema.Struct({ n: Schema.Number }),
    success: Schema.Struct({ ok: Schema.Boolean }),
    execute: () => Effect.succeed({ ok: true }),
    compensate: () => Effect.void
  })
)

const program = (n: number) =>
  Effect.gen(function* () {
    for (const tool of tools) yield* tool({ n })
  })

const fileFor = (name: string) => path.join(dir, `${name}.db`)

/** The journal on the store's own client for a new file, its client, and its twin at the time of now. */
const store = (name: string) =>
  Effect.map(
    Layer.build(
      SqlJournal.layer.pipe(Layer.provideMerge(SqlJournal.layerSqliteClient({ filename: fileFor(name) })), Layer.orDie)
    ),
    (context) => {
      const journal = Context.get(context, Journal.Journal)
      const twin = appendsAtOnce.get(journal.append)!
      return {
        journal,
        sql: Context.get(context, SqlClient.SqlClient),
        filename: fileFor(name),
        atOnce: (sagaId: string, expected: Journal.Expected, drafts: ReadonlyArray<Journal.Draft>) =>
          twin(sagaId, expected, drafts, undefined, Date.now())
      }
    }
  )

/** `store`, after a batch of one append: appends arrive alone. */
const primed = (name: string) =>
  Effect.tap(store(name), ({ journal }) => journal.append(`${name}-primer`, Journal.empty, [saga("SAGA_STARTED")]))
