/**
 * PostgreSQL: a saga's load (its entries and its row) is one statement (src/internal/sql/pgLoad.ts),
 * which `inspect` finds through the store's own `read`; a journal whose `read` is wrapped is read as
 * wrapped, with the two reads of any store. Observed through the statements `pg.Client#query` sends.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import { Journal, Saga, SqlJournal } from "../src/index.js"
import { inspect } from "../src/internal/journal/verified.js"
import * as PgLoad from "../src/internal/sql/pgLoad.js"
import * as Postgres from "../src/Postgres.js"
import { appendAll, saga, seedStaggered, step } from "./fixtures/drafts.js"
import { countingStatements, sentStatements, threeSteps } from "./fixtures/pg-statements.js"
import { freshDatabase } from "./fixtures/postgres.js"

const url = await freshDatabase("effect_saga_load")

describe("PostgreSQL: a saga's load in one statement", () => {
  it.live("a run of a saga that exists loads it once, in the statement for one saga, planned each time", () =>
    Effect.gen(function* () {
      const [result, sent] = yield* sentStatements(
        Effect.zipRight(Saga.run("existing-saga", threeSteps), Saga.run("existing-saga", threeSteps))
      ).pipe(Effect.provide(Saga.layer.pipe(Layer.provide(Postgres.layer({ url })))), Effect.scoped)
      expect(result._tag).toBe("Completed")
      // A new saga is not read (test/pg-unread-start.test.ts): the load is the second run's, after
      // its first append found the saga there. Sent unnamed (its text, not a prepared statement's
      // name): planned for the tables' current size. One saga alone: two lookups by key.
      const loads = sent.filter((text) => text === PgLoad.oneSaga.text || text === PgLoad.statement.text)
      expect(loads).toEqual([PgLoad.oneSaga.text])
    })
  )

  it.live(
    "what the load reads together is what the entries' read and the row's read say apart, for intact and broken sagas alike",
    () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const sql = yield* SqlClient.SqlClient
        /** The same store with `read` replaced: `inspect` no longer finds the one-statement load. */
        const wrapped = { ...journal, read: (sagaId: string) => journal.read(sagaId) }
        const drafts = [[saga("SAGA_STARTED"), step("INTENT", "a")], [step("EXECUTED", "a")], [step("INTENT", "b")]]
        for (const sagaId of ["intact", "undecodable", "no-row", "truncated", "no-entries"]) {
          yield* appendAll(journal, sagaId, ...drafts)
        }
        yield* sql.unsafe(`UPDATE effect_saga_entries SET phase = 'HACKED' WHERE saga_id = 'undecodable' AND seq = 2`)
        yield* sql.unsafe(`DELETE FROM effect_saga_sagas WHERE saga_id = 'no-row'`)
        yield* sql.unsafe(`DELETE FROM effect_saga_entries WHERE saga_id = 'truncated' AND seq = 4`)
        yield* sql.unsafe(`DELETE FROM effect_saga_entries WHERE saga_id = 'no-entries'`)

        const expected = {
          absent: "Intact",
          intact: "Intact",
          undecodable: "undecodable",
          "no-row": "row",
          truncated: "truncated",
          "no-entries": "truncated"
        }
        for (const [sagaId, verdict] of Object.entries(expected)) {
          const [together, sentTogether] = yield* countingStatements(inspect(journal, sagaId, undefined))
          const [apart, sentApart] = yield* countingStatements(inspect(wrapped, sagaId, undefined))
          expect(together).toEqual(apart)
          const { verification } = together
          expect(verification._tag === "Intact" ? "Intact" : verification.problem).toBe(verdict)
          // One statement a read instead of two; a read that sees a truncation is made again on either
          // path, as the row, the entries and the row again (an append may have committed in between),
          // and one that finds entries and no row is made again as it was (a prune may have).
          const again = verdict === "truncated" ? [3, 3] : verdict === "row" ? [1, 2] : [0, 0]
          expect([sentTogether, sentApart]).toEqual([1 + again[0]!, 2 + again[1]!])
          // Journal.verify reads as the loads do.
          const [verified, sentVerify] = yield* countingStatements(Journal.verify(sagaId).pipe(Effect.either))
          if (sagaId !== "absent") expect(verified).toEqual(Either.right(verification))
          expect(sentVerify).toBe(sentTogether)
        }
        const intact = yield* inspect(journal, "intact", undefined)
        expect(intact.entries.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "INTENT", "EXECUTED", "INTENT"])
        expect(Option.getOrThrow(intact.record)).toMatchObject({ sagaId: "intact", revision: 4, status: "running" })
      }).pipe(Effect.provide(store))
  )

  it.live(
    "a load of 100 sagas, and of one, looks each one up by key, also on tables autovacuum has not analyzed yet",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // 3,000 sagas of ten entries each, written behind the journal's back (nothing needs to verify).
        yield* sql.unsafe(`INSERT INTO effect_saga_sagas (saga_id, status, revision, digest, created_at, updated_at)
SELECT 'plan-' || n, 'completed', 10, 'd', 't', 't' FROM generate_series(1, 3000) AS n`)
        yield* sql.unsafe(`INSERT INTO effect_saga_entries (saga_id, seq, phase, at, hash)
SELECT 'plan-' || n, seq, 'INTENT', 't', 'h' FROM generate_series(1, 3000) AS n, generate_series(1, 10) AS seq`)
        const ids = Array.from({ length: 100 }, (_, n) => `plan-${n * 30 + 1}`)
        for (const [text, values] of [
          [PgLoad.statement.text, [ids]],
          [PgLoad.oneSaga.text, [ids[1]]]
        ] as const) {
          const [plan] = (yield* sql.unsafe(`EXPLAIN (FORMAT JSON) ${text}`, values)) as ReadonlyArray<{
            readonly "QUERY PLAN": unknown
          }>
          const scans = JSON.stringify(plan!["QUERY PLAN"]).match(
            /"Node Type":"[^"]*Scan"[^}]*?"Relation Name":"[^"]+"/g
          )
          const tables = (scans ?? []).map((scan) => [
            /"Node Type":"([^"]*)"/.exec(scan)![1],
            /"Relation Name":"([^"]+)"/.exec(scan)![1]
          ])
          expect(tables.map(([, table]) => table).sort()).toEqual(["effect_saga_entries", "effect_saga_sagas"])
          expect(tables.every(([node]) => node !== "Seq Scan")).toBe(true)
        }
        const loaded = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("plan-31"))
        expect(loaded.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
      }).pipe(Effect.provide(store))
  )

  it.live("loads of sagas arriving together share one statement, each with its own saga's entries and row", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      const ids = Array.from({ length: 30 }, (_, n) => `together-${n}`)
      yield* seedStaggered(journal, ids)
      const [loaded, sent] = yield* countingStatements(
        Effect.all(
          [...ids, "together-absent"].map((sagaId) => inspect(journal, sagaId, undefined)),
          { concurrency: "unbounded" }
        )
      )
      expect(sent).toBe(1)
      for (const [n, sagaId] of ids.entries()) {
        expect(loaded[n]!.verification._tag).toBe("Intact")
        expect(loaded[n]!.entries.map((entry) => [entry.sagaId, entry.seq])).toEqual(
          Array.from({ length: 1 + (n % 3) }, (_, i) => [sagaId, i + 1])
        )
        expect(Option.getOrThrow(loaded[n]!.record)).toMatchObject({ sagaId, revision: 1 + (n % 3) })
      }
      expect(loaded[ids.length]).toMatchObject({ entries: [], record: Option.none() })
    }).pipe(Effect.provide(store))
  )

  it.live("inside a caller's transaction the load runs on its connection: it sees what the transaction wrote", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      const sql = yield* SqlClient.SqlClient
      const inside = yield* sql.withTransaction(
        Effect.zipRight(
          journal.append("in-transaction", Journal.empty, [saga("SAGA_STARTED")]),
          inspect(journal, "in-transaction", undefined)
        )
      )
      expect(inside.verification._tag).toBe("Intact")
      expect(inside.entries.map((entry) => entry.phase)).toEqual(["SAGA_STARTED"])
      expect(Option.getOrThrow(inside.record)).toMatchObject({ revision: 1 })
    }).pipe(Effect.provide(store))
  )
})

const store = SqlJournal.layer.pipe(Layer.provideMerge(Postgres.layerClient({ url })))
