/**
 * A SIGINT or SIGTERM that reaches `bin/effect-saga.js` while the CLI's modules still load (before
 * any command runs) says so on stderr and exits 130, as an interrupted command does; it used to
 * kill the process by the signal, with no line. A module hook holds the CLI's module back until
 * the test has sent the signal, so the signal lands in that window every time; another holds the
 * command line's services (NodeContext.layer) while they are built, before the command line begins.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Saga } from "../src/index.js"
import { onFile } from "./fixtures/worker-on-file.js"

const root = path.resolve(import.meta.dirname, "..")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-early-signal-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

// Loading the CLI's own module (dist/Cli.js, or src/Cli.ts without a build) marks a file and waits.
const hooks = path.join(dir, "hold-cli.mjs")
fs.writeFileSync(
  hooks,
  `import { writeFileSync } from "node:fs"
export async function load(url, context, next) {
  if (/\\/(dist\\/Cli\\.js|src\\/Cli\\.ts)$/.test(url)) {
    writeFileSync(process.env.HELD_MARK, url)
    await new Promise((resolve) => setTimeout(resolve, 60_000))
  }
  return next(url, context)
}
`
)
const registrar = path.join(dir, "register.mjs")
fs.writeFileSync(
  registrar,
  `import { register } from "node:module"\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`
)

// The CLI's own module sends the process a signal as the last thing it does when it loads: the
// signal arrives while the main thread is busy, and Node delivers it only once the loop turns, after
// the script has handed the signals over to the command.
const lateHooks = path.join(dir, "signal-from-cli.mjs")
fs.writeFileSync(
  lateHooks,
  `export async function load(url, context, next) {
  const loaded = await next(url, context)
  if (!/\\/(dist\\/Cli\\.js|src\\/Cli\\.ts)$/.test(url)) return loaded
  return { ...loaded, source: Buffer.from(loaded.source).toString("utf8") + "\\nprocess.kill(process.pid, process.env.SIGNAL_SENT)\\n" }
}
`
)
const lateRegistrar = path.join(dir, "register-late.mjs")
fs.writeFileSync(
  lateRegistrar,
  `import { register } from "node:module"\nregister(${JSON.stringify(pathToFileURL(lateHooks).href)})\n`
)

// Node's services for the command line (`NodeContext.layer`) never finish building: the command
// line has not begun when the signal comes, and the layer marks a file once it is being built.
const servicesHooks = path.join(dir, "hold-services.mjs")
fs.writeFileSync(
  servicesHooks,
  `export async function load(url, context, next) {
  const loaded = await next(url, context)
  if (!/\\/platform-node\\/dist\\/esm\\/NodeContext\\.js$/.test(url)) return loaded
  const source = Buffer.from(loaded.source).toString("utf8").replace("export const layer =", "const heldLayer =")
  return { ...loaded, source: source + \`
import * as HeldEffect from "effect/Effect";
import { writeFileSync as markHeld } from "node:fs";
export const layer = Layer.merge(heldLayer, Layer.effectDiscard(HeldEffect.zipRight(HeldEffect.sync(() => markHeld(process.env.HELD_MARK, "held")), HeldEffect.never)));
\` }
}
`
)
const servicesRegistrar = path.join(dir, "register-services.mjs")
fs.writeFileSync(
  servicesRegistrar,
  `import { register } from "node:module"\nregister(${JSON.stringify(pathToFileURL(servicesHooks).href)})\n`
)

interface Ended {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

/** Runs `effect-saga list` held back by the hooks `registered`, and sends `signal` once it is. */
const interruptedWhileLoading = (signal: NodeJS.Signals, registered = registrar) =>
  Effect.async<Ended>((resume) => {
    const mark = path.join(dir, `held-${signal}-${path.basename(registered)}`)
    const child = spawn(
      process.execPath,
      ["--import", registered, path.join(root, "bin", "effect-saga.js"), "list", "--db", path.join(dir, "none.db")],
      { env: { ...process.env, HELD_MARK: mark }, stdio: ["ignore", "pipe", "pipe"] }
    )
    let stderr = ""
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    const watch = setInterval(() => {
      if (!fs.existsSync(mark)) return
      clearInterval(watch)
      child.kill(signal)
    }, 20)
    child.on("close", (code, ended) => {
      clearInterval(watch)
      resume(Effect.succeed({ code, signal: ended, stderr }))
    })
    return Effect.sync(() => {
      clearInterval(watch)
      child.kill("SIGKILL")
    })
  })

describe("effect-saga interrupted while its modules load", { timeout: 60_000 }, () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it.effect(`${signal} says nothing was written and exits 130`, () =>
      Effect.gen(function* () {
        const ended = yield* interruptedWhileLoading(signal)
        expect(ended).toEqual({ code: 130, signal: null, stderr: "effect-saga: interrupted: nothing was written\n" })
      })
    )
  }
})

describe("effect-saga interrupted while its command line's services are built", { timeout: 60_000 }, () => {
  // The command line has not begun: nothing of it can say what it left, so the process says it.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it.effect(`${signal} says nothing was written and exits 130`, () =>
      Effect.gen(function* () {
        const ended = yield* interruptedWhileLoading(signal, servicesRegistrar)
        expect(ended).toEqual({ code: 130, signal: null, stderr: "effect-saga: interrupted: nothing was written\n" })
      })
    )
  }
})

describe("effect-saga signalled as its modules finish loading", { timeout: 60_000 }, () => {
  // `serve` waits for requests until a signal stops it: a signal that was lost leaves it serving.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it.effect(`${signal}, delivered once the command has the signals, still stops it: exit 130`, () =>
      Effect.gen(function* () {
        const db = path.join(dir, `late-${signal}.db`)
        yield* onFile(db, Saga.list())
        const ended = yield* Effect.async<Ended>((resume) => {
          const child = spawn(
            process.execPath,
            [
              "--import",
              lateRegistrar,
              path.join(root, "bin", "effect-saga.js"),
              "serve",
              "--db",
              db,
              "--port",
              "0",
              "--insecure"
            ],
            { env: { ...process.env, SIGNAL_SENT: signal }, stdio: ["ignore", "pipe", "pipe"] }
          )
          let stderr = ""
          child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
            stderr += chunk
          })
          child.on("close", (code, ended) => resume(Effect.succeed({ code, signal: ended, stderr })))
          return Effect.sync(() => child.kill("SIGKILL"))
        })
        expect(ended).toMatchObject({ code: 130, signal: null })
        expect(ended.stderr).toMatch(/^effect-saga: interrupted: /)
      })
    )
  }
})
