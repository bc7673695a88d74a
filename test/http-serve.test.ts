import { spawn } from "node:child_process"
import * as net from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { type Console, Deferred, Effect, Exit, Fiber, Schedule } from "effect"
import * as Cli from "../src/Cli.js"
import { Journal, Saga } from "../src/index.js"
import { resetGate } from "./fixtures/gated-undo-tools.js"
import { freshDb, onDb, payout, raw, tokens } from "./fixtures/http-saga.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const main = path.join(root, "test", "fixtures", "cli-main.ts")
const gatedTools = path.join(root, "test", "fixtures", "gated-undo-tools.ts")

interface Served {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * `effect-saga serve ARGS…` from source; once it prints its URL, `use` runs against it and the
 * server is sent SIGTERM. A server that never says where it listens is killed when the test ends.
 */
const serve = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  use: (url: string) => Promise<void> = async () => {}
) =>
  Effect.async<Served>((resume) => {
    const { EFFECT_SAGA_API_TOKENS: _ignored, ...inherited } = process.env
    const child = spawn(process.execPath, ["--import", "tsx", main, "serve", ...args], {
      cwd: root,
      env: { ...inherited, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let used = false
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      const url = /serving (http:\/\/\S+)\/console/.exec(stdout)?.[1]
      if (url !== undefined && !used) {
        used = true
        use(url).then(
          () => child.kill("SIGTERM"),
          (error) => {
            stderr += `the test's requests failed: ${error}\n`
            child.kill("SIGTERM")
          }
        )
      }
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    child.on("error", (error) => resume(Effect.die(error)))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("effect-saga serve", { timeout: 60_000 }, () => {
  it.effect("serves the API with the tokens of EFFECT_SAGA_API_TOKENS until interrupted (exit 130)", () =>
    Effect.gen(function* () {
      const db = freshDb("serve")
      yield* onDb(db, Saga.run("payout-1", payout))
      const seen: Array<number> = []
      const served = yield* serve(
        ["--db", db, "--port", "0"],
        { EFFECT_SAGA_API_TOKENS: `alice=${tokens.alice}` },
        async (url) => {
          for (const token of [tokens.alice, undefined]) {
            const response = await fetch(`${url}/api/sagas`, {
              headers: token === undefined ? {} : { authorization: `Bearer ${token}` }
            })
            seen.push(response.status)
          }
        }
      )
      // Stopped by SIGTERM, it says so, and what that left.
      expect(served.stderr).toBe(
        "effect-saga: interrupted: stopped serving: the requests in flight were answered before the store closed, each saying what it journaled\n"
      )
      expect(seen).toEqual([200, 401])
      expect(served.code).toBe(130)
    })
  )

  it.effect("refuses to start without tokens unless --insecure on a loopback address (exit 2, one line)", () =>
    Effect.gen(function* () {
      const db = freshDb("serve-refused")
      yield* onDb(db, Saga.run("payout-1", payout))
      const bare = yield* inProcess(["serve", "--db", db, "--port", "0"])
      expect(bare.code).toBe(2)
      expect(bare.errors).toEqual([
        "effect-saga: refusing to serve on 127.0.0.1: EFFECT_SAGA_API_TOKENS is not set (give principal=token pairs, comma-separated, or start it with --insecure on a loopback address)"
      ])
      const open = yield* inProcess(["serve", "--db", db, "--port", "0", "--host", "0.0.0.0", "--insecure"])
      expect(open.code).toBe(2)
      expect(open.errors).toEqual([
        "effect-saga: refusing to serve on 0.0.0.0: insecure serving is allowed on a loopback address only"
      ])
    })
  )
})

describe("effect-saga serve, stopped with a request in flight", { timeout: 60_000 }, () => {
  it.live("answers it and journals its undo before the store is closed", () =>
    Effect.gen(function* () {
      const db = freshDb("serve-drain")
      yield* onDb(db, Saga.run("payout-1", payout))
      const gate = resetGate()
      const { fiber: server, url } = yield* serveInProcess(["--db", db, "--port", "0", "--register", gatedTools])
      const seen = yield* raw(url, "GET", "/api/sagas/payout-1", { as: "alice" })
      const { revision, digest } = (seen.body as { saga: { revision: number; digest: string } }).saga
      const request = yield* Effect.fork(
        raw(url, "POST", "/api/sagas/payout-1/compensate", { as: "alice", body: JSON.stringify({ revision, digest }) })
      )
      yield* Deferred.await(gate.started)
      // Stopped (SIGTERM's interruption) while the undo runs: the server stops listening, and waits.
      const stopped = yield* Effect.fork(Fiber.interrupt(server))
      yield* Effect.retry(refused(url), Schedule.spaced("5 millis"))
      yield* Deferred.succeed(gate.release, undefined)
      const answer = yield* Fiber.join(request)
      expect(Exit.isInterrupted(yield* Fiber.join(stopped))).toBe(true)
      expect(answer).toMatchObject({ status: 200, body: { changed: true, report: { status: "compensated" } } })
      const phases = yield* onDb(
        db,
        Effect.map(
          Effect.flatMap(Journal.Journal, (journal) => journal.read("payout-1")),
          (entries) => entries.map((entry) => entry.phase)
        )
      )
      expect(phases.slice(-3)).toEqual(["COMPENSATING", "COMPENSATED", "SAGA_COMPENSATED"])
    })
  )
})

describe("effect-saga serve, refused at startup", { timeout: 60_000 }, () => {
  it.effect("a port out of range is a usage error naming the flag and the range (exit 2, one line)", () =>
    Effect.gen(function* () {
      const db = freshDb("serve-port")
      for (const port of ["99999", "-1", "65536"]) {
        const refused = yield* inProcess(["serve", "--db", db, "--port", port, "--insecure"])
        expect([port, refused.code, refused.errors]).toEqual([
          port,
          2,
          [`effect-saga: --port ${port} is not a port: give 0–65535 (0 picks a free one)`]
        ])
      }
    })
  )

  it.effect("an address it cannot listen on is one line with the system's reason (exit 2)", () =>
    Effect.gen(function* () {
      const db = freshDb("serve-listen")
      yield* onDb(db, Saga.run("payout-1", payout))
      const taken = net.createServer()
      yield* Effect.async<void>((resume) => {
        taken.listen(0, "127.0.0.1", () => resume(Effect.void))
      })
      const port = (taken.address() as net.AddressInfo).port
      const busy = yield* inProcess(["serve", "--db", db, "--port", String(port), "--insecure"]).pipe(
        Effect.ensuring(Effect.sync(() => taken.close()))
      )
      expect(busy).toEqual({
        code: 2,
        errors: [
          `effect-saga: cannot serve on 127.0.0.1 port ${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`
        ]
      })
      const nowhere = yield* inProcess(
        ["serve", "--db", db, "--port", "0", "--host", "999.1.1.1"],
        `alice=${tokens.alice}`
      )
      expect(nowhere.code).toBe(2)
      expect(nowhere.errors).toEqual([
        expect.stringMatching(/^effect-saga: cannot serve on 999\.1\.1\.1 port 0: \S.*999\.1\.1\.1/)
      ])
    })
  )

  it.effect("a store that cannot be used is logged on stderr with the route, the caller gets 503", () =>
    Effect.gen(function* () {
      const db = freshDb("serve-503")
      yield* onDb(db, Saga.run("payout-1", payout))
      const seen: Array<number> = []
      const served = yield* serve(
        ["--db", db, "--port", "0"],
        { EFFECT_SAGA_API_TOKENS: `alice=${tokens.alice}` },
        async (url) => {
          const file = new Database(db)
          file.prepare("ALTER TABLE effect_saga_entries RENAME TO effect_saga_entries_gone").run()
          file.close()
          const response = await fetch(`${url}/api/sagas/payout-1`, {
            headers: { authorization: `Bearer ${tokens.alice}` }
          })
          seen.push(response.status)
        }
      )
      expect(seen).toEqual([503])
      expect(served.stderr).toMatch(
        /^effect-saga: error: GET \/api\/sagas\/payout-1 answered 503: journal \w+ failed: .*effect_saga_entries.*\n/
      )
      expect(served.stderr).not.toContain(tokens.alice)
    })
  )
})

/** Runs the CLI in this process (EFFECT_SAGA_API_TOKENS unset, or `apiTokens`); its exit code and the lines it wrote to stderr. */
const inProcess = (args: ReadonlyArray<string>, apiTokens?: string) =>
  Effect.gen(function* () {
    const errors: Array<string> = []
    const capturing = (current: Console.Console): Console.Console => ({
      ...current,
      error: (...parts) => Effect.sync(() => void errors.push(parts.join(" ")))
    })
    const saved = process.env.EFFECT_SAGA_API_TOKENS
    if (apiTokens === undefined) delete process.env.EFFECT_SAGA_API_TOKENS
    else process.env.EFFECT_SAGA_API_TOKENS = apiTokens
    const code = yield* Effect.consoleWith((current) => Effect.withConsole(Cli.run(args), capturing(current))).pipe(
      Effect.provide(NodeContext.layer),
      Effect.ensuring(
        Effect.sync(() => {
          if (saved !== undefined) process.env.EFFECT_SAGA_API_TOKENS = saved
          else delete process.env.EFFECT_SAGA_API_TOKENS
        })
      )
    )
    return { code, errors }
  })

/** `effect-saga serve ARGS…` in this process (as alice's token allows), forked; its fiber once it says where it listens. */
const serveInProcess = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const listening = yield* Deferred.make<string>()
    const capturing = (current: Console.Console): Console.Console => ({
      ...current,
      log: (...parts) => {
        const url = /serving (http:\/\/\S+)\/console/.exec(parts.join(" "))?.[1]
        return url === undefined ? Effect.void : Effect.asVoid(Deferred.succeed(listening, url))
      }
    })
    const saved = process.env.EFFECT_SAGA_API_TOKENS
    process.env.EFFECT_SAGA_API_TOKENS = `alice=${tokens.alice}`
    const fiber = yield* Effect.consoleWith((current) =>
      Effect.withConsole(Cli.run(["serve", ...args]), capturing(current))
    ).pipe(Effect.provide(NodeContext.layer), Effect.fork)
    const url = yield* Effect.raceFirst(
      Deferred.await(listening),
      Effect.flatMap(Fiber.await(fiber), (exit) => Effect.die(`serve ended before it listened: ${String(exit)}`))
    ).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          if (saved !== undefined) process.env.EFFECT_SAGA_API_TOKENS = saved
          else delete process.env.EFFECT_SAGA_API_TOKENS
        })
      )
    )
    return { fiber, url }
  })

