/**
 * The library against another checkout of itself on PostgreSQL, in one process:
 * `npx tsx bench/pg-ab.ts <other checkout> [--rounds N]`, on the server `EFFECT_SAGA_PG_URL` (default:
 * the one `.ci/postgres start` runs). Make the other checkout with `git archive <rev> | tar -x -C
 * /tmp/base` and link this repo's `node_modules` into it, so that both load the same `effect` and
 * `pg`. Each runs the bench's five-step saga on `Postgres.layer` (10 connections) in a database of its
 * own, one saga at a time (20 a round) and 100 at once (400 a round), their rounds taking turns; each
 * figure prints the best and the median round's wall µs a step and the median round's CPU µs a step.
 */
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Effect, Layer, ManagedRuntime } from "effect"
import pg from "pg"
import type * as Library from "../src/index.js"
import type * as PostgresModule from "../src/Postgres.js"
import { CONCURRENCY } from "./contenders.js"
import { STEPS, sagaOf } from "./steps.js"

const [checkout] = process.argv.slice(2).filter((arg) => !arg.startsWith("--"))
if (checkout === undefined) throw new Error("usage: npx tsx bench/pg-ab.ts <other checkout> [--rounds N]")
const roundsAt = process.argv.indexOf("--rounds")
const ROUNDS = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : 8
const url = process.env.EFFECT_SAGA_PG_URL ?? "postgres://postgres@127.0.0.1:55432/postgres"

const admin = new pg.Client({ connectionString: url })
await admin.connect()

/** One checkout's library on a database of its own: runs `count` new sagas, `concurrency` at once. */
const contender = async (root: string, name: string) => {
  const load = (file: string) => import(pathToFileURL(Path.resolve(root, "src", file)).href)
  const library = (await load("index.ts")) as typeof Library
  const { Saga } = library
  const Postgres = (await load("Postgres.ts")) as typeof PostgresModule
  const database = `effect_saga_ab_${name}_${process.pid}`
  await admin.query(`CREATE DATABASE ${database}`)
  const databaseUrl = new URL(url)
  databaseUrl.pathname = `/${database}`
  const store = Postgres.layer({ url: databaseUrl.toString(), maxConnections: 10 })
  const runtime = ManagedRuntime.make(Saga.layer.pipe(Layer.provide(store)))
  let next = 0
  const saga = sagaOf(library)
  const run = (count: number, concurrency: number) =>
    runtime.runPromise(
      Effect.forEach(
        Array.from({ length: count }, () => next++),
        saga,
        { concurrency, discard: true }
      )
    )
  const close = async () => {
    await runtime.dispose()
    await admin.query(`DROP DATABASE ${database} WITH (FORCE)`)
  }
  return { name, run, close }
}

const contenders = [
  await contender(checkout, "other"),
  await contender(fileURLToPath(new URL("..", import.meta.url)), "this")
]
const figures = [
  { name: "one at a time", count: 20, concurrency: 1 },
  { name: `${CONCURRENCY} at once`, count: 400, concurrency: CONCURRENCY }
]
const rounds = new Map<string, { wall: Array<number>; cpu: Array<number> }>()
try {
  for (const { run } of contenders) for (const { concurrency, count } of figures) await run(count, concurrency)
  for (let round = 0; round < ROUNDS; round++) {
    for (const { concurrency, count, name: figure } of figures) {
      for (const { name, run } of contenders) {
        const cpu = process.cpuUsage()
        const start = performance.now()
        await run(count, concurrency)
        const wallUs = (performance.now() - start) * 1000
        const { system, user } = process.cpuUsage(cpu)
        const key = `${figure}, ${name}`
        const seen = rounds.get(key) ?? { wall: [], cpu: [] }
        seen.wall.push(wallUs / (count * STEPS))
        seen.cpu.push((user + system) / (count * STEPS))
        rounds.set(key, seen)
      }
    }
  }
} finally {
  for (const { close } of contenders) await close()
  await admin.end()
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[values.length >> 1]!
for (const [key, { cpu, wall }] of rounds) {
  const best = Math.min(...wall).toFixed(0)
  console.log(
    `${key.padEnd(24)} wall µs/step best ${best.padStart(6)}, median ${median(wall).toFixed(0).padStart(6)}; CPU µs/step median ${median(cpu).toFixed(0).padStart(5)}`
  )
}
