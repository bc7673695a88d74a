import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Journal, SqlJournal } from "../src/index.js"
import type { Report } from "./fixtures/append-worker.js"
import { startWorker } from "./fixtures/worker-process.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-multiprocess-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("several OS processes appending to the same sagas on one SQLite file", () => {
  it.scoped(
    "every saga stays gap-free and intact, holds exactly the appends that won, and every lost race is a ConcurrencyConflict",
    () =>
      Effect.gen(function* () {
        // Not vacuous: the processes really raced, and some of them lost. A machine busy enough to
        // run the workers one after another makes no race: such a run is checked too, then run again.
        let conflicts = 0
        for (let run = 1; run <= 3 && conflicts === 0; run++)
          conflicts = yield* raceOnce(path.join(dir, `race-${run}.db`))
        expect(conflicts).toBeGreaterThan(0)
      }),
    120_000
  )
})

/** One race of the workers on a new file, checked; the number of races lost. */
const raceOnce = (filename: string) =>
  Effect.gen(function* () {
    // The file does not exist yet: the workers create its tables as they open it, all at once.
    const workers = yield* Effect.forEach(
      Array.from({ length: workerCount }, (_, worker) => worker),
      (worker) =>
        startWorker<Report>(
          workerScript,
          [filename, String(worker), String(appendsPerWorker), ...sagaIds],
          `worker ${worker}`
        )
    )
    yield* Effect.forEach(workers, (worker) => worker.ready, { concurrency: "unbounded", discard: true })
    yield* Effect.forEach(workers, (worker) => worker.go, { discard: true })
    const reports = yield* Effect.forEach(workers, (worker) => worker.report, { concurrency: "unbounded" })

    for (const report of reports) {
      expect(report.otherErrors, `worker ${report.worker}`).toEqual({})
      expect(report.wins, `worker ${report.worker}`).toHaveLength(appendsPerWorker)
    }
    const conflicts = reports.flatMap((report) => report.conflicts)
    // A loser was told the truth: the saga had moved on past what it expected.
    for (const conflict of conflicts) expect(conflict.actual).toBeGreaterThan(conflict.expected)

    const wins = reports.flatMap((report) => report.wins)
    // An append is written whole or not at all: its entries take consecutive seqs.
    for (const win of wins) {
      expect(win.entries.map((entry) => entry.seq)).toEqual(range(win.entries[0]!.seq, win.entries.length))
    }

    const stored = yield* Effect.gen(function* () {
      const journal = yield* Journal.Journal
      return yield* Effect.forEach(sagaIds, (sagaId) =>
        Effect.all({
          sagaId: Effect.succeed(sagaId),
          entries: journal.read(sagaId),
          record: Effect.map(journal.get(sagaId), Option.getOrNull),
          verification: Journal.verify(sagaId)
        })
      )
    }).pipe(Effect.provide(SqlJournal.layerSqlite({ filename })))

    for (const { sagaId, entries, record, verification } of stored) {
      const last = entries[entries.length - 1]!
      expect(
        entries.map((entry) => entry.seq),
        sagaId
      ).toEqual(range(1, entries.length))
      expect(verification, sagaId).toEqual({ _tag: "Intact", entries: entries.length, digest: last.hash })
      expect(record, sagaId).toMatchObject({ status: "running", revision: last.seq, digest: last.hash })
      // Exactly the entries the winners were told they wrote: none lost, none extra, none forked.
      const claimed = wins
        .filter((win) => win.sagaId === sagaId)
        .flatMap((win) => win.entries)
        .sort((a, b) => a.seq - b.seq)
      expect(
        entries.map(({ hash, seq, stepId }) => ({ seq, stepId, hash })),
        sagaId
      ).toEqual(claimed)
    }
    const total = stored.reduce((sum, { entries }) => sum + entries.length, 0)
    expect(total).toBe(wins.reduce((sum, win) => sum + win.entries.length, 0))
    return conflicts.length
  })

const workerCount = 4
const appendsPerWorker = 150
// Few sagas for many appends: the workers keep landing on the same saga at the same time.
const sagaIds = ["order-a", "order-b", "order-c"]

const workerScript = fileURLToPath(new URL("./fixtures/append-worker.ts", import.meta.url))

const range = (from: number, length: number) => Array.from({ length }, (_, i) => from + i)
