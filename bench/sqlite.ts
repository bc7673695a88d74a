/**
 * The SQLite section of `npm run bench`: durable steps per second on an SQLite file in a temp dir,
 * next to the physical floor on this machine.
 *
 * - **floor**: better-sqlite3 alone, on the journal's own tables, with its statements and pragmas,
 *   writing the rows effect-saga writes for a five-step saga (recorded from a real run), in the same
 *   transactions: one a journal append, 11 a saga;
 * - **floor, 100 a transaction**: the same, each transaction holding that append for 100 sagas at
 *   once: what group commit could reach at best;
 * - **effect-saga**: `Saga.layer` on `SqlStore.layerSqlite` (journal and approvals on one file), one
 *   saga after another, then 100 sagas running at once;
 * - **effect-saga in memory**: the same on `Journal.layerMemory`: the engine's own cost, which bounds
 *   what any journal can reach.
 *
 * The six take turns round by round, so that all see the same drift of a shared machine and disk.
 * Also what `Journal.verify` costs per 10,000 entries, and the file's size per 10,000 sagas.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import Database from "better-sqlite3"
import { Effect, Layer, ManagedRuntime } from "effect"
import { CONCURRENCY, range, STEPS, saga, sagaRunner } from "./contenders.js"
import { Approval, Journal, Saga, SqlStore } from "./library.js"

/** How long to warm up and measure each figure, and how many sagas the file size is measured on. */
export interface SqliteBenchOptions {
  readonly warmupMs: number
  readonly measureMs: number
  readonly rounds: number
  readonly sizeSagas: number
  /** The `synchronous` settings to measure throughput under; size and verify use the first. */
  readonly synchronous: ReadonlyArray<Synchronous>
}

type Synchronous = "normal" | "full"

const sagaLayer = (filename: string, synchronous: Synchronous) =>
  Saga.layer.pipe(Layer.provide(SqlStore.layerSqlite({ filename, synchronous })))

const memoryLayer = Saga.layer.pipe(Layer.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory)))

/** Throughput of one figure: the best round, and the mean over all rounds. */
export interface Rate {
  readonly usPerStep: number
  readonly meanUsPerStep: number
}

const stepsPerSec = (rate: Rate) => 1e6 / rate.usPerStep

/** A figure to measure: `run(count)` runs `count` sagas; the first warm-up batch is `firstBatch`. */
interface Runner {
  readonly firstBatch: number
  readonly run: (count: number) => Promise<void> | void
}

/**
 * Warms each runner up for `warmupMs` while doubling its batch until one batch takes a quarter of
 * a round, then measures `rounds` rounds of each, the runners taking turns (round 1 of each, then
 * round 2 of each, …), so that all of them see the same drift of a shared machine and disk, and
 * keeps the best round of each.
 */
const measureTogether = async <K extends string>(
  options: SqliteBenchOptions,
  runners: Record<K, Runner>
): Promise<Record<K, Rate>> => {
  const roundMs = options.measureMs / options.rounds
  const names = Object.keys(runners) as Array<K>
  const batches = new Map<K, number>()
  for (const name of names) {
    const { firstBatch, run } = runners[name]
    let batch = firstBatch
    const warmup = performance.now()
    while (performance.now() - warmup < options.warmupMs) {
      const t = performance.now()
      await run(batch)
      if (performance.now() - t < roundMs / 4 && batch < 1 << 16) batch *= 2
    }
    batches.set(name, batch)
  }
  const best = new Map<K, number>()
  const totals = new Map<K, { sagas: number; ms: number }>()
  for (let round = 0; round < options.rounds; round++) {
    for (const name of names) {
      const batch = batches.get(name)!
      let sagas = 0
      const start = performance.now()
      while (performance.now() - start < roundMs) {
        await runners[name].run(batch)
        sagas += batch
      }
      const ms = performance.now() - start
      best.set(name, Math.min(best.get(name) ?? Number.POSITIVE_INFINITY, (ms * 1000) / (sagas * STEPS)))
      const total = totals.get(name) ?? { sagas: 0, ms: 0 }
      totals.set(name, { sagas: total.sagas + sagas, ms: total.ms + ms })
    }
  }
  const rates = {} as Record<K, Rate>
  for (const name of names) {
    const total = totals.get(name)!
    rates[name] = { usPerStep: best.get(name)!, meanUsPerStep: (total.ms * 1000) / (total.sagas * STEPS) }
  }
  return rates
}

/** An empty journal file: the tables created by the library's own migrations. */
const createFile = async (dir: string, name: string): Promise<string> => {
  const filename = path.join(dir, name)
  const runtime = ManagedRuntime.make(SqlStore.layerSqlite({ filename }))
  await runtime.runPromise(Effect.void)
  await runtime.dispose()
  return filename
}

