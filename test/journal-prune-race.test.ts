/**
 * A saga pruned while it is read is an unknown saga, never a tampered one. A prune deletes a saga's
 * entries and its row at once, but a read that is two statements (SQLite, the memory journal) can
 * find the entries before it and no row after it. The prune is made to land exactly there: the
 * journal's `read` is wrapped so that the saga is pruned right after a chosen read of its entries
 * (or right before one: a saga pruned since `verify --all` listed it).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Exit, Layer, Option } from "effect"
import { Approval, Journal, Saga, SqlJournal } from "../src/index.js"
import * as Verify from "../src/internal/cli/commands/verify.js"
import { appendAll, saga, step } from "./fixtures/drafts.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-prune-race-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** A cutoff after every saga's last update: `prune` takes every finished saga without a lease. */
const later = "2999-01-01T00:00:00.000Z"

type Store = Journal.Journal["Type"]

/**
 * The journal, with every finished saga pruned around the `at`-th read of `sagaId`'s entries
 * (counted from 1 once `arm` is called): right after it, or `before` it. `between` runs right after
 * the reads that come before that one.
 */
const pruningAt = (
  journal: Store,
  sagaId: string,
  at: number,
  options: { readonly before?: boolean; readonly between?: Effect.Effect<void> } = {}
) => {
  let reads: number | undefined
  const prune = Effect.orDie(journal.prune(later))
  const wrapped: Store = {
    ...journal,
    read: (id) =>
      Effect.suspend(() => {
        if (id !== sagaId || reads === undefined) return journal.read(id)
        const nth = ++reads
        if (nth < at) return Effect.tap(journal.read(id), () => options.between ?? Effect.void)
        if (nth > at) return journal.read(id)
        return options.before === true ? Effect.zipRight(prune, journal.read(id)) : Effect.tap(journal.read(id), prune)
      })
  }
  return { wrapped, arm: Effect.sync(() => (reads = 0)) }
}

let files = 0
const stores = [
  ["the memory journal", () => Journal.layerMemory],
  ["SQLite", () => SqlJournal.layerSqlite({ filename: path.join(dir, `${++files}.db`) })]
] as const

const finished = (journal: Store, sagaId: string) =>
  appendAll(
    journal,
    sagaId,
    [saga("SAGA_STARTED"), step("INTENT", "a"), step("EXECUTED", "a")],
    [saga("SAGA_COMPLETED")]
  )

const withSaga = (journal: Store) => Saga.layer.pipe(Layer.provideMerge(Layer.succeed(Journal.Journal, journal)))

