/**
 * The journal and approval conformance suites on PostgreSQL (see fixtures/postgres.ts for when
 * they run), and opening a new database from several hosts at once.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Option } from "effect"
import { Journal, SqlJournal } from "../src/index.js"
import { latestMigration, openStatusSagas } from "../src/internal/sql/migrations.js"
import * as Postgres from "../src/Postgres.js"
import { suite as approvalSuite } from "./ApprovalSuite.js"
import { saga, seedStaggered, step } from "./fixtures/drafts.js"
import { countingStatements } from "./fixtures/pg-statements.js"
import { freshDatabase, queryOn } from "./fixtures/postgres.js"
import { suite as journalSuite } from "./JournalSuite.js"

const url = await freshDatabase("effect_saga_suites")

describe("PostgreSQL", () => {
  journalSuite("Postgres.layerJournal", Postgres.layerJournal({ url }))
  approvalSuite("Postgres.layer", Postgres.layer({ url }))

  it.live(
    "appends to distinct sagas arriving together are one statement: new and existing sagas commit, a stale one gets ConcurrencyConflict, one under another's lease LeaseHeld, and neither writes anything",
    () => Effect.flatMap(fresh("batch"), (url) => Effect.provide(batchOfDistinctSagas, Postgres.layerJournal({ url })))
  )

  it.live(
    "two stores batching appends to the same sagas at once: for each saga exactly one append commits and the other gets ConcurrencyConflict, first appends and later ones alike",
    () => Effect.scoped(Effect.flatMap(fresh("rival_batches"), rivalBatches))
  )

  it.live(
    "a batch's text round-trips exactly through its arrays: quotes, backslashes, braces, commas, an empty string, the word NULL, characters beyond the BMP",
    () => Effect.flatMap(fresh("batch_text"), (url) => Effect.provide(batchText, Postgres.layerJournal({ url })))
  )

  it.live("reads of sagas arriving together are one statement, and each gets its own saga's entries and row", () =>
    Effect.flatMap(fresh("grouped_reads"), (url) => Effect.provide(groupedReads, Postgres.layerJournal({ url })))
  )

  it.live("five pools opening a new database at once take turns on the migrations: all of them work", () =>
    Effect.gen(function* () {
      const fresh = yield* Effect.promise(() => freshDatabase("effect_saga_migrate"))
      const open = (layer: typeof Postgres.layer | typeof Postgres.layerJournal) =>
        Effect.flatMap(Journal.Journal, (journal) => journal.list()).pipe(Effect.provide(layer({ url: fresh })))
      const lists = yield* Effect.all(
        [Postgres.layerJournal, Postgres.layer, Postgres.layerJournal, Postgres.layer, Postgres.layerJournal].map(open),
        { concurrency: "unbounded" }
      )
      expect(lists).toEqual([[], [], [], [], []])
    })
  )

  it.live(
    "a database whose first migrating fails (another application's table in the way) is left as it was, with no record of migrations: not an effect-saga journal",
    () =>
      Effect.gen(function* () {
        const url = yield* fresh("failed_first_migration")
        const tables = () =>
          Effect.promise(() =>
            queryOn(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
          )
        yield* Effect.promise(() => queryOn(url, "CREATE TABLE effect_saga_approvals (something_else TEXT)"))
        const error = yield* Effect.flip(Effect.scoped(Layer.build(Postgres.layer({ url }))))
        expect(error).toMatchObject({ _tag: "JournalError", operation: "migrate" })
        expect(yield* tables()).toEqual([{ tablename: "effect_saga_approvals" }])
        expect(yield* Effect.provide(SqlJournal.schemaVersion, Postgres.layerClient({ url }))).toEqual({
          applied: undefined,
          latest: latestMigration
        })
      })
  )

  it.live("a journal whose record of migrations was emptied is refused as edited, its tables left as they were", () =>
    Effect.gen(function* () {
      const url = yield* fresh("emptied_migrations")
      yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
      yield* Effect.promise(() => queryOn(url, "DELETE FROM effect_saga_migrations"))
      const error = yield* Effect.flip(Effect.scoped(Layer.build(Postgres.layer({ url }))))
      expect(error).toMatchObject({ _tag: "JournalError", operation: "migrate" })
      expect(error.message).toContain(
        "the journal records no migration (its effect_saga_migrations table is empty) while its tables exist: the record was edited"
      )
      expect(yield* Effect.provide(SqlJournal.schemaVersion, Postgres.layerClient({ url }))).toEqual({
        applied: 0,
        latest: latestMigration
      })
    })
  )

  it.live(
    "a journal whose record of migrations was dropped is refused as edited, said missing, and not made again",
    () =>
      Effect.gen(function* () {
        const url = yield* fresh("dropped_migrations")
        yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
        yield* Effect.promise(() => queryOn(url, "DROP TABLE effect_saga_migrations"))
        const error = yield* Effect.flip(Effect.scoped(Layer.build(Postgres.layer({ url }))))
        expect(error).toMatchObject({ _tag: "JournalError", operation: "migrate" })
        expect(error.message).toContain(
          "the journal records no migration (its effect_saga_migrations table is missing) while its tables exist: the record was edited"
        )
        const tables = yield* Effect.promise(() =>
          queryOn(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
        )
        expect(tables).not.toContainEqual({ tablename: "effect_saga_migrations" })
      })
  )

  it.live("countOpen on 10,000 finished and 100 open sagas is answered from the open-status index", () =>
    Effect.gen(function* () {
      const fresh = yield* Effect.promise(() => freshDatabase("effect_saga_open_counts"))
      const store = SqlJournal.layer.pipe(Layer.provideMerge(Postgres.layerClient({ url: fresh })))
      yield* Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`INSERT INTO effect_saga_sagas (saga_id, status, revision, digest, created_at, updated_at)
SELECT 'done-' || n, CASE WHEN n % 2 = 0 THEN 'completed' ELSE 'compensated' END, 1, 'd', 't', 't'
FROM generate_series(1, 10000) AS n`)
        yield* sql.unsafe(`INSERT INTO effect_saga_sagas (saga_id, status, revision, digest, created_at, updated_at)
SELECT 'open-' || n, CASE WHEN n % 2 = 0 THEN 'awaiting_approval' ELSE 'needs_attention' END, 1, 'd', 't', 't'
FROM generate_series(1, 100) AS n`)
        yield* sql.unsafe("ANALYZE effect_saga_sagas")
        expect(yield* journal.countOpen()).toEqual({
          running: 0,
          compensating: 0,
          suspended: 0,
          awaiting_approval: 50,
          needs_attention: 50,
          compensation_failed: 0
        })
        const plan = yield* sql.unsafe<{ readonly "QUERY PLAN": string }>(
          `EXPLAIN SELECT status, COUNT(*) AS count FROM effect_saga_sagas WHERE ${openStatusSagas} GROUP BY status`
        )
        const lines = plan.map((row) => row["QUERY PLAN"]).join("\n")
        expect(lines).toMatch(/(Index Scan on|Index Only Scan using|Index Scan using) effect_saga_sagas_by_open_status/)
        expect(lines).not.toContain("Seq Scan")
      }).pipe(Effect.provide(store))
    })
  )
})

const fresh = (name: string) => Effect.promise(() => freshDatabase(`effect_saga_${name}`))

/** A batch of appends to distinct sagas: see the test that runs it. */
const batchOfDistinctSagas = Effect.gen(function* () {
  const journal = yield* Journal.Journal
  const [existing] = yield* journal.append("existing", Journal.empty, [saga("SAGA_STARTED")])
  const [stale] = yield* journal.append("stale", Journal.empty, [saga("SAGA_STARTED")])
  yield* journal.append("stale", { revision: 1, digest: stale!.hash }, [step("INTENT", "moved")])
  const holder = { owner: "other-worker", ttlMillis: 60_000 }
  const [leased] = yield* journal.append("leased", Journal.empty, [saga("SAGA_STARTED")], holder)
  const me = { owner: "me", ttlMillis: 60_000 }

  const statements = yield* countingStatements(
    Effect.all(
      [
        ...Array.from({ length: 10 }, (_, n) =>
          journal.append(`new-${n}`, Journal.empty, [saga("SAGA_STARTED"), step("INTENT", "a")], me)
        ),
        journal.append("existing", { revision: 1, digest: existing!.hash }, [step("INTENT", "a")], me),
        journal.append("stale", { revision: 1, digest: stale!.hash }, [step("INTENT", "late")], me),
        journal.append("leased", { revision: 1, digest: leased!.hash }, [step("INTENT", "a")], me)
      ].map(Effect.either),
      { concurrency: "unbounded" }
    )
  )
  const [outcomes, sent] = statements
  expect(outcomes.slice(0, 11).every(Either.isRight)).toBe(true)
  expect(outcomes.slice(11).map((outcome) => Either.getLeft(outcome).pipe(Option.getOrThrow))).toMatchObject([
    { _tag: "ConcurrencyConflict", sagaId: "stale", expectedRevision: 1, actualRevision: 2 },
    { _tag: "LeaseHeld", sagaId: "leased", owner: "other-worker" }
  ])
  // One statement for the batch, then one read of the row each for the two that did not match.
  expect(sent).toBe(3)
  for (const sagaId of ["new-0", "new-9", "existing"]) {
    const entries = yield* journal.read(sagaId)
    expect(Journal.verifyEntries(entries)._tag).toBe("Intact")
    expect(Option.getOrThrow(yield* journal.get(sagaId))).toMatchObject({
      revision: entries.length,
      digest: entries.at(-1)!.hash,
      lease: { owner: "me" }
    })
  }
  expect((yield* journal.read("stale")).map((entry) => entry.stepId)).toEqual([null, "moved"])
  expect((yield* journal.read("leased")).map((entry) => entry.phase)).toEqual(["SAGA_STARTED"])
})

