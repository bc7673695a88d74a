import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Journal, Recovery } from "../src/index.js"
import { live, readWorld, TravelAgent, type WorldLine } from "./fixtures/agent-travel.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-agent-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const root = fileURLToPath(new URL("..", import.meta.url))
const childScript = fileURLToPath(new URL("./fixtures/agent-child.ts", import.meta.url))

describe("an agent in a process killed mid-conversation", () => {
  it.scopedLive(
    "SIGKILL while a tool runs → recovery replays the journaled model turns and finishes; no turn is asked twice",
    () =>
      Effect.gen(function* () {
        const filename = path.join(dir, "agent.db")
        const killed = yield* runAndKill(filename)
        expect(killed).toBe("signal SIGKILL")

        // What the dead process did: two turns asked, the search ran, the hold was entered, never answered.
        const before = readWorld(dir)
        expect(turns(before)).toEqual([1, 2])
        expect(toolEvents(before)).toEqual([
          ["SearchFlights", "entered"],
          ["SearchFlights", "returned"],
          ["HoldSeat", "entered"]
        ])

        const { entries, report } = yield* Effect.gen(function* () {
          const recovery = yield* Recovery.make({ definitions: [TravelAgent] })
          const report = yield* recovery.recoverAll
          const journal = yield* Journal.Journal
          return { report, entries: yield* journal.read("trip-1") }
        }).pipe(Effect.provide(live(filename, dir)))

        expect(report.sagas).toHaveLength(1)
        const [recovered] = report.sagas
        assert(recovered?._tag === "Resumed")
        expect(recovered.result).toMatchObject({
          _tag: "Completed",
          value: expect.stringMatching(/^Booked: seat hold-/)
        })

        // The recovered run asked the model only the turns the journal did not hold.
        const after = readWorld(dir)
        expect(turns(after)).toEqual([1, 2, 3, 4])
        // The hold whose outcome was unknown was retried with the same idempotency key (Tool.Idempotent);
        // nothing else ran twice.
        const holds = after.flatMap((line) => ("tool" in line && line.tool === "HoldSeat" ? [line.key] : []))
        expect(new Set(holds).size).toBe(1)
        expect(toolEvents(after)).toEqual([
          ["SearchFlights", "entered"],
          ["SearchFlights", "returned"],
          ["HoldSeat", "entered"],
          ["HoldSeat", "entered"],
          ["HoldSeat", "returned"],
          ["ChargeCard", "entered"],
          ["ChargeCard", "returned"]
        ])
        const turnSteps = entries.filter((entry) => entry.toolName === "LanguageModel" && entry.phase === "EXECUTED")
        expect(turnSteps).toHaveLength(4)
        expect(entries.filter((entry) => entry.stepId === "HoldSeat:call-2#1").map((entry) => entry.phase)).toEqual([
          "INTENT",
          "INTENT",
          "EXECUTED"
        ])
      }),
    60_000
  )
})

const turns = (lines: ReadonlyArray<WorldLine>) => lines.flatMap((line) => ("turn" in line ? [line.turn] : []))

const toolEvents = (lines: ReadonlyArray<WorldLine>) =>
  lines.flatMap((line) => ("tool" in line ? [[line.tool, line.event]] : []))

/**
 * Runs test/fixtures/agent-child.ts on `filename` and kills it with SIGKILL as soon as it says its
 * `HoldSeat` handler was entered; answers how it ended.
 */
const runAndKill = (filename: string) =>
  Effect.async<string>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", childScript, filename, dir], { cwd: root })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      if (stdout.includes("entered HoldSeat\n")) child.kill("SIGKILL")
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    child.on("close", (code, signal) =>
      resume(Effect.succeed(signal === null ? `exit code ${code}: ${stdout}${stderr}` : `signal ${signal}`))
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })
