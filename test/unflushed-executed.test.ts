/**
 * A commit that holds only steps' `EXECUTED` entries may return before its flush; every other one is
 * flushed (docs/storage.md, "EXECUTED without waiting for its flush"). Observed through the
 * statements the drivers run: better-sqlite3's `Statement#run`/`#all` and `pg.Client#query`.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { afterAll, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Cause, Effect, Exit, Layer, Schema } from "effect"
import pg from "pg"
import { type Approval, Compensable, Journal, Saga, SqlJournal, SqlStore } from "../src/index.js"
import { mayCommitUnflushed } from "../src/internal/sql/unflushed.js"
import * as Postgres from "../src/Postgres.js"
import { saga, step } from "./fixtures/drafts.js"
import { freshDatabase } from "./fixtures/postgres.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-unflushed-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("which appends may commit unflushed", () => {
  it("only appends of steps' EXECUTED entries; an operator's resolution and every other phase are flushed", () => {
    const executed = step("EXECUTED", "s-1")
    const resolved = { ...executed, payload: '{"result":"r-1","resolvedBy":"alice"}' }
    expect(mayCommitUnflushed([executed])).toBe(true)
    expect(mayCommitUnflushed([executed, step("EXECUTED", "s-2")])).toBe(true)
    expect(mayCommitUnflushed([])).toBe(false)
    expect(mayCommitUnflushed([resolved])).toBe(false)
    expect(mayCommitUnflushed([executed, step("INTENT", "s-2")])).toBe(false)
    expect(mayCommitUnflushed([executed, saga("SAGA_COMPLETED")])).toBe(false)
    for (const phase of Journal.Phase.literals.filter((phase) => phase !== "EXECUTED")) {
      expect(mayCommitUnflushed([step(phase, "s-1")])).toBe(false)
      expect(mayCommitUnflushed([{ ...saga(phase), payload: null }])).toBe(false)
    }
  })
})

describe("SQLite: EXECUTED without waiting for its flush", () => {
  it.effect("by default a step's EXECUTED travels with the saga's next entry: one flushed commit a step", () =>
    Effect.gen(function* () {
      const log = yield* runLogged({ filename: fileFor("together") }, 2)
      expect(transactionsOf(log)).toEqual([
        { phases: ["SAGA_STARTED", "INTENT"], unflushed: false },
        { phases: ["EXECUTED", "INTENT"], unflushed: false },
        { phases: ["EXECUTED", "INTENT"], unflushed: false },
        { phases: ["EXECUTED", "SAGA_COMPLETED"], unflushed: false }
      ])
      expect(log.some(({ sql }) => sql === "PRAGMA synchronous = NORMAL")).toBe(false)
    })
  )

  it.effect("an EXECUTED whose program waits before its next step commits alone under synchronous NORMAL", () =>
    Effect.gen(function* () {
      const log = yield* runLogged({ filename: fileFor("default") }, 2, waitingBetweenSteps("logged"))
      const transactions = transactionsOf(log)
      expect(transactions.map(({ phases }) => phases)).toEqual([
        ["SAGA_STARTED", "INTENT"],
        ["EXECUTED"],
        ["INTENT"],
        ["EXECUTED"],
        ["INTENT"],
        ["EXECUTED", "SAGA_COMPLETED"]
      ])
      for (const { phases, unflushed } of transactions) {
        expect(unflushed).toBe(phases.every((phase) => phase === "EXECUTED"))
      }
      // Each unflushed commit hands the connection back under FULL (2), before anyone else can use it.
      for (const [i, statement] of log.entries()) {
        if (statement.sql === "PRAGMA synchronous = NORMAL") {
          const back = log.findIndex((later, j) => j > i && later.sql === "PRAGMA synchronous = FULL")
          expect(
            log
              .slice(i + 1, back)
              .map(({ sql }) => sql)
              .at(-1)
          ).toBe("COMMIT")
        }
      }
      expect(log.filter((statement) => statement.sql === "PRAGMA synchronous = NORMAL").length).toBe(2)
    })
  )

  it.effect("flushEveryEntry: every commit is flushed; synchronous NORMAL: nothing to switch", () =>
    Effect.gen(function* () {
      for (const [options, synchronous] of [
        [{ flushEveryEntry: true }, 2],
        [{ synchronous: "normal" }, 1]
      ] as const) {
        const file = fileFor(JSON.stringify(options))
        const log = yield* runLogged({ filename: file, ...options }, synchronous, waitingBetweenSteps("logged"))
        const transactions = transactionsOf(log)
        const executed = transactions.filter(({ phases }) => phases.includes("EXECUTED"))
        // With `flushEveryEntry`, every EXECUTED is a commit of its own; under NORMAL, they travel with the next entry.
        expect(executed.length).toBe(3)
        expect(executed.every(({ phases }) => phases.length === 1)).toBe(options.flushEveryEntry === true)
        expect(transactions.every(({ unflushed }) => !unflushed)).toBe(true)
        // Past opening the file, nothing switches `synchronous`.
        const opened = log.findIndex(({ sql }) => sql === "BEGIN IMMEDIATE")
        expect(log.slice(opened).some(({ sql }) => sql.startsWith("PRAGMA synchronous ="))).toBe(false)
      }
    })
  )

  it.effect("a run that stops on a fatal error after an unflushed EXECUTED flushes it before Saga.run returns", () =>
    Effect.gen(function* () {
      const log = yield* runRefusedLogged(fileFor("fatal"))
      const returned = log.findIndex(({ sql }) => sql === RETURNED)
      const lastUnflushed = lastIndexWhere(log, ({ sql }) => sql === "PRAGMA synchronous = NORMAL")
      expect(lastUnflushed).toBeGreaterThan(0)
      expect(returned).toBeGreaterThan(lastUnflushed)
      // Between the unflushed commit and the return: the lease's release, a commit of its own under
      // FULL, which syncs the WAL and with it every frame before it.
      const between = log.slice(lastUnflushed + 1, returned).map(({ sql }) => sql)
      expect(between.some((sql) => sql.startsWith("UPDATE") && sql.includes("lease_owner = NULL"))).toBe(true)
      expect(between).toContain("PRAGMA synchronous = FULL")
      expect(between.indexOf("PRAGMA synchronous = FULL")).toBeLessThan(
        between.findIndex((sql) => sql.includes("lease_owner = NULL"))
      )
      expect(between.some((sql) => sql === "PRAGMA synchronous = NORMAL")).toBe(false)
    })
  )

  it.effect(
    "a saga whose last EXECUTED was lost (a power loss) reads as unknown: NeedsAttention, or a retry by key",
    () =>
      Effect.gen(function* () {
        for (const retryMode of [undefined, "idempotency-key" as const]) {
          const filename = fileFor(`lost-${retryMode}`)
          const calls: Array<string> = []
          const tools = toolsLogging(calls, retryMode)
          const program = Effect.gen(function* () {
            for (const tool of tools) yield* tool({ n: 1 })
          })
          const store = SqlStore.layerSqlite({ filename })
          const first = yield* runSaga("order", program, store)
          expect(first._tag).toBe("Completed")
          loseEverythingAfterLastIntent(filename, "order")
          expect(calls.map((call) => call.split(":")[0])).toEqual(["reserve", "charge", "ship"])
          const again = yield* runSaga("order", program, store)
          if (retryMode === undefined) {
            expect(again).toMatchObject({ _tag: "NeedsAttention", unknown: [{ toolName: "ship" }] })
            expect(calls.length).toBe(3)
          } else {
            expect(again._tag).toBe("Completed")
            // The step whose EXECUTED was lost runs again with the same key; the others replay.
            expect(calls).toEqual([...calls.slice(0, 3), calls[2]])
          }
        }
      })
  )
})

const url = await freshDatabase("effect_saga_unflushed")

describe("PostgreSQL: EXECUTED without waiting for its flush", () => {
  it.live("an append of EXECUTED alone, or a batch of them, turns synchronous_commit off for itself alone", () =>
    Effect.gen(function* () {
      const together = yield* loggingPg(runPgSagas(Postgres.layer({ url }), 1))
      expect(together.map(({ phases }) => phases.join("+"))).toEqual([
        "SAGA_STARTED+INTENT",
        "EXECUTED+INTENT",
        "EXECUTED+INTENT",
        "EXECUTED+SAGA_COMPLETED"
      ])
      expect(together.some(({ unflushed }) => unflushed)).toBe(false)

      // A program that waits before its next step: its EXECUTED goes alone, unflushed.
      const appends = yield* loggingPg(runPgSagas(Postgres.layer({ url }), 1, waitingBetweenSteps))
      expect(appends.map(({ phases }) => phases.join("+"))).toEqual([
        "SAGA_STARTED+INTENT",
        "EXECUTED",
        "INTENT",
        "EXECUTED",
        "INTENT",
        "EXECUTED+SAGA_COMPLETED"
      ])
      expect(appends.map(({ unflushed }) => unflushed)).toEqual([false, true, false, true, false, false])

      const batch = yield* twoExecutedAtOnce(Postgres.layerJournal({ url }))
      expect(batch).toEqual([{ phases: ["EXECUTED", "EXECUTED"], unflushed: true }])

      // Twenty sagas at once: their batches mix phases, and only a batch of EXECUTED alone is unflushed.
      for (const { phases, unflushed } of yield* loggingPg(runPgSagas(Postgres.layer({ url }), 20))) {
        expect(unflushed).toBe(phases.every((phase) => phase === "EXECUTED"))
      }
    })
  )

  it.live("a run that stops on a fatal error after an unflushed EXECUTED flushes it before Saga.run returns", () =>
    Effect.gen(function* () {
      const statements: Array<string> = []
      const sagaId = `pg-refused-${Math.random().toString(36).slice(2)}`
      const exit = yield* loggingPgStatements(
        statements,
        Effect.scoped(
          Effect.exit(Saga.run(sagaId, threeSteps)).pipe(
            Effect.tap(() => Effect.sync(() => statements.push(RETURNED))),
            Effect.provide(
              Saga.layer.pipe(Layer.provide(Layer.provideMerge(refusingSecondIntent, Postgres.layer({ url }))))
            )
          )
        )
      )
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause).includes("the disk is full")).toBe(true)
      const returned = statements.indexOf(RETURNED)
      const lastUnflushed = lastIndexWhere(statements, (text) => text.includes(TURNS_SYNCHRONOUS_COMMIT_OFF))
      expect(lastUnflushed).toBeGreaterThan(0)
      // The lease's release commits with synchronous_commit on: PostgreSQL flushes the WAL up to its
      // commit record, and with it the unflushed commit before it.
      const release = statements.findIndex(
        (text, i) => i > lastUnflushed && text.startsWith("UPDATE") && text.includes("lease_owner = NULL")
      )
      expect(release).toBeGreaterThan(lastUnflushed)
      expect(release).toBeLessThan(returned)
      expect(statements[release]).not.toContain("synchronous_commit")
    })
  )

  it.live("flushEveryEntry: no statement turns synchronous_commit off", () =>
    Effect.gen(function* () {
      const alone = yield* loggingPg(runPgSagas(Postgres.layer({ url, flushEveryEntry: true }), 1, waitingBetweenSteps))
      const batch = yield* twoExecutedAtOnce(Postgres.layerJournal({ url, flushEveryEntry: true }))
      expect(alone.filter(({ phases }) => phases.includes("EXECUTED")).length).toBe(3)
      expect(batch.map(({ phases }) => phases)).toEqual([["EXECUTED", "EXECUTED"]])
      expect([...alone, ...batch].some(({ unflushed }) => unflushed)).toBe(false)
    })
  )
})

/** The index of the last element of `items` that `test` holds for, or -1. */
const lastIndexWhere = <A>(items: ReadonlyArray<A>, test: (item: A) => boolean): number => {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i
  return -1
}

