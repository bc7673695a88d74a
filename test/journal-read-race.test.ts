/**
 * A saga read while another worker appends to it is read as one state of the saga: `Journal.verify`,
 * `Journal.inspect` and the loads never take an append that commits between the read of the
 * entries and the read of the row for a truncation. The append is made to land exactly there: the
 * journal's `read` is wrapped so that another append commits right after every read of entries.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Journal, SqlJournal } from "../src/index.js"
import { appendAll, saga, step } from "./fixtures/drafts.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-read-race-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** The journal, with one more entry appended to the saga right after each read of its entries. */
const appendingAfterEachRead = (journal: Journal.Journal["Type"]): Journal.Journal["Type"] => ({
  ...journal,
  read: (sagaId) =>
    Effect.tap(journal.read(sagaId), () => Effect.orDie(appendAll(journal, sagaId, [step("INTENT", "busy")])))
})

const stores = [
  ["the memory journal", Journal.layerMemory],
  ["SQLite", SqlJournal.layerSqlite({ filename: path.join(dir, "race.db") })]
] as const

describe.each(stores)("a saga read while it is appended to, on %s", (_, layer) => {
  it.scoped("Journal.verify and Journal.inspect answer Intact, at the row read first", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      const sagaId = `busy-${Math.random().toString(36).slice(2)}`
      yield* appendAll(journal, sagaId, [saga("SAGA_STARTED"), step("INTENT", "a")], [step("EXECUTED", "a")])
      const racing = Layer.succeed(Journal.Journal, appendingAfterEachRead(journal))
      for (let round = 0; round < 5; round++) {
        const verification = yield* Effect.provide(Journal.verify(sagaId), racing)
        expect(verification._tag, JSON.stringify(verification)).toBe("Intact")
        const inspected = yield* Effect.provide(Journal.inspect(sagaId), racing)
        expect(inspected.verification._tag).toBe("Intact")
        assert(Option.isSome(inspected.record))
        // The entries shown are exactly those the row shown ends at.
        expect(inspected.entries.length).toBe(inspected.record.value.revision)
        expect(inspected.entries.at(-1)?.hash).toBe(inspected.record.value.digest)
      }
      // The appends did land: the saga moved on while it was read.
      const row = yield* journal.get(sagaId)
      assert(Option.isSome(row))
      expect(row.value.revision).toBeGreaterThan(10)
    }).pipe(Effect.provide(layer))
  )

  it.scoped("entries deleted from the end are still a truncation, however the saga moves", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      const sagaId = `cut-${Math.random().toString(36).slice(2)}`
      yield* appendAll(journal, sagaId, [saga("SAGA_STARTED"), step("INTENT", "a"), step("EXECUTED", "a")])
      const cut: Journal.Journal["Type"] = {
        ...journal,
        // As if seq 3 had been deleted: every read of the entries misses it.
        read: (id) => Effect.map(journal.read(id), (entries) => entries.filter((entry) => entry.seq !== 3))
      }
      const verification = yield* Effect.provide(Journal.verify(sagaId), Layer.succeed(Journal.Journal, cut))
      expect(verification).toMatchObject({ _tag: "Broken", seq: 3, problem: "truncated" })
    }).pipe(Effect.provide(layer))
  )
})
