/**
 * The journal and approval conformance suites on PostgreSQL (see fixtures/postgres.ts for when
 * they run), and opening a new database from several hosts at once.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Journal, SqlJournal, SqlStore } from "../src/index.js"
import { openStatusSagas } from "../src/internal/sql/migrations.js"
import { suite as approvalSuite } from "./ApprovalSuite.js"
import { describePg, freshDatabase, reachable } from "./fixtures/postgres.js"
import { suite as journalSuite } from "./JournalSuite.js"

const url = reachable ? await freshDatabase("effect_saga_suites") : ""

describePg("PostgreSQL", () => {
  journalSuite("SqlJournal.layerPg", SqlJournal.layerPg({ url }))
  approvalSuite("SqlStore.layerPg", SqlStore.layerPg({ url }))

  it.live("five pools opening a new database at once take turns on the migrations: all of them work", () =>
    Effect.gen(function* () {
      const fresh = yield* Effect.promise(() => freshDatabase("effect_saga_migrate"))
      const open = (layer: typeof SqlStore.layerPg | typeof SqlJournal.layerPg) =>
        Effect.flatMap(Journal.Journal, (journal) => journal.list()).pipe(Effect.provide(layer({ url: fresh })))
      const lists = yield* Effect.all(
        [SqlJournal.layerPg, SqlStore.layerPg, SqlJournal.layerPg, SqlStore.layerPg, SqlJournal.layerPg].map(open),
        { concurrency: "unbounded" }
      )
      expect(lists).toEqual([[], [], [], [], []])
    })
  )

  it.live("countOpen on 10,000 finished and 100 open sagas is answered from the open-status index", () =>
    Effect.gen(function* () {
      const fresh = yield* Effect.promise(() => freshDatabase("effect_saga_open_counts"))
      const store = SqlJournal.layer.pipe(Layer.provideMerge(SqlJournal.layerPgClient({ url: fresh })))
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