const fileFor = (name: string) => path.join(dir, `${name.replace(/\W/g, "_")}.db`)

interface Logged {
  readonly sql: string
  readonly params: ReadonlyArray<unknown>
}

/** Every statement better-sqlite3 runs while `effect` runs (the process's statements share one prototype). */
const loggingSqlite = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.suspend(() => {
    const log: Array<Logged> = []
    const probe = new Database(":memory:")
    const prototype = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, unknown>
    probe.close()
    const original = { run: prototype.run, all: prototype.all }
    for (const method of ["run", "all"] as const) {
      const run = original[method] as (...params: ReadonlyArray<unknown>) => unknown
      prototype[method] = function (this: { readonly source: string }, ...params: ReadonlyArray<unknown>) {
        log.push({ sql: this.source, params })
        return run.apply(this, [...params])
      }
    }
    return Effect.as(
      Effect.ensuring(
        effect,
        Effect.sync(() => Object.assign(prototype, original))
      ),
      log
    )
  })

/** The write transactions of `log`: the phases each inserted, and whether it committed under NORMAL. */
const transactionsOf = (log: ReadonlyArray<Logged>) => {
  const transactions: Array<{ phases: Array<string>; unflushed: boolean }> = []
  for (const [i, statement] of log.entries()) {
    if (statement.sql === "BEGIN IMMEDIATE") {
      transactions.push({ phases: [], unflushed: log[i - 1]?.sql === "PRAGMA synchronous = NORMAL" })
    } else if (statement.sql.startsWith("INSERT INTO") && statement.sql.includes("effect_saga_entries")) {
      // Ten parameters an entry; the phase is the fifth.
      const phases = statement.params.filter((_, index) => index % 10 === 4) as Array<string>
      transactions[transactions.length - 1]?.phases.push(...phases)
    }
  }
  return transactions.filter(({ phases }) => phases.length > 0)
}

