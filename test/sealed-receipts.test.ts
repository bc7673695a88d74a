import { spawn } from "node:child_process"
import * as Crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import type { Context } from "effect"
import { Cause, ConfigProvider, Deferred, Effect, Exit, Fiber, Layer, Logger, Option } from "effect"
import { Approval, CompensationReport, Journal, Keys, Saga, SqlStore, Timeline } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { book, charge, hold, receipts, world } from "./fixtures/receipt-tools.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-receipts-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const K1 = Keys.generate("k1")
const K2 = Keys.generate("k2")

describe("receipts sealed at rest (EFFECT_SAGA_RECEIPT_KEYS)", () => {
  it.effect(
    "with a key, the SQLite file, its -wal and an NDJSON export hold the receipt only sealed under k1; the undo gets the plaintext",
    () =>
      Effect.gen(function* () {
        const secret = newSecret("card-file")
        const filename = path.join(dir, "sealed.db")
        const lines: Array<string> = []
        const seen = yield* Effect.gen(function* () {
          const result = yield* Saga.run(
            "trip-sealed",
            Effect.zipRight(Effect.zipRight(book("room-file"), charge("card-file")), Effect.fail("the trip is off"))
          )
          const entries = yield* journalOf("trip-sealed")
          return {
            result,
            entries,
            ndjson: yield* Journal.exportNdjson("trip-sealed"),
            status: yield* Saga.status("trip-sealed"),
            open: bytesOf(filename)
          }
        }).pipe(
          onFile(filename, K1),
          Effect.provide(Logger.add(Logger.make((options) => lines.push(Logger.jsonLogger.log(options)))))
        )
        // The undo got the plaintext (`charge` declares receiptRequired: a sealed receipt is set).
        assert(seen.result._tag === "Compensated")
        expect(world).toContain(`undo charge-card-file with ${secret}`)
        const sealed = receiptOf(seen.entries, "charge")
        expect(sealed).toMatchObject({ sealed: "aes-256-gcm", kid: "k1" })

        // Not vacuous: the entries are in these bytes (the -wal while the store is open).
        expect(seen.open.wal.length).toBeGreaterThan(0)
        const closed = bytesOf(filename)
        for (const [where, bytes] of [
          ["the file and its -wal, open", Buffer.concat([seen.open.db, seen.open.wal])],
          ["the file and its -wal, closed", Buffer.concat([closed.db, closed.wal])]
        ] as const) {
          expect(bytes.includes("charge-card-file"), where).toBe(true)
          expect(bytes.includes(sealed.data), where).toBe(true)
          expect(bytes.includes(secret), where).toBe(false)
        }
        expect(seen.ndjson).toContain(sealed.data)
        expect(seen.ndjson).not.toContain(secret)
        const everything = {
          "log lines": lines.join("\n"),
          "Timeline.format": Timeline.format(seen.entries),
          "CompensationReport.format": CompensationReport.format(seen.result.report),
          result: JSON.stringify(seen.result),
          "Saga.status": JSON.stringify(seen.status)
        }
        for (const [where, text] of Object.entries(everything)) expect(text, where).not.toContain(secret)

        // The export imports (its chain verifies) with the ciphertext as it is.
        const imported = yield* Effect.gen(function* () {
          yield* Journal.importNdjson(seen.ndjson)
          return yield* journalOf("trip-sealed")
        }).pipe(Effect.provide(Journal.layerMemory))
        expect(imported).toEqual(seen.entries)
      })
  )

  it.scoped("receipts sealed with k1 still open once k2 is put first; new receipts are sealed with k2", () =>
    Effect.gen(function* () {
      const stores = yield* memoryStores
      const oldSecret = newSecret("card-old")
      const newSecret_ = newSecret("card-new")
      yield* Saga.run("trip-old", charge("card-old")).pipe(onStores(stores, K1))
      expect(receiptOf(yield* journalIn(stores, "trip-old"), "charge")).toMatchObject({ kid: "k1" })

      const rotated = `${K2},${K1}`
      const reports = yield* Effect.gen(function* () {
        yield* Saga.run("trip-new", charge("card-new"))
        return [yield* Saga.compensate("trip-old"), yield* Saga.compensate("trip-new")]
      }).pipe(onStores(stores, rotated))
      expect(receiptOf(yield* journalIn(stores, "trip-new"), "charge")).toMatchObject({ kid: "k2" })
      expect(reports.map(outcomes)).toEqual([[["charge", "completed"]], [["charge", "completed"]]])
      expect(world).toContain(`undo charge-card-old with ${oldSecret}`)
      expect(world).toContain(`undo charge-card-new with ${newSecret_}`)
    })
  )

  it.scoped(
    "no key for a sealed receipt, or a wrong one: that undo is unavailable naming k1, the next undo still runs, and the key undoes it later",
    () =>
      Effect.gen(function* () {
        const stores = yield* memoryStores
        const secret = newSecret("card-missing")
        yield* Saga.run("trip-missing", Effect.zipRight(book("room-missing"), charge("card-missing"))).pipe(
          onStores(stores, K1)
        )

        const withoutK1 = yield* Saga.compensate("trip-missing").pipe(onStores(stores, K2))
        expect(outcomes(withoutK1)).toEqual([
          ["charge", "unavailable"],
          ["book", "completed"]
        ])
        expect(withoutK1.status).toBe("compensation_failed")
        expect(withoutK1.undone[0]!.detail).toContain("sealed with key k1, which is not configured here")
        expect(world).toContain("cancel booking-room-missing")
        // The report is journaled; nothing is for the step, so that a process with the key can undo it.
        const journaled = yield* journalIn(stores, "trip-missing")
        expect(journaled.at(-1)!.phase).toBe("SAGA_COMPENSATION_FAILED")
        expect(journaled.at(-1)!.payload).toContain("k1")
        expect(journaled.filter((entry) => entry.toolName === "charge").map((entry) => entry.phase)).toEqual([
          "INTENT",
          "EXECUTED"
        ])

        const wrongK1 = yield* Saga.compensate("trip-missing").pipe(onStores(stores, Keys.generate("k1")))
        expect(outcomes(wrongK1)).toEqual([
          ["charge", "unavailable"],
          ["book", "completed"]
        ])
        expect(wrongK1.undone[0]!.detail).toContain("does not open with key k1")

        const withK1 = yield* Saga.compensate("trip-missing").pipe(onStores(stores, K1))
        expect(outcomes(withK1)).toEqual([
          ["charge", "completed"],
          ["book", "completed"]
        ])
        expect(withK1.status).toBe("compensated")
        expect(world.filter((line) => line.startsWith("undo charge-card-missing"))).toEqual([
          `undo charge-card-missing with ${secret}`
        ])
        expect(world.filter((line) => line === "cancel booking-room-missing")).toHaveLength(1)
      })
  )

  it.scoped(
    "a saga resumed where its receipt's key is missing compensates: unavailable for that step, the rest undone",
    () =>
      Effect.gen(function* () {
        const stores = yield* memoryStores
        newSecret("card-resumed")
        const charged = yield* Deferred.make<void>()
        const first = yield* Effect.gen(function* () {
          yield* book("room-resumed")
          yield* charge("card-resumed")
          yield* Deferred.succeed(charged, undefined)
          return yield* Effect.never
        }).pipe((program) => Saga.run("trip-resumed", program), onStores(stores, K1), Effect.fork)
        yield* Deferred.await(charged)
        yield* Fiber.interrupt(first)

        const program = Effect.zipRight(
          Effect.zipRight(book("room-resumed"), charge("card-resumed")),
          Effect.fail("off")
        )
        const result = yield* Saga.run("trip-resumed", program).pipe(onStores(stores, undefined))
        assert(result._tag === "CompensationFailed")
        expect(outcomes(result.report)).toEqual([
          ["charge", "unavailable"],
          ["book", "completed"]
        ])
        expect(result.report.undone[0]!.detail).toContain("k1")
        expect(world.filter((line) => line.startsWith("undo charge-card-resumed"))).toEqual([])
      })
  )

  it.scoped(
    "compensateEffect of a step whose receipt key is missing answers unavailable naming k1, journals nothing, and undoes it once the key is there",
    () =>
      Effect.gen(function* () {
        const stores = yield* memoryStores
        const secret = newSecret("card-explicit")
        yield* Saga.run("trip-explicit", charge("card-explicit")).pipe(onStores(stores, K1))
        const { effectId } = (yield* Saga.status("trip-explicit").pipe(onStores(stores, K1))).steps[0]!

        const missing = yield* Saga.compensateEffect(effectId).pipe(onStores(stores, undefined))
        assert(missing._tag === "Settled")
        expect(missing.outcome).toBe("unavailable")
        expect(missing.detail).toContain("sealed with key k1")
        expect(yield* journalIn(stores, missing.runId)).toEqual([])
        expect(world.filter((line) => line.startsWith("undo charge-card-explicit"))).toEqual([])

        const undone = yield* Saga.compensateEffect(effectId).pipe(onStores(stores, K1))
        expect(undone).toMatchObject({ _tag: "Settled", outcome: "completed" })
        expect(world).toContain(`undo charge-card-explicit with ${secret}`)
      })
  )

  it.effect(
    "a sealed receipt copied onto another step's row (of this saga, or the same step of another) does not open there",
    () =>
      Effect.gen(function* () {
        const filename = path.join(dir, "copied.db")
        const secretA = newSecret("card-copied")
        yield* Saga.run("trip-a", Effect.zipRight(charge("card-copied"), hold("card-copied"))).pipe(
          onFile(filename, K1)
        )
        const secretB = newSecret("card-copied")
        yield* Saga.run("trip-b", charge("card-copied")).pipe(onFile(filename, K1))

        // Rewritten behind the library's back, the chain and the row recomputed so that both verify.
        const fromA = rowsOf(filename, "trip-a")
        const moved = receiptOf(fromA, "charge")
        const chargeStep = fromA.find((entry) => entry.toolName === "charge")!.stepId!
        const holdStep = fromA.find((entry) => entry.toolName === "hold")!.stepId!
        expect(rowsOf(filename, "trip-b").find((entry) => entry.toolName === "charge")!.stepId).toBe(chargeStep)
        putReceipt(filename, "trip-a", holdStep, moved)
        putReceipt(filename, "trip-b", chargeStep, moved)

        const reports = yield* Effect.gen(function* () {
          for (const sagaId of ["trip-a", "trip-b"]) {
            const journal = yield* Journal.Journal
            const record = yield* journal.get(sagaId)
            const entries = yield* journal.read(sagaId)
            expect(receiptOf(entries, sagaId === "trip-a" ? "hold" : "charge")).toEqual(moved)
            expect(Journal.verifyAgainst(entries, Option.getOrUndefined(record))._tag).toBe("Intact")
          }
          return [yield* Saga.compensate("trip-a"), yield* Saga.compensate("trip-b")]
        }).pipe(onFile(filename, K1))

        expect(reports.map(outcomes)).toEqual([
          [
            ["hold", "unavailable"],
            ["charge", "completed"]
          ],
          [["charge", "unavailable"]]
        ])
        for (const report of reports) {
          expect(report.undone[0]!.detail).toContain("does not open with key k1")
        }
        expect(world.filter((line) => line.startsWith("undo hold-card-copied"))).toEqual([])
        expect(world.filter((line) => line.startsWith("undo charge-card-copied"))).toEqual([
          `undo charge-card-copied with ${secretA}`
        ])
        expect(world.join("\n")).not.toContain(secretB)
      })
  )

  it.effect.each([
    ["a key that is not base64", "k1:not*base64", "the key of pair 1 is not base64"],
    [
      "a key that is not 32 bytes",
      `k1:${Buffer.alloc(16, 7).toString("base64")}`,
      "the key of pair 1 is 16 bytes, not 32"
    ],
    ["a key id twice", `${K1},${K2.replace("k2:", "k1:")}`, "key id k1 appears twice (pair 2)"],
    [
      "a pair written the wrong way round (base64key:id)",
      `${Buffer.alloc(32, 9).toString("base64url")}:k1`,
      "the key of pair 1 is 1 bytes, not 32"
    ]
  ])("%s fails Saga.layer with KeyError, naming the variable and never the key", ([, text, reason]) =>
    Effect.gen(function* () {
      const ran: Array<string> = []
      const exit = yield* Effect.exit(
        Effect.provide(
          Effect.sync(() => ran.push("the program")),
          Testing.layer
        ).pipe(withKeys(text))
      )
      assert(Exit.isFailure(exit))
      const error = Option.getOrThrow(Cause.failureOption(exit.cause))
      assert(Keys.isKeyError(error))
      expect(error.variable).toBe(Keys.RECEIPT_KEYS)
      expect(error.message).toBe(`${Keys.RECEIPT_KEYS}: ${reason}`)
      for (const pair of text.split(",")) {
        for (const part of pair.split(":")) if (part.length > 8) expect(error.message).not.toContain(part)
      }
      expect(ran).toEqual([])
    })
  )

  // The warning is logged once a process: this is the only test of this file that journals a
  // receipt without a key.
  it.effect(
    "without a key, receipts are journaled in plain text as before, and the log says so once, naming EFFECT_SAGA_RECEIPT_KEYS",
    () =>
      Effect.gen(function* () {
        const secret = newSecret("card-plain")
        const warnings: Array<string> = []
        const entries = yield* Effect.gen(function* () {
          yield* Saga.run("trip-plain-1", charge("card-plain"))
          yield* Saga.run("trip-plain-2", charge("card-plain"))
          return [...(yield* journalOf("trip-plain-1")), ...(yield* journalOf("trip-plain-2"))]
        }).pipe(
          Effect.provide(Testing.layer),
          withKeys(undefined),
          Effect.provide(
            Logger.add(
              Logger.make(({ logLevel, message }) => {
                if (logLevel._tag === "Warning") warnings.push(String(message))
              })
            )
          )
        )
        expect(
          entries.filter((entry) => entry.phase === "EXECUTED").map((entry) => JSON.parse(entry.payload!).receipt)
        ).toEqual([secret, secret])
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toContain("receipts are stored in plain text")
        expect(warnings[0]).toContain(Keys.RECEIPT_KEYS)
        expect(warnings[0]).not.toContain(secret)
      })
  )

  it.effect("without a key, a receipt pruned from SQLite is written over in the file, not left in its free pages", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "pruned.db")
      const secrets = ["a", "b", "c"].map((n) => newSecret(`card-pruned-${n}`))
      const pruned = yield* Effect.gen(function* () {
        for (const n of ["a", "b", "c"]) yield* Saga.run(`trip-pruned-${n}`, charge(`card-pruned-${n}`))
        const journal = yield* Journal.Journal
        return yield* journal.prune("9999-01-01")
      }).pipe(onFile(filename, undefined))
      expect([...pruned].sort()).toEqual(["trip-pruned-a", "trip-pruned-b", "trip-pruned-c"])
      // Closed, the store checkpointed its -wal into the file and removed it: the file is what is left.
      const closed = bytesOf(filename)
      expect(closed.wal.length).toBe(0)
      expect(closed.db.length).toBeGreaterThan(0)
      for (const secret of secrets) expect(closed.db.includes(secret)).toBe(false)
    })
  )

  it.effect(
    "the CLI's compensate reads EFFECT_SAGA_RECEIPT_KEYS from the environment: without it the undo is unavailable naming k1; with it, it runs",
    () =>
      Effect.gen(function* () {
        const filename = path.join(dir, "cli.db")
        const worldFile = path.join(dir, "cli-world.log")
        const secret = newSecret("card-cli")
        yield* Saga.run("trip-cli", Effect.zipRight(book("room-cli"), charge("card-cli"))).pipe(onFile(filename, K1))
        const args = ["compensate", "trip-cli", "--db", filename, "--register", toolsModule, "--json"]

        const without = yield* cli(args, { EFFECT_SAGA_TEST_WORLD: worldFile })
        expect(without.code, without.stderr).toBe(1)
        const report = JSON.parse(without.stdout) as CompensationReport.CompensationReport
        expect(outcomes(report)).toEqual([
          ["charge", "unavailable"],
          ["book", "completed"]
        ])
        expect(report.undone[0]!.detail).toContain("sealed with key k1")

        const withKey = yield* cli(args, { EFFECT_SAGA_TEST_WORLD: worldFile, [Keys.RECEIPT_KEYS]: K1 })
        expect(withKey.code, withKey.stderr).toBe(0)
        expect(outcomes(JSON.parse(withKey.stdout))).toEqual([
          ["charge", "completed"],
          ["book", "completed"]
        ])
        expect(fs.readFileSync(worldFile, "utf8").split("\n").filter(Boolean)).toEqual([
          "cancel booking-room-cli",
          `undo charge-card-cli with ${secret}`
        ])
        expect(without.stdout + without.stderr + withKey.stdout + withKey.stderr).not.toContain(secret)

        const bad = yield* cli(["list", "--db", filename], { [Keys.RECEIPT_KEYS]: "k1:short" })
        expect(bad).toMatchObject({ code: 2, stdout: "" })
        expect(bad.stderr).toContain(`${Keys.RECEIPT_KEYS}: the key of pair 1 is 3 bytes, not 32`)
      }),
    60_000
  )
})