/** The transactions of one saga as effect-saga writes them: the entries of each journal append. */
const recordTransactions = async (): Promise<ReadonlyArray<ReadonlyArray<Journal.Entry>>> => {
  const sizes: Array<number> = []
  const counting = Layer.effect(
    Journal.Journal,
    Effect.map(Journal.Journal, (journal) =>
      Journal.Journal.of({
        ...journal,
        append: (sagaId, expected, drafts) => {
          sizes.push(drafts.length)
          return journal.append(sagaId, expected, drafts)
        }
      })
    )
  ).pipe(Layer.provide(Journal.layerMemory))
  const runtime = ManagedRuntime.make(Saga.layer.pipe(Layer.provideMerge(Layer.merge(counting, Approval.layerMemory))))
  const entries = await runtime.runPromise(
    Effect.zipRight(
      saga(0),
      Effect.flatMap(Journal.Journal, (journal) => journal.read("saga-0"))
    )
  )
  await runtime.dispose()
  const ends = sizes.map((_, i) => sizes.slice(0, i + 1).reduce((sum, size) => sum + size, 0))
  return ends.map((end, i) => entries.slice(end - sizes[i]!, end))
}

const sagasTable = `"effect_saga_sagas"`
const entriesTable = `"effect_saga_entries"`
const columns = `"saga_id","seq","step_id","tool_name","phase","input","payload","at","hash"`

/**
 * better-sqlite3 with nothing around it: the journal's statements (compare-and-set on the saga row,
 * then the entries), prepared once, in `BEGIN IMMEDIATE` … `COMMIT`.
 */
const makeFloor = (
  filename: string,
  synchronous: Synchronous,
  transactions: ReadonlyArray<ReadonlyArray<Journal.Entry>>
) => {
  const db = new Database(filename)
  db.pragma("journal_mode = WAL")
  db.pragma("busy_timeout = 5000")
  db.pragma(`synchronous = ${synchronous === "full" ? "FULL" : "NORMAL"}`)
  const begin = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  const claimNew = db.prepare(`INSERT INTO ${sagasTable} (saga_id, status, revision, digest, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (saga_id) DO UPDATE SET status = COALESCE(?, ${sagasTable}.status), revision = ?,
  digest = ?, updated_at = ?
WHERE ${sagasTable}.revision = 0 AND ${sagasTable}.digest = ?
RETURNING saga_id`)
  const claim = db.prepare(`UPDATE ${sagasTable} SET status = COALESCE(?, status), revision = ?, digest = ?,
  updated_at = ?
WHERE saga_id = ? AND revision = ? AND digest = ?
RETURNING saga_id`)
  const inserts = new Map<number, Database.Statement>()
  const insert = (rows: number) => {
    let statement = inserts.get(rows)
    if (statement === undefined) {
      const values = Array.from({ length: rows }, () => "(?,?,?,?,?,?,?,?,?)").join(",")
      statement = db.prepare(`INSERT INTO ${entriesTable} (${columns}) VALUES ${values}`)
      inserts.set(rows, statement)
    }
    return statement
  }
  // What each transaction writes, everything but the saga id worked out once.
  const plan = transactions.map((entries, t) => {
    const last = entries[entries.length - 1]!
    const previous = transactions[t - 1]?.at(-1)
    const setsStatus = entries.some((entry) => entry.phase.startsWith("SAGA_"))
    return {
      first: t === 0,
      status: setsStatus ? Journal.statusAfter("running", entries) : null,
      revision: last.seq,
      digest: last.hash,
      at: last.at,
      expected: previous === undefined ? Journal.empty : { revision: previous.seq, digest: previous.hash },
      insert: insert(entries.length),
      values: entries.flatMap((e) => [e.seq, e.stepId, e.toolName, e.phase, e.input, e.payload, e.at, e.hash])
    }
  })
  type Step = (typeof plan)[number]
  const write = (sagaId: string, step: Step) => {
    const claimed = step.first
      ? claimNew.get(
          sagaId,
          step.status ?? "running",
          step.revision,
          step.digest,
          step.at,
          step.at,
          step.status,
          step.revision,
          step.digest,
          step.at,
          step.expected.digest
        )
      : claim.get(
          step.status,
          step.revision,
          step.digest,
          step.at,
          sagaId,
          step.expected.revision,
          step.expected.digest
        )
    if (claimed === undefined) throw new Error(`floor: saga ${sagaId} did not claim its row`)
    const params: Array<unknown> = []
    for (let i = 0; i < step.values.length; i += 8) params.push(sagaId, ...step.values.slice(i, i + 8))
    step.insert.run(params)
  }
  let next = 0
  return {
    /** `count` sagas one after another, one transaction per append. */
    oneByOne: (count: number) => {
      for (let s = 0; s < count; s++) {
        const sagaId = `floor-${next++}`
        for (const step of plan) {
          begin.run()
          write(sagaId, step)
          commit.run()
        }
      }
    },
    /** `count` sagas, 100 at a time, each transaction holding one append of each of the 100. */
    batched: (count: number) => {
      for (let s = 0; s < count; s += CONCURRENCY) {
        const sagaIds = range(next, Math.min(CONCURRENCY, count - s)).map((n) => `floor-${n}`)
        next += sagaIds.length
        for (const step of plan) {
          begin.run()
          for (const sagaId of sagaIds) write(sagaId, step)
          commit.run()
        }
      }
    },
    close: () => db.close()
  }
}