const toolsLogging = (calls: Array<string>, retryMode?: "idempotency-key") =>
  ["reserve", "charge", "ship"].map((name) =>
    Compensable.make({
      name,
      input: Schema.Struct({ n: Schema.Number }),
      success: Schema.String,
      ...(retryMode === undefined ? {} : { retryMode }),
      execute: (_input, step) =>
        Effect.sync(() => {
          // The key is stable per step: the first three letters of its digest are enough to compare.
          calls.push(`${name}:${step.idempotencyKey}`)
          return `${name}-done`
        }),
      compensate: () => Effect.void
    })
  )

const runSaga = <E, PE>(
  sagaId: string,
  program: Effect.Effect<void, PE, Saga.CurrentSaga>,
  store: Layer.Layer<Approval.Approval | Journal.Journal, E>
) =>
  Effect.scoped(Saga.run(sagaId, program).pipe(Effect.provide(Saga.layer.pipe(Layer.provide(store))))).pipe(
    Effect.orDie
  )

/**
 * Runs a three-step saga on a store opened with `options`, logging every statement, and checks
 * that the store's connection is left under `synchronous` (2 = FULL, 1 = NORMAL) as it was opened.
 */
const runLogged = (
  options: SqlJournal.SqliteOptions,
  synchronous: number,
  program: Effect.Effect<void, unknown, Saga.CurrentSaga | Journal.Journal> = threeSteps
) =>
  Effect.gen(function* () {
    const ran = Effect.gen(function* () {
      const result = yield* Saga.run("logged", program)
      expect(result._tag).toBe("Completed")
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql.unsafe("PRAGMA synchronous")).toEqual([{ synchronous }])
    })
    const store = SqlStore.layer.pipe(Layer.provideMerge(SqlJournal.layerSqliteClient(options)))
    return yield* loggingSqlite(
      Effect.scoped(ran.pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store))))).pipe(Effect.orDie)
    )
  })