/** Succeeds once nothing listens at `url` any more (the connection is refused); fails while something does. */
const refused = (url: string) =>
  Effect.async<void, string>((resume) => {
    const { hostname, port } = new URL(url)
    const socket = net.connect(Number(port), hostname)
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.fail("still listening"))
    })
    socket.once("error", () => resume(Effect.void))
  })

describe("effect-saga serve, signalled again while an undo never returns", { timeout: 60_000 }, () => {
  it.scopedLive("the second signal stops it at once (exit 130) with one line saying what it cut off", () =>
    Effect.gen(function* () {
      const db = freshDb("serve-forced")
      yield* onDb(db, Saga.run("payout-1", payout))
      const phases = onDb(
        db,
        Effect.map(
          Effect.flatMap(Journal.Journal, (journal) => journal.read("payout-1")),
          (entries) => entries.map((entry) => entry.phase)
        )
      )
      const { EFFECT_SAGA_API_TOKENS: _ignored, ...inherited } = process.env
      const child = spawn(
        process.execPath,
        ["--import", "tsx", main, "serve", "--db", db, "--port", "0", "--register", gatedTools],
        {
          cwd: root,
          env: { ...inherited, EFFECT_SAGA_API_TOKENS: `alice=${tokens.alice}` },
          stdio: ["ignore", "pipe", "pipe"]
        }
      )
      yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk
      })
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk
      })
      const closed = Effect.async<number | null>((resume) => {
        if (child.exitCode !== null) return resume(Effect.succeed(child.exitCode))
        child.on("close", (code) => resume(Effect.succeed(code)))
      })
      const url = yield* Effect.retry(
        Effect.suspend(() => {
          const found = /serving (http:\/\/\S+)\/console/.exec(stdout)?.[1]
          return found === undefined ? Effect.fail("not yet") : Effect.succeed(found)
        }),
        Schedule.spaced("20 millis").pipe(Schedule.upTo("30 seconds"))
      )
      const seen = yield* raw(url, "GET", "/api/sagas/payout-1", { as: "alice" })
      const { revision, digest } = (seen.body as { saga: { revision: number; digest: string } }).saga
      yield* Effect.fork(
        raw(url, "POST", "/api/sagas/payout-1/compensate", { as: "alice", body: JSON.stringify({ revision, digest }) })
      )
      yield* Effect.retry(
        Effect.flatMap(phases, (written) => (written.at(-1) === "COMPENSATING" ? Effect.void : Effect.fail("not yet"))),
        Schedule.spaced("20 millis").pipe(Schedule.upTo("30 seconds"))
      )

      child.kill("SIGTERM")
      // The first signal waits for the undo in flight, which never returns.
      const drained = yield* Effect.timeout(closed, "500 millis").pipe(Effect.option)
      expect(drained._tag).toBe("None")
      child.kill("SIGTERM")
      expect(yield* closed).toBe(130)
      expect(stderr).toBe(
        "effect-saga: interrupted again: stopped at once, without waiting for what was under way: an undo still running was cut off with no outcome journaled (its step stays started, its saga compensating under this process's lease until the lease lapses; effect-saga list --status compensating lists it, and effect-saga show with its id says where it stands)\n"
      )
      expect((yield* phases).at(-1)).toBe("COMPENSATING")
    })
  )
})