/** Twenty sagas, each appended to by two stores (two pools, as two hosts) in one batch each: see the test. */
const rivalBatches = (url: string) =>
  Effect.gen(function* () {
    const ids = Array.from({ length: 20 }, (_, n) => `rival-${n}`)
    const open = Effect.map(Layer.build(Layer.fresh(Postgres.layerJournal({ url }))), Context.get(Journal.Journal))
    const [left, right] = yield* Effect.all([open, open], { concurrency: "unbounded" })
    /** Every saga appended to by both stores at once, from the same position; the outcomes of each store. */
    const race = (position: (sagaId: string) => Journal.Expected, drafts: ReadonlyArray<Journal.Draft>) =>
      Effect.all(
        [left!, right!].map((journal) =>
          Effect.all(
            ids.map((sagaId) => Effect.either(journal.append(sagaId, position(sagaId), drafts))),
            { concurrency: "unbounded" }
          )
        ),
        { concurrency: "unbounded" }
      )
    const winnersOf = (outcomes: ReadonlyArray<ReadonlyArray<Either.Either<unknown, unknown>>>) =>
      ids.map((_, n) => outcomes.filter((store) => Either.isRight(store[n]!)).length)
    const losersOf = (outcomes: ReadonlyArray<ReadonlyArray<Either.Either<unknown, unknown>>>) =>
      outcomes.flatMap((store) => store.flatMap((outcome) => (Either.isLeft(outcome) ? [outcome.left] : [])))

    const first = yield* race(() => Journal.empty, [saga("SAGA_STARTED")])
    expect(winnersOf(first)).toEqual(ids.map(() => 1))
    expect(losersOf(first)).toMatchObject(ids.map(() => ({ _tag: "ConcurrencyConflict", expectedRevision: 0 })))

    const seen = new Map<string, Journal.Expected>()
    for (const sagaId of ids) {
      const record = Option.getOrThrow(yield* left!.get(sagaId))
      seen.set(sagaId, { revision: record.revision, digest: record.digest })
    }
    const later = yield* race((sagaId) => seen.get(sagaId)!, [step("INTENT", "a")])
    expect(winnersOf(later)).toEqual(ids.map(() => 1))
    expect(losersOf(later)).toMatchObject(
      ids.map(() => ({ _tag: "ConcurrencyConflict", expectedRevision: 1, actualRevision: 2 }))
    )
    for (const sagaId of ids) {
      const entries = yield* right!.read(sagaId)
      expect(entries.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "INTENT"])
      expect(Journal.verifyAgainst(entries, Option.getOrUndefined(yield* right!.get(sagaId)), undefined)._tag).toBe(
        "Intact"
      )
    }
  })