describe.each(stores)("a saga pruned while it is read, on %s", (_, layer) => {
  it.scoped("Journal.verify, inspect and exportNdjson answer an unknown saga, not a deleted row", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      yield* finished(journal, "done")
      const { arm, wrapped } = pruningAt(journal, "done", 1)
      const onWrapped = Effect.provideService(Journal.Journal, wrapped)
      yield* arm
      const inspected = yield* onWrapped(Journal.inspect("done"))
      expect(inspected).toEqual({ entries: [], record: Option.none(), verification: expect.anything() })
      expect(inspected.verification._tag).toBe("Intact")
      // The prune did land, between the read of the entries and that of the row.
      expect(Option.isNone(yield* journal.get("done"))).toBe(true)
      yield* finished(journal, "done-too")
      const verifying = pruningAt(journal, "done-too", 1)
      yield* verifying.arm
      const verified = yield* Effect.exit(
        Effect.provideService(Journal.verify("done-too"), Journal.Journal, verifying.wrapped)
      )
      expect(verified).toStrictEqual(Exit.fail(new Journal.SagaNotFound({ sagaId: "done-too" })))
      yield* finished(journal, "exported")
      const exporting = pruningAt(journal, "exported", 1)
      yield* exporting.arm
      const exported = yield* Effect.flip(
        Effect.provideService(Journal.exportNdjson("exported"), Journal.Journal, exporting.wrapped)
      )
      expect(exported).toEqual(new Journal.SagaNotFound({ sagaId: "exported" }))
    }).pipe(Effect.provide(layer()))
  )

  it.scoped("a read made again because an append committed under it, then pruned under it, is an unknown saga", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      yield* appendAll(journal, "ending", [saga("SAGA_STARTED")])
      // The first read of the entries is overtaken by the saga's last append (the row is ahead):
      // the read is made again, and the prune lands between its entries and its second row.
      const finish = Effect.orDie(appendAll(journal, "ending", [saga("SAGA_COMPLETED")]))
      const { arm, wrapped } = pruningAt(journal, "ending", 2, { between: Effect.asVoid(finish) })
      yield* arm
      const verified = yield* Effect.exit(Effect.provideService(Journal.verify("ending"), Journal.Journal, wrapped))
      expect(verified).toStrictEqual(Exit.fail(new Journal.SagaNotFound({ sagaId: "ending" })))
    }).pipe(Effect.provide(layer()))
  )

  it.scoped("Saga.status is SagaNotFound, and Saga.list and listPage pass the saga over", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      yield* appendAll(journal, "open", [saga("SAGA_STARTED")])
      yield* finished(journal, "listed")
      const listing = pruningAt(journal, "listed", 1)
      const listed = yield* Effect.zipRight(listing.arm, Saga.list()).pipe(Effect.provide(withSaga(listing.wrapped)))
      expect(listed.map((summary) => [summary.sagaId, summary.tampered])).toEqual([["open", undefined]])
      yield* finished(journal, "paged")
      const paging = pruningAt(journal, "paged", 1)
      const page = yield* Effect.zipRight(paging.arm, Saga.listPage({ order: "updatedAt", offset: 0, limit: 10 })).pipe(
        Effect.provide(withSaga(paging.wrapped))
      )
      expect(page.sagas.map((summary) => [summary.sagaId, summary.tampered])).toEqual([["open", undefined]])
      yield* finished(journal, "shown")
      const showing = pruningAt(journal, "shown", 1)
      const shown = yield* Effect.flip(
        Effect.zipRight(showing.arm, Saga.status("shown")).pipe(Effect.provide(withSaga(showing.wrapped)))
      )
      expect(shown).toEqual(new Journal.SagaNotFound({ sagaId: "shown" }))
    }).pipe(Effect.provide(Layer.merge(layer(), Approval.layerMemory)))
  )

  it.scoped("effect-saga verify --all passes over a saga pruned since it was listed", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      yield* appendAll(journal, "open", [saga("SAGA_STARTED")])
      yield* finished(journal, "gone")
      // `Saga.listPage` reads the saga's entries once to list it; the prune lands before the verify's own read.
      const { arm, wrapped } = pruningAt(journal, "gone", 2, { before: true })
      const verdicts = yield* Effect.zipRight(arm, Verify.everyVerdict).pipe(Effect.provide(withSaga(wrapped)))
      expect(verdicts.map((verdict) => [verdict.sagaId, verdict._tag])).toEqual([["open", "Intact"]])
      expect(Option.isNone(yield* journal.get("gone"))).toBe(true)
    }).pipe(Effect.provide(Layer.merge(layer(), Approval.layerMemory)))
  )
})

describe("a row deleted behind the library's back, on SQLite", () => {
  const filename = path.join(dir, "tampered.db")
  it.scoped("is still a break (row) when the read is made again: nothing pruned the saga", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      yield* finished(journal, "rowless")
      // Another connection to the file deletes the row, its entries kept, as an intruder would.
      const other = yield* Effect.acquireRelease(
        Effect.sync(() => new Database(filename)),
        (db) => Effect.sync(() => db.close())
      )
      other.prepare("DELETE FROM effect_saga_sagas WHERE saga_id = ?").run("rowless")
      const reads: Array<string> = []
      const counted: Store = {
        ...journal,
        read: (id) =>
          Effect.zipRight(
            Effect.sync(() => reads.push(id)),
            journal.read(id)
          )
      }
      const verified = yield* Effect.provideService(Journal.verify("rowless"), Journal.Journal, counted)
      expect(verified).toMatchObject({ _tag: "Broken", seq: 1, problem: "row" })
      expect(verified).toHaveProperty("reason", expect.stringContaining("the row was deleted"))
      // Read twice: the second read found what the first did.
      expect(reads).toEqual(["rowless", "rowless"])
    }).pipe(Effect.provide(SqlJournal.layerSqlite({ filename })))
  )
})