/** Runs sagas through the library on `layer`, one after another or 100 at once. */
const makeEffectSaga = (layer: Layer.Layer<Saga.Saga, unknown>) => {
  const runtime = ManagedRuntime.make(layer)
  return { ...sagaRunner(runtime), dispose: () => runtime.dispose() }
}

/** Throughput figures under one `synchronous` setting. */
export interface Throughput {
  readonly synchronous: Synchronous
  readonly floor: Rate
  readonly floorBatched: Rate
  readonly one: Rate
  readonly concurrent: Rate
  /** The same sagas on the in-memory journal. */
  readonly memoryOne: Rate
  readonly memoryConcurrent: Rate
}

const measureThroughput = async (
  dir: string,
  options: SqliteBenchOptions,
  synchronous: Synchronous,
  transactions: ReadonlyArray<ReadonlyArray<Journal.Entry>>
): Promise<Throughput> => {
  const floor = makeFloor(await createFile(dir, `floor-${synchronous}.db`), synchronous, transactions)
  const one = makeEffectSaga(sagaLayer(path.join(dir, `one-${synchronous}.db`), synchronous))
  const concurrent = makeEffectSaga(sagaLayer(path.join(dir, `concurrent-${synchronous}.db`), synchronous))
  const memoryOne = makeEffectSaga(memoryLayer)
  const memoryConcurrent = makeEffectSaga(memoryLayer)
  try {
    const rates = await measureTogether(options, {
      floor: { firstBatch: 1, run: floor.oneByOne },
      floorBatched: { firstBatch: CONCURRENCY, run: floor.batched },
      one: { firstBatch: 1, run: one.oneByOne },
      concurrent: { firstBatch: CONCURRENCY, run: concurrent.concurrent },
      memoryOne: { firstBatch: 1, run: memoryOne.oneByOne },
      memoryConcurrent: { firstBatch: CONCURRENCY, run: memoryConcurrent.concurrent }
    })
    return { synchronous, ...rates }
  } finally {
    floor.close()
    for (const sagas of [one, concurrent, memoryOne, memoryConcurrent]) await sagas.dispose()
  }
}

/** What `verify` costs and how large the file grows. */
export interface Storage {
  readonly sagas: number
  readonly entries: number
  readonly bytes: number
  /** Bytes per table and index, from SQLite's `dbstat`. */
  readonly parts: ReadonlyArray<{ readonly name: string; readonly bytes: number }>
  /** ms to `Journal.verify` 10,000 entries (reading them included), and the share spent hashing. */
  readonly verifyMs: number
  readonly hashMs: number
}

/** Runs `sagas` completed sagas into a fresh file, measures its size, then verifies 10,000 entries of it. */
const measureStorage = async (dir: string, sagas: number, synchronous: Synchronous): Promise<Storage> => {
  const filename = path.join(dir, `size-${synchronous}.db`)
  const runtime = ManagedRuntime.make(
    Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename, synchronous })))
  )
  await runtime.runPromise(Effect.forEach(range(0, sagas), saga, { concurrency: CONCURRENCY, discard: true }))
  const verify = await runtime.runPromise(
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      const ids: Array<string> = []
      let entries = 0
      for (const record of yield* journal.list()) {
        if (entries >= 10_000) break
        ids.push(record.sagaId)
        entries += record.revision
      }
      const start = performance.now()
      for (const id of ids) {
        const result = yield* Journal.verify(id)
        if (result._tag !== "Intact") return yield* Effect.dieMessage(`saga ${id} does not verify`)
      }
      const verifyMs = performance.now() - start
      const read = yield* Effect.forEach(ids, (id) => journal.read(id))
      const hashStart = performance.now()
      for (const saga of read) Journal.verifyEntries(saga)
      const hashMs = performance.now() - hashStart
      return { verifyMs: (verifyMs * 10_000) / entries, hashMs: (hashMs * 10_000) / entries }
    })
  )
  await runtime.dispose()
  const db = new Database(filename)
  db.pragma("wal_checkpoint(TRUNCATE)")
  const entries = (db.prepare(`SELECT count(*) AS n FROM ${entriesTable}`).get() as { n: number }).n
  const parts = db
    .prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC")
    .all() as Array<{ name: string; bytes: number }>
  db.close()
  const bytes =
    fs.statSync(filename).size + (fs.existsSync(`${filename}-wal`) ? fs.statSync(`${filename}-wal`).size : 0)
  return { sagas, entries, bytes, parts, ...verify }
}

