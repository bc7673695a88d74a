import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Command from "@effect/cli/Command"
import { afterAll, assert, beforeAll, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Cause, Effect, Layer, Schema } from "effect"
import { build } from "esbuild"
import { Approval, Compensable, Journal, Outcome, Saga, SqlStore } from "../src/index.js"
import { commands } from "../src/internal/cli/commandTable.js"
import { endingOf } from "../src/internal/cli/failure.js"
import * as Help from "../src/internal/cli/help.js"
import { shellWord } from "../src/internal/util/shellWord.js"
import { Checkout, chargeCard, reserveInventory, ship, Tracking } from "./fixtures/cli-tools.js"
import { freshDatabase, queryOn } from "./fixtures/postgres.js"
import { edit } from "./fixtures/sqlite-raw.js"
import { unansweredRefund } from "./fixtures/unanswered-refund.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-cli-"))
// The bundles import better-sqlite3 from the repository's node_modules: they must live below it.
const bundles = path.join(root, "node_modules", ".cache", "effect-saga-cli-test", String(process.pid))
const cliBundle = path.join(bundles, "cli.mjs")
const toolsBundle = path.join(bundles, "tools.mjs")
const approvedUndoBundle = path.join(bundles, "approved-undo.mjs")
const hangingUndoBundle = path.join(bundles, "hanging-undo.mjs")
const slowClosingBundle = path.join(bundles, "slow-closing.mjs")
const prepared = path.join(dir, "prepared.db")
const world = path.join(dir, "world.log")
// The tools append what they do to this file, in this process and in the CLI's.
process.env.EFFECT_SAGA_TEST_WORLD = world

beforeAll(async () => {
  await Promise.all([bundle(), prepare()])
}, 120_000)

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true })
  fs.rmSync(bundles, { recursive: true, force: true })
})

