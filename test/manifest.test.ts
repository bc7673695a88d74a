import * as childProcess from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Schema } from "effect"
import { Journal, Manifest, Saga, Timeline, Toolkit } from "../src/index.js"
import { masked, maskedCut } from "../src/internal/util/masking.js"
import { printable } from "../src/internal/util/printable.js"
import {
  handlers,
  loadToolkit,
  memoryServices,
  readWorld,
  reservationBindings,
  writeManifest
} from "./fixtures/manifest-tools.js"

const root = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-manifest-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))
let folders = 0
const freshDir = () => path.join(root, `case-${++folders}`)

/** Every line logged, at every level, with its annotations: what the library prints. */
const captureLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ message, logLevel }) => {
    lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
  })
  const layer = Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(LogLevel.All))
  return { lines, layer }
}

/** One binding of misbehave.mjs, whose input says how to misbehave. */
const misbehaving = (overrides: Record<string, unknown> = {}) => ({
  misbehave: {
    handler: { kind: "process", command: "node", args: [path.join(handlers, "misbehave.mjs")] },
    input: { type: "json" },
    output: { type: "string" },
    timeout_ms: 30_000,
    max_payload_bytes: 4096,
    effect_contract: { kind: "external_write", retry_mode: "none" },
    ...overrides
  }
})

const runMisbehaving = (input: unknown, overrides: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const toolkit = yield* loadToolkit(writeManifest(freshDir(), misbehaving(overrides)))
    return yield* Effect.provide(
      Effect.flatMap(Journal.Journal, (journal) =>
        Effect.zip(Saga.run("misbehaving", Toolkit.call(toolkit, "misbehave", input)), journal.read("misbehaving"))
      ),
      memoryServices(toolkit)
    )
  })

const isDead = (pid: number) => {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  // A zombie is dead, waiting to be reaped by whoever adopted it.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")
}

/** Polls until `check` holds (a real process is given the time it takes, up to 10 s). */
const eventually = (check: () => boolean) =>
  Effect.gen(function* () {
    for (let tries = 0; tries < 500 && !check(); tries++) yield* Effect.sleep("20 millis")
    return check()
  })

