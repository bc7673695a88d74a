/**
 * What HTTP costs over reading in process, on loopback only:
 *
 *   npx tsx bench/http.ts [--reads 1000] [--approvals 200] [--clients 50]
 *
 * Prepares an SQLite file with `--approvals` payout sagas awaiting approval of a wire transfer,
 * starts `effect-saga serve` on it (a process of its own, 127.0.0.1, a free port, a bearer token),
 * then from `--clients` concurrent clients sends `--reads` `GET /api/sagas/:sagaId` and one
 * `POST …/approve` per saga (with the revision and digest `GET /api/approvals` gave). Prints
 * requests/s and p50/p99 latency of each, then the same reads through the library in this process
 * (`Saga.status` and the journal's entries, as the handler reads them), and the ratio. Bounded: the
 * server is killed after two minutes whatever happens.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Layer, Schema } from "effect"
import { Compensable, Journal, Saga, SqlStore } from "../src/index.js"

const argument = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(name)
  return index === -1 ? fallback : Number(process.argv[index + 1])
}
const READS = argument("--reads", 1000)
const APPROVALS = argument("--approvals", 200)
const CLIENTS = argument("--clients", 50)
const TOKEN = "bench-token-0123456789abcdef"
const root = fileURLToPath(new URL("..", import.meta.url))

const reserveFunds = Compensable.make({
  name: "reserveFunds",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: ({ amount }) => Effect.succeed(`hold-${amount}`),
  compensate: () => Effect.void
})

const sendWireTransfer = Compensable.make({
  name: "sendWireTransfer",
  input: Schema.Struct({ amount: Schema.Int, to: Schema.String }),
  success: Schema.String,
  reversibility: "irreversible",
  execute: ({ amount }) => Effect.succeed(`wire-${amount}`)
})

const payout = (amount: number) =>
  Effect.zipRight(reserveFunds({ amount }), sendWireTransfer({ amount, to: "DE89 3704 0044 0532 0130 00" }))

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-bench-http-"))
const db = path.join(dir, "sagas.db")
const sagaIds = Array.from({ length: APPROVALS }, (_, i) => `payout-${i + 1}`)
const services = Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename: db })))

/** `effect-saga serve` on the file; resolves with its URL once it says where it listens. */
const startServer = () =>
  new Promise<{ url: string; stop: () => void }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "-e",
        'import("./src/Cli.ts").then((cli) => cli.main(process.argv.slice(1)))',
        "serve",
        "--db",
        db,
        "--port",
        "0"
      ],
      {
        cwd: root,
        env: { ...process.env, EFFECT_SAGA_API_TOKENS: `bench=${TOKEN}` },
        stdio: ["ignore", "pipe", "inherit"]
      }
    )
    const deadline = setTimeout(() => child.kill("SIGKILL"), 120_000)
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      const url = /serving (http:\/\/\S+)\/console/.exec(out)?.[1]
      if (url !== undefined)
        resolve({
          url,
          stop: () => {
            clearTimeout(deadline)
            child.kill("SIGTERM")
          }
        })
    })
    child.on("exit", (code) => reject(new Error(`serve exited (${code}) before it listened`)))
  })

/** Runs `jobs` from `clients` workers at once; each job's latency in ms, and the wall time. */
const load = async (jobs: ReadonlyArray<() => Promise<void>>, clients: number) => {
  const latencies: Array<number> = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < jobs.length) {
        const job = jobs[next++]!
        const at = performance.now()
        await job()
        latencies.push(performance.now() - at)
      }
    })
  )
  return { latencies: latencies.sort((a, b) => a - b), seconds: (performance.now() - started) / 1000 }
}

const quantile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

const line = (what: string, result: { latencies: ReadonlyArray<number>; seconds: number }) =>
  `${what.padEnd(34)} ${String(result.latencies.length).padStart(6)} ${(result.latencies.length / result.seconds).toFixed(0).padStart(9)} ${quantile(result.latencies, 0.5).toFixed(2).padStart(8)} ${quantile(result.latencies, 0.99).toFixed(2).padStart(8)}`

const call = async (url: string, init: RequestInit = {}) => {
  const response = await fetch(url, {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }
  })
  if (!response.ok) throw new Error(`${init.method ?? "GET"} ${url}: ${response.status} ${await response.text()}`)
  return response.json() as Promise<unknown>
}

const main = async () => {
  console.log(`preparing ${APPROVALS} sagas awaiting approval in ${db}`)
  await Effect.runPromise(
    Effect.forEach(sagaIds, (sagaId, i) => Saga.run(sagaId, payout(i + 1)), { concurrency: 4 }).pipe(
      Effect.provide(services)
    )
  )
  const server = await startServer()
  try {
    const readJobs = Array.from({ length: READS }, (_, i) => async () => {
      await call(`${server.url}/api/sagas/${encodeURIComponent(sagaIds[i % sagaIds.length]!)}`)
    })
    await load(readJobs.slice(0, 100), CLIENTS) // warm-up
    const reads = await load(readJobs, CLIENTS)
    const pending = (await call(`${server.url}/api/approvals`)) as ReadonlyArray<{
      sagaId: string
      stepId: string
      revision: number
      digest: string
    }>
    const approveJobs = pending.map((request) => async () => {
      await call(
        `${server.url}/api/sagas/${encodeURIComponent(request.sagaId)}/steps/${encodeURIComponent(request.stepId)}/approve`,
        {
          method: "POST",
          body: JSON.stringify({ revision: request.revision, digest: request.digest })
        }
      )
    })
    const approvals = await load(approveJobs, CLIENTS)
    server.stop()
    const inProcess = await Effect.runPromise(
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const read = (sagaId: string) => Effect.zip(Saga.status(sagaId), journal.read(sagaId))
        const jobs = Array.from({ length: READS }, (_, i) => sagaIds[i % sagaIds.length]!)
        const latencies: Array<number> = []
        const started = performance.now()
        yield* Effect.forEach(
          jobs,
          (sagaId) =>
            Effect.suspend(() => {
              const at = performance.now()
              return Effect.tap(read(sagaId), () => Effect.sync(() => latencies.push(performance.now() - at)))
            }),
          { concurrency: CLIENTS, discard: true }
        )
        return { latencies: latencies.sort((a, b) => a - b), seconds: (performance.now() - started) / 1000 }
      }).pipe(Effect.provide(services))
    )
    console.log(
      `\n${"".padEnd(34)} ${"count".padStart(6)} ${"req/s".padStart(9)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)}`
    )
    console.log(line("HTTP GET /api/sagas/:sagaId", reads))
    console.log(line("HTTP POST …/approve", approvals))
    console.log(line("in process: status + entries", inProcess))
    const ratio = inProcess.latencies.length / inProcess.seconds / (reads.latencies.length / reads.seconds)
    console.log(
      `\nreads in process / reads over HTTP: ${ratio.toFixed(1)}× (the HTTP overhead, loopback, ${CLIENTS} clients)`
    )
  } finally {
    server.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