/** Thirty sagas read at once: see the test that runs it. */
const groupedReads = Effect.gen(function* () {
  const journal = yield* Journal.Journal
  const ids = Array.from({ length: 30 }, (_, n) => `read-${n}`)
  yield* seedStaggered(journal, ids)
  const [entries, readsSent] = yield* countingStatements(
    Effect.all(
      ids.map((sagaId) => journal.read(sagaId)),
      { concurrency: "unbounded" }
    )
  )
  const [records, getsSent] = yield* countingStatements(
    Effect.all(
      [...ids, "absent"].map((sagaId) => journal.get(sagaId)),
      { concurrency: "unbounded" }
    )
  )
  expect([readsSent, getsSent]).toEqual([1, 1])
  for (const [n, sagaId] of ids.entries()) {
    expect(entries[n]!.map((entry) => [entry.sagaId, entry.seq])).toEqual(
      Array.from({ length: 1 + (n % 3) }, (_, i) => [sagaId, i + 1])
    )
    expect(Option.getOrThrow(records[n]!)).toMatchObject({ sagaId, revision: 1 + (n % 3) })
  }
  expect(Option.isNone(records[ids.length]!)).toBe(true)
})

/** Text an array literal must escape, one saga each, appended at once: see the test that runs it. */
const intent = '{"idempotencyKey":"k","attempt":1}'
const executedWith = (text: string) => JSON.stringify({ result: text })