/** A fresh secret, the receipt `charge` and `hold` set for `input` from now on. */
const newSecret = (input: string): string => {
  const secret = `rcpt-${Crypto.randomUUID()}`
  receipts.set(input, secret)
  return secret
}

/** Runs with `keys` as the only configuration (`undefined`: no receipt key at all). */
const withKeys = (keys: string | undefined) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(keys === undefined ? [] : [[Keys.RECEIPT_KEYS, keys]])))

/** The fixture's tools registered, as a process that can undo their steps has them. */
const registered = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.zipRight(
    Effect.flatMap(Saga.Saga, (saga) => saga.register([book, charge, hold])),
    effect
  )

/** Runs `effect` on a `Saga` layer over the SQLite file, configured with `keys`, the tools registered. */
const onFile =
  (filename: string, keys: string | undefined) =>
  <A, E>(effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>) =>
    effect.pipe(
      registered,
      Effect.provide(Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))),
      withKeys(keys)
    )

/** An in-memory journal and approval service that outlive the `Saga` layers built over them. */
const memoryStores = Layer.build(Layer.merge(Journal.layerMemory, Approval.layerMemory))

/** Runs `effect` on a fresh `Saga` layer over `stores`, configured with `keys`, the tools registered. */
const onStores =
  (stores: Context.Context<Journal.Journal | Approval.Approval>, keys: string | undefined) =>
  <A, E>(effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>) =>
    effect.pipe(registered, Effect.provide(Saga.layer), Effect.provide(stores), withKeys(keys))

