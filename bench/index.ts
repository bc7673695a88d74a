/**
 * Saga benchmark: `npm run bench -- [--quick] [--sqlite | --receipts] [--pg | --pg-only]`, which builds
 * the library first: effect-saga is measured built, as users run it (bench/library.ts).
 * Warms up, measures steps/s and µs/step per contender (time-boxed, best of 5 rounds), then peak RSS
 * for N sagas in a fresh child process per contender (bench/memory.ts), RSS of a process that has run
 * many sagas on SQLite (bench/rss.ts), and prints one table
 * with ratios against the `workflow` contender and the journaling floor (bench/floor.ts). Then the SQLite section (bench/sqlite.ts): durable
 * steps per second on a file against better-sqlite3 alone. `--sqlite` runs that section only. Then the
 * receipts section (bench/receipts.ts): µs to seal and open a receipt, and one saga on SQLite with a
 * receipt per step, sealed and in plain text; `--receipts` runs that section only.
 * `--pg` adds the PostgreSQL section (bench/pg.ts): durable steps per second against DBOS Transact and
 * a plain `pg` insert loop, on the server at `EFFECT_SAGA_PG_URL` (default: the one `.ci/postgres
 * start` runs); `--pg-only` runs that section only. Then the trust section (bench/trust.ts): what
 * verifying a journal on every load costs; and the metrics section (bench/metrics.ts): what
 * recording the library's metrics costs, in memory and on SQLite.
 */