const batchText = Effect.gen(function* () {
  const journal = yield* Journal.Journal
  const texts = ['"', "\\", '\\"', "{a,b}", "a, b", "", "NULL", "null", " padded ", "é-✓-𝄞", '{"k":"v\\"q"}', "(1,2)"]
  const drafts = texts.map(
    (text): ReadonlyArray<Journal.Draft> => [
      saga("SAGA_STARTED"),
      { stepId: `step ${text}`, toolName: text, phase: "INTENT", input: text, payload: intent },
      // A payload verifies only when it fits its phase: the text goes into one as JSON holds it.
      { stepId: `step ${text}`, toolName: text, phase: "EXECUTED", input: null, payload: executedWith(text) }
    ]
  )
  const [written, sent] = yield* countingStatements(
    Effect.all(
      texts.map((text, n) => journal.append(`text ${n} ${text}`, Journal.empty, drafts[n]!)),
      { concurrency: "unbounded" }
    )
  )
  expect(sent).toBe(1)
  for (const [n, text] of texts.entries()) {
    const sagaId = `text ${n} ${text}`
    const stored = yield* journal.read(sagaId)
    expect(stored).toEqual(written[n])
    expect(stored.map((entry) => [entry.stepId, entry.toolName, entry.input, entry.payload])).toEqual([
      [null, null, null, null],
      [`step ${text}`, text, text, intent],
      [`step ${text}`, text, null, executedWith(text)]
    ])
    expect(Journal.verifyAgainst(stored, Option.getOrUndefined(yield* journal.get(sagaId)), undefined)._tag).toBe(
      "Intact"
    )
  }
})