// Each test starts a few processes: give them time on a busy machine.
describe("effect-saga, the operator's CLI, run as a subprocess on an SQLite file a saga prepared", {
  timeout: 60_000
}, () => {
  it.effect(
    "bin/effect-saga.js --help lists every command; --version prints the package's version",
    () =>
      Effect.gen(function* () {
        const help = yield* run(["--help"], { entry: path.join(root, "bin", "effect-saga.js") })
        expect(help.code).toBe(0)
        for (const command of commandNames) {
          expect(plain(help.stdout), "the bin runs dist/ when it exists: is it stale? (npm run build)").toContain(
            `- ${command} `
          )
        }
        const version = yield* cli("--version")
        expect(version.stdout.trim()).toBe(JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version)
      }),
    60_000
  )

  it.effect(
    "a signal once the command has answered, while it closes what it opened, ends it with its own code and no line",
    () =>
      Effect.gen(function* () {
        const quiet = yield* cli("compensate", "order-5", "--register", slowClosingBundle, "--db", fresh("answered-a"))
        const db = fresh("answered-b")
        const before = worldLines().length
        const ran = yield* run(["compensate", "order-5", "--register", slowClosingBundle, "--db", db], {
          interrupt: { signal: "SIGTERM", when: () => worldLines().slice(before).includes("layer closing") }
        })
        expect(ran).toEqual({ ...quiet, stderr: "" })
        expect(quiet.code).toBe(0)
        expect((yield* onFile(db, Saga.status("order-5"))).status).toBe("compensated")
      }),
    60_000
  )

  it.effect("list prints every saga and exits 1, since one needs attention; --json gives the saga rows", () =>
    Effect.gen(function* () {
      const db = fresh("list")
      const table = yield* cli("list", "--db", db)
      expect(table.code).toBe(1)
      expect(table.stderr).toBe("")
      expect(table.stdout.split("\n")[0]).toMatch(/^saga\s+status\s+chain\s+revision\s+updated\s+lease$/)
      for (const [sagaId, status] of Object.entries(statuses)) {
        expect(table.stdout).toMatch(new RegExp(`^${sagaId}\\s+${status}\\s+intact\\s`, "m"))
      }
      const json = yield* cli("list", "--db", db, "--json")
      expect(json.code).toBe(1)
      expect(JSON.parse(json.stdout)).toEqual(
        (yield* onFile(db, Saga.list())).map((record) => ({ ...record, tampered: null, stuck: false }))
      )
    })
  )

  it.effect("list filters by --status (repeatable) and --older-than; --db may come first, or from EFFECT_SAGA_DB", () =>
    Effect.gen(function* () {
      const db = fresh("filters")
      const waiting = yield* cli("--db", db, "list", "--status", "awaiting_approval", "--status", "completed", "--json")
      expect(waiting.code).toBe(0)
      expect(JSON.parse(waiting.stdout).map((saga: { sagaId: string }) => saga.sagaId)).toEqual([
        "order-1",
        "order-5",
        "payout-1",
        "order-4"
      ])
      const old = yield* run(["list", "--older-than", "1h"], { env: { EFFECT_SAGA_DB: db } })
      expect(old).toMatchObject({ code: 0, stdout: "no sagas\n" })
      // `stuck` is the mark list prints, not a status: the refusal says where such sagas are.
      const stuck = yield* cli("--db", db, "list", "--status", "stuck")
      expect(stuck.code).toBe(2)
      expect(plain(stuck.stderr)).toContain(
        "--status stuck: stuck is no status but a mark list adds to a saga running, compensating or suspended that no worker drives and no Recovery can: --status running --status compensating --status suspended lists them, each stuck one marked"
      )
      // An empty value (an unset variable) is refused, never read as no filter.
      const empty = yield* cli("--db", db, "list", "--status", "")
      expect(empty.code).toBe(2)
      expect(plain(empty.stderr)).toBe(
        "effect-saga: --status was given an empty value: give one, or leave the flag out\n"
      )
      const other = yield* cli("--db", db, "list", "--status", "done")
      expect(other.code).toBe(2)
      expect(plain(other.stderr)).toContain(
        '--status "done" is not a status: give one of running, awaiting_approval, needs_attention, suspended, compensating, completed, compensated, compensation_failed'
      )
    })
  )

  it.effect("show prints the saga's position, its steps and its journal as a timeline; --json gives them whole", () =>
    Effect.gen(function* () {
      const db = fresh("show")
      const status = yield* onFile(db, Saga.status("order-1"))
      const entries = yield* onFile(db, readJournal("order-1"))
      const table = yield* cli("show", "order-1", "--db", db)
      expect(table.code).toBe(0)
      const lines = table.stdout.split("\n")
      expect(lines[0]).toBe("saga order-1: awaiting_approval")
      expect(lines[1]).toBe(`revision ${status.revision}  digest ${status.digest}`)
      const timeline = lines.findIndex((line) => /^seq\s+time\s+step\s+tool\s+phase\s+outcome$/.test(line))
      expect(timeline).toBeGreaterThan(0)
      expect(lines.slice(timeline + 1, timeline + 1 + entries.length).map((line) => line.split(/\s+/)[0])).toEqual(
        entries.map((entry) => String(entry.seq))
      )
      expect(table.stdout).toMatch(/\bEXECUTED\s+result "ch-4200"/)
      expect(table.stdout).toContain(`next: effect-saga approve order-1 ${wireStep(status)} --as WHO`)
      expect(table.stdout).toContain(
        `next: or effect-saga reject order-1 ${wireStep(status)} --register MODULE --as WHO`
      )

      const json = yield* cli("show", "order-1", "--db", db, "--json")
      expect(json.code).toBe(0)
      expect(JSON.parse(json.stdout)).toEqual(JSON.parse(JSON.stringify({ tampered: null, saga: status, entries })))

      const attention = yield* cli("show", "order-3", "--db", db)
      expect(attention.code).toBe(1)
      expect(attention.stdout).toMatch(/pingCarrier\s+INTENT\s+no outcome journaled: unknown/)
      expect(attention.stdout).toContain("next: effect-saga resolve order-3 pingCarrier:")
    })
  )

  it.effect("approvals lists the requests waiting, with the exact input; --json gives the requests", () =>
    Effect.gen(function* () {
      const db = fresh("approvals")
      const table = yield* cli("approvals", "--db", db)
      expect(table.code).toBe(0)
      expect(table.stdout).toMatch(
        /^order-1\s+sendWireTransfer:\S+\s+sendWireTransfer\s+\S+\s+intact\s+\w{12}…\s+\{"amount":4200,"to":"DE89 3704 0044 0532 0130 00"\}$/m
      )
      const json = yield* cli("approvals", "--db", db, "--json")
      expect(JSON.parse(json.stdout)).toEqual(
        (yield* onFile(db, Approval.pending)).map((request) => ({ ...request, tampered: null, settled: null }))
      )
      expect(JSON.parse(json.stdout).map((request: { sagaId: string }) => request.sagaId)).toEqual([
        "order-1",
        "order-5",
        "payout-1"
      ])
    })
  )

  it.effect("an approve from the CLI, then a resume from code, runs the approved step once and completes", () =>
    Effect.gen(function* () {
      const db = fresh("approve")
      const approved = yield* cli("approve", "order-1", "sendWireTransfer", "--as", "alice", "--db", db)
      expect(approved).toMatchObject({ code: 0, stderr: "" })
      expect(approved.stdout).toMatch(
        /^approved step sendWireTransfer:\S+ of saga order-1 as alice: journaled APPROVED/
      )
      const last = (yield* onFile(db, readJournal("order-1"))).at(-1)!
      expect(last.phase).toBe("APPROVED")
      expect(JSON.parse(last.payload!)).toMatchObject({ _tag: "Approved", by: "alice" })

      const before = worldLines()
      const result = yield* onFile(db, Saga.start(Checkout, "order-1", { orderId: "order-1", amount: 4200 }))
      expect(result).toMatchObject({ _tag: "Completed", value: { wire: "wire-4200" } })
      expect(worldLines().slice(before.length)).toEqual(["wire 4200"])
    })
  )

  it.effect(
    "renew-approval gives an approved step a new expiry; a command at a revision the saga left is refused",
    () =>
      Effect.gen(function* () {
        const db = fresh("renew")
        const seen = yield* onFile(db, Saga.status("order-1"))
        const position = ["--revision", String(seen.revision), "--digest", seen.digest]
        expect((yield* cli("approve", "order-1", wireStep(seen), "--as", "alice", ...position, "--db", db)).code).toBe(
          0
        )

        // The approval moved the saga on: the position the operator saw is stale now.
        const unchanged = snapshot(db)
        const stale = yield* cli("renew-approval", "order-1", "sendWire", "--as", "bob", ...position, "--db", db)
        expect(stale).toMatchObject({
          code: 2,
          stdout: "",
          stderr: `effect-saga: saga order-1 is at revision ${seen.revision + 1}, not ${seen.revision}: it moved on, nothing was written\n`
        })
        expect(snapshot(db)).toEqual(unchanged)

        const renewed = yield* cli(
          "renew-approval",
          "order-1",
          "sendWire",
          "--as",
          "bob",
          "--expires-at",
          "2099-01-01",
          "--db",
          db
        )
        expect(renewed.code).toBe(0)
        const last = (yield* onFile(db, readJournal("order-1"))).at(-1)!
        expect(JSON.parse(last.payload!)).toMatchObject({
          by: "alice",
          expiresAt: "2099-01-01T00:00:00.000Z",
          renewedBy: "bob"
        })

        // The same renewal again answers as the first and writes nothing.
        const renewedOnce = snapshot(db)
        const again = yield* cli(
          "renew-approval",
          "order-1",
          "sendWire",
          "--as",
          "bob",
          "--expires-at",
          "2099-01-01",
          "--db",
          db
        )
        expect(again).toMatchObject({
          code: 0,
          stdout: `the approval of step ${wireStep(seen)} of saga order-1 was already renewed by bob until 2099-01-01T00:00:00.000Z: nothing written\n`
        })
        expect(snapshot(db)).toEqual(renewedOnce)
      })
  )

  it.effect("a reject compensates the saga at once; approving the rejected step is refused and writes nothing", () =>
    Effect.gen(function* () {
      const db = fresh("reject")
      const before = snapshot(db)
      const blank = yield* cli("reject", "payout-1", "sendWire", "--as", "bob", "--reason", "  \t ", "--db", db)
      expect(blank).toEqual({ code: 2, stdout: "", stderr: "effect-saga: --reason: must not be blank\n" })
      expect(snapshot(db)).toEqual(before)
      const rejected = yield* cli(
        "reject",
        "payout-1",
        "sendWire",
        "--as",
        "bob",
        "--reason",
        "  wrong IBAN\n",
        "--json",
        "--db",
        db
      )
      expect(rejected.code).toBe(0)
      expect(JSON.parse(rejected.stdout)).toEqual({
        sagaId: "payout-1",
        status: "compensated",
        undone: [],
        notUndone: []
      })
      const entries = yield* onFile(db, readJournal("payout-1"))
      expect(JSON.parse(entries.find((entry) => entry.phase === "REJECTED")!.payload!)).toMatchObject({
        by: "bob",
        reason: "rejected by bob: wrong IBAN"
      })

      const unchanged = snapshot(db)
      const replayed = yield* cli("reject", "payout-1", "sendWire", "--as", "bob", "--reason", "wrong IBAN", "--db", db)
      expect(replayed.code).toBe(0)
      expect(replayed.stdout).toMatch(
        /^step sendWireTransfer:\S+ of saga payout-1 was already rejected by bob: nothing written\nsaga payout-1: compensated/
      )
      expect(snapshot(db)).toEqual(unchanged)
      const again = yield* cli("approve", "payout-1", "sendWire", "--as", "alice", "--db", db)
      expect(again.code).toBe(2)
      expect(again.stdout).toBe("")
      expect(again.stderr).toMatch(
        /^effect-saga: [^\n]*step sendWireTransfer:\S+ of saga payout-1 [^\n]*rejected[^\n]*\n$/
      )
      expect(snapshot(db)).toEqual(unchanged)
    })
  )

  it.effect(
    "a reason sent from outside is shown escaped by show and its diagram; a step id with an escape is refused in one escaped line",
    () =>
      Effect.gen(function* () {
        const db = fresh("escapes")
        const unchanged = snapshot(db)
        for (const step of ["", "sendWire\u001b[2J", "sendWire\nforged"]) {
          const refused = yield* cli("approve", "payout-1", step, "--as", "al", "--db", db)
          expect(refused).toMatchObject({ code: 2, stdout: "" })
          expect(refused.stderr).toBe(
            step === ""
              ? 'effect-saga: invalid step id "": it is empty; nothing was journaled or run\n'
              : `effect-saga: invalid step id ${JSON.stringify(step)}: it holds a control character (U+00${step.includes("\n") ? "0A" : "1B"}) at index 8; nothing was journaled or run\n`
          )
        }
        expect(snapshot(db)).toEqual(unchanged)

        const status = yield* onFile(db, Saga.status("payout-1"))
        yield* onFile(
          db,
          Saga.reject("payout-1", wireStep(status), { by: "bob", reason: "ok\u001b]0;pwned\u0007\n9  FORGED" })
        )
        const entries = yield* onFile(db, readJournal("payout-1"))
        const unprintable = /[\p{Cc}\p{Bidi_Control}\u2028\u2029]/u
        const shown = yield* cli("show", "payout-1", "--db", db)
        expect(shown.code).toBe(0)
        const lines = shown.stdout.split("\n")
        for (const line of lines) expect(line).not.toMatch(unprintable)
        const timeline = lines.findIndex((line) => /^seq\s+time\s+step\s+tool\s+phase\s+outcome$/.test(line))
        expect(lines.slice(timeline + 1, -1).map((line) => line.split(/\s+/)[0])).toEqual(
          entries.map((entry) => String(entry.seq))
        )
        expect(shown.stdout).toMatch(/\bREJECTED\s+rejected by bob: ok\\u001b\]0;pwned\\u0007\\n9 {2}FORGED$/m)
        const diagram = yield* cli("show", "payout-1", "--format", "mermaid", "--db", db)
        for (const line of diagram.stdout.split("\n")) expect(line).not.toMatch(unprintable)
        expect(diagram.stdout).toContain("O--xS: rejected by bob: ok\\u001b]0#59;pwned\\u0007\\n9 FORGED\n")
      })
  )

  it.effect("compensate and reject refuse to undo executed steps whose tools are not loaded, and write nothing", () =>
    Effect.gen(function* () {
      const db = fresh("no-tools")
      const unchanged = snapshot(db)
      const [compensated, rejected] = yield* Effect.all(
        [cli("compensate", "order-5", "--db", db), cli("reject", "order-5", "sendWire", "--as", "bob", "--db", db)],
        { concurrency: 2 }
      )
      for (const [command, ran] of [
        ["compensate", compensated],
        ["reject", rejected]
      ] as const) {
        expect(ran).toMatchObject({ code: 2, stdout: "" })
        expect(ran.stderr).toBe(
          `effect-saga: ${command} would undo saga order-5, but this process has no tool for 3 executed step(s) (reserveInventory, chargeCard, ship): pass --register MODULE with the saga's tools (nothing was written)\n`
        )
      }
      expect(snapshot(db)).toEqual(unchanged)
    })
  )

  it.effect(
    "compensate and reject on a saga whose journal breaks after its steps answer the break first, not the tools",
    () =>
      Effect.gen(function* () {
        const db = fresh("tampered-no-tools")
        const reader = new Database(db, { readonly: true, fileMustExist: true })
        const { last } = reader
          .prepare("SELECT MAX(seq) AS last FROM effect_saga_entries WHERE saga_id = 'order-5'")
          .get() as { last: number }
        reader.close()
        tamper(db, "order-5", last)
        const unchanged = snapshot(db)
        for (const args of [
          ["compensate", "order-5"],
          ["reject", "order-5", "sendWire", "--as", "bob"]
        ]) {
          const ran = yield* cli(...args, "--db", db)
          expect(ran, args[0]).toMatchObject({ code: 1, stdout: "" })
          expect(ran.stderr, args[0]).toMatch(
            new RegExp(
              `^effect-saga: journal of saga order-5 does not verify at seq ${last} \\(hash\\): .*; nothing was run or written \\(effect-saga show order-5 shows the journal as stored\\)\\n$`
            )
          )
        }
        expect(snapshot(db)).toEqual(unchanged)
      })
  )

  it.effect("compensate --register runs the undos in the CLI's process, in reverse order, and never twice", () =>
    Effect.gen(function* () {
      const db = fresh("compensate")
      const before = worldLines()
      const first = yield* cli("compensate", "order-5", "--register", toolsBundle, "--json", "--db", db)
      expect(first.code).toBe(0)
      const report = JSON.parse(first.stdout)
      expect(report).toMatchObject({ sagaId: "order-5", status: "compensated", notUndone: [] })
      expect(report.undone.map((step: { toolName: string; outcome: string }) => [step.toolName, step.outcome])).toEqual(
        [
          ["ship", "completed"],
          ["chargeCard", "completed"],
          ["reserveInventory", "completed"]
        ]
      )
      expect(worldLines().slice(before.length)).toEqual(["recall parcel-order-5", "refund ch-900", "release res-A-1"])

      const second = yield* cli("compensate", "order-5", "--register", toolsBundle, "--db", db)
      expect(second.code).toBe(0)
      expect(second.stdout).toMatch(/^saga order-5: compensated\n {2}completed {4}ship /)
      expect(worldLines().length).toBe(before.length + 3)
    })
  )

  it.effect(
    "a reject asked again after one killed mid-undo says it finished that compensation, and what it wrote",
    () =>
      Effect.gen(function* () {
        const db = fresh("reject-again")
        const stepId = wireStep(yield* onFile(db, Saga.status("order-5")))
        // The first reject is "killed" once ship's undo ran: its outcome never reaches the journal.
        const killed = yield* Effect.exit(
          onFileKilledAtCompensated(
            db,
            Effect.zipRight(
              Effect.flatMap(Saga.Saga, (saga) => saga.register([reserveInventory, chargeCard, ship])),
              Saga.reject("order-5", stepId, { by: "bob", reason: "out of stock" })
            )
          )
        )
        expect(killed._tag).toBe("Failure")
        const stopped = yield* onFile(db, Saga.status("order-5"))
        expect(stopped.status).toBe("compensating")

        const before = worldLines()
        const again = yield* cli(
          "reject",
          "order-5",
          "sendWire",
          "--as",
          "bob",
          "--reason",
          "out of stock",
          "--register",
          toolsBundle,
          "--db",
          db
        )
        const after = yield* onFile(db, Saga.status("order-5"))
        // ship's undo has no outcome (unknown): the report is not clean.
        expect(again.code).toBe(1)
        expect(again.stdout.split("\n")[0]).toBe(
          `step ${stepId} of saga order-5 was already rejected by bob: this call finished the compensation that rejection started (journaled revisions ${stopped.revision + 1}–${after.revision})`
        )
        expect(after.revision).toBe(stopped.revision + 6)
        expect(worldLines().slice(before.length)).toEqual(["refund ch-900", "release res-A-1"])
      })
  )

  it.effect(
    "compensate and compensate-effect refuse a --as that cannot be a by: exit 2, nothing undone or written",
    () =>
      Effect.gen(function* () {
        const db = fresh("compensate-as")
        const charge = (yield* onFile(db, Saga.status("order-5"))).steps.find((step) => step.toolName === "chargeCard")!
        const before = worldLines()
        const unchanged = snapshot(db)
        const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
          [
            ["compensate", "order-5", "--as", "x\ny"],
            'invalid principal "x\\ny": it holds a control character (U+000A) at index 1; nothing was journaled or run'
          ],
          [["compensate", "order-5", "--as", "   "], "--as: must not be blank"],
          [
            ["compensate-effect", `order-5/${charge.stepId}`, "--as", "a\tb"],
            'invalid principal "a\\tb": it holds a control character (U+0009) at index 1; nothing was journaled or run'
          ],
          [
            ["compensate-effect", `order-5/${charge.stepId}`, "--as", "é".repeat(129)],
            `invalid principal "${"é".repeat(64)}"…: it is 258 UTF-8 bytes, over the limit of 256; nothing was journaled or run`
          ]
        ]
        for (const [args, line] of cases) {
          const ran = yield* cli(...args, "--register", toolsBundle, "--db", db)
          expect(ran, args.join(" ")).toEqual({ code: 2, stdout: "", stderr: `effect-saga: ${line}\n` })
        }
        expect(worldLines()).toEqual(before)
        expect(snapshot(db)).toEqual(unchanged)
      })
  )

  it.effect("a compensation that leaves an unknown step behind exits 1 and says so", () =>
    Effect.gen(function* () {
      const db = fresh("dirty")
      const ran = yield* cli("compensate", "order-3", "--register", toolsBundle, "--db", db)
      expect(ran.code).toBe(1)
      expect(ran.stderr).toBe("")
      expect(ran.stdout).toMatch(
        /^saga order-3: compensation_failed\n {2}completed {4}reserveInventory \(\S+\)\n {2}not undone: outcome unknown pingCarrier /
      )
    })
  )

  it.effect("resolve on a saga whose compensation failed says to compensate it again, not to resume it", () =>
    Effect.gen(function* () {
      const db = fresh("resolve-after-compensation")
      expect((yield* cli("compensate", "order-3", "--register", toolsBundle, "--db", db)).code).toBe(1)
      const resolved = yield* cli("resolve", "order-3", "pingCarrier", "--not-applied", "--as", "oncall", "--db", db)
      expect(resolved).toMatchObject({ code: 0, stderr: "" })
      expect(resolved.stdout).toMatch(
        /^resolved step pingCarrier:\S+ of saga order-3 as not-applied \(oncall\): journaled FAILED; its compensation already ran: compensate the saga again \(effect-saga compensate order-3\), which runs any undo still owed and journals a new report\n$/
      )
      // As it says: compensated again, the saga ends compensated.
      expect((yield* cli("compensate", "order-3", "--register", toolsBundle, "--db", db)).code).toBe(0)
      expect((yield* onFile(db, Saga.status("order-3"))).status).toBe("compensated")
    })
  )

  it.effect("docs/cli.md shows the Mermaid diagram show --format mermaid prints for a rejected checkout", () =>
    Effect.gen(function* () {
      const db = fresh("mermaid")
      const rejected = yield* cli(
        "reject",
        "order-5",
        "sendWire",
        "--as",
        "bob",
        "--reason",
        "supplier on hold",
        "--register",
        toolsBundle,
        "--db",
        db
      )
      expect(rejected.code).toBe(0)
      const diagram = yield* cli("show", "order-5", "--format", "mermaid", "--db", db)
      expect(diagram.code).toBe(0)
      expect(diagram.stdout.startsWith("sequenceDiagram\n")).toBe(true)
      const documented = fs.readFileSync(path.join(root, "docs", "cli.md"), "utf8").match(/```mermaid\n([\s\S]*?)```/)
      expect(documented?.[1]).toBe(diagram.stdout)
    })
  )

  it.effect("resolve settles an unknown step as applied; resumed from code, the saga goes on and completes", () =>
    Effect.gen(function* () {
      const db = fresh("resolve")
      const resolved = yield* cli(
        "resolve",
        "order-3",
        "pingCarrier",
        "--applied",
        "--result",
        '"track-3"',
        "--as",
        "oncall",
        "--db",
        db
      )
      expect(resolved.code).toBe(0)
      expect(resolved.stdout).toMatch(
        /^resolved step pingCarrier:\S+ of saga order-3 as applied \(oncall\): journaled EXECUTED/
      )
      // Asked again exactly as before: it says so, and writes nothing.
      const unchanged = snapshot(db)
      const args = ["resolve", "order-3", "pingCarrier", "--applied", "--result", '"track-3"', "--as", "oncall"]
      const again = yield* cli(...args, "--db", db)
      expect(again).toMatchObject({ code: 0, stderr: "" })
      expect(again.stdout).toMatch(
        /^step pingCarrier:\S+ of saga order-3 was already resolved as applied by oncall: nothing written\n$/
      )
      expect(snapshot(db)).toEqual(unchanged)
      // Still needs_attention until resumed: show says who resumes it, and no longer asks to resolve.
      const shown = yield* cli("show", "order-3", "--db", db)
      expect(shown.code).toBe(1)
      const next = shown.stdout.split("\n").filter((line) => line.startsWith("next:"))
      expect(next).toEqual([
        expect.stringMatching(
          /^next: nothing is left to resolve: the saga goes on when it is resumed, by a worker given definition tracking: Recovery\.resume\("order-3"\), or Saga\.start with tracking \(a Recovery pass does not take a saga that needs attention\); or effect-saga compensate order-3 --register MODULE --as WHO --revision \d+ --digest [0-9a-f]{64}$/
        )
      ])
      const result = yield* onFile(db, Saga.start(Tracking, "order-3", { orderId: "order-3" }))
      expect(result).toMatchObject({ _tag: "Completed", value: "track-3" })
    })
  )

  it.effect(
    "after compensation undid the step before it, show offers --applied --undone or --not-applied, and resolve --applied alone is refused",
    () =>
      Effect.gen(function* () {
        const db = fresh("resolve-late")
        const compensated = yield* cli("compensate", "order-3", "--register", toolsBundle, "--db", db)
        expect(compensated.code, compensated.stderr).toBe(1)
        const shown = yield* cli("show", "order-3", "--db", db)
        expect(shown.stdout).toMatch(
          /next: effect-saga resolve order-3 pingCarrier:\S+ --applied --undone --result JSON\|--not-applied --as WHO /
        )
        expect(shown.stdout).toContain(
          "(if the call happened, undo it by hand first, then --applied --undone: step reserveInventory:"
        )
        const unchanged = snapshot(db)
        const applied = yield* cli(
          "resolve",
          "order-3",
          "pingCarrier",
          "--applied",
          "--result",
          '"t"',
          "--as",
          "oncall",
          "--db",
          db
        )
        expect(applied.code).toBe(2)
        expect(applied.stderr).toContain("out of reverse order")
        expect(snapshot(db)).toEqual(unchanged)
        const undone = yield* cli(
          "resolve",
          "order-3",
          "pingCarrier",
          "--applied",
          "--undone",
          "--result",
          '"t"',
          "--as",
          "oncall",
          "--db",
          db
        )
        expect(undone.code, undone.stderr).toBe(0)
        expect(undone.stdout).toMatch(
          /^resolved step pingCarrier:\S+ of saga order-3 as applied and undone by hand \(oncall\): journaled EXECUTED and COMPENSATED; its compensation already ran: compensate the saga again \(effect-saga compensate order-3\), which counts it undone without running its undo and journals a new report\n$/
        )
        const again = yield* cli("compensate", "order-3", "--register", toolsBundle, "--db", db)
        expect(again.code, again.stdout + again.stderr).toBe(0)
        expect((yield* onFile(db, Saga.status("order-3"))).status).toBe("compensated")
      })
  )

  it.effect("resolve --receipt reads the receipt from stdin or the environment, never from the command line", () =>
    Effect.gen(function* () {
      const db = fresh("resolve-receipt")
      const secret = "rcpt-from-the-carrier-7f3a"
      const args = [
        "resolve",
        "order-3",
        "pingCarrier",
        "--applied",
        "--result",
        '"track-3"',
        "--as",
        "oncall",
        "--db",
        db
      ]
      const typed = yield* cli(...args, "--receipt", secret)
      expect(typed.code).toBe(2)
      expect(typed.stderr).toContain("--receipt: say where to read the receipt")
      expect(typed.stdout + typed.stderr).not.toContain(secret)
      const piped = yield* run([...args, "--receipt", "-"], { stdin: (stdin) => stdin.end(`${secret}\n`) })
      expect(piped.code, piped.stderr).toBe(0)
      expect(piped.stdout + piped.stderr).not.toContain(secret)
      const executed = (yield* onFile(db, readJournal("order-3"))).find(
        (entry) => entry.phase === "EXECUTED" && entry.stepId?.startsWith("pingCarrier")
      )
      expect(JSON.parse(executed!.payload!).receipt).toBe(secret)
      // Asked again with the same receipt from the environment: a replay, nothing written.
      const again = yield* run([...args, "--receipt", "env:CARRIER_RECEIPT"], { env: { CARRIER_RECEIPT: secret } })
      expect(again.code, again.stderr).toBe(0)
      expect(again.stdout).toContain("was already resolved as applied by oncall: nothing written")
      const missing = yield* run([...args, "--receipt", "env:NOT_SET_ANYWHERE"])
      expect(missing).toMatchObject({ code: 2 })
      expect(missing.stderr).toContain("the environment variable NOT_SET_ANYWHERE is not set or empty")
    })
  )

  it.effect(
    "a step whose undo needs a receipt: show says to give it, and resolve without one warns (no --register)",
    () =>
      Effect.gen(function* () {
        const db = path.join(dir, "receipt-required.db")
        const refund = unansweredRefund
        const result = yield* onFile(db, Saga.run("rc-1", refund(10)))
        assert(result._tag === "NeedsAttention")
        const stepId = result.unknown[0]!.stepId
        const shown = yield* cli("show", "rc-1", "--db", db)
        expect(shown.stdout).toContain(
          "its undo needs the provider's receipt: resolved as applied without it (add --receipt - to read it from stdin, or --receipt env:NAME), effect-saga can never undo the call's effect"
        )
        const resolved = yield* cli(
          "resolve",
          "rc-1",
          stepId,
          "--applied",
          "--result",
          '"r-1"',
          "--as",
          "oncall",
          "--db",
          db
        )
        expect(resolved.code, resolved.stderr).toBe(0)
        expect(resolved.stderr).toContain("declares receiptRequired: its effect can never be undone by effect-saga")
      })
  )

  it.effect("resolve --result - reads the result from stdin: one larger than a command-line argument may be", () =>
    Effect.gen(function* () {
      const db = fresh("resolve-result-stdin")
      // 300 KB: over the 128 KiB Linux allows one argument, under the default maxPayloadBytes.
      const tracking = `track-${"x".repeat(300_000)}`
      const args = ["resolve", "order-3", "pingCarrier", "--applied", "--result", "-", "--as", "oncall", "--db", db]
      const both = yield* run([...args, "--receipt", "-"], { stdin: (stdin) => stdin.end("{}") })
      expect(both).toMatchObject({ code: 2 })
      expect(both.stderr).toContain("--result - and --receipt - both read stdin: give the receipt as env:NAME")
      const piped = yield* run(args, { stdin: (stdin) => stdin.end(`${JSON.stringify(tracking)}\n`) })
      expect(piped.code, piped.stderr).toBe(0)
      const executed = (yield* onFile(db, readJournal("order-3"))).find(
        (entry) => entry.phase === "EXECUTED" && entry.stepId?.startsWith("pingCarrier")
      )
      expect(JSON.parse(executed!.payload!).result).toBe(tracking)
    })
  )

  it.effect("an explicit undo that answered unknown: show offers resolve of its run, which settles it", () =>
    Effect.gen(function* () {
      const db = fresh("resolve-undo-run")
      const lostUndo = Compensable.make({
        name: "chargeCard",
        input: Schema.Struct({ amount: Schema.Int }),
        success: Schema.String,
        execute: ({ amount }) => Effect.succeed(`ch-${amount}`),
        compensate: () => Effect.fail(Outcome.unknown("the bank did not answer"))
      })
      const answer = yield* onFile(
        db,
        Effect.gen(function* () {
          yield* Effect.flatMap(Saga.Saga, (saga) => saga.register([lostUndo]))
          const charge = (yield* Saga.status("order-4")).steps.find((step) => step.toolName === "chargeCard")!
          return yield* Saga.compensateEffect(charge.effectId)
        })
      )
      assert(answer._tag === "Settled" && answer.outcome === "unknown")
      const shown = yield* cli("show", answer.runId, "--db", db)
      expect(shown.code).toBe(1)
      expect(shown.stdout).toContain(`next: effect-saga resolve ${answer.runId} chargeCard:`)
      expect(shown.stdout).toContain("--applied|--not-applied --as WHO")
      const withResult = yield* cli(
        "resolve",
        answer.runId,
        "chargeCard",
        "--applied",
        "--result",
        "1",
        "--as",
        "oncall",
        "--db",
        db
      )
      expect(withResult.code).toBe(2)
      const resolved = yield* cli("resolve", answer.runId, "chargeCard", "--applied", "--as", "oncall", "--db", db)
      expect(resolved.code, resolved.stderr).toBe(0)
      expect(resolved.stdout).toMatch(
        /^resolved the undo of step chargeCard:\S+ in run \S+ as undone \(oncall\); the run answers completed\n$/
      )
      const status = yield* onFile(db, Saga.status(answer.runId))
      expect(status.status).toBe("completed")
    })
  )

  it.effect("verify exits 0 on intact chains, and 1 naming the entry when one was tampered with", () =>
    Effect.gen(function* () {
      const db = fresh("verify")
      const intact = yield* cli("verify", "--all", "--json", "--db", db)
      expect(intact.code).toBe(0)
      const verdicts = JSON.parse(intact.stdout)
      expect(verdicts.map((verdict: { sagaId: string }) => verdict.sagaId).sort()).toEqual(Object.keys(statuses).sort())
      expect(verdicts.every((verdict: { _tag: string }) => verdict._tag === "Intact")).toBe(true)

      tamper(db, "order-2", 5)
      const [one, all] = yield* Effect.all(
        [cli("verify", "order-2", "--db", db), cli("verify", "--all", "--json", "--db", db)],
        { concurrency: 2 }
      )
      expect(one.code).toBe(1)
      expect(one.stdout).toMatch(
        /^order-2\s+BROKEN\s+at seq 5: hash does not match the entry's content and its predecessor/m
      )
      expect(all.code).toBe(1)
      expect(JSON.parse(all.stdout)).toContainEqual({
        sagaId: "order-2",
        _tag: "Broken",
        seq: 5,
        problem: "hash",
        reason: "hash does not match the entry's content and its predecessor"
      })
    })
  )

  it.effect("a saga row edited so it does not decode, or deleted, is a broken chain to list, verify and show", () =>
    Effect.gen(function* () {
      const db = fresh("row-edited")
      const edit = new Database(db, { fileMustExist: true })
      try {
        edit.prepare("UPDATE effect_saga_sagas SET status = 'bogus' WHERE saga_id = ?").run("order-2")
        edit.prepare("DELETE FROM effect_saga_sagas WHERE saga_id = ?").run("order-3")
      } finally {
        edit.close()
      }
      const [listed, bogus, deleted, shown] = yield* Effect.all(
        [
          cli("list", "--json", "--db", db),
          cli("verify", "order-2", "--json", "--db", db),
          cli("verify", "order-3", "--json", "--db", db),
          cli("show", "order-2", "--db", db)
        ],
        { concurrency: 2 }
      )
      expect(listed.code).toBe(1)
      const rows = JSON.parse(listed.stdout) as ReadonlyArray<{ sagaId: string; tampered: unknown }>
      expect(rows.find((row) => row.sagaId === "order-2")?.tampered).toMatchObject({ seq: 1, problem: "row" })
      expect(rows.some((row) => row.sagaId === "order-1")).toBe(true)
      expect(bogus.code).toBe(1)
      expect(JSON.parse(bogus.stdout)).toEqual([
        { sagaId: "order-2", _tag: "Broken", seq: 1, problem: "row", reason: expect.stringContaining('status "bogus"') }
      ])
      expect(deleted.code).toBe(1)
      expect(JSON.parse(deleted.stdout)).toEqual([
        {
          sagaId: "order-3",
          _tag: "Broken",
          seq: 1,
          problem: "row",
          reason: expect.stringContaining("the row was deleted")
        }
      ])
      expect(shown.code).toBe(1)
      expect(shown.stdout.split("\n")[0]).toMatch(
        /^saga order-2: TAMPERED: its journal does not verify at seq 1 \(row\)/
      )
    })
  )

  it.effect("export prints NDJSON that import reads into another database as it was; a second import conflicts", () =>
    Effect.gen(function* () {
      const db = fresh("export")
      const exported = yield* cli("export", "order-2", "--db", db)
      expect(exported.code).toBe(0)
      const original = yield* onFile(db, readJournal("order-2"))
      const lines = exported.stdout.trimEnd().split("\n")
      expect(lines.slice(0, -1).map((line) => JSON.parse(line))).toEqual(original)
      expect(JSON.parse(lines.at(-1)!)).toEqual({
        exportEnd: { sagaId: "order-2", entries: original.length, digest: original.at(-1)!.hash }
      })

      const file = path.join(dir, "order-2.ndjson")
      fs.writeFileSync(file, exported.stdout)
      const target = path.join(dir, "imported.db")
      const imported = yield* cli("import", file, "--db", target)
      expect(imported.code).toBe(0)
      expect(imported.stdout).toMatch(/^imported saga order-2: compensated, revision \d+, digest [0-9a-f]{64}\n$/)
      expect(yield* onFile(target, readJournal("order-2"))).toEqual(original)

      // From a pipe whose writer is slower than the import: stdin is read to its end.
      const piped = path.join(dir, "piped.db")
      const [first, ...rest] = exported.stdout.split(/(?<=\n)/)
      const fromPipe = yield* run(["import", "-", "--db", piped], {
        stdin: (stdin) => {
          stdin.write(first)
          setTimeout(() => stdin.end(rest.join("")), 1_500)
        }
      })
      expect(fromPipe).toMatchObject({ code: 0, stderr: "" })
      expect(yield* onFile(piped, readJournal("order-2"))).toEqual(original)

      const unchanged = snapshot(target)
      const again = yield* cli("import", file, "--db", target)
      expect(again).toMatchObject({ code: 2, stdout: "" })
      expect(again.stderr).toMatch(
        /^effect-saga: saga order-2 is at revision \d+, not 0: it exists already, nothing was written\n$/
      )
      expect(snapshot(target)).toEqual(unchanged)
    })
  )

  it.effect("an import that fails leaves no database behind where there was none", () =>
    Effect.gen(function* () {
      const db = fresh("import-fails")
      const one = (yield* cli("export", "order-2", "--db", db)).stdout
      const other = (yield* cli("export", "order-4", "--db", db)).stdout
      for (const [text, why] of [
        [
          `${one}${other}`,
          /^effect-saga: journal of saga order-2 is corrupted at seq \d+: line \d+ is the export's end line, yet lines follow it\n$/
        ],
        [
          "not json\n",
          /^effect-saga: an imported journal is corrupted at seq 1: line 1 is not a journal entry: it is not JSON\n$/
        ],
        [
          `${one.split("\n").slice(0, 3).join("\n")}\n`,
          /^effect-saga: journal of saga order-2 is corrupted at seq 4: the export has no end line after its 3 entries: it was cut short\n$/
        ],
        ["", /^effect-saga: an imported journal is corrupted at seq 0: the export is empty\n$/]
      ] as const) {
        const file = path.join(dir, "broken.ndjson")
        fs.writeFileSync(file, text)
        const target = path.join(dir, "never-made.db")
        const failed = yield* cli("import", file, "--db", target)
        expect(failed).toMatchObject({ code: 2, stdout: "" })
        expect(failed.stderr).toMatch(why)
        expect(fs.readdirSync(dir).filter((name) => name.startsWith("never-made.db"))).toEqual([])
        const listed = yield* cli("list", "--db", target)
        expect(listed.code).toBe(2)
        expect(listed.stderr).toContain("no database at")
      }
    })
  )

  it.effect(
    "compensate-effect undoes one effect, journals it as a run of its own, and answers a second time alike",
    () =>
      Effect.gen(function* () {
        const db = fresh("compensate-effect")
        const status = yield* onFile(db, Saga.status("order-5"))
        const charge = status.steps.find((step) => step.toolName === "chargeCard")!
        const before = worldLines()
        // Without the tool registered, nothing runs and nothing is journaled: the line says so.
        const untouched = snapshot(db)
        const unregistered = yield* cli("compensate-effect", charge.effectId, "--db", db)
        expect(unregistered.code).toBe(1)
        expect(unregistered.stdout).toMatch(
          new RegExp(
            `^${charge.effectId.replace(/[#:]/g, ".")}: unavailable \\(tool chargeCard is not registered in this process\\); nothing journaled: ask again with --register MODULE, a module that registers the tool\n$`
          )
        )
        expect(snapshot(db)).toEqual(untouched)
        const first = yield* cli("compensate-effect", charge.effectId, "--register", toolsBundle, "--json", "--db", db)
        expect(first.code).toBe(0)
        expect(JSON.parse(first.stdout)).toMatchObject({
          _tag: "Settled",
          effectId: charge.effectId,
          runId: `${charge.effectId}/compensate-effect`,
          outcome: "completed"
        })
        expect(worldLines().slice(before.length)).toEqual(["refund ch-900"])
        const journaled = snapshot(db)
        const second = yield* cli("compensate-effect", charge.effectId, "--register", toolsBundle, "--db", db)
        expect(second.code).toBe(0)
        expect(second.stdout).toContain(`${charge.effectId}: completed`)
        expect(snapshot(db)).toEqual(journaled)
        expect(worldLines().length).toBe(before.length + 1)
        // The saga's own step stays EXECUTED.
        expect(
          (yield* onFile(db, Saga.status("order-5"))).steps.find((step) => step.stepId === charge.stepId)?.state
        ).toBe("executed")
      })
  )

  it.effect("compensate-effect exits 1 while the undo awaits an approval of its own, and says what to approve", () =>
    Effect.gen(function* () {
      const db = fresh("compensate-effect-approval")
      const status = yield* onFile(db, Saga.status("order-5"))
      const charge = status.steps.find((step) => step.toolName === "chargeCard")!
      const runId = `${charge.effectId}/compensate-effect`
      const waiting = yield* cli("compensate-effect", charge.effectId, "--register", approvedUndoBundle, "--db", db)
      expect(waiting.code).toBe(1)
      expect(waiting.stdout).toContain(
        `the undo awaits an approval of its own (next: effect-saga approve ${runId} ${charge.stepId} --as WHO)`
      )
      const json = yield* cli(
        "compensate-effect",
        charge.effectId,
        "--register",
        approvedUndoBundle,
        "--json",
        "--db",
        db
      )
      expect(json.code).toBe(1)
      expect(JSON.parse(json.stdout)).toMatchObject({ _tag: "AwaitingApproval", runId })
    })
  )

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it.effect(
      `compensate-effect whose undo never returns stops on ${signal}: exit 130, the undo journaled unknown, both leases dropped`,
      () =>
        Effect.gen(function* () {
          const db = fresh(`hanging-${signal}`)
          const charge = (yield* onFile(db, Saga.status("order-5"))).steps.find(
            (step) => step.toolName === "chargeCard"
          )!
          const runId = `${charge.effectId}/compensate-effect`
          const before = worldLines().length
          const ran = yield* run(["compensate-effect", charge.effectId, "--register", hangingUndoBundle, "--db", db], {
            interrupt: { signal, when: () => worldLines().slice(before).includes("refund ch-900 hangs") }
          })
          expect(ran.code).toBe(130)
          // One line says what the interruption left, and what to do about it.
          expect(ran.stderr).toBe(
            `effect-saga: interrupted: the undo of step ${charge.stepId} was interrupted and is journaled COMPENSATION_UNKNOWN in run ${runId}: first ask again, effect-saga compensate-effect ${charge.effectId}, which answers unknown and runs nothing (resolve refuses the run until then); find out whether the undo (key ${runId}) happened, then effect-saga resolve ${runId} ${charge.stepId} --applied|--not-applied --as WHO\n`
          )
          // Resolved before asking again, the run is refused, and told to ask first.
          const early = yield* cli("resolve", runId, charge.stepId, "--not-applied", "--as", "oncall", "--db", db)
          expect(early.code).toBe(2)
          expect(early.stderr).toContain(
            `the run has no answer to resolve yet (it is running): if its worker stopped, ask for the effect again first (effect-saga compensate-effect ${charge.effectId}, or Saga.compensateEffect)`
          )
          const stored = yield* onFile(
            db,
            Effect.all({ run: readJournal(runId), runRow: Saga.status(runId), saga: Saga.status("order-5") })
          )
          expect(stored.run.map((entry) => [entry.phase, entry.payload])).toEqual([
            ["SAGA_STARTED", JSON.stringify({ effectId: charge.effectId })],
            ["COMPENSATING", JSON.stringify({ idempotencyKey: runId })],
            ["COMPENSATION_UNKNOWN", JSON.stringify({ reason: "the undo was interrupted" })]
          ])
          expect(stored.runRow.lease).toBeNull()
          expect(stored.saga.lease).toBeNull()
          // Asked again, the answer is that outcome; the undo is not run again.
          const hung = worldLines().length
          const again = yield* cli(
            "compensate-effect",
            charge.effectId,
            "--register",
            hangingUndoBundle,
            "--json",
            "--db",
            db
          )
          expect(JSON.parse(again.stdout)).toMatchObject({ outcome: "unknown", detail: "the undo was interrupted" })
          expect(worldLines().length).toBe(hung)
          // As the line said: the undo is resolved.
          const resolved = yield* cli("resolve", runId, charge.stepId, "--not-applied", "--as", "carol", "--db", db)
          expect(resolved.code, resolved.stderr).toBe(0)
          expect((yield* onFile(db, Saga.status(runId))).status).toBe("completed")
        })
    )
  }

  for (const command of ["compensate", "reject"] as const) {
    it.effect(
      `${command} interrupted during an undo says which undo is journaled unknown, and the same command again goes on`,
      () =>
        Effect.gen(function* () {
          const db = fresh(`interrupted-${command}`)
          const status = yield* onFile(db, Saga.status("order-5"))
          const charge = status.steps.find((step) => step.toolName === "chargeCard")!
          const asked =
            command === "compensate"
              ? ["compensate", "order-5"]
              : ["reject", "order-5", wireStep(status), "--as", "bob", "--reason", "supplier on hold"]
          const before = worldLines().length
          const ran = yield* run([...asked, "--register", hangingUndoBundle, "--db", db], {
            interrupt: { signal: "SIGINT", when: () => worldLines().slice(before).includes("refund ch-900 hangs") }
          })
          expect(ran.code).toBe(130)
          expect(ran.stdout).toBe("")
          expect(ran.stderr).toBe(
            `effect-saga: interrupted: the undo of step ${charge.stepId} was interrupted and is journaled COMPENSATION_UNKNOWN; saga order-5 is left compensating, its lease dropped: run the same command again to go on with the undos left, or let a worker whose Recovery was given definition checkout go on at its next pass (that undo stays unknown)\n`
          )
          const left = yield* onFile(db, Effect.all({ saga: Saga.status("order-5"), entries: readJournal("order-5") }))
          expect(left.saga.status).toBe("compensating")
          expect(left.saga.lease).toBeNull()
          expect(left.entries.at(-1)).toMatchObject({
            stepId: charge.stepId,
            phase: "COMPENSATION_UNKNOWN",
            payload: JSON.stringify({ reason: "the undo was interrupted" })
          })
          // The same command again undoes what is left; the interrupted undo stays unknown.
          const again = yield* cli(...asked, "--register", toolsBundle, "--db", db)
          expect(again.code).toBe(1)
          expect(worldLines().slice(before)).toEqual([
            "recall parcel-order-5",
            "refund ch-900 hangs",
            "release res-A-1"
          ])
          expect((yield* onFile(db, Saga.status("order-5"))).status).toBe("compensation_failed")
        })
    )
  }

  describe("on PostgreSQL", () => {
    it.effect("--db postgres://: a saga exported from SQLite imports, shows and verifies as it was", () =>
      Effect.gen(function* () {
        const url = yield* Effect.promise(() => freshDatabase("effect_saga_cli"))
        // A database without effect-saga's tables holds no journal to read; only import creates one.
        const nothing = yield* cli("list", "--db", url)
        expect(nothing).toMatchObject({ code: 2, stdout: "" })
        expect(nothing.stderr).toMatch(
          /^effect-saga: no effect-saga journal at postgres:\/\/\S+: the database has no effect-saga tables/
        )
        const exported = yield* cli("export", "order-4", "--db", fresh("to-postgres"))
        const file = path.join(dir, "order-4.ndjson")
        fs.writeFileSync(file, exported.stdout)
        const imported = yield* cli("import", file, "--db", url)
        expect(imported.code, imported.stderr).toBe(0)
        const shown = yield* cli("show", "order-4", "--json", "--db", url)
        expect(shown.code, shown.stderr).toBe(0)
        expect(JSON.parse(shown.stdout).entries).toEqual(
          exported.stdout
            .trimEnd()
            .split("\n")
            .slice(0, -1)
            .map((line) => JSON.parse(line))
        )
        const verified = yield* cli("verify", "--all", "--db", url)
        expect(verified.code, verified.stderr).toBe(0)
        // Its record of migrations dropped, an import is refused in the words every other command uses.
        yield* Effect.promise(() => queryOn(url, "DROP TABLE effect_saga_migrations"))
        const edited = `effect-saga: the journal at ${url} records no migration (its effect_saga_migrations table is empty or missing) while its tables exist: the record was edited; restore it from a backup (nothing was written)\n`
        for (const args of [["list"], ["import", file]]) {
          const refused = yield* cli(...args, "--db", url)
          expect(refused, args[0]).toEqual({ code: 2, stdout: "", stderr: edited })
        }
      })
    )
  })

  it.effect("prune deletes finished sagas last updated before the date, and nothing unfinished", () =>
    Effect.gen(function* () {
      const db = fresh("prune")
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString()
      const none = yield* cli("prune", "--finished-before", "2000-01-01", "--db", db)
      expect(none).toMatchObject({ code: 0, stdout: "pruned 0 saga(s) finished before 2000-01-01T00:00:00.000Z\n" })
      // A row edited to a finished status is not pruned, and the dry run says so too.
      const edited = new Database(db)
      edited.prepare("UPDATE effect_saga_sagas SET status = 'completed' WHERE saga_id = 'order-1'").run()
      edited.close()
      const dry = yield* cli("prune", "--finished-before", tomorrow, "--dry-run", "--json", "--db", db)
      expect(JSON.parse(dry.stdout)).toEqual(["order-2", "order-4"])
      const pruned = yield* cli("prune", "--finished-before", tomorrow, "--json", "--db", db)
      expect(JSON.parse(pruned.stdout)).toEqual(["order-2", "order-4"])
      expect((yield* onFile(db, Saga.list())).map((saga) => saga.sagaId)).toEqual([
        "order-1",
        "order-3",
        "order-5",
        "payout-1"
      ])
      // Its help names what it deletes as it deletes: a compensation_failed saga may have left an effect live.
      const help = plain((yield* cli("prune", "--help")).stdout).replace(/\s+/g, " ")
      expect(help).toContain("finished with nothing left live (completed, compensated)")
      expect(help).toContain("needing attention or compensation_failed is ever deleted")
    })
  )

  it.effect("prune deletes nothing while a saga it would delete does not verify: it names it, exit 1", () =>
    Effect.gen(function* () {
      const db = fresh("prune-tampered")
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString()
      tamper(db, "order-2", 2)
      const unchanged = snapshot(db)
      for (const dry of [["--dry-run"], []]) {
        const refused = yield* cli("prune", "--finished-before", tomorrow, ...dry, "--db", db)
        expect(refused.code).toBe(1)
        expect(refused.stdout).toMatch(/^saga order-2: TAMPERED: its journal does not verify at seq 2 \(hash\)/)
        expect(refused.stderr).toBe(
          "effect-saga: prune would delete 1 saga(s) whose journal does not verify: nothing was deleted; keep them for a person to look at (effect-saga show SAGA), restore them from a backup, or give an earlier --finished-before\n"
        )
      }
      const json = yield* cli("prune", "--finished-before", tomorrow, "--json", "--db", db)
      expect(json.code).toBe(1)
      expect(JSON.parse(json.stdout)).toMatchObject({ tampered: [{ sagaId: "order-2", seq: 2, problem: "hash" }] })
      expect(snapshot(db)).toEqual(unchanged)
    })
  )

  it.effect("bad input exits 2 with one line on stderr, no stack trace, and writes nothing", () =>
    Effect.gen(function* () {
      const db = fresh("bad")
      const text = path.join(dir, "notes.txt")
      fs.writeFileSync(text, "not a database\n")
      const missing = path.join(dir, "missing.db")
      const unchanged = snapshot(db)
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
        [["show", "nope", "--db", db], /^effect-saga: no saga nope in the journal\n/],
        [["approve", "nope", "step", "--as", "alice", "--db", db], /^effect-saga: no saga nope in the journal\n/],
        [
          ["list", "--older-than", "yesterday", "--db", db],
          /^effect-saga: --older-than: "yesterday" is not a duration/
        ],
        [
          ["list", "--older-than", "-5 minutes", "--db", db],
          /^effect-saga: --older-than: "-5 minutes" is not a duration/
        ],
        [
          ["list", "--older-than", "99999999999999999999d", "--db", db],
          /^effect-saga: --older-than: "99999999999999999999d" is longer than 10000 years\n$/
        ],
        [
          ["prune", "--finished-before", "31/12/2024", "--db", db],
          /^effect-saga: --finished-before: "31\/12\/2024" is not an ISO-8601 time: a date/
        ],
        [
          ["prune", "--finished-before", "2025-02-30", "--db", db],
          /^effect-saga: --finished-before: "2025-02-30" is not/
        ],
        [["list", "--db", text], /^effect-saga: journal open failed: .*notes\.txt: the file is not an SQLite database/],
        [["list", "--db", missing], /^effect-saga: no database at .*missing\.db/],
        [
          ["list", "--db", "postgres://nobody@127.0.0.1:1/sagas"],
          /^effect-saga: journal open failed: postgres:\/\/nobody@127\.0\.0\.1:1\/sagas/
        ],
        [
          ["list", "--db", "postgres://nobody@127.0.0.1:1/sagas?password=cli-secret"],
          /^effect-saga: journal open failed: postgres:\/\/nobody@127\.0\.0\.1:1\/sagas\?password=\*\*\*&options=/
        ],
        [["list"], /^effect-saga: no database: pass --db FILE or set EFFECT_SAGA_DB\n/],
        [
          ["resolve", "order-3", "ping", "--applied", "--not-applied", "--as", "x", "--db", db],
          /exactly one of --applied/
        ]
      ]
      const runs = yield* Effect.forEach(cases, ([args]) => cli(...args), { concurrency: 4 })
      runs.forEach((ran, i) => {
        const [args, message] = cases[i]!
        expect(ran.code, args.join(" ")).toBe(2)
        expect(ran.stdout, args.join(" ")).toBe("")
        expect(ran.stderr.split("\n"), args.join(" ")).toHaveLength(2)
        expect(ran.stderr, args.join(" ")).toMatch(message)
        expect(ran.stderr, args.join(" ")).not.toMatch(/\n\s+at /)
      })
      expect(snapshot(db)).toEqual(unchanged)
      expect(fs.readFileSync(text, "utf8")).toBe("not a database\n")
      expect(
        fs.readdirSync(dir).filter((file) => file.startsWith("notes.txt-") || file.startsWith("missing.db"))
      ).toEqual([])
      const unknown = yield* cli("frobnicate", "--db", db)
      expect(unknown.code).toBe(2)
      expect(unknown.stderr).toContain("Invalid subcommand")
      // A --revision no saga can be at is a usage error, not a saga that moved on.
      const negative = yield* cli("approve", "order-1", "sendWire", "--as", "alice", "--revision", "-1", "--db", db)
      expect(negative).toMatchObject({ code: 2, stdout: "" })
      expect(negative.stderr).toMatch(
        /^--revision -1 is not a revision: give the one show printed \(a whole number, 0 or more\)\n/
      )
      // So is a --digest no hash can be (mistyped, cut short).
      const cut = yield* cli(
        "approve",
        "order-1",
        "sendWire",
        "--as",
        "alice",
        "--revision",
        "7",
        "--digest",
        "abc",
        "--db",
        db
      )
      expect(cut).toMatchObject({ code: 2, stdout: "" })
      expect(cut.stderr).toMatch(
        /^--digest "abc" is not a digest: give the one show printed \(64 hex digits, 0-9 a-f\)\n/
      )
      // And an --input-digest no input's SHA-256 can be: not "the approval names another".
      const cutInput = yield* cli(
        "renew-approval",
        "order-1",
        "sendWire",
        "--as",
        "bob",
        "--input-digest",
        "abc",
        "--db",
        db
      )
      expect(cutInput).toMatchObject({ code: 2, stdout: "" })
      expect(cutInput.stderr).toMatch(
        /^--input-digest "abc" is not an input's SHA-256 \(64 hex digits, 0-9 a-f\): give the approved one, the inputDigest of the step's APPROVED entry in effect-saga show SAGA --json\n/
      )
      const fraction = yield* cli("approve", "order-1", "sendWire", "--as", "alice", "--revision", "1.5", "--db", db)
      expect(fraction).toMatchObject({ code: 2, stdout: "" })
      expect(fraction.stderr).toMatch(/^--revision "1\.5" is not a whole number in decimal digits\n/)
      // Number would read these as 16, 100 and 2: not what was typed.
      for (const text of ["0x10", "1e2", " 2"]) {
        const lenient = yield* cli("approve", "order-1", "sendWire", "--as", "alice", "--revision", text, "--db", db)
        expect(lenient).toMatchObject({ code: 2, stdout: "" })
        expect(lenient.stderr).toContain(`--revision ${JSON.stringify(text)} is not a whole number in decimal digits`)
      }
      expect(snapshot(db)).toEqual(unchanged)
    })
  )
})

