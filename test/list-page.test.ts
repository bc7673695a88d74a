/**
 * `Saga.listPage` (what `GET /api/sagas` and the console list): the store filters, orders, slices
 * and counts, on every store, with the answer `Saga.list` filtered and sorted in memory would give;
 * and a page reads and verifies only its own sagas: one tampered with outside the page costs
 * nothing and changes nothing on it.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Layer, Schema, TestClock, TestContext } from "effect"
import { Approval, Compensable, Journal, Outcome, Saga, SqlStore } from "../src/index.js"
import * as Reading from "../src/internal/http/reading.js"
import * as Postgres from "../src/Postgres.js"
import { sendWireTransfer } from "./fixtures/cli-tools.js"
import { journalCountingReads } from "./fixtures/counting-reads.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-list-page-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const fileOf = () => path.join(dir, `${Math.random()}.db`)

const pgUrl = process.env.EFFECT_SAGA_PG_URL
// PostgreSQL only when one is given (the tests of it skip otherwise).
const pg = pgUrl === undefined ? undefined : await import("./fixtures/postgres.js")
const pgDatabase = pg === undefined ? "" : await pg.freshDatabase("effect_saga_list_page")
/** A PostgreSQL database whose own collation is ICU's en-US, not code-point order, or why there is none. */
const icuDatabase: { readonly url: string } | { readonly skip: string } =
  pg === undefined
    ? { skip: "no PostgreSQL" }
    : await pg
        .freshDatabase("effect_saga_list_page_icu", "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'")
        .then(
          (url) => ({ url }),
          (error: unknown) => ({
            skip: `this PostgreSQL cannot create a database with ICU's en-US collation: ${error}`
          })
        )
const stores: ReadonlyArray<readonly [string, () => Layer.Layer<Journal.Journal | Approval.Approval, unknown>]> = [
  ["Journal.layerMemory", () => Layer.merge(Journal.layerMemory, Approval.layerMemory)],
  ["SqlStore.layerSqlite", () => SqlStore.layerSqlite({ filename: fileOf() })],
  ...(pgUrl === undefined ? [] : [["Postgres.layer", () => Postgres.layer({ url: pgDatabase })] as const])
]

const step = (outcome: "ok" | "failed" | "unknown") =>
  Compensable.make({
    name: `step-${outcome}`,
    input: Schema.String,
    success: Schema.String,
    execute: (id) =>
      outcome === "ok"
        ? Effect.succeed(id)
        : Effect.fail(outcome === "failed" ? Outcome.failed("refused") : Outcome.unknown("no answer")),
    compensate: () => Effect.void
  })

const programs: Record<string, Effect.Effect<unknown, unknown, Saga.CurrentSaga>> = {
  completed: step("ok")("x"),
  compensated: Effect.zipRight(step("ok")("x"), step("failed")("y")),
  needsAttention: step("unknown")("x"),
  awaiting: Effect.zipRight(step("ok")("x"), sendWireTransfer({ amount: 1, to: "acme" }))
}

/** Seven sagas, one a second, of every kind a person looks at first and some they do not. */
const seed = Effect.forEach(
  [
    ["c-1", programs.completed],
    ["a-1", programs.awaiting],
    ["c-2", programs.completed],
    ["x-1", programs.compensated],
    ["n-1", programs.needsAttention],
    ["a-2", programs.awaiting],
    ["c-3", programs.completed]
  ] as const,
  ([sagaId, program]) => Effect.zipRight(TestClock.adjust("1 second"), Saga.run(sagaId, program)),
  { discard: true }
)

const urgency = ["compensation_failed", "needs_attention", "awaiting_approval"]
const rank = (status: string) => (urgency.includes(status) ? urgency.indexOf(status) : urgency.length)