describe("tools from a manifest, run by real handler processes", () => {
  it.live(
    "a reservation is created and released through handlers; the receipt reaches the inverse and never the log",
    () =>
      Effect.gen(function* () {
        const dir = freshDir()
        const world = path.join(dir, "world.ndjson")
        const bindings = reservationBindings(world)
        const toolkit = yield* loadToolkit(
          writeManifest(dir, {
            ...bindings,
            releaseReservation: { ...bindings.releaseReservation, grants: ["network"] }
          })
        )
        const logs = captureLogs()
        const program = Effect.zipRight(
          Toolkit.call(toolkit, "createReservation", { sku: "A-1", quantity: 2 }),
          Effect.fail("payment declined")
        )
        const [result, entries] = yield* Effect.provide(
          Effect.flatMap(Journal.Journal, (journal) =>
            Effect.zip(Saga.run("order-1", program), journal.read("order-1"))
          ),
          Layer.merge(memoryServices(toolkit), logs.layer)
        )

        assert(result._tag === "Compensated")
        expect(result.report.undone).toEqual([
          expect.objectContaining({ toolName: "createReservation", outcome: "completed" })
        ])
        const events = readWorld(world)
        expect(events.map((event) => event.event)).toEqual(["created", "released"])
        const [created, released] = events
        expect(released).toMatchObject({
          id: created!.id,
          receipt: `receipt-of-${created!.id}-s3cr3t`,
          originalInput: { sku: "A-1", quantity: 2 }
        })
        // The inverse has an idempotency key of its own.
        expect(released!.key).not.toBe(created!.key)

        // The handler logged the receipt to its stderr: the log has that line, masked.
        const stderrLine = logs.lines.find((line) => line.includes("releaseReservation (compensate) wrote to stderr"))
        expect(stderrLine).toContain("releasing with receipt <redacted>")
        expect(logs.lines.filter((line) => line.includes("s3cr3t"))).toEqual([])
        expect(JSON.stringify(result)).not.toContain("s3cr3t")

        // The grant is journaled with the step's INTENT, before the process ran.
        const intent = entries.find((entry) => entry.phase === "INTENT" && entry.toolName === "createReservation")
        expect(JSON.parse(intent!.payload!)).toMatchObject({ capabilities: ["network"] })
        // And the inverse's with the undo's COMPENSATING, before its process ran.
        const compensating = entries.find((entry) => entry.phase === "COMPENSATING")
        expect(JSON.parse(compensating!.payload!)).toEqual({
          idempotencyKey: `${JSON.parse(intent!.payload!).idempotencyKey}/undo`,
          capabilities: ["network"]
        })
        // The timeline an operator reads says both.
        expect(Timeline.detailOf(intent!)).toBe("granted network")
        expect(Timeline.detailOf(compensating!)).toBe("granted network")
      })
  )

  it.live("the toolkit registers its inverses: Saga.compensate releases a completed saga's reservation", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const world = path.join(dir, "world.ndjson")
      const toolkit = yield* loadToolkit(writeManifest(dir, reservationBindings(world)))
      const report = yield* Effect.gen(function* () {
        const completed = yield* Saga.run(
          "order-2",
          Toolkit.call(toolkit, "createReservation", { sku: "B", quantity: 1 })
        )
        expect(completed._tag).toBe("Completed")
        return yield* Saga.compensate("order-2")
      }).pipe(Effect.provide(memoryServices(toolkit)))
      expect(report.status).toBe("compensated")
      expect(readWorld(world).map((event) => event.event)).toEqual(["created", "released"])
    })
  )

  it.live("Saga.compensateEffect undoes one reservation with one call of the inverse, and never twice", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const world = path.join(dir, "world.ndjson")
      const toolkit = yield* loadToolkit(writeManifest(dir, reservationBindings(world)))
      const [first, second] = yield* Effect.gen(function* () {
        yield* Saga.run("order-3", Toolkit.call(toolkit, "createReservation", { sku: "C", quantity: 1 }))
        const journal = yield* Journal.Journal
        const intent = (yield* journal.read("order-3")).find((entry) => entry.phase === "INTENT")!
        const effectId = JSON.parse(intent.payload!).idempotencyKey as string
        return [yield* Saga.compensateEffect(effectId), yield* Saga.compensateEffect(effectId)] as const
      }).pipe(Effect.provide(memoryServices(toolkit)))
      expect(first).toMatchObject({ _tag: "Settled", outcome: "completed" })
      expect(second).toMatchObject({ _tag: "Settled", outcome: "completed" })
      expect(readWorld(world).map((event) => event.event)).toEqual(["created", "released"])
    })
  )

  for (const [mode, outcome, detail, line] of [
    ["failed", "failed", "binding undo (compensate): the provider refused"],
    ["half-undone", "partial", "binding undo (compensate): one night is still booked"],
    ["unknown", "unknown", "binding undo (compensate): the provider timed out"],
    // No line of the protocol says nothing of whether it undid: unknown, not failed.
    ["garbage", "unknown", "binding undo (compensate): its output is not one JSON line of effect-saga-handler-v1"],
    [
      "raw",
      "unknown",
      "binding undo (compensate): it answered applied, but its compensation is neither completed nor partial",
      '{"outcome":"applied","compensation":"done"}'
    ],
    [
      "raw",
      "unknown",
      "binding undo (compensate): it answered failed, but its message is not a string",
      '{"outcome":"failed","message":5}'
    ]
  ] as const) {
    it.live(`an inverse that answers ${line ?? mode} is reported ${outcome}`, () =>
      Effect.gen(function* () {
        const bindings = {
          ...misbehaving({
            effect_contract: { kind: "external_write", retry_mode: "none", compensation: { tool: "undo" } }
          }),
          undo: {
            ...misbehaving().misbehave,
            input: { type: "string" },
            output: { type: "json" },
            handler: {
              kind: "process",
              command: "node",
              args: [path.join(handlers, "misbehave.mjs"), mode, ...(line === undefined ? [] : [line])]
            }
          }
        }
        const toolkit = yield* loadToolkit(writeManifest(freshDir(), bindings))
        const result = yield* Saga.run(
          "undone",
          Effect.zipRight(Toolkit.call(toolkit, "misbehave", { mode: "ok" }), Effect.fail("then the program fails"))
        ).pipe(Effect.provide(memoryServices(toolkit)))
        assert(result._tag === "Compensated" || result._tag === "CompensationFailed")
        expect(result.report.undone).toEqual([expect.objectContaining({ toolName: "misbehave", outcome })])
        expect(result.report.undone[0]!.detail).toContain(detail)
      })
    )
  }

  it.live("past timeout_ms the process group is killed (a grandchild too) and the outcome is unknown", () =>
    Effect.gen(function* () {
      const pidFile = path.join(freshDir(), "grandchild.pid")
      fs.mkdirSync(path.dirname(pidFile), { recursive: true })
      const [result, entries] = yield* runMisbehaving({ mode: "hang", pidFile }, { timeout_ms: 1500 })
      assert(result._tag === "NeedsAttention")
      expect(result.unknown[0]!.reason).toContain("binding misbehave (execute): no answer within timeout_ms 1500")
      expect(entries.map((entry) => entry.phase)).not.toContain("FAILED")
      const grandchild = Number(fs.readFileSync(pidFile, "utf8"))
      expect(yield* eventually(() => isDead(grandchild))).toBe(true)
    })
  )

  it.live("output past max_payload_bytes is killed and the outcome is unknown", () =>
    Effect.gen(function* () {
      const [result] = yield* runMisbehaving({ mode: "flood" })
      assert(result._tag === "NeedsAttention")
      expect(result.unknown[0]!.reason).toContain("its output passed max_payload_bytes 4096")
    })
  )

  it.live("an input over max_payload_bytes is refused before anything is journaled or spawned", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const world = path.join(dir, "world.ndjson")
      const toolkit = yield* loadToolkit(writeManifest(dir, reservationBindings(world)))
      const exit = yield* Effect.exit(
        Saga.run("big", Toolkit.call(toolkit, "createReservation", { sku: "x".repeat(5000), quantity: 1 })).pipe(
          Effect.provide(memoryServices(toolkit))
        )
      )
      // The engine refuses an input over the binding's cap before INTENT.
      assert(Exit.isSuccess(exit))
      assert(exit.value._tag === "Compensated")
      expect(String(exit.value.cause)).toContain("PayloadTooLarge")
      expect(readWorld(world)).toEqual([])
    })
  )

  it.live("an input that fits but whose request does not is refused before spawning, as failed", () =>
    Effect.gen(function* () {
      // The request line adds the protocol, the tool and the effect's ids to the input.
      const [result, entries] = yield* runMisbehaving("y".repeat(4000), { output: { type: "string" } })
      assert(result._tag === "Compensated")
      expect(String(result.cause)).toContain("binding misbehave (execute): not started: its request is")
      expect(entries.map((entry) => entry.phase)).toContain("FAILED")
    })
  )

  const malformed = [
    ["garbage", "its line is not JSON"],
    ["two-log-lines", "it wrote more than one line"],
    ["not-protocol", "its line is not a response of effect-saga-handler-v1"],
    ["ok-but-silent", "it wrote nothing"]
  ] as const
  for (const [mode, why] of malformed)
    it.live(`output that is not one JSON line of the protocol (${mode}) fails, naming the binding`, () =>
      Effect.gen(function* () {
        const input = mode === "ok-but-silent" ? { mode: "crash-free-silence" } : { mode }
        const [result, entries] = yield* runMisbehaving(
          input,
          mode === "ok-but-silent"
            ? {
                handler: {
                  kind: "process",
                  command: "node",
                  args: ["-e", "process.stdin.resume(); process.stdin.on('end', () => {})"]
                }
              }
            : {}
        )
        assert(result._tag === "Compensated")
        expect(String(result.cause)).toContain(
          `binding misbehave (execute): its output is not one JSON line of effect-saga-handler-v1: ${why}`
        )
        const failed = entries.find((entry) => entry.phase === "FAILED")
        expect(failed?.payload).toContain("binding misbehave")
      })
    )

  const claimed = [
    ['{"outcome":"applied","result":"ok","receipt":12345}', "it answered applied, but its receipt is not a string"],
    ['{"outcome":"applied","result":"ok","receipt":null}', "it answered applied, but its receipt is not a string"],
    ['{"outcome":"applied","result":"ok","message":5}', "it answered applied, but its message is not a string"],
    [
      '{"outcome":"applied","result":"ok","compensation":"done"}',
      "it answered applied, but its compensation is neither completed nor partial"
    ],
    ['{"outcome":"partial","message":["one night"]}', "it answered partial, but its message is not a string"],
    ['{"outcome":"failed","message":{"why":"declined"}}', "it answered failed, but its message is not a string"],
    [
      '{"outcome":"failed","outcome":"applied","result":"ok"}',
      "its line repeats the key at $.outcome (JSON keeps only the last): it is not trusted"
    ],
    [
      '{"outcome":"applied","outcome":"failed"}',
      "its line repeats the key at $.outcome (JSON keeps only the last): it is not trusted"
    ],
    [`{"outcome":"applied","result":${"[".repeat(1001)}${"]".repeat(1001)}}`, "its line nests deeper than 1000 levels"],
    // A log line printed before the answer: the handler says it acted, in a second line.
    [
      'charging card 4242\n{"outcome":"applied","result":"ok"}',
      "it wrote more than one line, one of them naming an outcome: it is not trusted"
    ]
  ] as const
  for (const [line, why] of claimed)
    it.live(
      `an answer that claims an outcome but does not decode, or repeats a key, is unknown: ${line.slice(0, 60)}`,
      () =>
        Effect.gen(function* () {
          const [result, entries] = yield* runMisbehaving({ mode: "raw", line }, { max_payload_bytes: 8192 })
          assert(result._tag === "NeedsAttention", JSON.stringify(result))
          expect(result.unknown[0]!.reason).toContain(`binding misbehave (execute): ${why}`)
          expect(entries.map((entry) => entry.phase)).not.toContain("FAILED")
        })
    )

  it.live("an answer that is not UTF-8 (Latin-1 bytes) is not trusted: unknown, never journaled with `�` in it", () =>
    Effect.gen(function* () {
      // {"outcome":"applied","result":"Z\xfcrich-7","receipt":"tok-\xfc"} in Latin-1.
      const latin1 = Buffer.from('{"outcome":"applied","result":"Z\u00fcrich-7","receipt":"tok-\u00fc"}\n', "latin1")
      const [result, entries] = yield* runMisbehaving({ mode: "bytes", hex: latin1.toString("hex") })
      assert(result._tag === "NeedsAttention", JSON.stringify(result))
      expect(result.unknown[0]!.reason).toContain(
        "binding misbehave (execute): its output is not UTF-8: it is not trusted, whatever it says"
      )
      expect(entries.map((entry) => entry.phase)).not.toContain("EXECUTED")
      expect(JSON.stringify(entries)).not.toContain("\ufffd")
      // Bytes that are not UTF-8 and name no outcome are no answer: the call failed, as for garbage.
      const [garbage] = yield* runMisbehaving({ mode: "bytes", hex: "ff fe 6e 6f 0a".replaceAll(" ", "") })
      assert(garbage._tag === "Compensated")
      expect(String(garbage.cause)).toContain(
        "its output is not one JSON line of effect-saga-handler-v1: its output is not UTF-8"
      )
    })
  )

  it.live("a byte order mark before the answer and blank lines after it are no second line", () =>
    Effect.gen(function* () {
      const answerLine = '{"outcome":"applied","result":"ok"}'
      for (const line of [`\uFEFF${answerLine}`, `${answerLine}\n\n`, `${answerLine}\r\n\r\n`]) {
        const [result] = yield* runMisbehaving({ mode: "raw", line })
        expect(result._tag, JSON.stringify(line)).toBe("Completed")
      }
    })
  )

  it.live("the receipt of an answer that is not trusted is masked in stderr all the same", () =>
    Effect.gen(function* () {
      const logs = captureLogs()
      const line = '{"outcome":"applied","result":"ok","receipt":"rcpt-untrusted-77","message":5}'
      const stderr = "my receipt is rcpt-untrusted-77"
      const [result] = yield* Effect.provide(runMisbehaving({ mode: "raw", line, stderr }), logs.layer)
      assert(result._tag === "NeedsAttention")
      expect(logs.lines.find((logged) => logged.includes("wrote to stderr"))).toContain("my receipt is <redacted>")
      expect([...logs.lines, JSON.stringify(result)].join("\n")).not.toContain("rcpt-untrusted-77")
    })
  )

  it.live("a line that repeats its receipt key has every receipt it gives masked, not only the one JSON keeps", () =>
    Effect.gen(function* () {
      const logs = captureLogs()
      const line = '{"outcome":"applied","result":"ok","receipt":"rcpt-first-31","receipt":"rcpt-second-32"}'
      const stderr = "receipts rcpt-first-31 and rcpt-second-32"
      const [result] = yield* Effect.provide(runMisbehaving({ mode: "raw", line, stderr }), logs.layer)
      assert(result._tag === "NeedsAttention")
      expect(result.unknown[0]!.reason).toContain("its line repeats the key at $.receipt (JSON keeps only the last)")
      expect(logs.lines.find((logged) => logged.includes("wrote to stderr"))).toContain(
        "receipts <redacted> and <redacted>"
      )
      const shown = [...logs.lines, JSON.stringify(result)].join("\n")
      for (const receipt of ["rcpt-first-31", "rcpt-second-32"]) expect(shown).not.toContain(receipt)
    })
  )

  it.live("a short receipt (t) is masked in what the handler wrote, never in the library's words around it", () =>
    Effect.gen(function* () {
      // A line not trusted (a repeated key) that gives `t` as its receipt: the reason quotes the key's path, masked.
      const line = '{"outcome":"applied","result":"ok","x":1,"x":2,"receipt":"t"}'
      const [unknown] = yield* runMisbehaving({ mode: "raw", line })
      assert(unknown._tag === "NeedsAttention")
      expect(unknown.unknown[0]!.reason).toBe(
        "outcome unknown: binding misbehave (execute): its line repeats the key at $.x (JSON keeps only the last): it is not trusted, whatever it says"
      )
      // An inverse given the receipt `t` that refuses, quoting it: its message masked, the label and the outcome's words not.
      const dir = freshDir()
      const bindings = {
        misbehave: {
          ...misbehaving().misbehave,
          effect_contract: { kind: "external_write", retry_mode: "none", compensation: { tool: "cancelTrip" } }
        },
        cancelTrip: {
          ...misbehaving().misbehave,
          handler: {
            kind: "process",
            command: "node",
            args: [path.join(handlers, "misbehave.mjs"), "raw", '{"outcome":"failed","message":"refused t"}']
          }
        }
      }
      const toolkit = yield* loadToolkit(writeManifest(dir, bindings))
      const applied = '{"outcome":"applied","result":"ok","receipt":"t"}'
      const program = Effect.zipRight(
        Toolkit.call(toolkit, "misbehave", { mode: "raw", line: applied }),
        Effect.fail("stop")
      )
      const result = yield* Effect.provide(Saga.run("cancel-trip", program), memoryServices(toolkit))
      assert(result._tag === "CompensationFailed", JSON.stringify(result))
      expect(result.report.undone.map((step) => step.detail)).toEqual([
        "failed (not applied): binding cancelTrip (compensate): refused <redacted>"
      ])
    })
  )

  it.live("a non-zero exit with no answer is an unknown outcome", () =>
    Effect.gen(function* () {
      const [result] = yield* runMisbehaving({ mode: "crash" })
      assert(result._tag === "NeedsAttention")
      expect(result.unknown[0]!.reason).toContain("binding misbehave (execute): it exited with code 3 and no answer")
    })
  )

  it.live("a handler ended by a signal, with no answer, is an unknown outcome that names the signal", () =>
    Effect.gen(function* () {
      const [result] = yield* runMisbehaving({ mode: "killed" })
      assert(result._tag === "NeedsAttention")
      expect(result.unknown[0]!.reason).toBe(
        "outcome unknown: binding misbehave (execute): it was ended by signal SIGKILL and no answer"
      )
    })
  )

  it.live("the handler's own outcomes: failed is a failure, unknown needs attention, applied must fit the output", () =>
    Effect.gen(function* () {
      const [failed] = yield* runMisbehaving({ mode: "failed" })
      assert(failed._tag === "Compensated")
      expect(String(failed.cause)).toContain("binding misbehave (execute): the provider refused")
      const [unknown] = yield* runMisbehaving({ mode: "unknown" })
      assert(unknown._tag === "NeedsAttention")
      expect(unknown.unknown[0]!.reason).toContain("the provider timed out")
      const [misfit] = yield* runMisbehaving({ mode: "bad-result" })
      assert(misfit._tag === "NeedsAttention")
      expect(misfit.unknown[0]!.reason).toContain("answered applied with a result that does not fit its output type")
    })
  )

  it.live("stderr reaches the log at debug, cut to its limit", () =>
    Effect.gen(function* () {
      const logs = captureLogs()
      const [result] = yield* Effect.provide(runMisbehaving({ mode: "noisy" }), logs.layer)
      expect(result._tag).toBe("Completed")
      const line = logs.lines.find((logged) => logged.includes("binding misbehave (execute) wrote to stderr"))
      expect(line).toMatch(/^DEBUG /)
      expect(line).toContain(`(${100_000 - 4096} more bytes cut)`)
      expect(line!.length).toBeLessThan(4096 + 200)
    })
  )

  it.live(
    "the handler's environment holds its secret and its granted variables only; the secret is in nothing the library prints",
    () =>
      Effect.gen(function* () {
        const secret = "tok-9f8e7d6c5b4a"
        const digest = crypto.createHash("sha256").update(secret).digest("hex")
        process.env.EFFECT_SAGA_PARENT_ONLY = "not for handlers"
        process.env.API_TOKEN = "the parent's own, not the ConfigProvider's"
        const bindings = (grants: ReadonlyArray<string>) => ({
          whoami: {
            handler: { kind: "process", command: "node", args: [path.join(handlers, "environment.mjs")] },
            input: { type: "object", properties: { sha256: { type: "string" } }, required: ["sha256"] },
            output: { type: "json" },
            timeout_ms: 30_000,
            max_payload_bytes: 65_536,
            secrets: ["API_TOKEN"],
            grants,
            effect_contract: { kind: "read", retry_mode: "idempotency_key" }
          }
        })
        const config = ConfigProvider.fromMap(
          new Map([
            ["API_TOKEN", secret],
            ["PATH", "/granted/path"]
          ])
        )
        const logs = captureLogs()
        const run = (grants: ReadonlyArray<string>, sagaId: string) =>
          Effect.gen(function* () {
            const toolkit = yield* loadToolkit(writeManifest(freshDir(), bindings(grants)))
            return yield* Effect.provide(
              Effect.flatMap(Journal.Journal, (journal) =>
                Effect.zip(Saga.run(sagaId, Toolkit.call(toolkit, "whoami", { sha256: digest })), journal.read(sagaId))
              ),
              Layer.merge(memoryServices(toolkit), logs.layer)
            )
          }).pipe(Effect.withConfigProvider(config))

        const [alone, aloneEntries] = yield* run([], "env-1")
        assert(alone._tag === "Completed")
        expect(alone.value).toEqual({ names: ["API_TOKEN"], tokenMatches: true })
        const [granted, grantedEntries] = yield* run(["env:PATH"], "env-2")
        assert(granted._tag === "Completed")
        expect(granted.value).toEqual({ names: ["API_TOKEN", "PATH"], tokenMatches: true })

        const printed = [
          ...logs.lines,
          JSON.stringify([alone, granted]),
          JSON.stringify([...aloneEntries, ...grantedEntries])
        ].join("\n")
        expect(printed).not.toContain(secret)
        // The handler wrote the token to its stderr: logged masked.
        expect(logs.lines.some((line) => line.includes("token is <redacted>"))).toBe(true)
        delete process.env.EFFECT_SAGA_PARENT_ONLY
        delete process.env.API_TOKEN
      })
  )

  it.live(
    "a secret that begins another, or that straddles stderr's cut, leaves no part of it in the log or the journal",
    () =>
      Effect.gen(function* () {
        const [short, long] = ["tok", "tok-LONGER-SECRET-VALUE"]
        const bindings = {
          leak: {
            handler: { kind: "process", command: "node", args: [path.join(handlers, "secrets.mjs")] },
            input: { type: "object", properties: { pad: { type: "integer" } }, required: ["pad"] },
            output: { type: "json" },
            timeout_ms: 30_000,
            max_payload_bytes: 65_536,
            secrets: ["SHORT_TOKEN", "LONG_TOKEN"],
            effect_contract: { kind: "read", retry_mode: "none" }
          }
        }
        const config = ConfigProvider.fromMap(
          new Map([
            ["SHORT_TOKEN", short],
            ["LONG_TOKEN", long]
          ])
        )
        const logs = captureLogs()
        const toolkit = yield* loadToolkit(writeManifest(freshDir(), bindings)).pipe(Effect.withConfigProvider(config))
        const printed: Array<string> = []
        // The whole token in the stderr kept, then its first 11 bytes where the 4096 kept end.
        for (const [sagaId, pad] of [
          ["leak-1", 0],
          ["leak-2", 4096 - 11]
        ] as const) {
          const [result, entries] = yield* Effect.provide(
            Effect.flatMap(Journal.Journal, (journal) =>
              Effect.zip(Saga.run(sagaId, Toolkit.call(toolkit, "leak", { pad })), journal.read(sagaId))
            ),
            Layer.merge(memoryServices(toolkit), logs.layer)
          ).pipe(Effect.withConfigProvider(config))
          assert(result._tag === "Compensated")
          expect(JSON.stringify(result.cause)).toContain("the secret is <redacted>")
          printed.push(JSON.stringify(result), JSON.stringify(entries))
        }
        printed.push(...logs.lines)
        expect(logs.lines.filter((line) => line.includes("binding leak (execute) wrote to stderr"))).toHaveLength(2)
        const all = printed.join("\n")
        for (const part of ["LONGER", "-LONGER", "tok-LONG"]) {
          expect(all).not.toContain(part)
        }
      })
  )

  it.live(
    "a secret with multi-byte characters is masked when written in two parts split inside one, and when the cut splits one",
    () =>
      Effect.gen(function* () {
        // 17 bytes: "mb-SECRET-", é (2 bytes), "-", 🔑 (4 bytes).
        const secret = "mb-SECRET-é-🔑"
        const bytes = Buffer.byteLength(secret)
        const bindings = {
          leak: {
            handler: { kind: "process", command: "node", args: [path.join(handlers, "secrets.mjs")] },
            input: {
              type: "object",
              properties: { pad: { type: "integer" }, split: { type: "boolean" } },
              required: ["pad", "split"]
            },
            output: { type: "json" },
            timeout_ms: 30_000,
            max_payload_bytes: 65_536,
            secrets: ["LONG_TOKEN"],
            effect_contract: { kind: "read", retry_mode: "none" }
          }
        }
        const config = ConfigProvider.fromMap(new Map([["LONG_TOKEN", secret]]))
        const logs = captureLogs()
        const toolkit = yield* loadToolkit(writeManifest(freshDir(), bindings)).pipe(Effect.withConfigProvider(config))
        const cases = [
          // Two writes, the first ending inside é.
          { pad: 0, split: true },
          // The 4096 bytes kept end inside é, then inside 🔑 after each of its first three bytes.
          { pad: 4096 - 11, split: false },
          ...[1, 2, 3].map((left) => ({ pad: 4096 - (bytes - left), split: false }))
        ]
        for (const [index, input] of cases.entries()) {
          const sagaId = `mb-${index}`
          const result = yield* Effect.provide(
            Saga.run(sagaId, Toolkit.call(toolkit, "leak", input)),
            Layer.merge(memoryServices(toolkit), logs.layer)
          ).pipe(Effect.withConfigProvider(config))
          assert(result._tag === "Compensated")
          expect(JSON.stringify(result.cause)).toContain("the secret is <redacted>")
        }
        const stderrLines = logs.lines.filter((line) => line.includes("binding leak (execute) wrote to stderr"))
        expect(stderrLines).toHaveLength(cases.length)
        expect(stderrLines[0]).toMatch(/wrote to stderr: <redacted> and more$/)
        for (const line of stderrLines.slice(1)) expect(line).toMatch(/x<redacted> … \(\d+ more bytes cut\)$/)
        for (const part of ["SECRET", "\uFFFD", "🔑"]) {
          expect(logs.lines.filter((line) => line.includes(part))).toEqual([])
        }
      })
  )

  it.live("a handler that writes the receipt it answers with to stderr, or into its message, has it masked", () =>
    Effect.gen(function* () {
      const logs = captureLogs()
      const [applied] = yield* Effect.provide(runMisbehaving({ mode: "own-receipt" }), logs.layer)
      expect(applied._tag).toBe("Completed")
      const [failed] = yield* Effect.provide(runMisbehaving({ mode: "own-receipt-failed" }), logs.layer)
      assert(failed._tag === "Compensated")
      expect(String(failed.cause)).toContain("binding misbehave (execute): declined, receipt <redacted>")
      const stderrLines = logs.lines.filter((line) => line.includes("binding misbehave (execute) wrote to stderr"))
      expect(stderrLines).toHaveLength(2)
      for (const line of stderrLines) expect(line).toContain("my receipt is <redacted>")
      expect([...logs.lines, JSON.stringify([applied, failed])].join("\n")).not.toContain("rcpt-own-0451")
    })
  )

  /** A binding of helper.mjs, a handler written with effect-saga/handler. */
  const helped = () => ({
    helped: {
      // `--import tsx` is resolved from the working folder: this repository's.
      handler: { kind: "process", command: "node", args: ["--import", "tsx", "helper.mjs"], cwd: handlers },
      input: {
        type: "object",
        properties: { throw: { type: "boolean" }, forget: { type: "boolean" } },
        required: ["throw"]
      },
      output: { type: "json" },
      timeout_ms: 60_000,
      max_payload_bytes: 4096,
      // tsx keeps its cache under the temporary folder.
      grants: ["env:TMPDIR"],
      effect_contract: { kind: "external_write", retry_mode: "none" }
    }
  })

  it.live("a handler written with effect-saga/handler answers; one that throws leaves the outcome unknown", () =>
    Effect.gen(function* () {
      const toolkit = yield* loadToolkit(writeManifest(freshDir(), helped()))
      const services = memoryServices(toolkit)
      const answered = yield* Effect.provide(
        Saga.run("helped", Toolkit.call(toolkit, "helped", { throw: false })),
        services
      )
      assert(answered._tag === "Completed", JSON.stringify(answered))
      expect(answered.value).toEqual({ operation: "execute", key: expect.stringContaining("helped") })
      const thrown = yield* Effect.provide(
        Saga.run("thrown", Toolkit.call(toolkit, "helped", { throw: true })),
        services
      )
      assert(thrown._tag === "NeedsAttention")
      expect(thrown.unknown[0]!.reason).toContain("it exited with code 1 and no answer")
    })
  )

  it.live(
    "a handler written with effect-saga/handler that acts and returns nothing leaves the outcome unknown, not failed",
    () =>
      Effect.gen(function* () {
        const toolkit = yield* loadToolkit(writeManifest(freshDir(), helped()))
        const [result, entries] = yield* Effect.provide(
          Effect.flatMap(Journal.Journal, (journal) =>
            Effect.zip(
              Saga.run("forgot", Toolkit.call(toolkit, "helped", { throw: false, forget: true })),
              journal.read("forgot")
            )
          ),
          memoryServices(toolkit)
        )
        assert(result._tag === "NeedsAttention", JSON.stringify(result))
        expect(result.unknown[0]!.reason).toContain("it exited with code 1 and no answer")
        expect(entries.map((entry) => entry.phase)).not.toContain("FAILED")
      })
  )
})

