import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { ConfigProvider, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Approval, Compensable, Journal, Saga, SqlJournal, SqlStore } from "../src/index.js"
import { latestMigration, openStatusSagas } from "../src/internal/sql/migrations.js"
import * as Postgres from "../src/Postgres.js"
import { appendAll, saga, step } from "./fixtures/drafts.js"
import { suite } from "./JournalSuite.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-sql-journal-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

suite("SqlJournal.layerSqlite", SqlJournal.layerSqlite({ filename: path.join(dir, "suite.db") }))

suite(
  "SqlJournal.layer on a stock SqliteClient",
  SqlJournal.layer.pipe(Layer.provide(SqliteClient.layer({ filename: path.join(dir, "stock.db") })))
)

describe("SqlJournal on an SQLite file", () => {
  it.effect(
    "a file another connection holds locked: the layer says it could not open it, not that a migration failed",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("locked-at-open")
        yield* Effect.scoped(Layer.build(SqlStore.layerSqlite({ filename })))
        const error = yield* Effect.scoped(
          Effect.flatMap(raw(filename), (db) => {
            db.exec("BEGIN EXCLUSIVE")
            return Effect.flip(Effect.scoped(Layer.build(SqlStore.layerSqlite({ filename, busyTimeout: 0 }))))
          })
        )
        expect(error).toMatchObject({ _tag: "JournalError", operation: "open" })
        expect(error.message).toMatch(
          /^journal open failed: the database is locked: another connection held it longer than the busy timeout \(SQLITE_BUSY[^)]*\): its schema is checked \(and migrated if need be\) before anything is read or written; nothing was written$/
        )
      })
  )

  it.effect(
    "reopening the file in a new process returns exactly what was written",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("reopen")
        const written = yield* Effect.gen(function* () {
          const journal = yield* Journal.Journal
          yield* appendAll(
            journal,
            "reopened",
            [saga("SAGA_STARTED"), step("INTENT", "été-1")],
            [step("EXECUTED", "été-1")]
          )
          yield* appendAll(journal, "reopened", [saga("SAGA_COMPLETED")])
          return { entries: yield* journal.read("reopened"), record: Option.getOrNull(yield* journal.get("reopened")) }
        }).pipe(Effect.provide(SqlJournal.layerSqlite({ filename })))

        const child = yield* runChild("read", filename, "reopened")
        expect(child).toEqual({ ok: { entries: written.entries, record: written.record } })
        expect(written.entries.map((entry) => entry.phase)).toEqual([
          "SAGA_STARTED",
          "INTENT",
          "EXECUTED",
          "SAGA_COMPLETED"
        ])
        expect(written.record).toMatchObject({ status: "completed", revision: 4, digest: written.entries[3]!.hash })
      }),
    childTimeout
  )

  it.scoped("two connections to one file: the writer that is behind gets ConcurrencyConflict, never a fork", () =>
    Effect.gen(function* () {
      const layer = SqlJournal.layerSqlite({ filename: fileFor("two-connections") })
      const first = yield* open(layer)
      const second = yield* open(layer)
      const [started] = yield* first.append("shared", Journal.empty, [saga("SAGA_STARTED")])
      const seen = { revision: 1, digest: started!.hash }
      yield* first.append("shared", seen, [step("INTENT", "first")])
      expect(yield* Effect.flip(second.append("shared", seen, [step("INTENT", "second")]))).toMatchObject({
        _tag: "ConcurrencyConflict",
        sagaId: "shared",
        expectedRevision: 1,
        actualRevision: 2
      })
      expect((yield* Effect.flip(second.append("shared", Journal.empty, [saga("SAGA_STARTED")])))._tag).toBe(
        "ConcurrencyConflict"
      )
      const entries = yield* second.read("shared")
      expect(entries.map((entry) => [entry.seq, entry.stepId])).toEqual([
        [1, null],
        [2, "first"]
      ])
      expect(Journal.verifyEntries(entries)._tag).toBe("Intact")
    })
  )

  it.scoped("the primary key refuses a duplicate seq even when the saga row was moved back behind its back", () =>
    Effect.gen(function* () {
      const filename = fileFor("primary-key")
      const journal = yield* open(SqlJournal.layerSqlite({ filename }))
      const entries = yield* appendAll(
        journal,
        "rolled-back",
        [saga("SAGA_STARTED"), step("INTENT", "a")],
        [step("EXECUTED", "a")]
      )
      const db = yield* raw(filename)
      db.prepare("UPDATE effect_saga_sagas SET revision = 2, digest = ? WHERE saga_id = ?").run(
        entries[1]!.hash,
        "rolled-back"
      )
      const error = yield* Effect.flip(
        journal.append("rolled-back", { revision: 2, digest: entries[1]!.hash }, [step("FAILED", "a")])
      )
      expect(error).toMatchObject({ _tag: "ConcurrencyConflict", expectedRevision: 2, actualRevision: 3 })
      expect(yield* journal.read("rolled-back")).toEqual(entries)
      expect(yield* journal.get("rolled-back").pipe(Effect.map(Option.getOrThrow))).toMatchObject({ revision: 2 })
    })
  )

  it.scoped(
    "a store from before migration 4 is brought up to date when opened: its sagas and leases kept, the lease indexes used",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("upgrade")
        const before = yield* Effect.scoped(
          Effect.gen(function* () {
            const journal = yield* open(SqlJournal.layerSqlite({ filename }))
            yield* appendAll(journal, "upgraded", [saga("SAGA_STARTED"), step("INTENT", "a")])
            yield* journal.claim("upgraded", { owner: "worker-a", ttlMillis: 30_000 })
            return yield* journal.read("upgraded")
          })
        )
        // As a store written by the version before migration 4 looks.
        const old = new Database(filename)
        old.exec(
          "DROP INDEX effect_saga_sagas_leased; DROP INDEX effect_saga_sagas_open; DROP INDEX effect_saga_sagas_by_open_status"
        )
        old.exec("ALTER TABLE effect_saga_entries DROP COLUMN mac")
        old.prepare("DELETE FROM effect_saga_migrations WHERE migration_id >= 4").run()
        old.close()

        const journal = yield* open(SqlJournal.layerSqlite({ filename }))
        expect(yield* journal.read("upgraded")).toEqual(before)
        expect(yield* journal.renew({ owner: "worker-a", ttlMillis: 30_000 })).toBe(1)
        const db = yield* raw(filename)
        const plan = (query: string) =>
          (db.prepare(`EXPLAIN QUERY PLAN ${query}`).all() as Array<{ detail: string }>)
            .map((row) => row.detail)
            .join("; ")
        expect(plan("SELECT saga_id FROM effect_saga_sagas WHERE lease_owner = 'worker-a'")).toContain(
          "USING INDEX effect_saga_sagas_leased"
        )
        expect(
          plan("SELECT saga_id FROM effect_saga_sagas WHERE status IN ('running', 'compensating', 'suspended')")
        ).toContain("effect_saga_sagas_open")
        expect(yield* journal.countOpen()).toMatchObject({ running: 1 })
      })
  )

  it.scoped("countOpen on a store of 10,000 finished and 100 open sagas counts from the open-status index alone", () =>
    Effect.gen(function* () {
      const filename = fileFor("open-counts")
      const journal = yield* open(SqlJournal.layerSqlite({ filename }))
      const db = yield* raw(filename)
      const insert = db.prepare(
        "INSERT INTO effect_saga_sagas (saga_id, status, revision, digest, created_at, updated_at) VALUES (?, ?, 1, 'd', 't', 't')"
      )
      const statuses = ["running", "suspended", "awaiting_approval", "needs_attention", "compensation_failed"] as const
      db.transaction(() => {
        for (let n = 0; n < 10_000; n++) insert.run(`done-${n}`, n % 2 === 0 ? "completed" : "compensated")
        for (let n = 0; n < 100; n++) insert.run(`open-${n}`, statuses[n % statuses.length])
      })()
      expect(yield* journal.countOpen()).toEqual({
        running: 20,
        compensating: 0,
        suspended: 20,
        awaiting_approval: 20,
        needs_attention: 20,
        compensation_failed: 20
      })
      const plan = db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT status, COUNT(*) AS count FROM effect_saga_sagas WHERE ${openStatusSagas} GROUP BY status`
        )
        .all() as Array<{ detail: string }>
      expect(plan.map((row) => row.detail)).toEqual([
        "SEARCH effect_saga_sagas USING COVERING INDEX effect_saga_sagas_by_open_status (status=?)"
      ])
    })
  )

  it.scoped("a row edited behind the library's back: verify names the entry, and every entry is still there", () =>
    Effect.gen(function* () {
      const filename = fileFor("edited")
      const journal = yield* open(SqlJournal.layerSqlite({ filename }))
      const entries = yield* appendAll(
        journal,
        "edited",
        [saga("SAGA_STARTED"), step("INTENT", "a")],
        [step("EXECUTED", "a")],
        [saga("SAGA_COMPLETED")]
      )
      const db = yield* raw(filename)
      db.prepare("UPDATE effect_saga_entries SET payload = ? WHERE saga_id = ? AND seq = 3").run(
        '{"result":"r-2"}',
        "edited"
      )
      const verification = yield* Journal.verify("edited").pipe(Effect.provideService(Journal.Journal, journal))
      expect(verification).toEqual({
        _tag: "Broken",
        seq: 3,
        problem: "hash",
        reason: "hash does not match the entry's content and its predecessor"
      })
      const read = yield* journal.read("edited")
      expect(read).toEqual(
        entries.map((entry) => (entry.seq === 3 ? { ...entry, payload: '{"result":"r-2"}' } : entry))
      )
    })
  )

  it.scoped(
    "entries removed from the end: the chain left is intact, but verify finds it ends before the saga's row",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("truncated")
        const journal = yield* open(SqlJournal.layerSqlite({ filename }))
        yield* appendAll(journal, "truncated", [saga("SAGA_STARTED"), step("INTENT", "a")], [step("EXECUTED", "a")])
        const db = yield* raw(filename)
        db.prepare("DELETE FROM effect_saga_entries WHERE saga_id = ? AND seq = 3").run("truncated")
        expect(Journal.verifyEntries(yield* journal.read("truncated"))._tag).toBe("Intact")
        const verification = yield* Journal.verify("truncated").pipe(Effect.provideService(Journal.Journal, journal))
        expect(verification).toMatchObject({ _tag: "Broken", seq: 3 })
        assert(verification._tag === "Broken")
        expect(verification.reason).toContain("the saga's row says it ends at seq 3, but its journal ends at seq 2")
      })
  )

  it.scoped(
    "a row whose revision was raised, its digest still the journal's last hash: verify blames the row, not deleted entries",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("raised")
        const journal = yield* open(SqlJournal.layerSqlite({ filename }))
        yield* appendAll(journal, "raised", [saga("SAGA_STARTED"), step("INTENT", "a")], [step("EXECUTED", "a")])
        const db = yield* raw(filename)
        db.prepare("UPDATE effect_saga_sagas SET revision = revision + 2 WHERE saga_id = ?").run("raised")
        const verification = yield* Journal.verify("raised").pipe(Effect.provideService(Journal.Journal, journal))
        expect(verification).toEqual({
          _tag: "Broken",
          seq: 3,
          problem: "row",
          reason:
            "the saga's row says it ends at seq 5, but names the hash of the journal's last entry, at seq 3: the row was edited"
        })
      })
  )

  it.scoped(
    "a row that no longer decodes fails the read with JournalCorrupted; Journal.verify answers Broken, undecodable",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("undecodable")
        const journal = yield* open(SqlJournal.layerSqlite({ filename }))
        yield* appendAll(journal, "undecodable", [saga("SAGA_STARTED"), step("INTENT", "a"), step("EXECUTED", "a")])
        const db = yield* raw(filename)
        db.prepare("UPDATE effect_saga_entries SET phase = 'DONE' WHERE saga_id = ? AND seq = 2").run("undecodable")
        const error = yield* Effect.flip(journal.read("undecodable"))
        expect(error).toBeInstanceOf(Journal.JournalCorrupted)
        expect(error).toMatchObject({ sagaId: "undecodable", seq: 2 })
        expect(error.message).toContain("DONE")
        const verified = yield* Journal.verify("undecodable").pipe(Effect.provideService(Journal.Journal, journal))
        expect(verified).toMatchObject({ _tag: "Broken", seq: 2, problem: "undecodable" })
        expect(verified._tag === "Broken" && verified.reason).toContain("DONE")
      })
  )

  it.effect("options a caller forced past the types are refused by name when the layer is built; no file is made", () =>
    Effect.gen(function* () {
      const filename = fileFor("bad-options")
      const refused = [
        [{ synchronous: "off" }, 'the SQLite option synchronous must be "full" or "normal", not "off"'],
        [{ synchronous: "FULL" }, 'the SQLite option synchronous must be "full" or "normal", not "FULL"'],
        [{ busyTimeout: -1 }, "the SQLite option busyTimeout must be a finite duration of 0 or more, not -1"],
        [{ busyTimeout: "soon" }, 'the SQLite option busyTimeout must be a finite duration of 0 or more, not "soon"'],
        [
          { busyTimeout: "-5 seconds" },
          'the SQLite option busyTimeout must be a finite duration of 0 or more, not "-5 seconds"'
        ],
        [{ busyTimeout: Number.NaN }, "the SQLite option busyTimeout must be a finite duration of 0 or more, not NaN"],
        [
          { busyTimeout: "30 days" },
          'the SQLite option busyTimeout must be at most 2147483647 ms (about 24.8 days, the longest SQLite waits), not "30 days"'
        ],
        [{ flushEveryEntry: "yes" }, 'the SQLite option flushEveryEntry must be true or false, not "yes"'],
        [{ filename: "" }, "the SQLite option filename must be a non-empty path"]
      ] as const
      for (const [options, reason] of refused) {
        const layer = SqlStore.layerSqlite({ filename, ...options } as unknown as SqlJournal.SqliteOptions)
        const error = yield* Effect.flip(Effect.scoped(Layer.build(layer)))
        expect(error).toMatchObject({ _tag: "JournalError", operation: "open", reason })
      }
      expect(fs.existsSync(filename)).toBe(false)
    })
  )

  it.effect("PostgreSQL options forced past the types are refused by name before any connection", () =>
    Effect.gen(function* () {
      const url = "postgres://nobody@127.0.0.1:1/none"
      const refused = [
        [{ url, maxConnections: 0 }, "the PostgreSQL option maxConnections must be a whole number of 1 or more, not 0"],
        [
          { url, maxConnections: 2.5 },
          "the PostgreSQL option maxConnections must be a whole number of 1 or more, not 2.5"
        ],
        // Text is quoted: `not 10` would read as if the number were refused.
        [
          { url, maxConnections: "10" },
          'the PostgreSQL option maxConnections must be a whole number of 1 or more, not "10"'
        ],
        [{ url, flushEveryEntry: 1 }, "the PostgreSQL option flushEveryEntry must be true or false, not 1"],
        [{ url: "" }, "the PostgreSQL option url must be a non-empty connection string (or a Redacted one)"],
        // What `Redacted.make(process.env.DATABASE_URL ?? "")` gives with the variable unset: `pg`
        // would connect to the `PG*` variables' server (or localhost's) and migrate it.
        [
          { url: Redacted.make("") },
          "the PostgreSQL option url must be a non-empty connection string (or a Redacted one)"
        ],
        [
          { url: Redacted.make(undefined) },
          "the PostgreSQL option url must be a non-empty connection string (or a Redacted one)"
        ],
        [{ url: " " }, "the PostgreSQL option url must be a non-empty connection string (or a Redacted one)"]
      ] as const
      for (const [options, reason] of refused) {
        const layer = Postgres.layer(options as unknown as Postgres.Options)
        const error = yield* Effect.flip(Effect.scoped(Layer.build(layer)))
        expect(error).toMatchObject({ _tag: "JournalError", operation: "open", reason })
      }
    })
  )

  it.effect("a PostgreSQL URL is never printed with its password, in its user part or its query", () =>
    Effect.gen(function* () {
      const urls = [
        "postgres://nobody:user-part-secret@127.0.0.1:1/none",
        "postgres://nobody@127.0.0.1:1/none?password=query-secret&sslmode=disable",
        "postgresql://nobody@127.0.0.1:1/none?PASSWORD=query-secret&sslpassword=key-secret"
      ]
      for (const url of urls) {
        const error = yield* Effect.flip(Effect.scoped(Layer.build(Postgres.layer({ url }))))
        expect(error._tag).toBe("JournalError")
        expect(error.message).not.toMatch(/secret/)
        expect(error.message).toContain("127.0.0.1:1/none")
        expect(error.message).toContain("***")
      }
    })
  )

  it.effect("a journal whose record of migrations was emptied is refused as edited when the layer is built", () =>
    Effect.gen(function* () {
      const filename = fileFor("emptied-migrations")
      yield* Effect.scoped(
        Effect.flatMap(open(SqlJournal.layerSqlite({ filename })), (journal) =>
          appendAll(journal, "kept", [saga("SAGA_STARTED")])
        )
      )
      yield* Effect.scoped(Effect.map(raw(filename), (db) => db.prepare("DELETE FROM effect_saga_migrations").run()))
      const error = yield* Effect.flip(Effect.scoped(open(SqlJournal.layerSqlite({ filename }))))
      expect(error).toMatchObject({ _tag: "JournalError", operation: "migrate" })
      // Not "table effect_saga_sagas already exists", which reads as another application's table.
      expect(error.message).toContain(
        "the journal records no migration (its effect_saga_migrations table is empty) while its tables exist: the record was edited; restore it from a backup (nothing was written)"
      )
      const db = new Database(filename, { readonly: true })
      try {
        expect(db.prepare("SELECT count(*) AS n FROM effect_saga_entries").get()).toEqual({ n: 1 })
        expect(db.prepare("SELECT count(*) AS n FROM effect_saga_migrations").get()).toEqual({ n: 0 })
      } finally {
        db.close()
      }
      // Dropped, it is refused alike.
      yield* Effect.scoped(Effect.map(raw(filename), (db) => db.prepare("DROP TABLE effect_saga_migrations").run()))
      const dropped = yield* Effect.flip(Effect.scoped(open(SqlJournal.layerSqlite({ filename }))))
      expect(dropped.message).toContain(
        "the journal records no migration (its effect_saga_migrations table is missing) while its tables exist: the record was edited"
      )
    })
  )

  it.effect("a journal a newer effect-saga migrated is refused when the layer is built: nothing is written", () =>
    Effect.gen(function* () {
      const filename = fileFor("newer-schema")
      yield* Effect.scoped(
        Effect.flatMap(open(SqlJournal.layerSqlite({ filename })), (journal) =>
          appendAll(journal, "kept", [saga("SAGA_STARTED")])
        )
      )
      const newer = latestMigration + 1
      yield* Effect.scoped(
        Effect.map(raw(filename), (db) =>
          db
            .prepare("INSERT INTO effect_saga_migrations (migration_id, name) VALUES (?, ?)")
            .run(newer, "from_the_future")
        )
      )
      const error = yield* Effect.flip(Effect.scoped(open(SqlJournal.layerSqlite({ filename }))))
      expect(error).toMatchObject({ _tag: "JournalError", operation: "migrate" })
      expect(error.message).toContain(
        `the journal has schema version ${newer}, newer than this effect-saga's ${latestMigration}: upgrade effect-saga (nothing was written)`
      )
      const db = new Database(filename, { readonly: true })
      try {
        expect(db.prepare("SELECT MAX(migration_id) AS version FROM effect_saga_migrations").get()).toEqual({
          version: newer
        })
      } finally {
        db.close()
      }
    })
  )

  it.effect.each([
    ["SqlStore.layerSqlite", (filename: string) => SqlStore.layerSqlite({ filename })],
    [
      "SqlStore.layer on a stock SqliteClient",
      (filename: string) => SqlStore.layer.pipe(Layer.provide(SqliteClient.layer({ filename })))
    ]
  ] as const)(
    "%s: a file whose first migrating fails (another application's table in the way) is left as it was, with no record of migrations: not an effect-saga journal; it opens once the table is gone",
    ([name, layerOn]) =>
      Effect.gen(function* () {
        const filename = fileFor(`failed-first-migration-${name.replace(/\W+/g, "-")}`)
        const schema = () =>
          Effect.scoped(
            Effect.map(raw(filename), (db) =>
              db.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").all()
            )
          )
        // Another application's table, under the name migration 2 creates.
        yield* Effect.scoped(
          Effect.map(raw(filename), (db) => db.exec("CREATE TABLE effect_saga_approvals (something_else TEXT)"))
        )
        const before = yield* schema()
        const error = yield* Effect.flip(Effect.scoped(Layer.build(layerOn(filename))))
        expect(error).toMatchObject({ _tag: "JournalError", operation: "migrate" })
        expect(error.message).toBe('journal migrate failed: SQLITE_ERROR: table "effect_saga_approvals" already exists')
        expect(yield* schema()).toEqual(before)
        const readOnly = SqlJournal.layerSqliteClient({ filename, readonly: true })
        expect(yield* Effect.provide(SqlJournal.schemaVersion, readOnly)).toEqual({
          applied: undefined,
          latest: latestMigration
        })
        yield* Effect.scoped(Effect.map(raw(filename), (db) => db.exec("DROP TABLE effect_saga_approvals")))
        yield* Effect.scoped(Layer.build(layerOn(filename)))
        expect(yield* Effect.provide(SqlJournal.schemaVersion, readOnly)).toEqual({
          applied: latestMigration,
          latest: latestMigration
        })
      })
  )

  it.effect.each([
    ["SqlStore.layerSqlite", (filename: string) => SqlStore.layerSqlite({ filename })],
    ["SqlJournal.layerSqlite", (filename: string) => SqlJournal.layerSqlite({ filename })]
  ] as const)(
    "%s: a rollback-journal file whose migration fails is switched back from WAL, with no -wal or -shm file left beside it; one that migrates stays in WAL",
    ([name, layerOn]) =>
      Effect.gen(function* () {
        const filename = fileFor(`failed-migration-mode-${name.replace(/\W+/g, "-")}`)
        const journalMode = () =>
          Effect.scoped(Effect.map(raw(filename), (db) => db.pragma("journal_mode", { simple: true })))
        yield* Effect.scoped(
          Effect.map(raw(filename), (db) => {
            db.pragma("journal_mode = DELETE")
            db.exec("CREATE TABLE effect_saga_approvals (something_else TEXT)")
          })
        )
        const error = yield* Effect.flip(Effect.scoped(Layer.build(layerOn(filename))))
        expect(error).toMatchObject({ _tag: "JournalError", operation: "migrate" })
        expect(yield* journalMode()).toBe("delete")
        expect([fs.existsSync(`${filename}-wal`), fs.existsSync(`${filename}-shm`)]).toEqual([false, false])
        yield* Effect.scoped(Effect.map(raw(filename), (db) => db.exec("DROP TABLE effect_saga_approvals")))
        yield* Effect.scoped(Layer.build(layerOn(filename)))
        expect(yield* journalMode()).toBe("wal")
      })
  )

  it.scoped(
    "a store is at schema version 7, entries of 0.5.0: one of version 6 is brought to it when opened, so that an effect-saga that knows 6 refuses it",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("schema-7")
        yield* Effect.scoped(
          Effect.flatMap(open(SqlJournal.layerSqlite({ filename })), (journal) =>
            appendAll(journal, "kept", [saga("SAGA_STARTED")])
          )
        )
        const migrations = () =>
          Effect.map(raw(filename), (db) =>
            db.prepare("SELECT migration_id, name FROM effect_saga_migrations ORDER BY migration_id").all()
          )
        expect((yield* migrations()).at(-1)).toEqual({ migration_id: 7, name: "entries_of_0_5_0" })
        // As a store of version 6 (before 0.5.0) looks: nothing but the record differs.
        yield* Effect.map(raw(filename), (db) =>
          db.prepare("DELETE FROM effect_saga_migrations WHERE migration_id = 7").run()
        )
        const journal = yield* open(SqlJournal.layerSqlite({ filename }))
        expect((yield* migrations()).at(-1)).toEqual({ migration_id: 7, name: "entries_of_0_5_0" })
        expect((yield* journal.read("kept")).map((entry) => entry.phase)).toEqual(["SAGA_STARTED"])
        expect(yield* SqlJournal.schemaVersion.pipe(Effect.provide(SqliteClient.layer({ filename })))).toEqual({
          applied: 7,
          latest: 7
        })
      })
  )

  it.scoped("a saga row that no longer decodes is left out of a claim of lapsed sagas, not the end of it", () =>
    Effect.gen(function* () {
      const filename = fileFor("claim-undecodable")
      const journal = yield* open(SqlJournal.layerSqlite({ filename }))
      for (const sagaId of ["healthy", "edited"]) {
        yield* appendAll(journal, sagaId, [saga("SAGA_STARTED"), saga("SAGA_SUSPENDED")])
      }
      const db = yield* raw(filename)
      db.prepare("UPDATE effect_saga_sagas SET revision = 'abc' WHERE saga_id = ?").run("edited")
      const claimed = yield* journal.claimLapsed({ owner: "w", ttlMillis: 30_000 }, 10)
      expect(claimed.map((record) => record.sagaId)).toEqual(["healthy"])
    })
  )

  it.effect("a saga whose row was deleted, its entries kept, is shown as its entries say, marked tampered (row)", () =>
    Effect.gen(function* () {
      const filename = fileFor("row-deleted")
      const { program } = fixture(Schema.String)
      yield* Saga.run("rowless", program).pipe(Effect.provide(store(filename)))
      const db = yield* raw(filename)
      db.prepare("DELETE FROM effect_saga_sagas WHERE saga_id = ?").run("rowless")
      const status = yield* Saga.status("rowless").pipe(Effect.provide(store(filename)))
      expect(status).toMatchObject({
        sagaId: "rowless",
        status: "awaiting_approval",
        lease: null,
        tampered: { seq: 1, problem: "row", reason: expect.stringContaining("the row was deleted") }
      })
      const missing = yield* Effect.flip(Saga.status("never-ran").pipe(Effect.provide(store(filename))))
      expect(missing._tag).toBe("SagaNotFound")
    }).pipe(Effect.scoped)
  )

  it.effect(
    "a saga row that no longer decodes is a broken chain (row) everywhere it is read: listed, shown, verified, refused by a run",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("row-undecodable")
        const { log, program } = fixture(Schema.String)
        yield* Effect.forEach(["healthy", "edited"], (sagaId) => Saga.run(sagaId, program)).pipe(
          Effect.provide(store(filename))
        )
        const db = yield* raw(filename)
        db.prepare("UPDATE effect_saga_sagas SET status = 'bogus' WHERE saga_id = ?").run("edited")
        const read = yield* Effect.gen(function* () {
          return {
            listed: yield* Saga.list(),
            status: yield* Saga.status("edited"),
            verified: yield* Journal.verify("edited"),
            run: yield* Effect.flip(Saga.run("edited", program))
          }
        }).pipe(Effect.provide(store(filename)))
        const tampered = {
          seq: 1,
          problem: "row",
          reason: expect.stringContaining('status "bogus" is not a known status')
        }
        const listed = read.listed.map(({ sagaId, status, tampered }) => ({ sagaId, status, tampered }))
        expect(listed.sort((a, b) => a.sagaId.localeCompare(b.sagaId))).toEqual([
          { sagaId: "edited", status: "awaiting_approval", tampered },
          { sagaId: "healthy", status: "awaiting_approval", tampered: undefined }
        ])
        expect(read.status).toMatchObject({ sagaId: "edited", status: "awaiting_approval", tampered, steps: [] })
        expect(read.verified).toEqual({ _tag: "Broken", ...tampered })
        expect(read.run).toMatchObject({ _tag: "JournalTampered", sagaId: "edited", seq: 1, problem: "row" })
        expect(log).toEqual(["reserve A-1", "reserve A-1"])
      }).pipe(Effect.scoped)
  )

  it.effect(
    "a row whose times are not times as the store writes them does not decode: a lease ending at `garbage` would never lapse",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("row-times")
        const { log, program } = fixture(Schema.String)
        yield* Effect.forEach(["leased", "updated", "healthy"], (sagaId) => Saga.run(sagaId, program)).pipe(
          Effect.provide(store(filename))
        )
        const db = yield* raw(filename)
        db.prepare(
          "UPDATE effect_saga_sagas SET lease_owner = 'w9', lease_expires_at = 'garbage' WHERE saga_id = 'leased'"
        ).run()
        db.prepare("UPDATE effect_saga_sagas SET updated_at = '2025-01-31 12:00' WHERE saga_id = 'updated'").run()
        const read = yield* Effect.gen(function* () {
          return {
            listed: yield* Saga.list(),
            leased: yield* Saga.status("leased"),
            updated: yield* Journal.verify("updated"),
            run: yield* Effect.flip(Saga.run("leased", program))
          }
        }).pipe(Effect.provide(store(filename)))
        const leaseReason =
          'the stored row of saga leased does not decode: lease\'s expiresAt "garbage" is not a time as the store writes one (2025-01-31T12:00:00.000Z): the row was edited'
        expect(read.leased).toMatchObject({ lease: null, tampered: { seq: 1, problem: "row", reason: leaseReason } })
        expect(read.updated).toEqual({
          _tag: "Broken",
          seq: 1,
          problem: "row",
          reason:
            'the stored row of saga updated does not decode: updatedAt "2025-01-31 12:00" is not a time as the store writes one (2025-01-31T12:00:00.000Z): the row was edited'
        })
        const tampered = Object.fromEntries(read.listed.map(({ sagaId, tampered }) => [sagaId, tampered?.problem]))
        expect(tampered).toEqual({ healthy: undefined, leased: "row", updated: "row" })
        // Refused as the break it is, not waited on as a lease held by w9 until `garbage`.
        expect(read.run).toMatchObject({ _tag: "JournalTampered", sagaId: "leased", seq: 1, problem: "row" })
        expect(log).toEqual(["reserve A-1", "reserve A-1", "reserve A-1"])
      }).pipe(Effect.scoped)
  )

  it.effect("a saga awaiting approval is approved through another connection and completes when resumed", () =>
    Effect.gen(function* () {
      const filename = fileFor("approved")
      const { log, program } = fixture(Schema.String)
      const waiting = yield* Saga.run("trip", program).pipe(Effect.provide(store(filename)))
      assert(waiting._tag === "AwaitingApproval")
      yield* Effect.gen(function* () {
        expect((yield* Approval.pending).map((request) => request.requestId)).toEqual([waiting.request.requestId])
        yield* Saga.approve("trip", waiting.request.stepId, { by: "alice" })
      }).pipe(Effect.provide(store(filename)))
      const resumed = yield* Effect.gen(function* () {
        const result = yield* Saga.run("trip", program)
        return { result, verification: yield* Journal.verify("trip") }
      }).pipe(Effect.provide(store(filename)))
      expect(resumed.result).toMatchObject({ _tag: "Completed", value: "wire-4200" })
      expect(resumed.verification._tag).toBe("Intact")
      expect(log).toEqual(["reserve A-1", "wire 4200"])
    })
  )

  it.effect(
    "a decision made in the approvals table alone is not acted on without a journal key: the run is refused, the wire never runs",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("unjournaled-decision")
        const { log, program } = fixture(Schema.String)
        const waiting = yield* Saga.run("trip", program).pipe(Effect.provide(store(filename)))
        assert(waiting._tag === "AwaitingApproval")
        yield* Approval.approve(waiting.request.requestId, {
          by: "alice",
          inputDigest: waiting.request.inputDigest
        }).pipe(Effect.provide(store(filename)))
        const before = new Database(filename, { readonly: true })
        const rows = before.prepare("SELECT * FROM effect_saga_entries ORDER BY saga_id, seq").all()
        before.close()
        const refused = yield* Effect.flip(Saga.run("trip", program).pipe(Effect.provide(store(filename))))
        expect(refused).toMatchObject({ _tag: "JournalTampered", sagaId: "trip", problem: "approval" })
        expect(refused.message).toContain("Saga.approve")
        expect(log).toEqual(["reserve A-1"])
        const after = new Database(filename, { readonly: true })
        expect(after.prepare("SELECT * FROM effect_saga_entries ORDER BY saga_id, seq").all()).toEqual(rows)
        after.close()
      })
  )

  it.effect(
    "with a journal key, a decision made in the approvals table through another connection is signed and acted on",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("signed-decision")
        const { log, program } = fixture(Schema.String)
        const keyed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          effect.pipe(
            Effect.provide(store(filename)),
            Effect.withConfigProvider(
              ConfigProvider.fromMap(
                new Map([["EFFECT_SAGA_JOURNAL_KEYS", `k1:${Buffer.alloc(32, 7).toString("base64")}`]])
              )
            )
          )
        const waiting = yield* keyed(Saga.run("trip", program))
        assert(waiting._tag === "AwaitingApproval")
        yield* keyed(
          Approval.approve(waiting.request.requestId, { by: "alice", inputDigest: waiting.request.inputDigest })
        )
        expect(yield* keyed(Saga.run("trip", program))).toMatchObject({ _tag: "Completed", value: "wire-4200" })
        expect(log).toEqual(["reserve A-1", "wire 4200"])
      })
  )

  it.effect("an EXECUTED result that no longer fits the tool's schema fails the resume with JournalCorrupted", () =>
    Effect.gen(function* () {
      const filename = fileFor("schema-changed")
      const before = fixture(Schema.String)
      const waiting = yield* Saga.run("changed", before.program).pipe(Effect.provide(store(filename)))
      assert(waiting._tag === "AwaitingApproval")
      const after = fixture(Schema.Struct({ reservationId: Schema.String }))
      const outcome = yield* Effect.gen(function* () {
        const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("changed"))
        const error = yield* Effect.flip(Saga.run("changed", after.program))
        return {
          entries,
          error,
          afterwards: yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("changed"))
        }
      }).pipe(Effect.provide(store(filename)))
      const executed = outcome.entries.find((entry) => entry.phase === "EXECUTED" && entry.toolName === "reserve")!
      expect(outcome.error).toBeInstanceOf(Journal.JournalCorrupted)
      expect(outcome.error).toMatchObject({ sagaId: "changed", seq: executed.seq })
      expect(outcome.afterwards).toEqual(outcome.entries)
      expect(after.log).toEqual([])
    })
  )

  it.effect("a file that is not a database fails to open with a JournalError and is left as it was", () =>
    Effect.gen(function* () {
      const filename = fileFor("not-a-database")
      const text = "sku,quantity\nA-1,2\nB-7,1\n".repeat(40)
      fs.writeFileSync(filename, text)
      const error = yield* Effect.flip(open(SqlJournal.layerSqlite({ filename })).pipe(Effect.scoped))
      expect(error).toBeInstanceOf(Journal.JournalError)
      expect(error).toMatchObject({ operation: "open" })
      expect(error.reason).toContain("not an SQLite database")
      expect(error.reason).toContain("SQLITE_NOTADB")
      expect(fs.readFileSync(filename, "utf8")).toBe(text)
    })
  )

  it.effect("a file in a directory that does not exist fails to open with a JournalError", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "missing", "journal.db")
      const error = yield* Effect.flip(open(SqlJournal.layerSqlite({ filename })).pipe(Effect.scoped))
      expect(error).toMatchObject({ _tag: "JournalError", operation: "open" })
      expect(error.reason).toContain(filename)
      expect(fs.existsSync(path.dirname(filename))).toBe(false)
    })
  )

  it.effect(
    "a read-only file: a reader still gets every entry, an append fails with a JournalError and writes nothing",
    () =>
      Effect.gen(function* () {
        const readOnlyDir = path.join(dir, "read-only")
        fs.mkdirSync(readOnlyDir)
        // Another user's process must be able to reach the file: see runChild.
        fs.chmodSync(dir, 0o755)
        fs.chmodSync(readOnlyDir, 0o777)
        const filename = path.join(readOnlyDir, "journal.db")
        const written = yield* Effect.gen(function* () {
          const journal = yield* Journal.Journal
          return yield* appendAll(journal, "kept", [saga("SAGA_STARTED"), step("INTENT", "a")], [step("EXECUTED", "a")])
        }).pipe(Effect.provide(SqlJournal.layerSqlite({ filename })))
        fs.chmodSync(filename, 0o444)

        const child = yield* runChild("append", filename, "kept", { asAnotherUser: true })
        assert(child.ok !== undefined, JSON.stringify(child.error))
        expect(child.ok.entries).toEqual(written)
        expect(child.ok.append).toMatchObject({ _tag: "JournalError", operation: "append" })
        expect((child.ok.append as Journal.JournalError).reason).toContain("read-only")

        fs.chmodSync(filename, 0o644)
        const after = yield* Effect.gen(function* () {
          const journal = yield* Journal.Journal
          return { entries: yield* journal.read("kept"), verification: yield* Journal.verify("kept") }
        }).pipe(Effect.provide(SqlJournal.layerSqlite({ filename })))
        expect(after.entries).toEqual(written)
        expect(after.verification).toMatchObject({ _tag: "Intact", entries: 3 })
      }),
    childTimeout
  )

  it.scoped("a database locked past the busy timeout: the append fails with a JournalError, reads go on", () =>
    Effect.gen(function* () {
      const filename = fileFor("locked")
      const journal = yield* open(SqlJournal.layerSqlite({ filename, busyTimeout: "50 millis" }))
      const written = yield* appendAll(journal, "locked", [saga("SAGA_STARTED"), step("INTENT", "a")])
      const position = { revision: 2, digest: written[1]!.hash }
      const holder = yield* raw(filename)
      holder.exec("BEGIN IMMEDIATE")

      const error = yield* Effect.flip(journal.append("locked", position, [step("EXECUTED", "a")]))
      expect(error).toBeInstanceOf(Journal.JournalError)
      expect(error).toMatchObject({ operation: "append" })
      expect(error.message).toContain("locked")
      expect(error.message).toContain("SQLITE_BUSY")
      expect(yield* journal.read("locked")).toEqual(written)

      holder.exec("ROLLBACK")
      yield* journal.append("locked", position, [step("EXECUTED", "a")])
      const entries = yield* journal.read("locked")
      expect(entries.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "INTENT", "EXECUTED"])
      expect(Journal.verifyEntries(entries)._tag).toBe("Intact")
    })
  )
})