/** What the page must be: `Saga.list` (every saga verified), filtered, sorted and sliced here. */
const inMemory = (query: Saga.ListPageQuery) =>
  Effect.map(Saga.list({ status: query.status, updatedBefore: query.updatedBefore }), (all) => {
    const found = all.filter((saga) => saga.sagaId.includes(query.search ?? ""))
    // `Saga.list` gives them least recently updated first.
    const selected =
      query.order === "updatedAt"
        ? found
        : found.sort(
            (a, b) =>
              rank(a.status) - rank(b.status) ||
              (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0) ||
              (a.sagaId < b.sagaId ? -1 : 1)
          )
    return { sagas: selected.slice(query.offset, query.offset + query.limit), total: selected.length }
  })

const queries: ReadonlyArray<Saga.ListPageQuery> = [
  { offset: 0, limit: 50 },
  { offset: 2, limit: 3 },
  { offset: 0, limit: 2, status: ["completed", "compensated"] },
  { offset: 0, limit: 50, search: "c-" },
  { offset: 1, limit: 50, status: ["completed"], updatedBefore: "1970-01-01T00:00:06Z" },
  { offset: 0, limit: 50, status: [] },
  { offset: 10, limit: 5 },
  { offset: 1, limit: 3, order: "updatedAt" },
  { offset: 0, limit: 50, order: "updatedAt", status: ["completed", "awaiting_approval"] }
]

/** Sagas of one time, run in no order; in code-point order ("B" before "a", U+E000 before U+1F600, as JavaScript's `<` does not). */
const tiesAsRun = ["same-\u{1F600}", "same-a", "same-\uE000", "same-zx", "same-B", "same-\uFF61"]
const tiesByCodePoints = ["same-B", "same-a", "same-zx", "same-\uE000", "same-\uFF61", "same-\u{1F600}"]
/** The ids of those of `sagas` that are one of them (a PostgreSQL database holds every test's sagas). */
const tiesIn = (sagas: ReadonlyArray<{ readonly sagaId: string }>) =>
  sagas.map((saga) => saga.sagaId).filter((sagaId) => sagaId.startsWith("same-"))

/** Searches for text no saga id holds: a NUL (which PostgreSQL refuses in text), an escape, a lone surrogate. */
const unmatchable = ["\u0000", "c-\u0000", "\u001b[31m", "\u007f", "\u0085", "\ud800"]
const emptyPage: Saga.ListPage = { sagas: [], total: 0 }