describe("effect-saga says what it read, as it read it", { timeout: 60_000 }, () => {
  it.effect(
    "an empty file and another application's database are refused by every command and left byte for byte as they were",
    () =>
      Effect.gen(function* () {
        const exported = path.join(dir, "order-1.ndjson")
        fs.writeFileSync(exported, (yield* cli("export", "order-1", "--db", prepared)).stdout)
        const empty = path.join(dir, "empty.db")
        fs.writeFileSync(empty, "")
        const shop = foreignDatabase("shop.db", "delete")
        const shopInWal = foreignDatabase("shop-wal.db", "wal")
        const files = [empty, shop, shopInWal]
        const before = files.map((file) => fs.readFileSync(file))
        const commands = [
          ["list"],
          ["show", "order-1"],
          ["approvals"],
          ["verify", "--all"],
          ["export", "order-1"],
          ["prune", "--finished-before", "2000-01-01", "--dry-run"],
          ["approve", "order-1", "sendWire", "--as", "alice"],
          ["import", exported]
        ]
        const cases = files.flatMap((file) => commands.map((args) => [...args, "--db", file]))
        const runs = yield* Effect.forEach(cases, (args) => cli(...args), { concurrency: 4 })
        runs.forEach((ran, i) => {
          const args = cases[i]!.join(" ")
          expect(ran.code, args).toBe(2)
          expect(ran.stdout, args).toBe("")
          expect(ran.stderr, args).toMatch(
            /^effect-saga: no effect-saga journal at \S+: the (file is empty|database has no effect-saga tables) \(nothing was written\)\n$/
          )
        })
        files.forEach((file, i) => {
          expect(fs.readFileSync(file).equals(before[i]!), file).toBe(true)
          // SQLite's readers of a database in WAL mode leave its -shm index and an empty -wal behind.
          expect(companions(file), file).toEqual(file === shopInWal ? ["-wal", "-shm"] : [])
        })
        expect(fs.statSync(`${shopInWal}-wal`).size).toBe(0)
      })
  )

  it.effect(
    "read commands open the journal read-only: its bytes stay as they were, and an older schema is not migrated",
    () =>
      Effect.gen(function* () {
        const db = fresh("read-only")
        const before = fs.readFileSync(db)
        const reads = yield* Effect.forEach(
          [["list"], ["show", "order-1"], ["approvals"], ["verify", "--all"], ["export", "order-1"]],
          (args) => cli(...args, "--db", db)
        )
        expect(reads.map((ran) => ran.code)).toEqual([1, 0, 0, 0, 0])
        expect(reads.map((ran) => ran.stderr).join("")).toBe("")
        expect(fs.readFileSync(db).equals(before)).toBe(true)

        // As a journal of the version before migration 4 (the lease indexes) was.
        edit(db, "DROP INDEX effect_saga_sagas_leased")
        edit(db, "DROP INDEX effect_saga_sagas_open")
        edit(db, "DROP INDEX effect_saga_sagas_by_open_status")
        edit(db, "ALTER TABLE effect_saga_entries DROP COLUMN mac")
        edit(db, "DELETE FROM effect_saga_migrations WHERE migration_id >= 4")
        const older = fs.readFileSync(db)
        const refused = yield* cli("list", "--db", db)
        expect(refused).toMatchObject({ code: 2, stdout: "" })
        expect(refused.stderr).toMatch(
          /^effect-saga: the journal at \S+ has schema version \d+, older than this effect-saga's \d+, and read commands never migrate: run a changing command once \(effect-saga prune --finished-before 1970-01-01 deletes nothing\)[^\n]*\n$/
        )
        expect(fs.readFileSync(db).equals(older)).toBe(true)
        const migrated = yield* cli("prune", "--finished-before", "1970-01-01", "--db", db)
        expect(migrated).toMatchObject({ code: 0, stderr: "" })
        expect((yield* cli("list", "--db", db)).code).toBe(1)

        edit(db, "INSERT INTO effect_saga_migrations (migration_id, name) VALUES (999, 'from_a_newer_version')")
        for (const args of [["list"], ["approve", "order-1", "sendWire", "--as", "alice"]]) {
          const newer = yield* cli(...args, "--db", db)
          expect(newer).toMatchObject({ code: 2, stdout: "" })
          expect(newer.stderr).toMatch(
            /^effect-saga: the journal at \S+ has schema version 999, newer than this effect-saga's \d+: upgrade effect-saga \(nothing was written\)\n$/
          )
        }
      })
  )

  it.effect("show prints the break first and exits 1 on a saga whose journal was edited; list marks it", () =>
    Effect.gen(function* () {
      const db = fresh("tampered")
      tamper(db, "order-4", 5)
      const brokenAt5 =
        "saga order-4: TAMPERED: its journal does not verify at seq 5 (hash): hash does not match the entry's content and its predecessor"
      const [table, json, mermaid, listed, listedJson] = yield* Effect.all(
        [
          cli("show", "order-4", "--db", db),
          cli("show", "order-4", "--json", "--db", db),
          cli("show", "order-4", "--format", "mermaid", "--db", db),
          cli("list", "--db", db),
          cli("list", "--json", "--db", db)
        ],
        { concurrency: 3 }
      )
      expect(table).toMatchObject({ code: 1, stderr: "" })
      expect(table.stdout.split("\n")[0]).toBe(brokenAt5)
      expect(table.stdout).not.toMatch(/^saga order-4: completed/m)
      expect(table.stdout).not.toContain("next:")
      expect(json.code).toBe(1)
      const shown = JSON.parse(json.stdout)
      expect(shown.tampered).toEqual({ seq: 5, problem: "hash", reason: expect.stringMatching(/^hash does not match/) })
      expect(shown.entries).toHaveLength(12)
      expect(mermaid).toMatchObject({ code: 1, stdout: `${brokenAt5}\n` })

      expect(listed.code).toBe(1)
      expect(listed.stdout).toMatch(/^order-4\s+completed\s+TAMPERED at seq 5\s/m)
      expect(listed.stdout).toMatch(/^order-1\s+awaiting_approval\s+intact\s/m)
      expect(listed.stdout.split("\n")).toContain(brokenAt5)
      const rows = JSON.parse(listedJson.stdout) as ReadonlyArray<{ sagaId: string; tampered: unknown }>
      expect(rows.find((row) => row.sagaId === "order-4")?.tampered).toMatchObject({ seq: 5, problem: "hash" })
      expect(rows.filter((row) => row.tampered !== null).map((row) => row.sagaId)).toEqual(["order-4"])
    })
  )

  it.effect(
    "approvals shows the input the journal holds, not the approvals table's copy, and marks a tampered saga's request",
    () =>
      Effect.gen(function* () {
        const db = fresh("approvals-tampered")
        edit(db, "UPDATE effect_saga_approvals SET input = ? WHERE saga_id = ?", '{"amount":1,"to":"DE89"}', "order-1")
        tamper(db, "order-5", 2)
        const [table, json] = yield* Effect.all(
          [cli("approvals", "--db", db), cli("approvals", "--json", "--db", db)],
          {
            concurrency: 2
          }
        )
        expect(table).toMatchObject({ code: 1, stderr: "" })
        expect(table.stdout).not.toContain('"amount":1,')
        expect(table.stdout).toMatch(
          /^order-1\s+sendWireTransfer:\S+\s+sendWireTransfer\s+\S+\s+TAMPERED \(approvals table\)\s+\w{12}…\s+\{"amount":4200,"to":"DE89 3704 0044 0532 0130 00"\}$/m
        )
        expect(table.stdout).toMatch(/^order-5\s+sendWireTransfer:\S+\s+sendWireTransfer\s+\S+\s+TAMPERED at seq 2\s/m)
        expect(table.stdout).toMatch(/^payout-1\s+sendWireTransfer:\S+\s+sendWireTransfer\s+\S+\s+intact\s/m)
        expect(table.stdout).toMatch(
          /^saga order-1: TAMPERED: the approvals table's copy of the input is not the one the journal holds at seq \d+ \(shown\): the table was edited: make no new decision on step sendWireTransfer:\S+; next: effect-saga show order-1 says what to do$/m
        )
        expect(table.stdout).toMatch(
          /^saga order-5: TAMPERED: its journal does not verify at seq 2 \(hash\): .*: do not decide on step sendWireTransfer:\S+$/m
        )

        expect(json.code).toBe(1)
        const requests = JSON.parse(json.stdout) as ReadonlyArray<{ sagaId: string; input: string; tampered: unknown }>
        const bySaga = new Map(requests.map((request) => [request.sagaId, request]))
        expect(bySaga.get("order-1")).toMatchObject({
          input: '{"amount":4200,"to":"DE89 3704 0044 0532 0130 00"}',
          tampered: { problem: "approval" }
        })
        expect(bySaga.get("order-5")?.tampered).toMatchObject({ seq: 2, problem: "hash" })
        expect(bySaga.get("payout-1")?.tampered).toBeNull()

        // `show` marks it the same way and offers no decision on it (`approve` would refuse it).
        const shown = yield* cli("show", "order-1", "--db", db)
        expect(shown.code).toBe(1)
        expect(shown.stdout).toMatch(
          /^saga order-1: TAMPERED: the approvals table's copy of the input is not the one the journal holds at seq \d+ \(shown\): the table was edited$/m
        )
        expect(shown.stdout).not.toContain("next: effect-saga approve")
        // Only the request is not decided: the journal verifies, and the saga can still be ended.
        expect(shown.stdout).not.toContain("refuses to act on this saga")
        expect(shown.stdout).toContain(
          "next: restore the approvals table from a backup, or end the saga (reject the step, or effect-saga compensate order-1 --register MODULE --as WHO)"
        )
        const shownJson = JSON.parse((yield* cli("show", "order-1", "--json", "--db", db)).stdout)
        expect(shownJson.tampered).toMatchObject({ problem: "approval" })
        expect((yield* cli("show", "payout-1", "--db", db)).stdout).toContain("next: effect-saga approve payout-1 ")
      })
  )

  it.effect(
    "approvals lists a request whose approvals row was edited (its status, its decision) marked, and the others as they are; approve and renew-approval answer the tampering",
    () =>
      Effect.gen(function* () {
        const db = fresh("approvals-row-edited")
        edit(db, "UPDATE effect_saga_approvals SET status = 'weird' WHERE saga_id = ?", "order-1")
        edit(db, "UPDATE effect_saga_approvals SET decision = '{not json' WHERE saga_id = ?", "order-5")
        const table = yield* cli("approvals", "--db", db)
        expect(table).toMatchObject({ code: 1, stderr: "" })
        for (const sagaId of ["order-1", "order-5"]) {
          expect(table.stdout).toMatch(
            new RegExp(
              `^${sagaId}\\s+sendWireTransfer:\\S+\\s+sendWireTransfer\\s+\\S+\\s+TAMPERED \\(approvals table\\)\\s`,
              "m"
            )
          )
        }
        expect(table.stdout).toMatch(/^payout-1\s+sendWireTransfer:\S+\s+sendWireTransfer\s+\S+\s+intact\s/m)
        expect(table.stdout).toMatch(
          /^saga order-1: TAMPERED: the approvals table's row was edited: its status column says "weird", not pending, approved or rejected: make no new decision on step sendWireTransfer:\S+; next: effect-saga show order-1 says what to do$/m
        )
        expect(table.stdout).toMatch(
          /^saga order-5: TAMPERED: the approvals table's row was edited: its decision column does not decode: make no new decision on step sendWireTransfer:\S+; next: effect-saga show order-5 says what to do$/m
        )

        const before = snapshot(db)
        const listed = JSON.parse((yield* cli("approvals", "--json", "--db", db)).stdout) as ReadonlyArray<{
          sagaId: string
          stepId: string
        }>
        const stepOf = (sagaId: string) => listed.find((request) => request.sagaId === sagaId)!.stepId
        const stepId = stepOf("order-5")
        const approved = yield* cli("approve", "order-5", stepId, "--as", "alice", "--db", db)
        expect(approved).toMatchObject({ code: 1, stdout: "" })
        expect(approved.stderr).toMatch(
          /^effect-saga: journal of saga order-5 does not verify at seq \d+ \(approval\): approval request order-5\/\S+ cannot be trusted: the approvals table's row was edited: its decision column does not decode; nothing was run or written/
        )
        expect(snapshot(db)).toEqual(before)
        // Not approved in the journal: renew-approval reports the edited row, not "not approved yet".
        const renewed = yield* cli("renew-approval", "order-1", stepOf("order-1"), "--as", "carol", "--db", db)
        expect(renewed).toMatchObject({ code: 1, stdout: "" })
        expect(renewed.stderr).toMatch(
          /^effect-saga: journal of saga order-1 does not verify at seq \d+ \(approval\): approval request order-1\/\S+ cannot be trusted: the approvals table's row was edited: its status column says "weird", not pending, approved or rejected; nothing was run or written/
        )
        expect(snapshot(db)).toEqual(before)
        // reject refuses such a row too, and says so before it asks for the tools it would undo with.
        const rejected = yield* cli("reject", "order-1", stepOf("order-1"), "--as", "carol", "--db", db)
        expect(rejected).toMatchObject({ code: 1, stdout: "" })
        expect(rejected.stderr).toMatch(
          /^effect-saga: journal of saga order-1 does not verify at seq \d+ \(approval\): approval request order-1\/\S+ cannot be trusted: the approvals table's row was edited: its status column says "weird"/
        )
        expect(snapshot(db)).toEqual(before)
        // So show offers no reject for it: compensate ends the saga.
        const shown = (yield* cli("show", "order-1", "--db", db)).stdout
        expect(shown).toContain(
          "effect-saga does not decide this request (approve and reject refuse it: its row in the approvals table was edited, or holds a decision the journal lacks); the journal verifies, as below."
        )
        expect(shown).toContain(
          "next: restore the approvals table from a backup, or end the saga: effect-saga compensate order-1 --register MODULE --as WHO"
        )
        expect(shown).not.toContain("reject the step")
      })
  )

  it.effect(
    "approvals lists what the journal waits on: a request whose row was deleted as it is, a decision the journal lacks marked",
    () =>
      Effect.gen(function* () {
        const db = fresh("approvals-inbox")
        edit(db, "DELETE FROM effect_saga_approvals WHERE saga_id = 'payout-1'")
        edit(
          db,
          `UPDATE effect_saga_approvals SET status = 'approved', decided_at = requested_at,
             decision = json_object('_tag', 'Approved', 'by', 'mallory', 'at', requested_at, 'inputDigest', input_digest)
           WHERE saga_id = 'order-1'`
        )
        const table = yield* cli("approvals", "--db", db)
        expect(table).toMatchObject({ code: 1, stderr: "" })
        expect(table.stdout).toMatch(/^payout-1\s+sendWireTransfer:\S+\s+sendWireTransfer\s+\S+\s+intact\s/m)
        expect(table.stdout).toMatch(
          /^order-1\s+sendWireTransfer:\S+\s+sendWireTransfer\s+\S+\s+TAMPERED \(approvals table\)\s/m
        )
        expect(table.stdout).toMatch(
          /^saga order-1: TAMPERED: the approval store says step sendWireTransfer:\S+ was approved by mallory, but the journal holds no such decision .*: make no new decision on step sendWireTransfer:\S+; next: effect-saga show order-1 says what to do$/m
        )
        const json = JSON.parse((yield* cli("approvals", "--db", db, "--json")).stdout) as ReadonlyArray<{
          sagaId: string
          stepId: string
        }>
        expect(json.map((request) => request.sagaId).sort()).toEqual(["order-1", "order-5", "payout-1"])
        // A decision the journal lacks, in time, with no journal key: a stopped approve's, or a forgery.
        const shown = (yield* cli("show", "order-1", "--db", db)).stdout
        const stepId = json.find((request) => request.sagaId === "order-1")!.stepId
        expect(shown.split("\n").slice(1, 4)).toEqual([
          "effect-saga does not act on this decision until the journal holds it; the journal verifies, as below.",
          `next: ask mallory first whether they made this decision (without a journal key, a forged row reads the same): if their approve stopped before journaling it (a crash, a journal write that failed), the same command again finishes it: effect-saga approve order-1 ${stepId} --as mallory`,
          "next: if mallory made no such decision, it was forged: restore the approvals table from a backup, or end the saga: effect-saga compensate order-1 --register MODULE --as WHO"
        ])
        expect(shown).not.toContain("reject the step")
        // Followed as printed, the approval is journaled: the saga is intact, its step approved.
        const finished = yield* cli("approve", "order-1", stepId, "--as", "mallory", "--db", db)
        expect(finished.code, finished.stderr).toBe(0)
        expect((yield* onFile(db, Saga.status("order-1"))).steps.find((step) => step.stepId === stepId)?.state).toBe(
          "approved"
        )
        expect((yield* cli("show", "order-1", "--db", db)).code).toBe(0)
      })
  )

  it.effect(
    "a journal whose record of migrations was emptied or dropped is named as such, not as no journal; nothing is written",
    () =>
      Effect.gen(function* () {
        const emptied = fresh("migrations-emptied")
        edit(emptied, "DELETE FROM effect_saga_migrations")
        const dropped = fresh("migrations-dropped")
        edit(dropped, "DROP TABLE effect_saga_migrations")
        for (const db of [emptied, dropped]) yield* refusedAsEdited(db)
      })
  )

  it.effect("an entry whose phase no longer decodes is one line naming the saga and the seq", () =>
    Effect.gen(function* () {
      const db = fresh("undecodable")
      edit(db, "UPDATE effect_saga_entries SET phase = 'HACKED' WHERE saga_id = 'order-2' AND seq = 3")
      const why = 'the stored entry does not decode: phase "HACKED" is not a known phase'
      const [shown, verified, exported] = yield* Effect.all(
        [
          cli("show", "order-2", "--db", db),
          cli("verify", "order-2", "--db", db),
          cli("export", "order-2", "--db", db)
        ],
        { concurrency: 3 }
      )
      expect(shown).toMatchObject({ code: 1, stderr: "" })
      expect(shown.stdout.split("\n")[0]).toBe(
        `saga order-2: TAMPERED: its journal does not verify at seq 3 (undecodable): ${why}`
      )
      expect(verified.code).toBe(1)
      expect(verified.stdout).toMatch(new RegExp(`^order-2\\s+BROKEN\\s+at seq 3: ${why}$`, "m"))
      // show prints them as stored too, under the break: their columns, never a payload.
      const table = shown.stdout.trimEnd().split("\n")
      expect(table.slice(1, 4)).toEqual([
        "effect-saga refuses to act on this saga. The journal as stored, not to be trusted:",
        "",
        expect.stringMatching(/^seq\s+time\s+step\s+tool\s+phase$/)
      ])
      const seqs = table.slice(4).map((line) => line.split(/\s+/)[0])
      expect(seqs).toEqual(Array.from({ length: 13 }, (_, at) => String(at + 1)))
      expect(table[6]).toMatch(/^3\s+\S+Z\s+\S+\s+\S+\s+HACKED$/)
      const json = yield* cli("show", "order-2", "--db", db, "--json")
      expect(json.code).toBe(1)
      const printed = JSON.parse(json.stdout)
      expect(printed.tampered).toMatchObject({ seq: 3, problem: "undecodable" })
      expect(printed.entries).toHaveLength(13)
      expect(printed.entries[2]).toMatchObject({ sagaId: "order-2", seq: 3, phase: "HACKED" })
      const payloads = new Set(printed.entries.map((entry: { payload: unknown }) => entry.payload))
      expect(payloads).toEqual(new Set([null, "<not shown: effect-saga export prints it as stored>"]))
      // export prints the entries as stored, for forensics (test/cli-forensics.test.ts), and says why.
      expect(exported.code).toBe(1)
      expect(exported.stdout).toMatch(/"phase":"HACKED"/)
      expect(exported.stderr).toMatch(
        new RegExp(
          `^effect-saga: journal of saga order-2 is corrupted at seq 3: ${why}; its entries printed as stored, no end line: not an export\n$`
        )
      )
      // Every line a person reads is short; the entries export prints are the journal's own.
      for (const text of [shown.stdout, verified.stdout, `${shown.stderr}${verified.stderr}${exported.stderr}`]) {
        for (const line of text.split("\n")) expect(line.length).toBeLessThan(200)
      }
    })
  )

  it.effect("an entry whose payload was made bytes is named by its kind, never by the bytes it holds", () =>
    Effect.gen(function* () {
      const db = fresh("payload-bytes")
      edit(db, "UPDATE effect_saga_entries SET payload = CAST(payload AS BLOB) WHERE saga_id = 'order-2' AND seq = 3")
      const verified = yield* cli("verify", "order-2", "--db", db)
      expect(verified.code).toBe(1)
      expect(verified.stdout).toContain("the stored entry does not decode: payload (bytes) is not text or null")
      expect(verified.stdout).not.toMatch(/Buffer|\[\d+,/)
      // Bytes in a column that holds no secret are shown in hex, never as Node's Buffer JSON.
      edit(db, "UPDATE effect_saga_entries SET step_id = X'deadbeef' WHERE saga_id = 'order-2' AND seq = 2")
      const stepBytes = yield* cli("verify", "order-2", "--db", db)
      expect(stepBytes.stdout).toContain(
        "the stored entry does not decode: stepId (bytes deadbeef) is not text or null"
      )
      expect(stepBytes.stdout).not.toMatch(/Buffer|\[\d+,/)
    })
  )

  it("a command refused on a tampered journal exits 1 with one line naming the saga and the seq", () => {
    const ending = endingOf(
      Cause.fail(new Journal.JournalTampered({ sagaId: "order-4", seq: 5, problem: "hash", reason: "edited" }))
    )
    expect(ending).toEqual({
      code: 1,
      line: "journal of saga order-4 does not verify at seq 5 (hash): edited; nothing was run or written (effect-saga show order-4 shows the journal as stored)"
    })
  })

  it.effect("show --json prints a receipt as <redacted>, or as sealed with its key; export keeps the bytes", () =>
    Effect.gen(function* () {
      const db = fresh("receipts")
      const sealed = { sealed: "aes-256-gcm", kid: "k1", iv: "aXYtaXYtaXY=", data: "Y2lwaGVyLXRleHQtc2VjcmV0" }
      yield* onFile(
        db,
        Effect.flatMap(Journal.Journal, (journal) =>
          journal.append("refund-1", Journal.empty, [
            { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null },
            { stepId: "refund:1", toolName: "refund", phase: "INTENT", input: '{"amount":5}', payload: null },
            {
              stepId: "refund:1",
              toolName: "refund",
              phase: "EXECUTED",
              input: null,
              payload: JSON.stringify({ result: "rf-1", receipt: "rcpt-plain-secret" })
            },
            { stepId: "void:1", toolName: "void", phase: "INTENT", input: "{}", payload: null },
            {
              stepId: "void:1",
              toolName: "void",
              phase: "EXECUTED",
              input: null,
              payload: JSON.stringify({ result: "v-1", receipt: sealed })
            },
            { stepId: null, toolName: null, phase: "SAGA_COMPLETED", input: null, payload: null }
          ])
        )
      )
      const [json, table, exported] = yield* Effect.all(
        [
          cli("show", "refund-1", "--json", "--db", db),
          cli("show", "refund-1", "--db", db),
          cli("export", "refund-1", "--db", db)
        ],
        { concurrency: 3 }
      )
      expect(json.code).toBe(0)
      for (const secret of ["rcpt-plain-secret", sealed.data, sealed.iv]) {
        expect(json.stdout).not.toContain(secret)
        expect(table.stdout).not.toContain(secret)
      }
      const payloads = (JSON.parse(json.stdout).entries as ReadonlyArray<{ phase: string; payload: string }>)
        .filter((entry) => entry.phase === "EXECUTED")
        .map((entry) => JSON.parse(entry.payload))
      expect(payloads).toEqual([
        { result: "rf-1", receipt: "<redacted>" },
        { result: "v-1", receipt: "<sealed with k1>" }
      ])
      expect(exported.stdout).toContain("rcpt-plain-secret")
    })
  )

  it.effect("approve asked again exactly as before says the step was already approved, writes nothing, exits 0", () =>
    Effect.gen(function* () {
      const db = fresh("approve-again")
      const wire = wireStep(yield* onFile(db, Saga.status("order-1")))
      expect((yield* cli("approve", "order-1", "sendWire", "--as", "alice", "--db", db)).code).toBe(0)
      const approvedAt = JSON.parse((yield* onFile(db, readJournal("order-1"))).at(-1)!.payload!).at
      const unchanged = snapshot(db)

      const again = yield* cli("approve", "order-1", "sendWire", "--as", "alice", "--db", db)
      expect(again).toEqual({
        code: 0,
        stdout: `step ${wire} of saga order-1 was already approved by alice at ${approvedAt}: nothing written\n`,
        stderr: ""
      })
      // order-4's wire transfer was approved by its policy and has run.
      const ran = yield* cli("approve", "order-4", "sendWire", "--as", "auto-approve", "--db", db)
      expect(ran).toMatchObject({ code: 0, stderr: "" })
      expect(ran.stdout).toMatch(
        /^step sendWireTransfer:\S+ of saga order-4 was already approved by auto-approve at \S+Z, and the step has run since \(executed\): nothing written\n$/
      )
      const someoneElse = yield* cli("approve", "order-1", "sendWire", "--as", "bob", "--db", db)
      expect(someoneElse).toMatchObject({ code: 2, stdout: "" })
      expect(someoneElse.stderr).toMatch(/^effect-saga: [^\n]*already approved by alice[^\n]*\n$/)
      // A reject of the approved step is refused as a conflict, whatever tools are registered: it
      // is not sent to find a --register first, which would only be refused next.
      const rejected = yield* cli("reject", "order-1", "sendWire", "--as", "bob", "--reason", "no", "--db", db)
      expect(rejected).toMatchObject({ code: 2, stdout: "" })
      expect(rejected.stderr).toMatch(
        /^effect-saga: step sendWireTransfer:\S+ of saga order-1 was already approved by alice: a different command is refused\n$/
      )
      // Nor is a step the saga does not have: the reject refuses it as such.
      const nosuch = yield* cli("reject", "order-1", "nosuch:1#1", "--as", "bob", "--reason", "no", "--db", db)
      expect(nosuch).toMatchObject({ code: 2, stdout: "" })
      expect(nosuch.stderr).not.toContain("--register")
      expect(snapshot(db)).toEqual(unchanged)
    })
  )

  it.effect(
    "approve or renew-approval asked again after the approval lapsed says so, and that a resume compensates: renew it first",
    () =>
      Effect.gen(function* () {
        const db = fresh("approve-lapsed")
        const wire = wireStep(yield* onFile(db, Saga.status("order-1")))
        // Approved under the test's clock (1970), until a time long past for the CLI.
        const until = "1971-01-01T00:00:00.000Z"
        yield* onFile(db, Saga.approve("order-1", wire, { by: "alice", expiresAt: until }))
        const unchanged = snapshot(db)
        const again = yield* cli("approve", "order-1", "sendWire", "--as", "alice", "--expires-at", until, "--db", db)
        expect(again).toMatchObject({ code: 0, stderr: "" })
        const approvedAt = JSON.parse((yield* onFile(db, readJournal("order-1"))).at(-1)!.payload!).at
        const lapsed = (at: string) =>
          `that approval lapsed at ${at}: resumed as it is, the saga journals EXPIRED and compensates; to run the step still, renew it first: effect-saga renew-approval order-1 ${shellWord(wire)} --as WHO --expires-at TIME`
        expect(again.stdout).toBe(
          `step ${wire} of saga order-1 was already approved by alice at ${approvedAt}: nothing written; ${lapsed(until)}\n`
        )
        expect(snapshot(db)).toEqual(unchanged)
        // So does a renewal asked again once it lapsed.
        const renewed = "1972-01-01T00:00:00.000Z"
        yield* onFile(db, Saga.renewApproval("order-1", wire, { by: "bob", expiresAt: renewed }))
        const renewedAgain = yield* cli(
          "renew-approval",
          "order-1",
          "sendWire",
          "--as",
          "bob",
          "--expires-at",
          renewed,
          "--db",
          db
        )
        expect(renewedAgain).toEqual({
          code: 0,
          stdout: `the approval of step ${wire} of saga order-1 was already renewed by bob until ${renewed}: nothing written; ${lapsed(renewed)}\n`,
          stderr: ""
        })
      })
  )

  it.effect(
    "help piped is plain text: no colour codes, a real description for every option, optional flags in brackets",
    () =>
      Effect.gen(function* () {
        const pages = yield* Effect.forEach(
          [["--help"], [], ["list", "--help"], ["reject", "--help"], ["show", "--help"]],
          (args) => cli(...args),
          { concurrency: 3 }
        )
        for (const page of pages) {
          expect(page.code).toBe(0)
          expect(page.stdout).toContain("USAGE")
          expect(page.stdout).not.toContain("\u001b[")
          expect(page.stdout).not.toContain("A user-defined piece of text.")
          expect(page.stdout).not.toContain("not supported yet")
        }
        const [root, , list, reject] = pages
        expect(root!.stdout).toContain("or a postgres:// URL")
        expect(list!.stdout).toContain("$ list [--db FILE] [--json] [--status STATUS...]")
        expect(reject!.stdout).toContain("[--register MODULE...]")
      })
  )

  it("help is coloured only on a terminal, and never with NO_COLOR", () => {
    const coloured = "\u001b[0;1mUSAGE\u001b[0m\n\n--as WHO\n\n  A user-defined piece of text.\n\n  Who you are.\n"
    expect(Help.plain(coloured, false)).toBe("USAGE\n\n--as WHO\n\n  Who you are.\n")
    expect(Help.plain(coloured, true)).toBe("\u001b[0;1mUSAGE\u001b[0m\n\n--as WHO\n\n  Who you are.\n")
    const noColor = process.env.NO_COLOR
    try {
      delete process.env.NO_COLOR
      expect([Help.mayColour({ isTTY: true }), Help.mayColour({ isTTY: false }), Help.mayColour({})]).toEqual([
        true,
        false,
        false
      ])
      process.env.NO_COLOR = "1"
      expect(Help.mayColour({ isTTY: true })).toBe(false)
    } finally {
      if (noColor === undefined) delete process.env.NO_COLOR
      else process.env.NO_COLOR = noColor
    }
  })
})

/** What the fixture leaves each saga as. */
const statuses = {
  "order-1": "awaiting_approval",
  "order-2": "compensated",
  "order-3": "needs_attention",
  "order-5": "awaiting_approval",
  "payout-1": "awaiting_approval",
  "order-4": "completed"
}

const commandNames = (commands as ReadonlyArray<Command.Command<string, any, any, any>>).flatMap((command) =>
  Array.from(Command.getNames(command))
)

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `entry` (default: the bundled CLI) with `args` in a process of its own, in the temp directory. */
const run = (
  args: ReadonlyArray<string>,
  options: {
    readonly entry?: string
    readonly env?: Record<string, string>
    /** Writes the child's stdin (else it has none). */
    readonly stdin?: (stdin: NodeJS.WritableStream) => void
    /** Sends the child `signal` as soon as `when` holds (asked every 20 ms). */
    readonly interrupt?: { readonly signal: NodeJS.Signals; readonly when: () => boolean }
  } = {}
) =>
  Effect.async<Ran>((resume) => {
    const { EFFECT_SAGA_DB: _ignored, ...inherited } = process.env
    const child = spawn(process.execPath, [options.entry ?? cliBundle, ...args], {
      cwd: dir,
      env: { ...inherited, EFFECT_SAGA_TEST_WORLD: world, ...options.env },
      stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    if (options.stdin !== undefined) options.stdin(child.stdin!)
    let stdout = ""
    let stderr = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
    })
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    const { interrupt } = options
    const watch =
      interrupt === undefined
        ? undefined
        : setInterval(() => {
            if (!interrupt.when()) return
            clearInterval(watch)
            child.kill(interrupt.signal)
          }, 20)
    child.on("error", (error) => resume(Effect.die(error)))
    child.on("close", (code) => {
      clearInterval(watch)
      resume(Effect.succeed({ code, stdout, stderr }))
    })
    return Effect.sync(() => {
      clearInterval(watch)
      child.kill()
    })
  })

const cli = (...args: ReadonlyArray<string>) => run(args)

/** Help text without its ANSI styling. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences start with ESC
const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")

/** Bundles the CLI and the tools fixture (one file each: a process starts in a fraction of the time). */
const bundle = () =>
  Promise.all(
    [
      { stdin: { contents: 'import { main } from "./src/Cli.ts"\nmain()\n', resolveDir: root, loader: "ts" as const } },
      { entryPoints: [path.join(root, "test", "fixtures", "cli-tools.ts")] },
      {
        // chargeCard again, its undo waiting for an approval of its own.
        stdin: {
          contents: `import { Effect, Schema } from "effect"
import { Compensable } from "./src/index.ts"
export const chargeCard = Compensable.make({
  name: "chargeCard",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  approveExplicitUndo: true,
  execute: ({ amount }) => Effect.succeed(\`ch-\${amount}\`),
  compensate: () => Effect.void
})
`,
          resolveDir: root,
          loader: "ts" as const
        }
      },
      {
        // chargeCard again, its undo never returning once it said so, and holding a timer its interruption
        // leaves behind (as a hung request leaves its socket); the checkout's other tools as they are.
        stdin: {
          contents: `import * as fs from "node:fs"
import { Effect, Schema } from "effect"
import { Compensable } from "./src/index.ts"
export { reserveInventory, sendWireTransfer, ship } from "./test/fixtures/cli-tools.ts"
export const chargeCard = Compensable.make({
  name: "chargeCard",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: ({ amount }) => Effect.succeed(\`ch-\${amount}\`),
  compensate: ({ result }) =>
    Effect.zipRight(
      Effect.sync(() => fs.appendFileSync(process.env.EFFECT_SAGA_TEST_WORLD ?? "/dev/null", \`refund \${result} hangs\\n\`)),
      Effect.async(() => {
        setTimeout(() => {}, 600_000)
      })
    )
})
`,
          resolveDir: root,
          loader: "ts" as const
        }
      },
      {
        // The checkout's tools, with a layer that takes three seconds to close once the command has answered.
        stdin: {
          contents: `import * as fs from "node:fs"
import { Effect, Layer } from "effect"
export { chargeCard, reserveInventory, sendWireTransfer, ship } from "./test/fixtures/cli-tools.ts"
export const layer = Layer.scopedDiscard(
  Effect.addFinalizer(() =>
    Effect.zipRight(
      Effect.sync(() => fs.appendFileSync(process.env.EFFECT_SAGA_TEST_WORLD ?? "/dev/null", "layer closing\\n")),
      Effect.sleep("3 seconds")
    )
  )
)
`,
          resolveDir: root,
          loader: "ts" as const
        }
      }
    ].map((entry, i) =>
      build({
        ...entry,
        outfile: [cliBundle, toolsBundle, approvedUndoBundle, hangingUndoBundle, slowClosingBundle][i]!,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        external: ["better-sqlite3", "@effect/sql-pg", "@effect/sql-pg/*", "pg", "pg/*", "pg-native", "pg-cursor"],
        logLevel: "warning"
      })
    )
  )

/** Runs test/fixtures/cli-saga.ts through tsx: the sagas every test starts from. */
const prepare = () =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(root, "test", "fixtures", "cli-saga.ts"), prepared],
      { cwd: root, env: { ...process.env, EFFECT_SAGA_TEST_WORLD: path.join(dir, "prepare.log") } }
    )
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.on("close", (code) =>
      code === 0 && JSON.parse(output)["order-4"] === "Completed"
        ? resolve()
        : reject(new Error(`the fixture failed (${code}): ${output}`))
    )
  })