/** A program calling three tools in turn. */
const threeSteps = Effect.gen(function* () {
  for (const tool of toolsLogging([])) yield* tool({ n: 1 })
})

/**
 * A three-step program that, after each step but the last, reads the journal until that step's
 * `EXECUTED` is in it: it waits for something other than its next step, so nothing it writes next
 * can carry that `EXECUTED`.
 */
const waitingBetweenSteps = (sagaId: string) =>
  Effect.gen(function* () {
    const journal = yield* Journal.Journal
    const tools = toolsLogging([])
    for (const [i, tool] of tools.entries()) {
      yield* tool({ n: 1 })
      if (i < tools.length - 1) yield* untilExecuted(journal, sagaId, i + 1)
    }
  })

const untilExecuted = (journal: Journal.Journal["Type"], sagaId: string, count: number) =>
  Effect.gen(function* () {
    for (let tries = 0; tries < 1000; tries++) {
      const entries = yield* Effect.orDie(journal.read(sagaId))
      if (entries.filter((entry) => entry.phase === "EXECUTED").length >= count) return
      yield* Effect.yieldNow()
    }
    return yield* Effect.dieMessage(`the EXECUTED of step ${count} was not written while its program waited`)
  })

/** The statement run right after `Saga.run` returns, to mark the place in the log. */
const RETURNED = "SELECT 'Saga.run returned'"

