/**
 * An undo that could not run here (`unavailable`: its tool not registered) journals nothing of its
 * own: only the saga's last compensation report names it. `Saga.status`, `Timeline.format` and the
 * CLI's `show` read it from there, with its detail, until an entry of the step's own says more.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Approval, Compensable, Journal, Saga, SqlStore, Timeline } from "../src/index.js"
import { cliInProcess } from "./fixtures/cli-in-process.js"
import { onFile } from "./fixtures/worker-on-file.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-undo-report-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const holdSeat = Compensable.make({
  name: "holdSeat",
  input: Schema.String,
  success: Schema.String,
  execute: (seat) => Effect.succeed(`hold-${seat}`),
  compensate: () => Effect.void
})

const chargeCard = Compensable.make({
  name: "chargeCard",
  input: Schema.Int,
  success: Schema.String,
  execute: (amount) => Effect.succeed(`ch-${amount}`),
  compensate: () => Effect.void
})

const trip = Effect.zipRight(holdSeat("12A"), chargeCard(300))

/** Compensates `sagaId` from a Saga service on `db` that has none of its tools registered: both undos are unavailable. */
const compensateWithoutTools = (db: string, sagaId: string) => onFile(db, Saga.compensate(sagaId))

const notRegistered = (tool: string) => `tool ${tool} is not registered in this process`