/** A copy of the prepared file, for one test to change. */
const fresh = (name: string): string => {
  const file = path.join(dir, `${name}.db`)
  fs.copyFileSync(prepared, file)
  return file
}

/**
 * Runs `effect` on the services of `file` as a process killed once an undo ran would: every append
 * that would journal an undo's COMPENSATED fails, so nothing after it reaches the journal.
 */
const onFileKilledAtCompensated = <A, E>(
  file: string,
  effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>
) => {
  const killed = Layer.effect(
    Journal.Journal,
    Effect.map(Journal.Journal, (journal) =>
      Journal.Journal.of({
        ...journal,
        append: (sagaId, expected, drafts, holder) =>
          drafts.some((draft) => draft.phase === "COMPENSATED")
            ? Effect.fail(new Journal.JournalError({ operation: "append", reason: "the process was killed" }))
            : journal.append(sagaId, expected, drafts, holder)
      })
    )
  )
  const store = SqlStore.layerSqlite({ filename: file })
  return Effect.provide(effect, Saga.layer.pipe(Layer.provideMerge(Layer.merge(store, Layer.provide(killed, store)))))
}

/** Every kind of command on `db` is refused naming its record of migrations edited, and writes nothing. */
const refusedAsEdited = (db: string) =>
  Effect.gen(function* () {
    const before = fs.readFileSync(db)
    for (const args of [["list"], ["approvals"], ["approve", "order-1", "sendWire", "--as", "alice"]]) {
      const ran = yield* cli(...args, "--db", db)
      expect(ran, args.join(" ")).toMatchObject({ code: 2, stdout: "" })
      expect(ran.stderr, args.join(" ")).toBe(
        `effect-saga: the journal at ${db} records no migration (its effect_saga_migrations table is empty or missing) while its tables exist: the record was edited; restore it from a backup (nothing was written)\n`
      )
    }
    expect(fs.readFileSync(db).equals(before)).toBe(true)
  })