const childTimeout = 60_000

const root = fileURLToPath(new URL("..", import.meta.url))
const childScript = fileURLToPath(new URL("./fixtures/sqlite-child.ts", import.meta.url))

const fileFor = (name: string) => path.join(dir, `${name}.db`)

interface ChildOutput {
  readonly ok?: {
    readonly entries: ReadonlyArray<Journal.Entry>
    readonly record: Journal.SagaRecord | null
    readonly append?: unknown
  }
  readonly error?: unknown
}

/**
 * Runs test/fixtures/sqlite-child.ts in a process of its own. `asAnotherUser` runs it as `nobody`
 * when the tests run as root, for whom no file is read-only.
 */
const runChild = (
  command: "read" | "append",
  filename: string,
  sagaId: string,
  options: { readonly asAnotherUser?: boolean } = {}
) =>
  Effect.async<ChildOutput, Error>((resume) => {
    const user = options.asAnotherUser === true && process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}
    const child = execFile(
      process.execPath,
      ["--import", "tsx", childScript, command, filename, sagaId],
      { cwd: root, encoding: "utf8", ...user },
      (error, stdout, stderr) =>
        resume(
          error === null
            ? Effect.try({ try: () => JSON.parse(stdout) as ChildOutput, catch: () => new Error(stdout) })
            : Effect.fail(new Error(`${error.message}\n${stderr}`))
        )
    )
    return Effect.sync(() => child.kill())
  })