describe("the secrets in what a handler wrote", () => {
  it("are masked as they are, JSON-escaped and URL-encoded", () => {
    const secret = 'pa"ss\\wd é/+ Q1'
    for (const form of [
      secret,
      JSON.stringify(secret).slice(1, -1),
      'pa\\"ss\\\\wd \\u00e9/+ Q1',
      encodeURIComponent(secret),
      new URLSearchParams({ s: secret }).toString().slice(2)
    ]) {
      expect(masked(`token=${form}.`, ["other", secret])).toBe("token=<redacted>.")
    }
  })

  it("leave nothing of two that overlap or touch: one <redacted> replaces both", () => {
    const secrets = ["abcdefXY12", "XY12ghijkl"]
    expect(masked("tok=abcdefXY12ghijkl", secrets)).toBe("tok=<redacted>")
    expect(masked("tok=XY12ghijklabcdefXY12!", secrets)).toBe("tok=<redacted>!")
    expect(masked("a=abcdefXY12, b=XY12ghijkl", secrets)).toBe("a=<redacted>, b=<redacted>")
    expect(masked("aaaaa", ["aa"])).toBe("<redacted>")
    expect(masked("nothing here", secrets)).toBe("nothing here")
    expect(masked("anything", ["", "zz"])).toBe("anything")
  })

  it("leave nothing of a secret the cut left the start of, in any form", () => {
    const secret = 'pa"ss-Q1'
    expect(maskedCut('x=pa\\"s', [secret])).toBe("x=<redacted>")
    expect(maskedCut("x=abcdefXY12gh", ["abcdefXY12", "XY12ghijkl"])).toBe("x=<redacted>")
  })

  it.live("a secret a handler writes JSON-escaped, or two that overlap, leave nothing in the log or the journal", () =>
    Effect.gen(function* () {
      const bindings = {
        echo: {
          handler: { kind: "process", command: "node", args: [path.join(handlers, "echo.mjs")] },
          input: {
            type: "object",
            properties: { stderr: { type: "string" }, message: { type: "string" } },
            required: ["stderr", "message"]
          },
          output: { type: "json" },
          timeout_ms: 30_000,
          max_payload_bytes: 65_536,
          secrets: ["S1", "S2"],
          effect_contract: { kind: "read", retry_mode: "none" }
        }
      }
      const config = ConfigProvider.fromMap(
        new Map([
          ["S1", 'Qp"ss\\wd-abcdefXY12'],
          ["S2", "XY12ghijkl"]
        ])
      )
      const logs = captureLogs()
      const toolkit = yield* loadToolkit(writeManifest(freshDir(), bindings)).pipe(Effect.withConfigProvider(config))
      // As a JSON logger writes it; the message as a URL holds it; the two run together.
      const input = { stderr: '{"token":"{{json:S1}}"} {{S1}}ghijkl', message: "at /x?t={{url:S1}} and {{S1}}ghijkl" }
      const [result, entries] = yield* Effect.provide(
        Effect.flatMap(Journal.Journal, (journal) =>
          Effect.zip(Saga.run("masked", Toolkit.call(toolkit, "echo", input)), journal.read("masked"))
        ),
        Layer.merge(memoryServices(toolkit), logs.layer)
      ).pipe(Effect.withConfigProvider(config))
      assert(result._tag === "Compensated")
      expect(JSON.stringify(result.cause)).toContain("at /x?t=<redacted> and <redacted>")
      const stderr = logs.lines.find((line) => line.includes("binding echo (execute) wrote to stderr"))
      expect(stderr).toMatch(/wrote to stderr: \{"token":"<redacted>"\} <redacted>$/)
      // The input holds the text around the secrets: what was journaled of the call is its payloads.
      const all = [...logs.lines, JSON.stringify(result), JSON.stringify(entries.map((entry) => entry.payload))].join(
        "\n"
      )
      for (const part of ["Qp", "wd-", "XY12", "ghijkl"]) expect(all).not.toContain(part)
    })
  )
})