const journalOf = (sagaId: string) => Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))

const journalIn = (stores: Context.Context<Journal.Journal | Approval.Approval>, sagaId: string) =>
  Effect.provide(journalOf(sagaId), stores)

/** The receipt journaled in the `EXECUTED` entry of `toolName`'s step, as stored. */
const receiptOf = (entries: ReadonlyArray<Pick<Journal.Entry, "phase" | "toolName" | "payload">>, toolName: string) =>
  JSON.parse(entries.find((entry) => entry.phase === "EXECUTED" && entry.toolName === toolName)!.payload!).receipt as {
    readonly sealed: string
    readonly kid: string
    readonly data: string
  }

const outcomes = (report: CompensationReport.CompensationReport) =>
  report.undone.map((step) => [step.toolName, step.outcome])

/** The bytes of an SQLite file and of its `-wal` (empty when there is none). */
const bytesOf = (filename: string) => ({
  db: fs.readFileSync(filename),
  wal: fs.existsSync(`${filename}-wal`) ? fs.readFileSync(`${filename}-wal`) : Buffer.alloc(0)
})

interface Row {
  readonly saga_id: string
  readonly seq: number
  readonly step_id: string | null
  readonly tool_name: string | null
  readonly phase: Journal.Phase
  readonly input: string | null
  readonly payload: string | null
  readonly at: string
}

