/**
 * The operator's CLI on an agent's saga (a scripted model, no network): its model turns and reads
 * change nothing, so rejecting or compensating it needs no tool for them; the tools that do change
 * something are loaded with `--register` from a module that exports the agent (`Agent.make`).
 * The CLI runs as a subprocess (bundled, as test/cli.test.ts runs it) on an SQLite file the agent
 * ran on in this process.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { build } from "esbuild"
import * as Agent from "../src/Agent.js"
import { Saga, SqlStore } from "../src/index.js"
import * as Scripted from "./fixtures/agent-scripted.js"
import { trip, tripHandlers } from "./fixtures/cli-agent-tools.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-cli-agent-"))
// The bundles import better-sqlite3 from the repository's node_modules: they must live below it.
const bundles = path.join(root, "node_modules", ".cache", "effect-saga-cli-agent-test", String(process.pid))
const cliBundle = path.join(bundles, "cli.mjs")
const agentBundle = path.join(bundles, "agent.mjs")
const aiToolkitBundle = path.join(bundles, "ai-toolkit.mjs")
const world = path.join(dir, "world.log")

beforeAll(async () => {
  await Promise.all(
    [
      { stdin: { contents: 'import { main } from "./src/Cli.ts"\nmain()\n', resolveDir: root, loader: "ts" as const } },
      { entryPoints: [path.join(root, "test", "fixtures", "cli-agent-tools.ts")] },
      {
        // What an operator might try first: the agent's @effect/ai toolkit, which holds no undo.
        stdin: {
          contents: 'import { trip } from "./test/fixtures/cli-agent-tools.ts"\nexport const toolkit = trip.toolkit\n',
          resolveDir: root,
          loader: "ts" as const
        }
      }
    ].map((entry, i) =>
      build({
        ...entry,
        outfile: [cliBundle, agentBundle, aiToolkitBundle][i]!,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        external: ["better-sqlite3", "@effect/sql-pg", "@effect/sql-pg/*", "pg", "pg/*", "pg-native", "pg-cursor"],
        logLevel: "warning"
      })
    )
  )
}, 120_000)

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true })
  fs.rmSync(bundles, { recursive: true, force: true })
})

describe("effect-saga reject and compensate on an agent's saga", { timeout: 60_000 }, () => {
  it.effect("model turns and reads need no tool: reject compensates a saga of nothing else without --register", () =>
    Effect.gen(function* () {
      const db = path.join(dir, "reads.db")
      const issue = yield* awaitingTicket(db, "trip-reads", ({ turn }) =>
        turn === 1
          ? Scripted.calls(Scripted.call("c1", "Search", { q: "GVA" }))
          : turn === 2
            ? Scripted.calls(Scripted.call("c2", "Issue", { holdId: "hold-GVA" }))
            : Scripted.says("Your ticket awaits approval.")
      )
      expect(issue.executed).toEqual([
        ["LanguageModel", true],
        ["Search", true],
        ["LanguageModel", true],
        ["LanguageModel", true]
      ])
      const rejected = yield* cli(db, "reject", "trip-reads", issue.stepId, "--as", "bob", "--reason", "no", "--json")
      expect(rejected.stderr).toBe("")
      expect(rejected.code).toBe(0)
      expect(JSON.parse(rejected.stdout)).toMatchObject({ sagaId: "trip-reads", status: "compensated", undone: [] })
    })
  )

  it.effect("reject names only the tools that change something, and undoes them with the agent --register loads", () =>
    Effect.gen(function* () {
      const db = path.join(dir, "hold.db")
      const issue = yield* awaitingTicket(db, "trip-hold", ({ turn }) =>
        turn === 1
          ? Scripted.calls(Scripted.call("c1", "Search", { q: "GVA" }), Scripted.call("c2", "Hold", { flight: "GVA" }))
          : turn === 2
            ? Scripted.calls(Scripted.call("c3", "Issue", { holdId: "hold-GVA" }))
            : Scripted.says("Your ticket awaits approval.")
      )
      const reject = ["reject", "trip-hold", issue.stepId, "--as", "bob", "--reason", "no"]
      const unloaded = yield* cli(db, ...reject)
      expect(unloaded).toMatchObject({ code: 2, stdout: "" })
      expect(unloaded.stderr).toBe(
        "effect-saga: reject would undo saga trip-hold, but this process has no tool for 1 executed step(s) (Hold): pass --register MODULE with the saga's tools (nothing was written)\n"
      )

      const toolkitOnly = yield* cli(db, ...reject, "--register", aiToolkitBundle)
      expect(toolkitOnly).toMatchObject({ code: 2, stdout: "" })
      expect(toolkitOnly.stderr).toBe(
        `effect-saga: --register ${aiToolkitBundle}: its export toolkit is @effect/ai's, which holds no undo: export the agent itself (the value Agent.make returns)\n`
      )

      const rejected = yield* cli(db, ...reject, "--register", agentBundle, "--json")
      expect(rejected.code).toBe(0)
      const report = JSON.parse(rejected.stdout)
      expect(report).toMatchObject({ sagaId: "trip-hold", status: "compensated", notUndone: [] })
      expect(report.undone.map((step: { toolName: string; outcome: string }) => [step.toolName, step.outcome])).toEqual(
        [["Hold", "completed"]]
      )
      expect(worldLines()).toContain("release hold-GVA")

      const again = yield* cli(db, "compensate", "trip-hold", "--register", agentBundle)
      expect(again.code).toBe(0)
      expect(worldLines().filter((line) => line === "release hold-GVA")).toHaveLength(1)
    })
  )
})

/**
 * Runs the trip agent as `sagaId` on `db` with the scripted model until it awaits the approval of
 * its `Issue` call: that step's id, and each executed step's tool and whether it changes nothing.
 */
const awaitingTicket = (db: string, sagaId: string, script: Scripted.Script) =>
  Effect.gen(function* () {
    const result = yield* Saga.run(sagaId, Agent.loop({ prompt: "Book me a flight", toolkit: trip.toolkit }))
    expect(result._tag).toBe("AwaitingApproval")
    const status = yield* Saga.status(sagaId)
    const waiting = status.steps.find((step) => step.state === "awaiting_approval")
    expect(waiting?.toolName).toBe("Issue")
    const executed = status.steps
      .filter((step) => step.state === "executed")
      .map((step) => [step.toolName, step.changesNothing === true])
    return { stepId: waiting!.stepId, executed }
  }).pipe(
    Effect.provide(
      Layer.mergeAll(tripHandlers, Agent.layerModel.pipe(Layer.provide(Scripted.layer(script).layer))).pipe(
        Layer.provideMerge(Saga.layer),
        Layer.provideMerge(SqlStore.layerSqlite({ filename: db }))
      )
    )
  )

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the bundled CLI with `args` on the SQLite file `db`, in a process of its own. */
const cli = (db: string, ...args: ReadonlyArray<string>) =>
  Effect.async<Ran>((resume) => {
    const child = spawn(process.execPath, [cliBundle, ...args, "--db", db], {
      cwd: dir,
      env: { ...process.env, EFFECT_SAGA_TEST_WORLD: world },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    child.on("error", (error) => resume(Effect.die(error)))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => {
      child.kill()
    })
  })

const worldLines = (): ReadonlyArray<string> =>
  fs.existsSync(world)
    ? fs
        .readFileSync(world, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : []
