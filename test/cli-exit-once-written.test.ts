/**
 * The CLI's process exits once the command's output is written, not when Node's loop runs dry: a
 * `--register` module's timer, a socket an undo left open, must not keep it alive (and, while Node
 * winds down on its own, it no longer hears signals). A preloaded module keeps a timer running
 * for the whole life of the process: the command ends all the same, with its own code.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlStore } from "../src/index.js"

const root = path.resolve(import.meta.dirname, "..")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-exit-written-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const keepAlive = path.join(dir, "keep-alive.mjs")
fs.writeFileSync(keepAlive, "setInterval(() => {}, 1000)\n")

interface Ended {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the CLI with the timer, and kills it if it has not ended after 20 seconds (code `null`). */
const runKeptAlive = (args: ReadonlyArray<string>) =>
  Effect.async<Ended>((resume) => {
    const child = spawn(process.execPath, ["--import", keepAlive, path.join(root, "bin", "effect-saga.js"), ...args], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
    })
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    const stuck = setTimeout(() => child.kill("SIGKILL"), 20_000)
    child.on("close", (code) => {
      clearTimeout(stuck)
      resume(Effect.succeed({ code, stdout, stderr }))
    })
    return Effect.sync(() => {
      clearTimeout(stuck)
      child.kill("SIGKILL")
    })
  })

describe("effect-saga exits once its output is written", { timeout: 60_000 }, () => {
  it.live("a command that succeeds exits 0 while a timer would keep Node's loop alive", () =>
    Effect.gen(function* () {
      const db = path.join(dir, "empty.db")
      yield* Effect.scoped(Layer.build(SqlStore.layerSqlite({ filename: db })))
      const ended = yield* runKeptAlive(["list", "--db", db])
      expect(ended).toEqual({ code: 0, stdout: "no sagas\n", stderr: "" })
    })
  )

  it.live("a command that fails exits with its own code while a timer would keep Node's loop alive", () =>
    Effect.gen(function* () {
      const db = path.join(dir, "none.db")
      const ended = yield* runKeptAlive(["list", "--db", db])
      expect(ended).toEqual({
        code: 2,
        stdout: "",
        stderr: `effect-saga: no database at ${db} (the CLI creates none, except to import)\n`
      })
    })
  )
})
