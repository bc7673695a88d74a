/**
 * The journal and approval conformance suites on PostgreSQL (see fixtures/postgres.ts for when
 * they run), and opening a new database from several hosts at once.
 */
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Journal } from "../src/index.js"
import * as Postgres from "../src/Postgres.js"
import { suite as approvalSuite } from "./ApprovalSuite.js"
import { describePg, freshDatabase, reachable } from "./fixtures/postgres.js"
import { suite as journalSuite } from "./JournalSuite.js"

const url = reachable ? await freshDatabase("effect_saga_suites") : ""

describePg("PostgreSQL", () => {
  journalSuite("Postgres.layerJournal", Postgres.layerJournal({ url }))
  approvalSuite("Postgres.layer", Postgres.layer({ url }))

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
})