import { execFile } from "node:child_process"
import { loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import * as esbuild from "esbuild"
import { CONCURRENCY, type Contender, contenders, STEPS } from "./contenders.js"
import type { MemoryResult } from "./memory.js"
import { runMetrics } from "./metrics.js"
import { measureReceipts, printReceipts } from "./receipts.js"
import type { RssResult } from "./rss.js"
import { measureSqlite, printSqlite } from "./sqlite.js"
import { printTable } from "./table.js"
import { runTrust } from "./trust.js"

const quick = process.argv.includes("--quick")
const sqliteOnly = process.argv.includes("--sqlite")
const receiptsOnly = process.argv.includes("--receipts")
const pgOnly = process.argv.includes("--pg-only")
const withPg = pgOnly || process.argv.includes("--pg")
const WARMUP_MS = quick ? 200 : 2000
const MEASURE_MS = quick ? 300 : 2500
const ROUNDS = 5
const MEMORY_SAGAS = quick ? 1_000 : 10_000
/** RSS on SQLite after the first count of sagas and after the second, in one process (bench/rss.ts). */
const RSS_SAGAS = quick ? ([500, 5_000] as const) : ([10_000, 100_000] as const)
const REFERENCE = "workflow"
/** The journaling floor (bench/floor.ts): the second reference for ratios. */
const FLOOR = "floor"
/** The SQLite section: shorter rounds, `synchronous` FULL only in the full run (each commit waits for the disk). */
const SQLITE = {
  warmupMs: quick ? 200 : 1000,
  measureMs: quick ? 300 : 2500,
  rounds: ROUNDS,
  sizeSagas: quick ? 1_000 : 10_000,
  synchronous: quick ? (["full"] as const) : (["full", "normal"] as const)
}
/** The receipts section: the same rounds. */
const RECEIPTS = {
  warmupMs: quick ? 200 : 1000,
  measureMs: quick ? 300 : 2500,
  rounds: ROUNDS
}
/** The PostgreSQL section: the same rounds; every contender's pool has 10 connections (DBOS's and `Postgres.layer`'s default). */
const PG = {
  url: process.env.EFFECT_SAGA_PG_URL ?? "postgres://postgres@127.0.0.1:55432/postgres",
  warmupMs: quick ? 200 : 1000,
  measureMs: quick ? 300 : 2500,
  rounds: ROUNDS,
  pool: 10,
  accountingSagas: quick ? 5 : 20
}

/** Throughput of one contender. */
export interface Throughput {
  readonly stepsPerSec: number
  readonly usPerStep: number
  /** µs per step averaged over all rounds (the figures above come from the best round). */
  readonly meanUsPerStep: number
}

/** Runs `contender` for about `ms`, in batches of `batch` sagas; returns sagas run and elapsed ms. */
const runFor = async (contender: Contender, batch: number, ms: number) => {
  let sagas = 0
  const start = performance.now()
  while (performance.now() - start < ms) {
    await contender.runSagas(batch)
    sagas += batch
  }
  return { sagas, elapsed: performance.now() - start }
}

/** Warms up for WARMUP_MS, doubling the batch until one batch takes about 1/50 of the measuring time. */
const warmUp = async (contender: Contender): Promise<number> => {
  let batch = 1
  const start = performance.now()
  while (performance.now() - start < WARMUP_MS) {
    const t = performance.now()
    await contender.runSagas(batch)
    if (performance.now() - t < MEASURE_MS / 50 && batch < 1 << 20) batch *= 2
  }
  return batch
}

/**
 * Warms every contender up (the workflow engine's JIT needs ~2 s to settle), then measures ROUNDS
 * windows each, the contenders taking turns (round 1 of each, then round 2 of each, …), and keeps
 * each one's fastest window: this 2-core machine is shared, so slower windows mostly measure
 * contention, and taking turns makes every contender see the same drift.
 */
export const measureThroughputs = async (entries: ReadonlyArray<Contender>): Promise<Map<string, Throughput>> => {
  const batches = new Map<string, number>()
  for (const contender of entries) batches.set(contender.name, await warmUp(contender))
  const best = new Map(entries.map((c) => [c.name, Number.POSITIVE_INFINITY]))
  const totals = new Map(entries.map((c) => [c.name, { sagas: 0, elapsed: 0 }]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const contender of entries) {
      const { sagas, elapsed } = await runFor(contender, batches.get(contender.name)!, MEASURE_MS / ROUNDS)
      best.set(contender.name, Math.min(best.get(contender.name)!, (elapsed * 1000) / (sagas * STEPS)))
      const total = totals.get(contender.name)!
      totals.set(contender.name, { sagas: total.sagas + sagas, elapsed: total.elapsed + elapsed })
    }
  }
  return new Map(
    entries.map(({ name }) => {
      const us = best.get(name)!
      const total = totals.get(name)!
      return [
        name,
        { stepsPerSec: 1e6 / us, usPerStep: us, meanUsPerStep: (total.elapsed * 1000) / (total.sagas * STEPS) }
      ]
    })
  )
}

const exec = promisify(execFile)
const memoryEntry = fileURLToPath(new URL("./memory.ts", import.meta.url))
const projectRoot = fileURLToPath(new URL("..", import.meta.url)) // where `--import tsx` resolves

/** Runs `count` sagas of contender `name` in a fresh `node --import tsx` child; returns its memory figures. */
export const measureMemory = async (name: string, count: number): Promise<MemoryResult> => {
  const args = ["--expose-gc", "--import", "tsx", memoryEntry, name, String(count)]
  const { stdout } = await exec(process.execPath, args, { cwd: projectRoot, maxBuffer: 1 << 24 })
  const lastLine = stdout.trim().split("\n").at(-1) ?? ""
  return JSON.parse(lastLine) as MemoryResult
}

const rssEntry = fileURLToPath(new URL("./rss.ts", import.meta.url))
const rssBundle = fileURLToPath(new URL("../.bench/rss.mjs", import.meta.url))

/**
 * Runs RSS_SAGAS on SQLite in a fresh child; returns its RSS and heap after each count. The child
 * is `bench/rss.ts` bundled by esbuild and run by plain `node`, not `--import tsx`: tsx compiles on
 * a loader thread with a V8 heap of its own, ≈ 65 MB of the child's RSS that no saga makes, which
 * that thread hands back once at a moment of its own (docs/performance.md, twelfth pass). The
 * library stays `dist/`, imported as it is, not bundled.
 */
const measureRss = async (): Promise<RssResult> => {
  await esbuild.build({
    entryPoints: [rssEntry],
    outfile: rssBundle,
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    external: ["../dist/*"],
    logLevel: "warning"
  })
  const args = ["--expose-gc", rssBundle, ...RSS_SAGAS.map(String)]
  const { stdout } = await exec(process.execPath, args, { cwd: projectRoot, maxBuffer: 1 << 24 })
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as RssResult
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

const sqliteSection = async () => {
  console.log()
  console.log(
    `SQLite section: ${SQLITE.warmupMs} ms warm-up + ${ROUNDS} × ${SQLITE.measureMs / ROUNDS} ms (best round) per figure, ` +
      `size for ${fmt(SQLITE.sizeSagas)} sagas; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`
  )
  printSqlite(await measureSqlite(SQLITE))
}

const receiptsSection = async () => {
  console.log()
  console.log(
    `Receipts section: ${RECEIPTS.warmupMs} ms warm-up + ${ROUNDS} × ${RECEIPTS.measureMs / ROUNDS} ms (best round) ` +
      `per figure, sealed and plain rounds alternating; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`
  )
  printReceipts(await measureReceipts(RECEIPTS))
}

/** Loaded only with `--pg`, so that the other sections never load DBOS or `pg`. */
const pgSection = async () => {
  const { measurePg, printPg } = await import("./pg.js")
  console.log()
  console.log(
    `PostgreSQL section: ${PG.warmupMs} ms warm-up + ${ROUNDS} × ${PG.measureMs / ROUNDS} ms (best round) per figure, ` +
      `round trips counted over ${PG.accountingSagas} sagas; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`
  )
  printPg(await measurePg(PG, loadavg))
}

const main = async () => {
  const entries = Object.values(contenders)
  const load = loadavg().map((l) => l.toFixed(2))
  console.log(
    `${quick ? "quick" : "full"} run: ${WARMUP_MS} ms warm-up + ${ROUNDS} × ${MEASURE_MS / ROUNDS} ms (best round) ` +
      `per contender, memory for ${fmt(MEMORY_SAGAS)} sagas; load average ${load.join(" ")}`
  )
  const throughput = await measureThroughputs(entries)
  for (const contender of entries) {
    const t = throughput.get(contender.name)!
    console.log(
      `  ${contender.name}: ${fmt(t.stepsPerSec)} steps/s, ${fmt(t.usPerStep, 3)} µs/step (mean ${fmt(t.meanUsPerStep, 3)})`
    )
  }
  const memory = new Map<string, MemoryResult>()
  for (const contender of entries) {
    const m = await measureMemory(contender.name, MEMORY_SAGAS)
    memory.set(contender.name, m)
    console.log(
      `  ${contender.name}: peak RSS ${fmt(m.peakRssMB)} MB, heapUsed after ${fmt(m.heapUsedMB)} MB, ` +
        `cold run ${fmt(m.coldUsPerStep, 3)} µs/step`
    )
  }
  const rss = await measureRss()
  console.log(
    `  effect-saga on SQLite (NORMAL, ${CONCURRENCY} at once): after ${fmt(rss.first)} sagas RSS ${fmt(rss.rssFirstMB)} MB, ` +
      `heap ${fmt(rss.heapFirstMB)} MB; after ${fmt(rss.total)} RSS ${fmt(rss.rssTotalMB)} MB, heap ${fmt(rss.heapTotalMB)} MB: ` +
      `RSS ${fmt(rss.rssTotalMB / rss.rssFirstMB, 2)}× (aim ≤ 1.10×); ` +
      `RSS every ${fmt(rss.first)} sagas ${fmt(Math.min(...rss.rssReadingsMB))}–${fmt(Math.max(...rss.rssReadingsMB))} MB ` +
      `(V8's committed heap ${fmt(Math.min(...rss.heapCommittedReadingsMB))}–${fmt(Math.max(...rss.heapCommittedReadingsMB))}); ` +
      `read at once after one GC, before V8 unmaps what it freed: ` +
      `${fmt(Math.min(...rss.rssAtOnceReadingsMB))}–${fmt(Math.max(...rss.rssAtOnceReadingsMB))} MB`
  )
  const refT = throughput.get(REFERENCE)
  const refM = memory.get(REFERENCE)
  const plainT = throughput.get("plain")
  const floorT = throughput.get(FLOOR)
  const grown = (m: MemoryResult) => m.peakRssMB - m.baselineRssMB
  const rows = entries.map(({ name }) => {
    const t = throughput.get(name)!
    const m = memory.get(name)!
    return [
      name,
      fmt(t.stepsPerSec),
      fmt(t.usPerStep, 3),
      fmt(m.peakRssMB),
      fmt(m.baselineRssMB),
      fmt(m.heapUsedMB),
      plainT ? `${fmt(t.usPerStep / plainT.usPerStep, 1)}×` : "-",
      floorT ? `${fmt(t.stepsPerSec / floorT.stepsPerSec, 2)}×` : "-",
      refT ? `${fmt(t.stepsPerSec / refT.stepsPerSec, 2)}×` : "-",
      refM ? `${fmt(m.peakRssMB / refM.peakRssMB, 2)}×` : "-",
      refM ? `${fmt(grown(m) / grown(refM), 2)}×` : "-",
      refM ? `${fmt(m.heapUsedMB / refM.heapUsedMB, 2)}×` : "-"
    ]
  })
  const header = [
    "contender",
    "steps/s",
    "µs/step",
    `peak RSS MB (${fmt(MEMORY_SAGAS)} sagas)`,
    "RSS MB at start",
    "heapUsed MB after",
    "µs/step vs plain",
    `steps/s vs ${FLOOR}`,
    `steps/s vs ${REFERENCE}`,
    `peak RSS vs ${REFERENCE}`,
    `RSS growth vs ${REFERENCE}`,
    `heap vs ${REFERENCE}`
  ]
  console.log()
  printTable(header, rows)
}

if (!sqliteOnly && !receiptsOnly && !pgOnly) await main()
if (!receiptsOnly && !pgOnly) await sqliteSection()
if (!sqliteOnly && !pgOnly) await receiptsSection()
if (!receiptsOnly && !pgOnly)
  await runTrust({ rounds: ROUNDS, roundMs: quick ? 60 : 400, entries: quick ? 2_000 : 20_000 })
if (!receiptsOnly && !pgOnly)
  await runMetrics({ warmupMs: WARMUP_MS, rounds: quick ? ROUNDS : 9, roundMs: quick ? 60 : 400 })
if (withPg) await pgSection()