describe("effect-saga/handler's serve", () => {
  const answerTo = (line: string) =>
    childProcess
      .execFileSync(process.execPath, ["--import", "tsx", "helper.mjs"], { cwd: handlers, input: `${line}\n` })
      .toString()

  it.each([
    ["another protocol", { protocol: "effect-saga-handler-v0" }],
    ["no operation", { protocol: "effect-saga-handler-v1", tool: "t", input: {}, effect: effectRef }],
    [
      "an unknown operation",
      { protocol: "effect-saga-handler-v1", operation: "bogus", tool: "t", input: {}, effect: effectRef }
    ],
    ["no input", { protocol: "effect-saga-handler-v1", operation: "execute", tool: "t", effect: effectRef }],
    ["no effect", { protocol: "effect-saga-handler-v1", operation: "execute", tool: "t", input: {} }],
    [
      "a compensation of another shape",
      {
        protocol: "effect-saga-handler-v1",
        operation: "compensate",
        tool: "t",
        input: {},
        effect: effectRef,
        compensation: 1
      }
    ]
  ])("answers a request with %s failed, without calling the function", (_, request) => {
    expect(JSON.parse(answerTo(JSON.stringify(request)))).toEqual({
      outcome: "failed",
      message: "not a request of effect-saga-handler-v1"
    })
  })

  it.each([
    ["nothing (a forgotten return)", { forget: true }, "the function returned nothing (undefined), not a response"],
    ["null", { returns: null }, "the function returned null, not a response"],
    ["a number", { returns: 42 }, "the function returned a number, not a response"],
    [
      "an unknown outcome",
      { returns: { outcome: "done" } },
      "the function's response has no outcome applied, failed, unknown or partial"
    ],
    [
      "a receipt that is not a string",
      { returns: { outcome: "applied", result: 1, receipt: 12345 } },
      "the function's response has a receipt that is not a string"
    ],
    [
      "a compensation of another kind",
      { returns: { outcome: "applied", compensation: "done" } },
      "the function's response has a compensation other than completed or partial"
    ]
  ])("answers nothing, exiting 1 and saying why on stderr, when the function returns %s", (_, input, why) => {
    const request = { protocol: "effect-saga-handler-v1", operation: "execute", tool: "t", input, effect: effectRef }
    const child = childProcess.spawnSync(process.execPath, ["--import", "tsx", "helper.mjs"], {
      cwd: handlers,
      input: `${JSON.stringify(request)}\n`
    })
    expect(child.status).toBe(1)
    expect(child.stdout.toString()).toBe("")
    expect(child.stderr.toString()).toBe(
      `effect-saga/handler: ${why}: nothing is answered, so the outcome is unknown\n`
    )
  })

  it("calls the function with a request of the protocol", () => {
    const request = {
      protocol: "effect-saga-handler-v1",
      operation: "execute",
      tool: "t",
      input: { throw: false },
      effect: effectRef
    }
    expect(JSON.parse(answerTo(JSON.stringify(request)))).toEqual({
      outcome: "applied",
      result: { operation: "execute", key: "s/t:1#1" }
    })
  })
})