const toEntry = (row: Row, payload: string | null = row.payload): Omit<Journal.Entry, "hash"> => ({
  sagaId: row.saga_id,
  seq: row.seq,
  stepId: row.step_id,
  toolName: row.tool_name,
  phase: row.phase,
  input: row.input,
  payload,
  at: row.at
})

/** A saga's entries as the file holds them, read with better-sqlite3. */
const rowsOf = (filename: string, sagaId: string) => {
  const db = new Database(filename, { readonly: true })
  try {
    const rows = db
      .prepare("SELECT * FROM effect_saga_entries WHERE saga_id = ? ORDER BY seq")
      .all(sagaId) as Array<Row>
    return rows.map((row) => toEntry(row))
  } finally {
    db.close()
  }
}

/**
 * Puts `receipt` into the `EXECUTED` row of step `stepId` with better-sqlite3, then recomputes the
 * hash of every entry from there on and the saga row's digest, so that the chain still verifies.
 */
const putReceipt = (filename: string, sagaId: string, stepId: string, receipt: unknown) => {
  const db = new Database(filename)
  try {
    const rows = db
      .prepare("SELECT * FROM effect_saga_entries WHERE saga_id = ? ORDER BY seq")
      .all(sagaId) as Array<Row>
    const update = db.prepare("UPDATE effect_saga_entries SET payload = ?, hash = ? WHERE saga_id = ? AND seq = ?")
    db.transaction(() => {
      let previous = Journal.empty.digest
      for (const row of rows) {
        const edited = row.phase === "EXECUTED" && row.step_id === stepId
        const payload = edited ? JSON.stringify({ ...JSON.parse(row.payload!), receipt }) : row.payload
        const hash = Journal.hashEntry(previous, toEntry(row, payload))
        update.run(payload, hash, sagaId, row.seq)
        previous = hash
      }
      db.prepare("UPDATE effect_saga_sagas SET digest = ? WHERE saga_id = ?").run(previous, sagaId)
    })()
  } finally {
    db.close()
  }
}

const toolsModule = path.join(root, "test", "fixtures", "receipt-tools.ts")

/** Runs the CLI from source (through tsx) with `env` over an environment without receipt keys. */
const cli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.async<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const { EFFECT_SAGA_DB: _db, [Keys.RECEIPT_KEYS]: _keys, ...inherited } = process.env
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(root, "test", "fixtures", "cli-main.ts"), ...args],
      { cwd: root, env: { ...inherited, ...env }, stdio: ["ignore", "pipe", "pipe"] }
    )
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
    return Effect.sync(() => child.kill())
  })
