/**
 * The lease paths every worker runs all the time, on a store that has run many sagas:
 *
 *   npx tsx bench/leases.ts [--sagas N] [--pg [URL]]
 *
 * Seeds N finished sagas (default 200,000) plus 100 running under a live lease and 100 under a
 * lapsed one, then times `renew` (a worker's leases, every third of `leaseTtl`) and `claimLapsed`
 * (what `Recovery` does every pass), and what the indexes cost the hot path (a two-step saga's five
 * appends under its lease): median of 21 rounds each, with the partial indexes of migration 4 and
 * without them (dropped), taking turns on the same rows in one run: the baseline is the store as it
 * was before the migration. SQLite on a temporary file by default; `--pg` on the server at URL (or
 * `EFFECT_SAGA_PG_URL`, or the one `.ci/postgres start` runs), in a database of its own.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { Journal, SqlJournal } from "../src/index.js"
import { openSagas } from "../src/internal/sql/migrations.js"
import * as Postgres from "../src/Postgres.js"

const argument = (name: string) => {
  const index = process.argv.indexOf(name)
  return index === -1 ? undefined : (process.argv[index + 1] ?? "")
}
const sagas = Number(argument("--sagas") ?? 200_000)
const pgArgument = argument("--pg")
const onPg = pgArgument !== undefined
const RUNS = 21
const OPEN = 100
const holder = { owner: "worker-a", ttlMillis: 30_000 }
const recoverer = { owner: "worker-b", ttlMillis: 30_000 }
const past = "2000-01-01T00:00:00.000Z"
const future = "2999-01-01T00:00:00.000Z"

/** N finished sagas, OPEN running under worker-a's live lease, OPEN running under a dead worker's lapsed lease. */
const seed = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const numbers = onPg
    ? (n: number) => `SELECT g AS n FROM generate_series(1, ${n}) AS g`
    : (n: number) => `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${n}) SELECT n FROM g`
  const concat = (prefix: string) => (onPg ? `'${prefix}' || n` : `'${prefix}' || n`)
  const insert = (prefix: string, n: number, status: string, owner: string | null, expires: string | null) =>
    sql.unsafe(`INSERT INTO effect_saga_sagas (saga_id, status, revision, digest, created_at, updated_at, lease_owner, lease_expires_at)
SELECT ${concat(prefix)}, '${status}', 5, 'digest', '${past}', '${past}', ${owner === null ? "NULL" : `'${owner}'`}, ${
      expires === null ? "NULL" : `'${expires}'`
    } FROM (${numbers(n)}) AS numbers`)
  yield* insert("done-", sagas, "completed", null, null)
  yield* insert("live-", OPEN, "running", holder.owner, future)
  yield* insert("lapsed-", OPEN, "running", "worker-dead", past)
  yield* sql.unsafe(onPg ? "ANALYZE effect_saga_sagas" : "ANALYZE")
})

/** Puts the lapsed sagas back as a dead worker left them (not timed). */
const relapse = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(
    `UPDATE effect_saga_sagas SET lease_owner = 'worker-dead', lease_expires_at = '${past}' WHERE saga_id LIKE 'lapsed-%'`
  )
)

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const start = performance.now()
    const value = yield* effect
    return { ms: performance.now() - start, value }
  })

const draft = (phase: Journal.Phase, stepId: string | null = null): Journal.Draft => ({
  stepId,
  toolName: stepId === null ? null : "tool",
  phase,
  input: phase === "INTENT" ? '{"sku":"A-1"}' : null,
  payload: phase === "EXECUTED" ? '{"result":"r-1"}' : null
})

/**
 * What the indexes cost the hot path: one saga of two steps as a run appends it under its lease
 * (the first append takes the lease, the last ends the saga and drops it), in ms.
 */
const oneSaga = (journal: Journal.Journal["Type"], sagaId: string) =>
  Effect.gen(function* () {
    const batches: ReadonlyArray<ReadonlyArray<Journal.Draft>> = [
      [draft("SAGA_STARTED"), draft("INTENT", "a")],
      [draft("EXECUTED", "a")],
      [draft("INTENT", "b")],
      [draft("EXECUTED", "b")],
      [draft("SAGA_COMPLETED")]
    ]
    let expected = Journal.empty
    for (const batch of batches) {
      const written = yield* journal.append(sagaId, expected, batch, holder)
      const last = written[written.length - 1]!
      expected = { revision: last.seq, digest: last.hash }
    }
  })

interface Samples {
  readonly renew: Array<number>
  readonly claimLapsed: Array<number>
  readonly saga: Array<number>
}