/** A journal whose second `INTENT` append fails, as a store that refuses a write (a full disk) would. */
const refusingSecondIntent = Layer.effect(
  Journal.Journal,
  Effect.map(Journal.Journal, (journal) => {
    let intents = 0
    return Journal.Journal.of({
      ...journal,
      append: (sagaId, expected, drafts, holder) =>
        drafts.some((draft) => draft.phase === "INTENT") && ++intents === 2
          ? Effect.fail(new Journal.JournalError({ operation: "append", reason: "the disk is full" }))
          : journal.append(sagaId, expected, drafts, holder)
    })
  })
)

/**
 * Runs a three-step saga whose second `INTENT` the store refuses (a fatal error: the run stops,
 * journaling nothing more), logging every statement, with `RETURNED` run once `Saga.run` returns.
 */
const runRefusedLogged = (filename: string) =>
  Effect.gen(function* () {
    const ran = Effect.gen(function* () {
      const exit = yield* Effect.exit(Saga.run("refused", threeSteps))
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(RETURNED)
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause).includes("the disk is full")).toBe(true)
    })
    const store = Layer.provideMerge(
      refusingSecondIntent,
      SqlStore.layer.pipe(Layer.provideMerge(SqlJournal.layerSqliteClient({ filename })))
    )
    return yield* loggingSqlite(
      Effect.scoped(ran.pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store))))).pipe(Effect.orDie)
    )
  })

/**
 * What a power loss right after the last `EXECUTED`'s unflushed commit leaves: the journal up to
 * the step's `INTENT`, the row where that append put it (running, its lease lapsed with its process).
 */
const loseEverythingAfterLastIntent = (filename: string, sagaId: string) => {
  const db = new Database(filename)
  try {
    const intent = db
      .prepare("SELECT seq, hash FROM effect_saga_entries WHERE saga_id = ? AND phase = 'INTENT' ORDER BY seq DESC")
      .get(sagaId) as { seq: number; hash: string }
    db.prepare("DELETE FROM effect_saga_entries WHERE saga_id = ? AND seq > ?").run(sagaId, intent.seq)
    db.prepare(
      "UPDATE effect_saga_sagas SET status = 'running', revision = ?, digest = ?, lease_owner = NULL, lease_expires_at = NULL WHERE saga_id = ?"
    ).run(intent.seq, intent.hash, sagaId)
  } finally {
    db.close()
  }
}

