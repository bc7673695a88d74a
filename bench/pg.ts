/**
 * The PostgreSQL section of `npm run bench -- --pg`: durable steps per second for a five-step saga on
 * one local PostgreSQL server, in one run, each contender in a database of its own:
 *
 * - **floor**: `pg` alone, one autocommit `INSERT` of a journal-entry-shaped row per step into the
 *   journal's own entries table (created by its migrations): one saga after another, then 100
 *   sagas at once on a pool of `pool` connections;
 * - **DBOS**: DBOS Transact, the five steps (`DBOS.registerStep`, each a trivial async function) in
 *   a workflow (`DBOS.registerWorkflow`), a new workflow per saga: one after another, then 100
 *   workflows at once; its system database pool has `pool` connections;
 * - **effect-saga**: `Saga.layer` on `Postgres.layer({ maxConnections: pool })`, five
 *   `Compensable` tools (INTENT and EXECUTED journaled for each step): one saga after another, then
 *   100 sagas at once.
 *
 * The rounds of all six figures take turns, so that each sees the same drift in the server's flush
 * time. Then, outside the measured rounds, what each contender sends the server for a step: statements
 * (round trips), transactions that commit a write (each waits for a WAL flush), and where a
 * sequential step's time goes (waiting on commits, with any statement in flight, with none), counted
 * by wrapping `pg.Client.prototype.query`, which all three go through.
 *
 * The server is `EFFECT_SAGA_PG_URL` (default: the URL `.ci/postgres start` prints); the databases
 * are created for the run and dropped after it.
 */
import * as Crypto from "node:crypto"
import { DBOS } from "@dbos-inc/dbos-sdk"
import { Effect, Layer, ManagedRuntime } from "effect"
import pg from "pg"
import { CONCURRENCY, range, STEPS, sagaRunner } from "./contenders.js"
import { Postgres, Saga } from "./library.js"
import { printTable } from "./table.js"

/** How long to warm up and measure each figure, and the connection pool every contender gets. */
export interface PgBenchOptions {
  readonly url: string
  readonly warmupMs: number
  readonly measureMs: number
  readonly rounds: number
  /** Connections in each contender's pool (DBOS's default system pool and `Postgres.layer`'s default: 10). */
  readonly pool: number
  /** Sagas run one after another for the round-trip accounting. */
  readonly accountingSagas: number
}

/** Sagas (workflows, insert loops) in flight at once in the concurrent figures. */