const samples = (): Samples => ({ renew: [], claimLapsed: [], saga: [] })

/** One timing of each: a saga's appends, `renew`, `claimLapsed`, checking that each did its whole job. */
const sample = (into: Samples, label: string) =>
  Effect.gen(function* () {
    const journal = yield* Journal.Journal
    into.saga.push((yield* timed(oneSaga(journal, label))).ms)
    const renewed = yield* timed(journal.renew(holder))
    if (renewed.value !== OPEN) return yield* Effect.dieMessage(`renew renewed ${renewed.value} leases, not ${OPEN}`)
    into.renew.push(renewed.ms)
    yield* relapse
    const claimed = yield* timed(journal.claimLapsed(recoverer, OPEN))
    if (claimed.value.length !== OPEN) {
      return yield* Effect.dieMessage(`claimLapsed claimed ${claimed.value.length} sagas, not ${OPEN}`)
    }
    into.claimLapsed.push(claimed.ms)
  })

const leased = "effect_saga_sagas_leased"
const open = "effect_saga_sagas_open"

/** The store with migration 4's indexes (as the migration makes them), or without (dropped). */
const indexes = (present: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    present
      ? Effect.zipRight(
          sql.unsafe(`CREATE INDEX ${leased} ON effect_saga_sagas (lease_owner) WHERE lease_owner IS NOT NULL`),
          sql.unsafe(`CREATE INDEX ${open} ON effect_saga_sagas (saga_id) WHERE ${openSagas}`)
        )
      : Effect.zipRight(sql.unsafe(`DROP INDEX ${leased}`), sql.unsafe(`DROP INDEX ${open}`))
  )

/**
 * Rounds that take turns, with the indexes and without (in alternating order, so that neither is
 * always first): the machine's drift and warm-up fall on both alike.
 */
const measure = Effect.gen(function* () {
  const indexed = samples()
  const scanned = samples()
  let present = true
  for (let round = 0; round < RUNS; round++) {
    for (const withIndexes of round % 2 === 0 ? [true, false] : [false, true]) {
      if (withIndexes !== present) yield* indexes(withIndexes)
      present = withIndexes
      yield* sample(withIndexes ? indexed : scanned, `${withIndexes ? "indexed" : "scanned"}-${round}`)
    }
  }
  const medians = (of: Samples) => ({
    renew: median(of.renew),
    claimLapsed: median(of.claimLapsed),
    saga: median(of.saga)
  })
  return { indexed: medians(indexed), scanned: medians(scanned) }
})

const pgDatabase = (url: string) =>
  Effect.gen(function* () {
    const name = `effect_saga_bench_leases_${process.pid}`
    const admin = yield* SqlClient.SqlClient
    yield* admin.unsafe(`CREATE DATABASE ${name}`)
    yield* Effect.addFinalizer(() => Effect.ignore(admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
    const parsed = new URL(url)
    parsed.pathname = `/${name}`
    return parsed.toString()
  }).pipe(Effect.provide(Postgres.layerClient({ url })))

const bench = Effect.gen(function* () {
  const store = onPg
    ? Postgres.layerClient({
        url: yield* pgDatabase(
          pgArgument || process.env.EFFECT_SAGA_PG_URL || "postgres://postgres@127.0.0.1:55432/postgres"
        )
      })
    : SqlJournal.layerSqliteClient({
        filename: path.join(fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-leases-")), "leases.db")
      })
  const figures = yield* Effect.zipRight(seed, measure).pipe(
    Effect.provide(SqlJournal.layer.pipe(Layer.provideMerge(store)))
  )
  const { indexed, scanned } = figures
  console.log(
    `${onPg ? "PostgreSQL" : "SQLite"}: ${sagas.toLocaleString("en")} finished sagas, ${OPEN} leased, ${OPEN} lapsed; median of ${RUNS} runs; load average ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(" ")}`
  )
  const row = (name: string, withIndex: number, without: number) =>
    `${name.padEnd(24)} | ${withIndex.toFixed(2).padStart(12)} | ${without.toFixed(2).padStart(15)} | ${(without / withIndex).toFixed(2).padStart(6)}×`
  console.log(`${"operation".padEnd(24)} | ${"indexed (ms)".padStart(12)} | ${"no index (ms)".padStart(15)} | faster`)
  console.log(row("renew", indexed.renew, scanned.renew))
  console.log(row("claimLapsed", indexed.claimLapsed, scanned.claimLapsed))
  console.log(row("a saga's 5 appends", indexed.saga, scanned.saga))
})

Effect.runPromise(Effect.scoped(bench)).catch((error) => {
  console.error(error)
  process.exit(1)
})