const phaseNames = new Set<unknown>(Journal.Phase.literals)

const TURNS_SYNCHRONOUS_COMMIT_OFF = "set_config('synchronous_commit', 'off', true)"

/** The appends `effect` sends through `pg.Client#query`: the phases each carries, and whether it turns synchronous_commit off. */
const loggingPg = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.suspend(() => {
    const appends: Array<{ phases: Array<string>; unflushed: boolean }> = []
    const prototype = pg.Client.prototype as unknown as { query: (...args: Array<unknown>) => unknown }
    const original = prototype.query
    prototype.query = function (this: unknown, ...args: Array<unknown>) {
      // A statement comes as text and values, or (prepared by name) as one object holding both; a
      // batch binds each column as one array.
      const [first, second] = args
      const { text, values } =
        typeof first === "string" ? { text: first, values: second } : (first as { text?: unknown; values?: unknown })
      const phases = Array.isArray(values)
        ? (values.flat().filter((value) => phaseNames.has(value)) as Array<string>)
        : []
      if (typeof text === "string" && text.includes("INSERT INTO") && phases.length > 0) {
        appends.push({ phases, unflushed: text.includes(TURNS_SYNCHRONOUS_COMMIT_OFF) })
      }
      return original.apply(this, args)
    }
    return Effect.as(
      Effect.ensuring(
        Effect.orDie(effect),
        Effect.sync(() => {
          prototype.query = original
        })
      ),
      appends
    )
  })

/** Every statement text `effect` sends through `pg.Client#query`, pushed onto `statements`. */
const loggingPgStatements = <A, E>(statements: Array<string>, effect: Effect.Effect<A, E>) =>
  Effect.suspend(() => {
    const prototype = pg.Client.prototype as unknown as { query: (...args: Array<unknown>) => unknown }
    const original = prototype.query
    prototype.query = function (this: unknown, ...args: Array<unknown>) {
      const [first] = args
      const text = typeof first === "string" ? first : (first as { text?: unknown } | undefined)?.text
      if (typeof text === "string") statements.push(text)
      return original.apply(this, args)
    }
    return Effect.ensuring(
      effect,
      Effect.sync(() => {
        prototype.query = original
      })
    )
  })

/** Runs `sagas` three-step sagas at once on `store`; each completes. */
const runPgSagas = <E>(
  store: Layer.Layer<Approval.Approval | Journal.Journal, E>,
  sagas: number,
  program: (sagaId: string) => Effect.Effect<void, unknown, Saga.CurrentSaga | Journal.Journal> = () => threeSteps
) => {
  const prefix = `pg-${Math.random().toString(36).slice(2)}`
  return Effect.scoped(
    Effect.all(
      Array.from({ length: sagas }, (_, n) => Saga.run(`${prefix}-${n}`, program(`${prefix}-${n}`))),
      { concurrency: "unbounded" }
    ).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store))))
  ).pipe(Effect.map((results) => expect(results.every((result) => result._tag === "Completed")).toBe(true)))
}

/** Two sagas' INTENTs, then their EXECUTEDs appended at once (one batch), logging what the second part sends. */
const twoExecutedAtOnce = <E>(store: Layer.Layer<Journal.Journal, E>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      const ids = [0, 1].map((n) => `pg-batch-${Math.random().toString(36).slice(2)}-${n}`)
      const positions = yield* Effect.forEach(ids, (id) =>
        Effect.map(journal.append(id, Journal.empty, [saga("SAGA_STARTED"), step("INTENT", "s-1")]), (entries) => ({
          revision: 2,
          digest: entries[1]!.hash
        }))
      )
      return yield* loggingPg(
        Effect.all(
          ids.map((id, i) => journal.append(id, positions[i]!, [step("EXECUTED", "s-1")])),
          { concurrency: "unbounded" }
        )
      )
    }).pipe(Effect.provide(store))
  )