describe("a step whose undo was unavailable, on every surface", { timeout: 60_000 }, () => {
  it.scoped("Saga.status reads its undo from the last report, until an undo of its own is journaled", () =>
    Effect.gen(function* () {
      const db = path.join(dir, "status.db")
      expect((yield* onFile(db, Saga.run("trip-1", trip)))._tag).toBe("Completed")
      const report = yield* compensateWithoutTools(db, "trip-1")
      expect(report.undone.map((undo) => undo.outcome)).toEqual(["unavailable", "unavailable"])

      const status = yield* onFile(db, Saga.status("trip-1"))
      expect(status.status).toBe("compensation_failed")
      expect(status.steps.map((step) => [step.toolName, step.undo, step.undoDetail])).toEqual([
        ["holdSeat", "unavailable", notRegistered("holdSeat")],
        ["chargeCard", "unavailable", notRegistered("chargeCard")]
      ])

      // A process that has the tools undoes both: their own entries say so now.
      const again = yield* onFile(
        db,
        Effect.flatMap(Saga.Saga, (saga) =>
          Effect.zipRight(saga.register([holdSeat, chargeCard]), Saga.compensate("trip-1"))
        )
      )
      expect(again.status).toBe("compensated")
      const undone = yield* onFile(db, Saga.status("trip-1"))
      expect(undone.steps.map((step) => [step.toolName, step.undo, step.undoDetail])).toEqual([
        ["holdSeat", "completed", undefined],
        ["chargeCard", "completed", undefined]
      ])
    })
  )

  it.scoped(
    "Timeline.format and the CLI's show name the unavailable undos, with why, on the report's row; compensating again still needs their tools",
    () =>
      Effect.gen(function* () {
        const db = path.join(dir, "show.db")
        yield* onFile(db, Saga.run("trip-2", trip))
        yield* compensateWithoutTools(db, "trip-2")
        const status = yield* onFile(db, Saga.status("trip-2"))
        const [hold, charge] = status.steps
        const note = `may still be live: unavailable chargeCard (${charge!.stepId}): ${notRegistered("chargeCard")}; unavailable holdSeat (${hold!.stepId}): ${notRegistered("holdSeat")}`

        const entries = yield* onFile(
          db,
          Effect.flatMap(Journal.Journal, (journal) => journal.read("trip-2"))
        )
        const lines = Timeline.format(entries).split("\n")
        expect(lines.at(-1)).toMatch(/\sSAGA_COMPENSATION_FAILED\s+may still be live: /)
        expect(lines.at(-1)!.endsWith(note)).toBe(true)

        const shown = yield* cliInProcess("show", "trip-2", "--db", db)
        expect(shown.code).toBe(1)
        const rows = shown.stdout.split("\n")
        expect(rows.find((row) => row.startsWith(hold!.stepId))).toMatch(/\sholdSeat\s+executed\s+unavailable$/)
        expect(rows.find((row) => row.startsWith(charge!.stepId))).toMatch(/\schargeCard\s+executed\s+unavailable$/)
        const reportRow = rows.find((row) => row.includes("SAGA_COMPENSATION_FAILED"))
        expect(reportRow!.endsWith(note)).toBe(true)

        // Their undos are still to run: compensating again without their tools is refused, as before any undo.
        const again = yield* cliInProcess("compensate", "trip-2", "--db", db)
        expect(again).toMatchObject({ code: 2, stdout: "" })
        expect(again.stderr).toBe(
          "effect-saga: compensate would undo saga trip-2, but this process has no tool for 2 executed step(s) (holdSeat, chargeCard): pass --register MODULE with the saga's tools (nothing was written)"
        )

        const json = JSON.parse((yield* cliInProcess("show", "trip-2", "--db", db, "--json")).stdout)
        expect(json.saga.steps.map((step: Saga.StepStatus) => [step.undo, step.undoDetail])).toEqual([
          ["unavailable", notRegistered("holdSeat")],
          ["unavailable", notRegistered("chargeCard")]
        ])
      })
  )

  it.scoped(
    "an irreversible step needs no tool: the CLI's compensate skips it without --register, as a process without it does",
    () =>
      Effect.gen(function* () {
        const db = path.join(dir, "irreversible.db")
        const wire = Compensable.make({
          name: "wire",
          input: Schema.Int,
          success: Schema.String,
          reversibility: "irreversible",
          execute: (amount) => Effect.succeed(`wire-${amount}`)
        })
        const approvedOnFile = Saga.layerWith({ owner: "worker-a", leaseTtl: "30 seconds" }).pipe(
          Layer.provide(Approval.layerAutoApprove),
          Layer.provideMerge(SqlStore.layerSqlite({ filename: db }))
        )
        const ran = yield* Effect.scoped(
          Effect.provide(Saga.run("trip-3", Effect.zipRight(trip, wire(300))), approvedOnFile)
        )
        expect(ran._tag).toBe("Completed")
        const status = yield* onFile(db, Saga.status("trip-3"))
        expect(status.steps.map((step) => [step.toolName, step.irreversible])).toEqual([
          ["holdSeat", undefined],
          ["chargeCard", undefined],
          ["wire", true]
        ])

        // Without any tool, the refusal names the two steps that have an undo, not the wire.
        const refused = yield* cliInProcess("compensate", "trip-3", "--db", db)
        expect(refused.stderr).toBe(
          "effect-saga: compensate would undo saga trip-3, but this process has no tool for 2 executed step(s) (holdSeat, chargeCard): pass --register MODULE with the saga's tools (nothing was written)"
        )
        // A process that holds those two compensates the saga: the wire is skipped, not unavailable.
        const report = yield* onFile(
          db,
          Effect.flatMap(Saga.Saga, (saga) =>
            Effect.zipRight(saga.register([holdSeat, chargeCard]), Saga.compensate("trip-3"))
          )
        )
        expect(report.status).toBe("compensated")
        expect(report.undone.map((undo) => [undo.toolName, undo.outcome, undo.detail])).toEqual([
          ["wire", "skipped", "irreversible: no undo exists"],
          ["chargeCard", "completed", undefined],
          ["holdSeat", "completed", undefined]
        ])
      })
  )

  it.scoped(
    "a step an explicit undo answered for needs no tool: the CLI's refusal names only the steps still owing an undo",
    () =>
      Effect.gen(function* () {
        const db = path.join(dir, "explicit.db")
        expect((yield* onFile(db, Saga.run("trip-4", trip)))._tag).toBe("Completed")
        const hold = (yield* onFile(db, Saga.status("trip-4"))).steps[0]!
        const undone = yield* onFile(
          db,
          Effect.flatMap(Saga.Saga, (saga) =>
            Effect.zipRight(saga.register([holdSeat]), Saga.compensateEffect(hold.effectId))
          )
        )
        expect(undone).toMatchObject({ _tag: "Settled", outcome: "completed" })

        const refused = yield* cliInProcess("compensate", "trip-4", "--db", db)
        expect(refused.stderr).toBe(
          "effect-saga: compensate would undo saga trip-4, but this process has no tool for 1 executed step(s) (chargeCard): pass --register MODULE with the saga's tools (nothing was written)"
        )
        // With chargeCard's tool alone, the saga compensates: holdSeat's undo is the explicit undo's, taken over.
        const report = yield* onFile(
          db,
          Effect.flatMap(Saga.Saga, (saga) => Effect.zipRight(saga.register([chargeCard]), Saga.compensate("trip-4")))
        )
        expect(report.status).toBe("compensated")
      })
  )
})