/** Runs `effect` on the services of `file`, as a service of the shop would. */
const onFile = <A, E>(file: string, effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>) =>
  Effect.provide(effect, Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename: file }))))

const readJournal = (sagaId: string) => Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))

/** Every row of the file's sagas, entries and approvals: equal before and after means nothing was written. */
const snapshot = (file: string) => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    return ["effect_saga_sagas", "effect_saga_entries", "effect_saga_approvals"].map((table) =>
      db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all()
    )
  } finally {
    db.close()
  }
}

/** Changes one entry's payload behind the journal's back. */
const tamper = (file: string, sagaId: string, seq: number) => {
  const db = new Database(file, { fileMustExist: true })
  try {
    db.prepare("UPDATE effect_saga_entries SET payload = ? WHERE saga_id = ? AND seq = ?").run(
      '{"result":"forged"}',
      sagaId,
      seq
    )
  } finally {
    db.close()
  }
}

/** Another application's SQLite database, in rollback-journal or WAL mode, closed. */
const foreignDatabase = (name: string, mode: "delete" | "wal"): string => {
  const file = path.join(dir, name)
  const db = new Database(file)
  try {
    db.pragma(`journal_mode = ${mode}`)
    db.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('ann')")
  } finally {
    db.close()
  }
  return file
}

/** The `-wal`, `-shm` and `-journal` files beside `file`. */
const companions = (file: string): ReadonlyArray<string> =>
  ["-wal", "-shm", "-journal"].filter((suffix) => fs.existsSync(`${file}${suffix}`))

const worldLines = (): ReadonlyArray<string> =>
  fs.existsSync(world)
    ? fs
        .readFileSync(world, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : []

/** The id of the wire transfer step of a checkout. */
const wireStep = (status: Saga.SagaStatus): string => {
  const step = status.steps.find((known) => known.toolName === "sendWireTransfer")
  assert(step !== undefined)
  return step.stepId
}
