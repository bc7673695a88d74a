import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Journal, Recovery } from "../src/index.js"
import { live, reserveOrder, toolkitAt } from "./fixtures/manifest-saga.js"
import { reservationBindings, writeManifest } from "./fixtures/manifest-tools.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-manifest-crash-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const root = fileURLToPath(new URL("..", import.meta.url))
const childScript = fileURLToPath(new URL("./fixtures/manifest-child.ts", import.meta.url))

const readWorld = (world: string): Array<{ event: string; key: string }> =>
  fs.existsSync(world)
    ? fs
        .readFileSync(world, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : []

describe("the saga's process killed with SIGKILL while a handler runs", () => {
  for (const retryMode of ["idempotency_key", "none"] as const) {
    it.scopedLive(
      `the outcome is unknown after recovery, and retried only with idempotency_key (retry_mode ${retryMode})`,
      () =>
        Effect.gen(function* () {
          const folder = path.join(dir, retryMode)
          const world = path.join(folder, "world.ndjson")
          const filename = path.join(folder, "journal.db")
          const manifestFile = writeManifest(folder, reservationBindings(world, retryMode))
          const killed = yield* runAndKill(filename, manifestFile, world)
          expect(killed).toBe("signal SIGKILL")
          const [entered] = readWorld(world)
          expect(entered?.event).toBe("entered")

          const toolkit = toolkitAt(manifestFile)
          const { report, entries } = yield* Effect.gen(function* () {
            const recovery = yield* Recovery.make({ definitions: [reserveOrder(toolkit)] })
            const report = yield* recovery.recoverAll
            const journal = yield* Journal.Journal
            return { report, entries: yield* journal.read("order-1") }
          }).pipe(Effect.provide(live(filename, toolkit)))

          const [recovered] = report.sagas
          assert(recovered?._tag === "Resumed")
          const step = entries.filter((entry) => entry.toolName === "createReservation").map((entry) => entry.phase)
          if (retryMode === "idempotency_key") {
            // Retried with the same key: the handler saw the key it had entered with, and created once.
            expect(recovered.result).toMatchObject({ _tag: "Completed", value: { reservationId: "res-1" } })
            expect(readWorld(world)).toEqual([
              { event: "entered", key: entered!.key },
              expect.objectContaining({ event: "created", key: entered!.key })
            ])
            expect(step).toEqual(["INTENT", "INTENT", "EXECUTED"])
          } else {
            // Never assumed done, never run again: a human resolves it.
            expect(recovered.result).toMatchObject({
              _tag: "NeedsAttention",
              unknown: [expect.objectContaining({ toolName: "createReservation" })]
            })
            expect(readWorld(world)).toEqual([{ event: "entered", key: entered!.key }])
            expect(step).toEqual(["INTENT"])
          }
        }),
      60_000
    )
  }
})

/**
 * Runs test/fixtures/manifest-child.ts and kills it with SIGKILL as soon as its handler recorded
 * `entered` in the world file; answers how it ended. The orphaned handler exits on its own.
 */
const runAndKill = (filename: string, manifestFile: string, world: string) =>
  Effect.async<string>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", childScript, filename, manifestFile, "order-1"], {
      cwd: root
    })
    let output = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk
    })
    const watch = setInterval(() => {
      if (readWorld(world).length > 0) child.kill("SIGKILL")
    }, 20)
    child.on("close", (code, signal) => {
      clearInterval(watch)
      resume(Effect.succeed(signal === null ? `exit code ${code}: ${output}` : `signal ${signal}`))
    })
    return Effect.sync(() => {
      clearInterval(watch)
      child.kill("SIGKILL")
    })
  })
