import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { audit, loadJournal } from "./crash/audit.js"
import { runCrashHarness } from "./crash/harness.js"
import { formatFigures } from "./crash/report.js"
import type { Call } from "./crash/world.js"
import { readCalls } from "./crash/world.js"
import { freshDatabase } from "./fixtures/postgres.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-crash-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/**
 * The CI-sized run of the crash harness (test/crash/): 50 children killed with SIGKILL at random
 * moments while they run orders on one SQLite journal, then recovered and audited against what the
 * providers really did. `npm run crash -- --kills N` runs a larger one.
 */
describe("SIGKILL at random moments, 50 times", () => {
  it.live(
    "after recovery: every chain verifies, no executed step is lost, no undo runs twice, every unknown outcome is surfaced",
    () =>
      Effect.gen(function* () {
        const figures = yield* runCrashHarness({ kills: 50, dir })
        console.log(formatFigures(figures))
        for (const check of figures.checks) expect(check.failures, check.name).toEqual([])
        const { figures: counted } = figures.audit
        // Not vacuous: the kills caught sagas in the middle of steps, and the next child took them over.
        expect(counted.sagas).toBeGreaterThan(10)
        expect(counted.retriedAfterUnknown + counted.unknownSurfaced).toBeGreaterThan(0)
        expect(figures.restarts.some((restart) => (restart.recovery?.sagas ?? 0) > 0)).toBe(true)

        // Nor is the audit: the same journal against a world that a broken library would leave (an order
        // always ends with its reserve step executed: it is retried by its key after any crash).
        const journal = yield* loadJournal(path.join(dir, "journal.db"))
        const calls = readCalls(path.join(dir, "world.ndjson"))
        const failing = (world: ReadonlyArray<Call>) =>
          audit(journal, world)
            .checks.filter((check) => check.failures.length > 0)
            .map((check) => check.name.slice(0, 2))
        expect(failing(calls)).toEqual([])
        const refund = calls.find((call) => call.direction === "undo" && call.tool === "charge")!
        expect(failing([...calls, refund])).toEqual(["3."])
        const reserved = calls.find((call) => call.direction === "forward" && call.tool === "reserve" && call.applied)!
        expect(failing(calls.filter((call) => call !== reserved))).toEqual(["2."])
      }),
    10 * 60_000
  )
})

/** The same harness with the journal on PostgreSQL (the children reach it over their own pools). */
describe("SIGKILL at random moments on PostgreSQL, 20 times", () => {
  it.live(
    "after recovery: every chain verifies, no executed step is lost, no undo runs twice, every unknown outcome is surfaced",
    () =>
      Effect.gen(function* () {
        const postgres = yield* Effect.promise(() => freshDatabase("effect_saga_crash"))
        const figures = yield* runCrashHarness({ kills: 20, dir: path.join(dir, "postgres"), postgres })
        console.log(formatFigures(figures))
        for (const check of figures.checks) expect(check.failures, check.name).toEqual([])
        expect(figures.audit.figures.sagas).toBeGreaterThan(5)
      }),
    10 * 60_000
  )
})