const effectRef = { sagaId: "s", stepId: "t:1#1", idempotencyKey: "s/t:1#1" }

describe("a manifest that cannot work is refused, naming the JSON path", () => {
  const base = () => reservationBindings("/nowhere/world.ndjson")
  const refusedAtLoad: ReadonlyArray<readonly [string, (bindings: any) => unknown, string]> = [
    ["not JSON", () => "{ not json", "$"],
    [
      "an unknown version",
      (bindings) => JSON.stringify({ manifest_version: "effect-saga-manifest-v9", bindings }),
      "$.manifest_version"
    ],
    [
      "two bindings of one tool",
      (bindings) =>
        `{ "manifest_version": "${Manifest.MANIFEST_VERSION}", "bindings": { "createReservation": ${JSON.stringify(bindings.createReservation)}, "releaseReservation": ${JSON.stringify(bindings.releaseReservation)}, "createReservation": ${JSON.stringify(bindings.createReservation)} } }`,
      "$.bindings.createReservation"
    ],
    [
      "an unknown compensation tool",
      (bindings) => {
        bindings.createReservation.effect_contract.compensation.tool = "cancelReservation"
        return bindings
      },
      "$.bindings.createReservation.effect_contract.compensation.tool"
    ],
    [
      "a compensation on an irreversible binding",
      (bindings) => {
        bindings.createReservation.effect_contract.kind = "irreversible"
        return bindings
      },
      "$.bindings.createReservation.effect_contract.compensation"
    ],
    [
      "a timeout that is not a positive integer",
      (bindings) => {
        bindings.releaseReservation.timeout_ms = 0
        return bindings
      },
      "$.bindings.releaseReservation.timeout_ms"
    ],
    [
      "a field the format does not have",
      (bindings) => {
        bindings.releaseReservation.timeout = 10
        return bindings
      },
      "$.bindings.releaseReservation.timeout"
    ],
    [
      "a grant that is not one",
      (bindings) => {
        bindings.createReservation.grants = ["network", "everything"]
        return bindings
      },
      "$.bindings.createReservation.grants[1]"
    ],
    [
      "JSON nested deeper than 64 levels (the checks after parsing recurse)",
      (bindings) =>
        `{ "manifest_version": "${Manifest.MANIFEST_VERSION}", "bindings": ${JSON.stringify(bindings)}, "extra": ${"[".repeat(10_000)}${"]".repeat(10_000)} }`,
      "$"
    ],
    [
      "a binding named __proto__ (decoded, it would set the prototype)",
      (bindings) =>
        `{ "manifest_version": "${Manifest.MANIFEST_VERSION}", "bindings": { "__proto__": ${JSON.stringify(bindings.releaseReservation)} } }`,
      "$.bindings.__proto__"
    ],
    [
      "a tool name holding a /",
      (bindings) => ({ "billing/release": bindings.releaseReservation }),
      '$.bindings["billing/release"]'
    ],
    // JSON.stringify leaves DEL and the C1 controls as they are: the path escapes them.
    ["a tool name ending in DEL", (bindings) => ({ "a\u007f": bindings.releaseReservation }), '$.bindings["a\\u007f"]'],
    ["a tool name ending in NEL", (bindings) => ({ "a\u0085": bindings.releaseReservation }), '$.bindings["a\\u0085"]'],
    [
      "a compensation tool ending in DEL",
      (bindings) => {
        bindings.createReservation.effect_contract.compensation.tool = "release\u007f"
        return bindings
      },
      "$.bindings.createReservation.effect_contract.compensation.tool"
    ]
  ]
  for (const [what, mutate, expected] of refusedAtLoad) {
    it.effect(`at load: ${what} → ${expected}`, () =>
      Effect.gen(function* () {
        const file = writeManifest(freshDir(), mutate(base()))
        const error = yield* Effect.flip(loadToolkit(file))
        assert(Manifest.isManifestError(error))
        expect(error.path).toBe(expected)
        expect(error.file).toBe(file)
        expect(error.message).toContain(`at ${expected}: `)
        // Nothing in it a terminal would act on instead of showing.
        expect(error.message).toBe(printable(error.message))
      })
    )
  }

  const types =
    '"string", "number", "integer", "boolean", "null", "json", "object", "array", or the type is { "ref": "Name" }'
  const saidPlainly: ReadonlyArray<readonly [string, (bindings: any) => unknown, string, string]> = [
    [
      "bindings that are an array",
      () => JSON.stringify({ manifest_version: Manifest.MANIFEST_VERSION, bindings: [] }),
      "$.bindings",
      "bindings is an object of bindings by tool name (got an array)"
    ],
    [
      "no bindings",
      () => JSON.stringify({ manifest_version: Manifest.MANIFEST_VERSION }),
      "$.bindings",
      "bindings is missing: it is an object of bindings by tool name"
    ],
    [
      "a timeout of 0",
      (bindings) => {
        bindings.createReservation.timeout_ms = 0
        return bindings
      },
      "$.bindings.createReservation.timeout_ms",
      "timeout_ms must be a positive integer (got 0)"
    ],
    [
      "a timeout beyond what a number holds exactly",
      (bindings) => {
        bindings.createReservation.timeout_ms = 1e300
        return bindings
      },
      "$.bindings.createReservation.timeout_ms",
      `timeout_ms must be a positive integer, at most ${Number.MAX_SAFE_INTEGER} (got 1e+300)`
    ],
    [
      "a required property that is not among the properties",
      (bindings) => {
        bindings.createReservation.input = {
          type: "object",
          properties: { room: { type: "string" } },
          required: ["rom"]
        }
        return bindings
      },
      "$.bindings.createReservation.input",
      '"rom" is required but not among the properties'
    ],
    [
      "a limit given as text",
      (bindings) => {
        bindings.createReservation.max_payload_bytes = "4096"
        return bindings
      },
      "$.bindings.createReservation.max_payload_bytes",
      'max_payload_bytes must be a positive integer (got "4096")'
    ],
    [
      "no version",
      (bindings) => JSON.stringify({ bindings }),
      "$.manifest_version",
      'manifest_version is missing: this effect-saga reads "effect-saga-manifest-v1"'
    ],
    [
      "an unknown version",
      (bindings) => JSON.stringify({ manifest_version: "effect-saga-manifest-v9", bindings }),
      "$.manifest_version",
      'unknown version "effect-saga-manifest-v9": this effect-saga reads "effect-saga-manifest-v1"'
    ],
    [
      "a document that is no object",
      () => "[]",
      "$",
      'a manifest is a JSON object with "manifest_version" and "bindings" (got an array)'
    ],
    [
      "a kind of effect the format does not have",
      (bindings) => {
        bindings.createReservation.effect_contract.kind = "write"
        return bindings
      },
      "$.bindings.createReservation.effect_contract.kind",
      'kind must be one of "read", "external_write", "irreversible" (got "write")'
    ],
    [
      "no retry mode",
      (bindings) => {
        delete bindings.createReservation.effect_contract.retry_mode
        return bindings
      },
      "$.bindings.createReservation.effect_contract.retry_mode",
      'retry_mode is missing: it must be one of "none", "idempotency_key"'
    ],
    [
      "a handler of another kind",
      (bindings) => {
        bindings.createReservation.handler.kind = "http"
        return bindings
      },
      "$.bindings.createReservation.handler.kind",
      'kind must be "process" (got "http")'
    ],
    [
      "a type the format does not have",
      (bindings) => {
        bindings.createReservation.input.properties.sku.type = "str"
        return bindings
      },
      "$.bindings.createReservation.input.properties.sku",
      `type must be one of ${types} (got "str")`
    ],
    [
      "a type without one",
      (bindings) => {
        bindings.createReservation.input.properties.quantity = {}
        return bindings
      },
      "$.bindings.createReservation.input.properties.quantity",
      `type is missing: give one of ${types}`
    ],
    [
      "a secret listed twice",
      (bindings) => {
        bindings.releaseReservation.secrets = ["API_TOKEN", "REGION", "API_TOKEN"]
        return bindings
      },
      "$.bindings.releaseReservation.secrets[2]",
      "the secret API_TOKEN is listed twice (first at secrets[0])"
    ],
    [
      "a grant longer than a capability may be (200 characters)",
      (bindings) => {
        bindings.createReservation.grants = ["network", `env:${"A".repeat(197)}`]
        return bindings
      },
      "$.bindings.createReservation.grants[1]",
      "a grant is at most 200 characters, as a capability is (got 201): it is journaled as one"
    ],
    [
      "a grant listed twice",
      (bindings) => {
        bindings.createReservation.grants = ["network", "env:RESERVATIONS_FILE", "network"]
        return bindings
      },
      "$.bindings.createReservation.grants[2]",
      "the grant network is listed twice (first at grants[0])"
    ],
    [
      "a property required twice",
      (bindings) => {
        bindings.createReservation.input.required = ["sku", "quantity", "sku"]
        return bindings
      },
      "$.bindings.createReservation.input.required[2]",
      '"sku" is required twice (first at required[0])'
    ],
    [
      "a key a string type does not have",
      (bindings) => {
        bindings.createReservation.input.properties.sku.format = "uuid"
        return bindings
      },
      "$.bindings.createReservation.input.properties.sku",
      '"format" is unexpected: this type has "type" only'
    ]
  ]
  for (const [what, mutate, expected, reason] of saidPlainly) {
    it.effect(`at load: ${what} is said plainly, with what is allowed and what was given`, () =>
      Effect.gen(function* () {
        const file = writeManifest(freshDir(), mutate(base()))
        const error = yield* Effect.flip(loadToolkit(file))
        assert(Manifest.isManifestError(error))
        expect([error.path, error.reason]).toEqual([expected, reason])
      })
    )
  }

  const refusedAtLayer: ReadonlyArray<readonly [string, (bindings: any) => unknown, string]> = [
    [
      "a missing secret",
      (bindings) => {
        bindings.releaseReservation.secrets = ["EFFECT_SAGA_TEST_NO_SUCH_SECRET"]
        return bindings
      },
      "$.bindings.releaseReservation.secrets[0]"
    ],
    [
      "a command that is no executable",
      (bindings) => {
        bindings.createReservation.handler.command = "effect-saga-no-such-command"
        return bindings
      },
      "$.bindings.createReservation.handler.command"
    ],
    [
      "a working folder that does not exist",
      (bindings) => {
        bindings.createReservation.handler.cwd = "no/such/folder"
        return bindings
      },
      "$.bindings.createReservation.handler.cwd"
    ],
    [
      "a reference to a Schema not given to Manifest.toolkit",
      (bindings) => {
        bindings.releaseReservation.input = { ref: "Reservation" }
        return bindings
      },
      "$.bindings.releaseReservation.input.ref"
    ],
    [
      "a reference not given, in a binding whose name holds a line separator (a tool name may)",
      (bindings) => ({ "a\u2028b": { ...bindings.releaseReservation, input: { ref: "Reservation" } } }),
      '$.bindings["a\\u2028b"].input.ref'
    ]
  ]
  for (const [what, mutate, expected] of refusedAtLayer) {
    it.effect(`when the layer is built: ${what} → ${expected}`, () =>
      Effect.gen(function* () {
        const toolkit = yield* loadToolkit(writeManifest(freshDir(), mutate(base())))
        const error = yield* Effect.flip(Layer.build(memoryServices(toolkit)).pipe(Effect.scoped))
        assert(Manifest.isManifestError(error))
        expect(error.path).toBe(expected)
        expect(error.message).toBe(printable(error.message))
      })
    )
  }

  it.effect(
    "when the layer is built: a registered Schema that cannot be journaled → $.bindings.releaseReservation.output",
    () =>
      Effect.gen(function* () {
        const bindings = base()
        ;(bindings.releaseReservation as any).output = { ref: "Big" }
        const manifest = yield* Manifest.load(writeManifest(freshDir(), bindings)).pipe(
          Effect.provide(NodeContext.layer)
        )
        const toolkit = Manifest.toolkit(manifest, { schemas: { Big: Schema.BigIntFromSelf } })
        const error = yield* Effect.flip(Layer.build(memoryServices(toolkit)).pipe(Effect.scoped))
        assert(Manifest.isManifestError(error))
        expect(error.path).toBe("$.bindings.releaseReservation.output")
        expect(error.reason).toMatch(/^its output type cannot be journaled: .*bigint/)
      })
  )

  it.effect(
    "a command that names no executable says why: not on the PATH, no file there, or a file without its execute bit",
    () =>
      Effect.gen(function* () {
        const reasonFor = (command: string, prepare?: (dir: string) => void) =>
          Effect.gen(function* () {
            const dir = freshDir()
            const bindings = base()
            ;(bindings.createReservation as any).handler.command = command
            const file = writeManifest(dir, bindings)
            prepare?.(dir)
            const toolkit = yield* loadToolkit(file)
            const error = yield* Effect.flip(Layer.build(memoryServices(toolkit)).pipe(Effect.scoped))
            assert(Manifest.isManifestError(error))
            expect(error.path).toBe("$.bindings.createReservation.handler.command")
            return [dir, error.reason] as const
          })
        const [, bare] = yield* reasonFor("effect-saga-no-such-command")
        expect(bare).toBe('"effect-saga-no-such-command" is not an executable file on the PATH of this process')
        const [dir, missing] = yield* reasonFor("./nope.sh")
        expect(missing).toBe(`"./nope.sh" is not an executable file (relative to ${dir})`)
        const [plainDir, plain] = yield* reasonFor("./plain.sh", (at) =>
          fs.writeFileSync(path.join(at, "plain.sh"), "#!/bin/sh\n")
        )
        expect(plain).toBe(`"./plain.sh" (${path.join(plainDir, "plain.sh")}) is not executable: chmod +x it`)
      })
  )

  it.effect("a secret set when the layer was built and gone when the call runs: the call fails naming it", () =>
    Effect.gen(function* () {
      const bindings = base()
      ;(bindings.createReservation as any).secrets = ["EFFECT_SAGA_TEST_GONE_SECRET"]
      const toolkit = yield* loadToolkit(writeManifest(freshDir(), bindings))
      const config = (entries: ReadonlyArray<readonly [string, string]>) => ConfigProvider.fromMap(new Map(entries))
      // Built where the secret is set; the call made where it is gone.
      const call = Toolkit.call(toolkit, "createReservation", { sku: "A-1", quantity: 1 })
      const result = yield* Effect.provide(
        Saga.run("gone-secret", call.pipe(Effect.withConfigProvider(config([])))),
        memoryServices(toolkit)
      ).pipe(Effect.withConfigProvider(config([["EFFECT_SAGA_TEST_GONE_SECRET", "s"]])))
      assert(result._tag === "Compensated")
      expect(String(result.cause)).toContain(
        "binding createReservation (execute): the secret EFFECT_SAGA_TEST_GONE_SECRET it names is not set"
      )
    })
  )

  it.effect("a manifest file that is not UTF-8 (an edit saved as Latin-1) is refused, not read with U+FFFD", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const file = writeManifest(dir, base())
      const text = fs.readFileSync(file, "utf8").replace('"createReservation"', '"cr\u00e9ateReservation"')
      fs.writeFileSync(file, Buffer.from(text, "latin1"))
      const error = yield* Effect.flip(Manifest.load(file).pipe(Effect.provide(NodeContext.layer)))
      assert(Manifest.isManifestError(error))
      expect([error.path, error.reason]).toEqual([
        "$",
        "it is not UTF-8 text (saved in another encoding, such as Latin-1?): save it as UTF-8"
      ])
    })
  )

  it.effect("a Schema given to Manifest.toolkit answers its reference", () =>
    Effect.gen(function* () {
      const bindings = base()
      ;(bindings.releaseReservation as any).input = { ref: "Reservation" }
      const manifest = yield* Manifest.load(writeManifest(freshDir(), bindings)).pipe(Effect.provide(NodeContext.layer))
      const toolkit = Manifest.toolkit(manifest, {
        schemas: { Reservation: Schema.Struct({ reservationId: Schema.String }) }
      })
      expect(toolkit.problem).toBeUndefined()
      yield* Effect.scoped(Layer.build(memoryServices(toolkit)))
    })
  )

  it("the JSON Schema of the format is exported for editors", () => {
    const schema = Manifest.jsonSchema as any
    // 2020-12: the draft whose `$defs`, and keywords beside a `$ref` (a timeout's `exclusiveMinimum`), it uses.
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema")
    const root = schema.$defs.ManifestV1
    expect(root.properties.manifest_version.enum).toEqual([Manifest.MANIFEST_VERSION])
    expect(root.required).toEqual(["manifest_version", "bindings"])
    expect(Object.keys(schema.$defs)).toContain("TypeSpec")
  })

  it("the JSON Schema holds bindings' names and limits to what the loader accepts, where JSON Schema can say it", () => {
    const bindings = (Manifest.jsonSchema as any).$defs.ManifestV1.properties.bindings
    const names = bindings.propertyNames
    const pattern = new RegExp(names.pattern)
    const fits = (name: string) =>
      name.length >= names.minLength && name.length <= names.maxLength && pattern.test(name) && name !== names.not.const
    expect(["createReservation", "stripe:charge", "réserver"].filter(fits)).toHaveLength(3)
    expect(["", "a/b", "a\u0007", "a\u007f", "a\u0085", "__proto__", "x".repeat(129)].filter(fits)).toEqual([])
    const limits = bindings.additionalProperties.properties
    for (const field of ["timeout_ms", "max_payload_bytes"]) {
      expect(JSON.stringify(limits[field])).toContain(`"maximum":${Number.MAX_SAFE_INTEGER}`)
    }
    // Titled by what they are, not by their last filter (Effect's default title: `maxLength(200)`).
    expect(limits.grants.items).toMatchObject({
      title: "grant",
      maxLength: 200,
      pattern: "^(network|env:[A-Za-z_][A-Za-z0-9_]*)$"
    })
    expect([limits.timeout_ms.title, limits.max_payload_bytes.title, limits.handler.properties.command.title]).toEqual([
      "timeout_ms",
      "max_payload_bytes",
      "command"
    ])
    // Described in manifest.md's words, not by Effect's default for the last filter.
    expect(limits.timeout_ms.description).toBe(`a positive integer, at most ${Number.MAX_SAFE_INTEGER}`)
    expect(limits.secrets.items).toMatchObject({
      title: "secret",
      description: "an environment variable's name: letters, digits and _, not a digit first"
    })
  })
})