/** Runs `task(n)` for `count` numbers from `from`, at most `concurrency` at once. */
const pooled = async (from: number, count: number, concurrency: number, task: (n: number) => Promise<unknown>) => {
  let next = from
  const end = from + count
  const worker = async () => {
    while (next < end) await task(next++)
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
}

/** Throughput of one figure: the best round, and the mean over all rounds. */
export interface Rate {
  readonly usPerStep: number
  readonly meanUsPerStep: number
}

const stepsPerSec = (rate: Rate) => 1e6 / rate.usPerStep

/** One figure to measure: runs `count` sagas, first `firstBatch` at a time. */
interface Figure {
  readonly firstBatch: number
  readonly run: (count: number) => Promise<void>
}

/**
 * As in bench/sqlite.ts, each figure is warmed up for `warmupMs` while its batch doubles until one
 * batch takes a quarter of a round, then measured in `rounds` rounds, keeping the best. Unlike
 * there, the rounds of all figures take turns (round 1 of each, then round 2 of each, …): on this
 * shared machine the server's flush time drifts within seconds, and taking turns lets every
 * contender see the same drift, so that the ratios hold better than the figures.
 */
const measureInTurns = async (options: PgBenchOptions, figures: ReadonlyArray<Figure>): Promise<Array<Rate>> => {
  const roundMs = options.measureMs / options.rounds
  const batches: Array<number> = []
  for (const figure of figures) {
    let batch = figure.firstBatch
    const warmup = performance.now()
    while (performance.now() - warmup < options.warmupMs) {
      const t = performance.now()
      await figure.run(batch)
      if (performance.now() - t < roundMs / 4 && batch < 1 << 16) batch *= 2
    }
    batches.push(batch)
  }
  const best = figures.map(() => Number.POSITIVE_INFINITY)
  const totals = figures.map(() => ({ sagas: 0, ms: 0 }))
  for (let round = 0; round < options.rounds; round++) {
    for (const [i, figure] of figures.entries()) {
      let sagas = 0
      const start = performance.now()
      while (performance.now() - start < roundMs) {
        await figure.run(batches[i]!)
        sagas += batches[i]!
      }
      const ms = performance.now() - start
      best[i] = Math.min(best[i]!, (ms * 1000) / (sagas * STEPS))
      totals[i] = { sagas: totals[i]!.sagas + sagas, ms: totals[i]!.ms + ms }
    }
  }
  return figures.map((_, i) => ({
    usPerStep: best[i]!,
    meanUsPerStep: (totals[i]!.ms * 1000) / (totals[i]!.sagas * STEPS)
  }))
}

// ---------------------------------------------------------------------------------------------
// Round-trip accounting: every statement the contenders send goes through `pg.Client#query`.

/** What a contender sent the server per step, and (sequentially) where a step's time went. */
export interface Accounting {
  readonly statements: number
  readonly begins: number
  readonly commits: number
  readonly reads: number
  readonly writes: number
  /**
   * Transactions that wrote a row, each waiting for a WAL flush: `COMMIT`s, and writes outside a
   * transaction that changed a row (an `UPDATE` that matches nothing writes no WAL).
   */
  readonly durableCommits: number
  /** µs a step waiting on `COMMIT`s and autocommit writes (summed over statements). */
  readonly usInCommit: number
  /** µs a durable commit takes, and any other statement (the means, one at a time). */
  readonly usACommit: number
  readonly usAStatement: number
  /** µs a step with at least one statement in flight, and with none (the client's own work). */
  readonly usInDatabase: number
  readonly usOutside: number
}

type Kind = "begin" | "commit" | "read" | "write" | "autocommit"

interface Tally {
  count: Record<Kind, number>
  us: Record<Kind, number>
}

const emptyTally = (): Tally => ({
  count: { begin: 0, commit: 0, read: 0, write: 0, autocommit: 0 },
  us: { begin: 0, commit: 0, read: 0, write: 0, autocommit: 0 }
})

/**
 * Counts and times every `pg.Client#query` on database `database` while `run` runs (a query is
 * timed from the call to its result: one at a time, that is its round trip and the server's work).
 * Statements on other databases (the other contenders stay alive meanwhile) are not counted.
 */
const account = async (database: string, steps: number, run: () => Promise<void>): Promise<Accounting> => {
  const tally = emptyTally()
  let inFlight = 0
  let busySince = 0
  let busyMs = 0
  const inTransaction = new WeakSet<object>()
  const proto = pg.Client.prototype as unknown as { query: (...args: Array<unknown>) => unknown }
  const original = proto.query
  proto.query = function (this: object, ...args: Array<unknown>) {
    const first = args[0] as { readonly text?: unknown; readonly submit?: unknown } | string | undefined
    const text = typeof first === "string" ? first : first?.text
    if (
      typeof text !== "string" ||
      (typeof first === "object" && typeof first.submit === "function") ||
      (this as { readonly database?: unknown }).database !== database
    ) {
      return original.apply(this, args)
    }
    const head = text.trimStart().slice(0, 16).toUpperCase()
    let kind: Kind
    if (head.startsWith("BEGIN") || head.startsWith("START")) {
      kind = "begin"
      inTransaction.add(this)
    } else if (head.startsWith("COMMIT") || head.startsWith("ROLLBACK") || head.startsWith("END")) {
      kind = "commit"
      inTransaction.delete(this)
    } else if (head.startsWith("SELECT") || head.startsWith("SHOW")) kind = "read"
    else kind = inTransaction.has(this) ? "write" : "autocommit"
    const start = performance.now()
    if (inFlight++ === 0) busySince = start
    const done = (result: unknown) => {
      const end = performance.now()
      if (--inFlight === 0) busyMs += end - busySince
      // An autocommit write that changed no row flushes nothing, nor one that turned
      // synchronous_commit off for itself (effect-saga's EXECUTED): it counts as a plain statement.
      const flushed =
        kind !== "autocommit" ||
        ((result as { readonly rowCount?: unknown } | undefined)?.rowCount !== 0 &&
          !text.includes("'synchronous_commit', 'off'"))
      const counted = flushed ? kind : "write"
      tally.count[counted]++
      tally.us[counted] += (end - start) * 1000
    }
    const callback = args.findIndex((arg) => typeof arg === "function")
    if (callback >= 0) {
      const resume = args[callback] as (...results: Array<unknown>) => void
      args[callback] = (...results: Array<unknown>) => {
        done(results[1])
        resume(...results)
      }
      return original.apply(this, args)
    }
    const result = original.apply(this, args)
    return result instanceof Promise
      ? result.then(
          (value: unknown) => {
            done(value)
            return value
          },
          (error: unknown) => {
            done(undefined)
            throw error
          }
        )
      : result
  }
  const start = performance.now()
  try {
    await run()
  } finally {
    proto.query = original
  }
  const wallMs = performance.now() - start
  const { count, us } = tally
  const statements = count.begin + count.commit + count.read + count.write + count.autocommit
  return {
    statements: statements / steps,
    begins: count.begin / steps,
    commits: count.commit / steps,
    reads: count.read / steps,
    writes: (count.write + count.autocommit) / steps,
    durableCommits: (count.commit + count.autocommit) / steps,
    usInCommit: (us.commit + us.autocommit) / steps,
    usACommit: (us.commit + us.autocommit) / Math.max(1, count.commit + count.autocommit),
    usAStatement: (us.begin + us.read + us.write) / (count.begin + count.read + count.write), // NaN: none
    usInDatabase: (busyMs * 1000) / steps,
    usOutside: ((wallMs - busyMs) * 1000) / steps
  }
}

// ---------------------------------------------------------------------------------------------
// Databases of the run.

const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** The URL of database `name` on the server of `url`. */
const databaseUrl = (url: string, name: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

/** Creates an empty database for each of `names`; returns their URLs and a function that drops them all. */
const createDatabases = async <const Names extends ReadonlyArray<string>>(url: string, names: Names) => {
  const prefix = `effect_saga_bench_${Crypto.randomBytes(4).toString("hex")}`
  const created: Array<string> = []
  await withClient(url, async (client) => {
    for (const name of names) {
      await client.query(`CREATE DATABASE ${prefix}_${name}`)
      created.push(`${prefix}_${name}`)
    }
  })
  const urls = Object.fromEntries(names.map((name) => [name, databaseUrl(url, `${prefix}_${name}`)])) as Record<
    Names[number],
    string
  >
  const drop = () =>
    withClient(url, async (client) => {
      for (const name of created) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    })
  return { urls, drop }
}

/** What the server says about itself, printed with the figures. */
const serverSettings = (url: string) =>
  withClient(url, async (client) => {
    const setting = async (name: string) =>
      ((await client.query(`SHOW ${name}`)).rows[0] as Record<string, string>)[name] ?? "?"
    const version = ((await client.query("SHOW server_version")).rows[0] as { server_version: string }).server_version
    const names = ["fsync", "synchronous_commit", "wal_sync_method", "commit_delay", "shared_buffers"] as const
    const values: Array<string> = []
    for (const name of names) values.push(await setting(name))
    return `PostgreSQL ${version.split(" ")[0]}: ${names.map((name, i) => `${name} ${values[i]}`).join(", ")}`
  })

// ---------------------------------------------------------------------------------------------
// The contenders.

/** A contender: one saga after another, `CONCURRENCY` at once, and the accounting run. */
interface Runner {
  readonly oneByOne: (count: number) => Promise<void>
  readonly concurrent: (count: number) => Promise<void>
  readonly close: () => Promise<void>
}

/** Creates the journal's tables in the database at `url`, through the library's own migrations. */
const migrate = async (url: string, pool: number) => {
  const runtime = ManagedRuntime.make(Postgres.layer({ url, maxConnections: pool }))
  await runtime.runPromise(Effect.void)
  await runtime.dispose()
}

/** `pg` alone: one autocommit `INSERT` of an entry row per step, on the journal's entries table. */
const makeFloor = async (url: string, pool: number): Promise<Runner> => {
  await migrate(url, pool)
  const connections = new pg.Pool({ connectionString: url, max: pool })
  const insert = `INSERT INTO "effect_saga_entries" ("saga_id","seq","step_id","tool_name","phase","input","payload","at","hash")
VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`
  const hash = "0".repeat(64)
  let next = 0
  const saga = async (n: number) => {
    for (let step = 1; step <= STEPS; step++) {
      await connections.query(insert, [
        `floor-${n}`,
        step,
        `step-${step}`,
        `step-${step}`,
        "EXECUTED",
        JSON.stringify({ n }),
        JSON.stringify({ id: `res-${step}` }),
        new Date().toISOString(),
        hash
      ])
    }
  }
  const run = (count: number, concurrency: number) => {
    const from = next
    next += count
    return pooled(from, count, concurrency, saga)
  }
  return {
    oneByOne: (count) => run(count, 1),
    concurrent: (count) => run(count, CONCURRENCY),
    close: () => connections.end()
  }
}

/** DBOS Transact: the five steps in a durable workflow, a new workflow per saga. */
const makeDbos = async (url: string, pool: number): Promise<Runner> => {
  DBOS.setConfig({ name: "effect-saga-bench", systemDatabaseUrl: url, systemDatabasePoolSize: pool, logLevel: "error" })
  const dbosSteps = range(1, STEPS).map((i) =>
    DBOS.registerStep(async () => ({ id: `res-${i}` }), { name: `step-${i}` })
  )
  const workflow = DBOS.registerWorkflow(
    async (_n: number) => {
      for (const step of dbosSteps) await step()
    },
    { name: "benchSaga" }
  )
  await DBOS.launch()
  let next = 0
  const run = (count: number, concurrency: number) => {
    const from = next
    next += count
    return pooled(from, count, concurrency, workflow)
  }
  return {
    oneByOne: (count) => run(count, 1),
    concurrent: (count) => run(count, CONCURRENCY),
    close: () => DBOS.shutdown()
  }
}

/** effect-saga: `Saga.layer` on the journal and approvals on PostgreSQL. */
const makeEffectSaga = async (url: string, pool: number): Promise<Runner> => {
  const runtime = ManagedRuntime.make(Saga.layer.pipe(Layer.provide(Postgres.layer({ url, maxConnections: pool }))))
  await runtime.runPromise(Effect.void)
  return { ...sagaRunner(runtime), close: () => runtime.dispose() }
}

/** Every figure of one contender. */
export interface ContenderFigures {
  readonly one: Rate
  readonly concurrent: Rate
  /** One saga after another, and `CONCURRENCY` at once (counts only: times overlap). */
  readonly accountingOne: Accounting
  readonly accountingConcurrent: Accounting
}

/** Every figure of the PostgreSQL section. */
export interface PgFigures {
  readonly server: string
  readonly pool: number
  /** The load average before the first warm-up and after the last round. */
  readonly loadBefore: ReadonlyArray<number>
  readonly loadAfter: ReadonlyArray<number>
  readonly floor: ContenderFigures
  readonly dbos: ContenderFigures
  readonly effectSaga: ContenderFigures
}

/**
 * Measures the three contenders on the server at `options.url`, each in a database created for the
 * run, their rounds taking turns; then counts what each sends the server.
 */
export const measurePg = async (options: PgBenchOptions, loadavg: () => ReadonlyArray<number>): Promise<PgFigures> => {
  const server = await serverSettings(options.url).catch((error: unknown) => {
    const where = new URL(options.url)
    where.password = ""
    throw new Error(
      `no PostgreSQL answers at ${where} (run .ci/postgres start, or set EFFECT_SAGA_PG_URL): ${String(error)}`
    )
  })
  const { urls, drop } = await createDatabases(options.url, ["floor", "dbos", "saga"] as const)
  const runners: Array<Runner> = []
  try {
    const floor = await makeFloor(urls.floor, options.pool)
    runners.push(floor)
    const dbos = await makeDbos(urls.dbos, options.pool)
    runners.push(dbos)
    const effectSaga = await makeEffectSaga(urls.saga, options.pool)
    runners.push(effectSaga)
    const loadBefore = loadavg()
    const rates = await measureInTurns(
      options,
      [floor, dbos, effectSaga].flatMap((runner) => [
        { firstBatch: 1, run: runner.oneByOne },
        { firstBatch: CONCURRENCY, run: runner.concurrent }
      ])
    )
    const loadAfter = loadavg()
    const accounted = async (runner: Runner, i: number, url: string): Promise<ContenderFigures> => {
      const database = new URL(url).pathname.slice(1)
      return {
        one: rates[2 * i]!,
        concurrent: rates[2 * i + 1]!,
        accountingOne: await account(database, options.accountingSagas * STEPS, () =>
          runner.oneByOne(options.accountingSagas)
        ),
        accountingConcurrent: await account(database, CONCURRENCY * STEPS, () => runner.concurrent(CONCURRENCY))
      }
    }
    return {
      server,
      pool: options.pool,
      loadBefore,
      loadAfter,
      floor: await accounted(floor, 0, urls.floor),
      dbos: await accounted(dbos, 1, urls.dbos),
      effectSaga: await accounted(effectSaga, 2, urls.saga)
    }
  } finally {
    for (const runner of runners) await runner.close()
    await drop()
  }
}

// ---------------------------------------------------------------------------------------------
// Printing.

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** Prints the throughput table with the ratios the aim is stated in, then the round-trip accounting. */
export const printPg = (figures: PgFigures): void => {
  const { dbos, effectSaga, floor } = figures
  const load = (l: ReadonlyArray<number>) => l.map((n) => n.toFixed(2)).join(" ")
  console.log()
  console.log(
    `${figures.server}; every pool ${figures.pool} connections; ` +
      `load average ${load(figures.loadBefore)} before, ${load(figures.loadAfter)} after`
  )
  const ratios = (rate: Rate, floorRate: Rate, dbosRate: Rate, sequential: boolean) => [
    sequential
      ? `${fmt(rate.usPerStep / floorRate.usPerStep, 2)}× µs/step`
      : `${fmt(stepsPerSec(rate) / stepsPerSec(floorRate), 2)}× steps/s`,
    `${fmt(stepsPerSec(rate) / stepsPerSec(dbosRate), 2)}×`
  ]
  const rows = [
    ["floor: pg autocommit INSERT, one saga", floor.one, true],
    [`floor: pg autocommit INSERT, ${CONCURRENCY} sagas at once`, floor.concurrent, false],
    ["DBOS, one workflow", dbos.one, true],
    [`DBOS, ${CONCURRENCY} workflows at once`, dbos.concurrent, false],
    ["effect-saga, one saga", effectSaga.one, true],
    [`effect-saga, ${CONCURRENCY} sagas at once`, effectSaga.concurrent, false]
  ] as const
  printTable(
    ["", "steps/s", "µs/step", "mean µs/step", "vs the floor", "steps/s vs DBOS"],
    rows.map(([name, rate, sequential]) => [
      name,
      fmt(stepsPerSec(rate)),
      fmt(rate.usPerStep, 1),
      fmt(rate.meanUsPerStep, 1),
      ...ratios(rate, sequential ? floor.one : floor.concurrent, sequential ? dbos.one : dbos.concurrent, sequential)
    ])
  )
  const one = stepsPerSec(effectSaga.one) / stepsPerSec(dbos.one)
  const many = stepsPerSec(effectSaga.concurrent) / stepsPerSec(dbos.concurrent)
  console.log(
    `effect-saga / DBOS steps/s: one at a time ${fmt(one, 2)}×, ${CONCURRENCY} at once ${fmt(many, 2)}× (aim ≥ 2×: ` +
      `${one >= 2 && many >= 2 ? "met" : "missed"})`
  )
  console.log()
  console.log(
    "What a step sends the server, per step (a statement is a round trip; a durable commit waits for a WAL flush; " +
      "one at a time: µs waiting on commits, with a statement in flight, and with none):"
  )
  const accountingRows = [
    ["floor, one saga", floor.accountingOne, true],
    [`floor, ${CONCURRENCY} at once`, floor.accountingConcurrent, false],
    ["DBOS, one workflow", dbos.accountingOne, true],
    [`DBOS, ${CONCURRENCY} at once`, dbos.accountingConcurrent, false],
    ["effect-saga, one saga", effectSaga.accountingOne, true],
    [`effect-saga, ${CONCURRENCY} at once`, effectSaga.accountingConcurrent, false]
  ] as const
  printTable(
    [
      "",
      "statements",
      "BEGIN",
      "COMMIT",
      "reads",
      "writes",
      "durable commits",
      "µs a commit",
      "µs another statement",
      "µs in commits",
      "µs in the database",
      "µs outside it"
    ],
    accountingRows.map(([name, a, sequential]) => [
      name,
      fmt(a.statements, 2),
      fmt(a.begins, 2),
      fmt(a.commits, 2),
      fmt(a.reads, 2),
      fmt(a.writes, 2),
      fmt(a.durableCommits, 2),
      sequential ? fmt(a.usACommit, 1) : "-",
      sequential && !Number.isNaN(a.usAStatement) ? fmt(a.usAStatement, 1) : "-",
      sequential ? fmt(a.usInCommit, 1) : "-",
      sequential ? fmt(a.usInDatabase, 1) : "-",
      sequential ? fmt(a.usOutside, 1) : "-"
    ])
  )
}