/** Builds a journal layer in the test's scope: one connection, open until the test ends. */
const open = <E>(layer: Layer.Layer<Journal.Journal, E>) => Effect.map(Layer.build(layer), Context.get(Journal.Journal))

/** A raw better-sqlite3 connection to the file, as someone editing it behind the library's back. */
const raw = (filename: string) =>
  Effect.acquireRelease(
    Effect.sync(() => new Database(filename)),
    (db) => Effect.sync(() => db.close())
  )

const store = (filename: string) => Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))

const fixture = <A>(reservation: Schema.Schema<A, any>) => {
  const log: Array<string> = []
  const reserve = Compensable.make({
    name: "reserve",
    input: Schema.Struct({ sku: Schema.String }),
    success: reservation,
    execute: ({ sku }) =>
      Effect.sync(() => {
        log.push(`reserve ${sku}`)
        return `res-${sku}` as A
      }),
    compensate: () => Effect.void
  })
  const sendWire = Compensable.make({
    name: "sendWire",
    input: Schema.Struct({ amount: Schema.Int }),
    success: Schema.String,
    reversibility: "irreversible",
    execute: ({ amount }) =>
      Effect.sync(() => {
        log.push(`wire ${amount}`)
        return `wire-${amount}`
      })
  })
  return { log, program: Effect.zipRight(reserve({ sku: "A-1" }), sendWire({ amount: 4200 })) }
}
