/**
 * What the durable stores' levers pay, A/B in one process: `npx tsx bench/stores.ts [--pg]
 * [--concurrency N]`. A five-step saga (INTENT and EXECUTED for each step), rounds of every variant
 * taking turns so that each sees the same drift in the disk's flush time; prints the best and the
 * median round, µs a step.
 *
 * - SQLite: `synchronous: "full"` with `flushEveryEntry: true`, `"full"` as it is by default (a
 *   step's `EXECUTED` commits unflushed), and `"normal"`.
 * - PostgreSQL (`--pg`, on `EFFECT_SAGA_PG_URL`): `SqlStore.layer` on a stock `PgClient` (every
 *   statement unnamed, every commit flushed), `Postgres.layer` with `flushEveryEntry: true`
 *   (prepared statements), and `Postgres.layer` as it is by default (prepared, EXECUTED unflushed).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Layer, ManagedRuntime, Redacted, Schema } from "effect"
import { type Approval, Compensable, type Journal, Saga, SqlStore } from "../src/index.js"
import * as Postgres from "../src/Postgres.js"

const onPg = process.argv.includes("--pg")
const concurrencyAt = process.argv.indexOf("--concurrency")
const concurrency = concurrencyAt < 0 ? 1 : Number(process.argv[concurrencyAt + 1])
const rounds = 7
const sagasARound = concurrency === 1 ? 40 : 3 * concurrency

const tools = ["reserve", "charge", "ship", "notify", "record"].map((name) =>
  Compensable.make({
    name,
    input: Schema.Struct({ n: Schema.Number }),
    success: Schema.String,
    execute: () => Effect.succeed("ok"),
    compensate: () => Effect.void
  })
)
const program = Effect.gen(function* () {
  for (const tool of tools) yield* tool({ n: 1 })
})

type Store = Layer.Layer<Approval.Approval | Journal.Journal, unknown>

const sqliteVariants = (dir: string): Record<string, Store> => ({
  "SQLite FULL, flushEveryEntry": SqlStore.layerSqlite({ filename: path.join(dir, "a.db"), flushEveryEntry: true }),
  "SQLite FULL, default (EXECUTED unflushed)": SqlStore.layerSqlite({ filename: path.join(dir, "b.db") }),
  "SQLite NORMAL": SqlStore.layerSqlite({ filename: path.join(dir, "c.db"), synchronous: "normal" })
})

const pgVariants = (url: string): Record<string, Store> => ({
  "PostgreSQL, stock PgClient (unnamed, flushed)": SqlStore.layer.pipe(
    Layer.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 10 }))
  ),
  "PostgreSQL, flushEveryEntry (prepared)": Postgres.layer({ url, flushEveryEntry: true }),
  "PostgreSQL, default (prepared, EXECUTED unflushed)": Postgres.layer({ url })
})

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-stores-"))
const url = process.env.EFFECT_SAGA_PG_URL ?? "postgres://postgres@127.0.0.1:55432/postgres"
const variants = Object.entries(onPg ? pgVariants(url) : sqliteVariants(dir)).map(([name, store]) => ({
  name,
  runtime: ManagedRuntime.make(Saga.layer.pipe(Layer.provide(store)))
}))

let next = 0
const runSagas = (runtime: (typeof variants)[number]["runtime"], sagas: number) =>
  runtime.runPromise(
    Effect.all(
      Array.from({ length: sagas }, () => Saga.run(`saga-${process.pid}-${next++}`, program)),
      { concurrency, discard: true }
    )
  )

try {
  for (const { runtime } of variants) await runSagas(runtime, sagasARound / 2)
  const usPerStep = variants.map(() => [] as Array<number>)
  for (let round = 0; round < rounds; round++) {
    for (const [i, { runtime }] of variants.entries()) {
      const start = performance.now()
      await runSagas(runtime, sagasARound)
      usPerStep[i]!.push(((performance.now() - start) * 1000) / (sagasARound * tools.length))
    }
  }
  console.log(
    `${concurrency} at once, ${rounds} rounds of ${sagasARound} sagas; load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}`
  )
  for (const [i, { name }] of variants.entries()) {
    const sorted = [...usPerStep[i]!].sort((a, b) => a - b)
    const best = sorted[0]!.toFixed(0)
    const median = sorted[Math.floor(rounds / 2)]!.toFixed(0)
    console.log(`${name.padEnd(52)} best ${best.padStart(6)} µs/step, median ${median.padStart(6)} µs/step`)
  }
} finally {
  for (const { runtime } of variants) await runtime.dispose()
  fs.rmSync(dir, { recursive: true, force: true })
}