/** Every figure of the SQLite section. */
export interface SqliteFigures {
  readonly dir: string
  readonly throughput: ReadonlyArray<Throughput>
  readonly storage: Storage
}

/** Measures the SQLite figures in a temp dir, removed afterwards. */
export const measureSqlite = async (options: SqliteBenchOptions): Promise<SqliteFigures> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-bench-"))
  try {
    const transactions = await recordTransactions()
    const throughput: Array<Throughput> = []
    for (const synchronous of options.synchronous) {
      throughput.push(await measureThroughput(dir, options, synchronous, transactions))
    }
    const storage = await measureStorage(dir, options.sizeSagas, options.synchronous[0] ?? "normal")
    return { dir, throughput, storage }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** Prints the figures as a table per `synchronous` setting, with the ratios the aim is stated in. */
export const printSqlite = (figures: SqliteFigures): void => {
  for (const t of figures.throughput) {
    // Issue 18's aims: FULL (the default) one saga ≤ 1.5×, 100 at once ≥ 3×; NORMAL ≤ 2×, ≥ 1.5×.
    const aim = t.synchronous === "full" ? { one: "1.5", concurrent: "3" } : { one: "2", concurrent: "1.5" }
    const rows: Array<[string, Rate, string]> = [
      ["floor: better-sqlite3, one saga", t.floor, "1.00×"],
      [
        `floor: better-sqlite3, ${CONCURRENCY} sagas a transaction`,
        t.floorBatched,
        `${fmt(stepsPerSec(t.floorBatched) / stepsPerSec(t.floor), 2)}× floor steps/s (ceiling)`
      ],
      [
        "effect-saga, one saga",
        t.one,
        `${fmt(t.one.usPerStep / t.floor.usPerStep, 2)}× floor µs/step (aim ≤ ${aim.one})`
      ],
      [
        `effect-saga, ${CONCURRENCY} sagas at once`,
        t.concurrent,
        `${fmt(stepsPerSec(t.concurrent) / stepsPerSec(t.floor), 2)}× floor steps/s (aim ≥ ${aim.concurrent})`
      ],
      [
        "effect-saga in memory, one saga",
        t.memoryOne,
        `${fmt(t.memoryOne.usPerStep / t.floor.usPerStep, 2)}× floor µs/step (no durability: the engine)`
      ],
      [
        `effect-saga in memory, ${CONCURRENCY} sagas at once`,
        t.memoryConcurrent,
        `${fmt(stepsPerSec(t.memoryConcurrent) / stepsPerSec(t.floor), 2)}× floor steps/s (no durability: the engine)`
      ]
    ]
    const header = ["", "steps/s", "µs/step", "mean µs/step", "vs the one-saga floor"]
    const cells = rows.map(([name, rate, ratio]) => [
      name,
      fmt(stepsPerSec(rate)),
      fmt(rate.usPerStep, 1),
      fmt(rate.meanUsPerStep, 1),
      ratio
    ])
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)))
    const line = (row: ReadonlyArray<string>) =>
      row.map((c, i) => (i === 0 || i === row.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")
    console.log()
    console.log(
      `SQLite, synchronous = ${t.synchronous.toUpperCase()} (WAL, busy timeout 5 s), a file in ${os.tmpdir()}`
    )
    console.log(line(header))
    console.log(widths.map((w) => "-".repeat(w)).join("-|-"))
    for (const row of cells) console.log(line(row))
  }
  const s = figures.storage
  console.log()
  console.log(
    `verify: ${fmt(s.verifyMs, 1)} ms per 10,000 entries (read and decode included; hashing alone ${fmt(s.hashMs, 1)} ms)`
  )
  console.log(
    `file size: ${fmt((s.bytes * 10_000) / s.sagas / 1e6, 1)} MB per 10,000 completed five-step sagas ` +
      `(${fmt(s.sagas)} sagas, ${fmt(s.entries)} entries, ${fmt(s.bytes / s.entries)} bytes an entry): ` +
      s.parts
        .filter((part) => part.bytes >= s.bytes / 100)
        .map((part) => `${part.name} ${fmt((part.bytes * 10_000) / s.sagas / 1e6, 1)} MB`)
        .join(", ")
  )
}