for (const [name, store] of stores) {
  describe(`Saga.listPage: ${name}`, () => {
    it.effect("filters, orders (most urgent, then most recent, then id), slices and counts as in memory", () =>
      Effect.gen(function* () {
        yield* seed
        const first = yield* Saga.listPage({ offset: 0, limit: 50 })
        expect(first.sagas.map((saga) => saga.sagaId)).toEqual(["n-1", "a-2", "a-1", "c-3", "x-1", "c-2", "c-1"])
        expect(first.total).toBe(7)
        for (const query of queries) expect(yield* Saga.listPage(query)).toEqual(yield* inMemory(query))
      }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))
    )

    it.effect("ties ordered by saga id in code-point order (a character past U+FFFF after U+FF61)", () =>
      Effect.gen(function* () {
        // The clock stands still: every row has the same status and time, the id decides.
        const ids = ["tie-\u{1F600}", "tie-\uFF61", "tie-zx", "tie-a"]
        yield* Effect.forEach(ids, (sagaId) => Saga.run(sagaId, programs.completed), { discard: true })
        const page = yield* Saga.listPage({ offset: 0, limit: 50, search: "tie-" })
        expect(page.sagas.map((saga) => saga.sagaId)).toEqual(["tie-a", "tie-zx", "tie-\uFF61", "tie-\u{1F600}"])
      }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))
    )

    it.effect(
      "order updatedAt: sagas of one time ordered by saga id in code-point order, as Saga.list orders them",
      () =>
        Effect.gen(function* () {
          // The clock stands still: every saga is created and updated at one time, the id decides.
          yield* Effect.forEach(tiesAsRun, (sagaId) => Saga.run(sagaId, programs.completed), { discard: true })
          const page = yield* Saga.listPage({ offset: 0, limit: 50, search: "same-", order: "updatedAt" })
          expect(page.sagas.map((saga) => saga.sagaId)).toEqual(tiesByCodePoints)
          expect(tiesIn(yield* Saga.list())).toEqual(tiesByCodePoints)
        }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))
    )

    it.effect("an offset or limit that names no page is a JournalError saying which, on every store", () =>
      Effect.gen(function* () {
        yield* seed
        const refused = [
          [{ offset: -1, limit: 5 }, "offset must be a whole number of 0 or more, not -1"],
          [{ offset: Number.NaN, limit: 5 }, "offset must be a whole number of 0 or more, not NaN"],
          [{ offset: 0, limit: 1.5 }, "limit must be a whole number of 1 or more, not 1.5"],
          [{ offset: 0, limit: 0 }, "limit must be a whole number of 1 or more, not 0"],
          [{ offset: 0, limit: Number.POSITIVE_INFINITY }, "limit must be a whole number of 1 or more, not Infinity"],
          [{ offset: 0, limit: "10" }, 'limit must be a whole number of 1 or more, not "10"']
        ] as const
        for (const [query, reason] of refused) {
          const error = yield* Effect.flip(Saga.listPage(query as { offset: number; limit: number }))
          expect(error).toBeInstanceOf(Journal.JournalError)
          expect(error).toMatchObject({ operation: "list", reason })
        }
      }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))
    )

    it.effect("a search holding a control character or a lone surrogate matches nothing (no saga id holds one)", () =>
      Effect.gen(function* () {
        yield* seed
        for (const search of unmatchable) {
          expect(yield* Saga.listPage({ offset: 0, limit: 50, search }), JSON.stringify(search)).toEqual(emptyPage)
        }
      }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))
    )
  })
}

/** The sagas of one time (the clock stands still), run in no order, as `Saga.list` gives them. */
const tiesListed = Effect.zipRight(
  Effect.forEach(tiesAsRun, (sagaId) => Saga.run(sagaId, programs.completed), { discard: true }),
  Effect.map(Saga.list(), tiesIn)
)

describe("sagas of one time are listed alike on every store", () => {
  it.effect("Saga.list: the same order in memory, on SQLite and on PostgreSQL (code points)", () =>
    Effect.gen(function* () {
      const listed = yield* Effect.forEach(stores, ([, store]) =>
        Effect.provide(tiesListed, Saga.layer.pipe(Layer.provideMerge(store())))
      )
      for (const order of listed) expect(order).toEqual(tiesByCodePoints)
    })
  )
})

describe("PostgreSQL with a database collation that is not code-point order (ICU en-US)", () => {
  it("ties are ordered by saga id in code-point order all the same: listPage in either order, Saga.list", async (ctx) => {
    if ("skip" in icuDatabase) return ctx.skip(icuDatabase.skip)
    // The database's own order is not code points: "a" before "B".
    expect(await pg!.queryOn(icuDatabase.url, "SELECT 'same-a' < 'same-B' AS below")).toEqual([{ below: true }])
    const program = Effect.gen(function* () {
      expect(yield* tiesListed).toEqual(tiesByCodePoints)
      for (const order of ["updatedAt", "urgency"] as const) {
        const page = yield* Saga.listPage({ offset: 0, limit: 50, search: "same-", order })
        expect(
          page.sagas.map((saga) => saga.sagaId),
          order
        ).toEqual(tiesByCodePoints)
      }
    })
    await Effect.runPromise(
      program.pipe(
        Effect.provide(Saga.layer.pipe(Layer.provideMerge(Postgres.layer({ url: icuDatabase.url })))),
        Effect.provide(TestContext.TestContext)
      )
    )
  })
})

/** Runs an effect with the `Saga` layer on the SQLite file `file`, closing it after: a process that opens it. */
const onSqliteFile =
  (file: string) =>
  <A, E>(effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>) =>
    Effect.scoped(Effect.provide(effect, Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename: file })))))

/** A memory journal that counts the sagas whose entries are read. */
const counting = (reads: Set<string>) => journalCountingReads((sagaId) => reads.add(sagaId))

describe("a page reads and verifies only its own sagas", () => {
  it.effect("listing two of seven reads the journals of those two only", () => {
    const reads = new Set<string>()
    return Effect.gen(function* () {
      yield* seed
      reads.clear()
      const page = yield* Saga.listPage({ offset: 0, limit: 2 })
      expect(page.sagas.map((saga) => saga.sagaId)).toEqual(["n-1", "a-2"])
      expect(page.total).toBe(7)
      expect([...reads].sort()).toEqual(["a-2", "n-1"])
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(counting(reads), Approval.layerMemory)))))
  })

  it.effect("GET /api/sagas reads the journals of its page's sagas only, and counts the rest", () => {
    const reads = new Set<string>()
    return Effect.gen(function* () {
      yield* seed
      reads.clear()
      const page = yield* Reading.listSagas({ limit: 2, offset: 1, status: ["completed", "awaiting_approval"] })
      expect(page.sagas.map((saga) => saga.sagaId)).toEqual(["a-1", "c-3"])
      expect(page.total).toBe(5)
      expect([...reads].sort()).toEqual(["a-1", "c-3"])
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(counting(reads), Approval.layerMemory)))))
  })

  it.effect("a saga tampered with outside the page changes nothing on it; on its own page it is marked", () => {
    const db = fileOf()
    const provided = onSqliteFile(db)
    return Effect.gen(function* () {
      yield* provided(seed)
      const file = new Database(db)
      file.prepare("UPDATE effect_saga_entries SET input = ? WHERE saga_id = ? AND seq = 2").run('"forged"', "c-1")
      file.close()
      const first = yield* provided(Saga.listPage({ offset: 0, limit: 3 }))
      expect(first.sagas.map((saga) => [saga.sagaId, saga.tampered])).toEqual([
        ["n-1", undefined],
        ["a-2", undefined],
        ["a-1", undefined]
      ])
      const last = yield* provided(Saga.listPage({ offset: 6, limit: 3 }))
      expect(last.sagas.map((saga) => saga.sagaId)).toEqual(["c-1"])
      expect(last.sagas[0]!.tampered).toMatchObject({ seq: 2 })
    })
  })
})

/** A memory journal that fails the test when anything lists its sagas. */
const unlistable = Layer.effect(
  Journal.Journal,
  Effect.map(Journal.Journal, (journal) =>
    Journal.Journal.of({ ...journal, list: () => Effect.dieMessage("the store was asked for a list") })
  )
).pipe(Layer.provide(Journal.layerMemory))

describe("a search no saga id can match does not ask the store", () => {
  it.effect("in memory: the empty page, without listing", () =>
    Effect.gen(function* () {
      for (const search of unmatchable) {
        expect(yield* Saga.listPage({ offset: 0, limit: 50, search }), JSON.stringify(search)).toEqual(emptyPage)
      }
      expect(yield* Effect.exit(Saga.listPage({ offset: 0, limit: 50, search: "c-" }))).toMatchObject({
        _tag: "Failure"
      })
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(unlistable, Approval.layerMemory)))))
  )

  it.effect("on SQLite: the empty page, even when the sagas' table is gone", () => {
    const db = fileOf()
    const provided = onSqliteFile(db)
    return Effect.gen(function* () {
      yield* provided(seed)
      const file = new Database(db)
      file.prepare("ALTER TABLE effect_saga_sagas RENAME TO gone").run()
      file.close()
      for (const search of unmatchable) {
        expect(yield* provided(Saga.listPage({ offset: 0, limit: 50, search })), JSON.stringify(search)).toEqual(
          emptyPage
        )
      }
      expect(yield* Effect.exit(provided(Saga.listPage({ offset: 0, limit: 50, search: "c-" })))).toMatchObject({
        _tag: "Failure"
      })
    })
  })
})
