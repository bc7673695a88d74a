/**
 * What every read path says once a later clean-up changed a saga's compensation report but not its
 * status: an undo left `unavailable` (its tool not registered where the first compensation ran) is
 * run by a later `Saga.compensate` that has the tool, while another step stays unknown (the saga
 * stays `compensation_failed`). The journal's last report must be the later one, not the first;
 * `Saga.status`, the CLI's `show` and the HTTP API's saga view must agree with it. Then the unknown
 * step is resolved and the saga compensated: it ends `compensated`. Likewise a step resolved
 * `not-applied` while another undo stays failed: the next compensate journals it `FAILED`, not `UNKNOWN`.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Metric, MetricLabel, Schema } from "effect"
import { Compensable, CompensationReport, Journal, Metrics, Outcome, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { cliInProcess } from "./fixtures/cli-in-process.js"
import { clientAs, serveOn } from "./fixtures/http-saga.js"
import { payloadOf } from "./fixtures/journal-reads.js"
import { onFile } from "./fixtures/worker-on-file.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-stale-report-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => path.join(dir, `${++files}.db`)

const undone: Array<string> = []

const reserve = Compensable.make({
  name: "reserve",
  input: Schema.Struct({ sku: Schema.String }),
  success: Schema.String,
  execute: ({ sku }) => Effect.succeed(`res-${sku}`),
  compensate: (ctx) => Effect.sync(() => void undone.push(ctx.result))
})

/** A call whose outcome cannot be known: the saga needs attention until an operator resolves it. */
const charge = Compensable.make({
  name: "charge",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: () => Effect.fail(Outcome.unknown("the provider did not answer")),
  compensate: () => Effect.void
})

const order = Effect.zipRight(reserve({ sku: "A-1" }), charge({ amount: 42 }))

/** A step whose undo fails: the saga stays `compensation_failed` whatever else is cleaned up. */
const book = Compensable.make({
  name: "book",
  input: Schema.Struct({ room: Schema.String }),
  success: Schema.String,
  execute: ({ room }) => Effect.succeed(`booking-${room}`),
  compensate: () => Effect.fail(Outcome.failed("the hotel refused the cancellation"))
})

/** The report the journal holds last: the payload of its last `SAGA_COMPENSATED` or `SAGA_COMPENSATION_FAILED`. */
const journaledReport = (entries: ReadonlyArray<Journal.Entry>) => {
  const last = entries
    .filter((entry) => entry.phase === "SAGA_COMPENSATED" || entry.phase === "SAGA_COMPENSATION_FAILED")
    .at(-1)
  return last === undefined ? undefined : { phase: last.phase, report: payloadOf(last) }
}

/** The saga's entries, read back through the `Journal` service. */
const entriesOf = (sagaId: string) => Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))

/** A step's `[tool, state, undo]` as `Saga.status` lists it. */
const stepsOf = (status: Saga.SagaStatus) => status.steps.map((step) => [step.toolName, step.state, step.undo])

/** `effect_saga_sagas_ended_total{status="compensation_failed"}`: what an alert on failed compensations watches. */
const endedFailed = Metric.value(
  Metric.taggedWithLabels(Metrics.sagasEnded, [MetricLabel.make("status", "compensation_failed")])
)

describe("the journaled compensation report after a later clean-up", { timeout: 60_000 }, () => {
  it.effect("in memory: a later compensate that undoes an unavailable step journals the report it made", () =>
    Effect.gen(function* () {
      undone.length = 0
      const sagaId = "stale-memory"
      expect((yield* Saga.run(sagaId, order))._tag).toBe("NeedsAttention")

      const endedBefore = (yield* endedFailed).count
      // Another Saga service over the same journal, that has never seen the tools: reserve's undo is unavailable.
      const first = yield* Saga.compensate(sagaId).pipe(Effect.provide(Saga.layer))
      expect(first.status).toBe("compensation_failed")
      expect(first.undone.map((step) => [step.toolName, step.outcome])).toEqual([["reserve", "unavailable"]])
      expect(first.notUndone.map((step) => [step.toolName, step.phase])).toEqual([["charge", "UNKNOWN"]])
      expect(journaledReport(yield* entriesOf(sagaId))).toEqual({ phase: "SAGA_COMPENSATION_FAILED", report: first })

      // The service that ran the saga has the tool: its compensate undoes reserve; charge stays unknown.
      const second = yield* Saga.compensate(sagaId)
      expect(undone).toEqual(["res-A-1"])
      expect(second.status).toBe("compensation_failed")
      expect(second.undone.map((step) => [step.toolName, step.outcome])).toEqual([["reserve", "completed"]])
      expect(CompensationReport.dirty(second).map((step) => step.toolName)).toEqual(["charge"])

      const entries = yield* entriesOf(sagaId)
      // The journal's last word on the compensation is the report of the pass that undid reserve.
      expect(journaledReport(entries)).toEqual({ phase: "SAGA_COMPENSATION_FAILED", report: second })
      expect(entries.at(-1)!.phase).toBe("SAGA_COMPENSATION_FAILED")
      const status = yield* Saga.status(sagaId)
      expect(status.status).toBe("compensation_failed")
      expect(status.revision).toBe(entries.at(-1)!.seq)
      expect(stepsOf(status)).toEqual([
        ["reserve", "executed", "completed"],
        ["charge", "unknown", undefined]
      ])

      // The saga ended compensation_failed once: the later report is no second end (no second page).
      expect((yield* endedFailed).count - endedBefore).toBe(1)

      // Asked again, nothing changed: nothing is written.
      expect(yield* Saga.compensate(sagaId)).toEqual(second)
      expect((yield* entriesOf(sagaId)).length).toBe(entries.length)
      expect(undone).toEqual(["res-A-1"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a step resolved not-applied after the report is reported FAILED by the next compensate, not UNKNOWN", () =>
    Effect.gen(function* () {
      const sagaId = "stale-resolved"
      expect((yield* Saga.run(sagaId, Effect.zipRight(book({ room: "7" }), charge({ amount: 1 }))))._tag).toBe(
        "NeedsAttention"
      )
      const first = yield* Saga.compensate(sagaId)
      expect(first.notUndone.map((step) => [step.toolName, step.phase])).toEqual([["charge", "UNKNOWN"]])
      const chargeStep = first.notUndone[0]!.stepId
      yield* Saga.resolve(sagaId, chargeStep, { outcome: "not-applied", by: "oncall" })
      // Still compensation_failed (book's undo failed), but charge is no longer dirty.
      const second = yield* Saga.compensate(sagaId)
      expect(second.status).toBe("compensation_failed")
      expect(second.notUndone.map((step) => [step.toolName, step.phase])).toEqual([["charge", "FAILED"]])
      expect(CompensationReport.dirty(second).map((step) => step.toolName)).toEqual(["book"])
      expect(journaledReport(yield* entriesOf(sagaId))).toEqual({ phase: "SAGA_COMPENSATION_FAILED", report: second })
      expect(stepsOf(yield* Saga.status(sagaId))).toEqual([
        ["book", "executed", "failed"],
        ["charge", "failed", undefined]
      ])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.scopedLive(
    "on SQLite: Saga.status, the CLI's show and the HTTP API's saga agree with the journal after each clean-up",
    () =>
      Effect.gen(function* () {
        undone.length = 0
        const db = freshFile()
        const sagaId = "stale-sqlite"
        // Each onFile is a Saga service of its own (a process): only one that registers the tools can undo.
        const withTools = <A, E>(effect: Effect.Effect<A, E, Saga.Saga>) =>
          Effect.zipRight(
            Effect.flatMap(Saga.Saga, (saga) => saga.register([reserve, charge])),
            effect
          )
        expect((yield* onFile(db, Saga.run(sagaId, order)))._tag).toBe("NeedsAttention")
        const first = yield* onFile(db, Saga.compensate(sagaId))
        expect(first.undone.map((step) => step.outcome)).toEqual(["unavailable"])
        const second = yield* onFile(db, withTools(Saga.compensate(sagaId)))
        expect(second.undone.map((step) => step.outcome)).toEqual(["completed"])
        expect(second.status).toBe("compensation_failed")
        expect(undone).toEqual(["res-A-1"])

        const { entries, status } = yield* onFile(
          db,
          Effect.all({ entries: entriesOf(sagaId), status: Saga.status(sagaId) })
        )
        expect(journaledReport(entries)).toEqual({ phase: "SAGA_COMPENSATION_FAILED", report: second })
        expect(status.status).toBe("compensation_failed")
        expect(stepsOf(status)).toEqual([
          ["reserve", "executed", "completed"],
          ["charge", "unknown", undefined]
        ])

        // The CLI's show: dirty (exit 1), reserve undone, and its JSON entries end with the later report.
        const shown = yield* cliInProcess("show", sagaId, "--db", db)
        expect(shown.code).toBe(1)
        expect(shown.stdout).toContain(`saga ${sagaId}: compensation_failed`)
        expect(shown.stdout).toMatch(/^reserve:\S+\s+reserve\s+executed\s+completed$/m)
        const json = yield* cliInProcess("show", sagaId, "--db", db, "--json")
        const shownEntries = JSON.parse(json.stdout).entries as ReadonlyArray<Journal.Entry>
        expect(journaledReport(shownEntries)).toEqual({ phase: "SAGA_COMPENSATION_FAILED", report: second })

        // The HTTP API's saga: its steps as Saga.status says, its entries ending with the later report.
        const api = yield* clientAs(yield* serveOn(db), "alice")
        const detail = yield* api.sagas.get({ path: { sagaId } })
        expect(detail.saga.status).toBe("compensation_failed")
        expect(detail.steps.map((step) => [step.toolName, step.state, step.undo])).toEqual([
          ["reserve", "executed", "completed"],
          ["charge", "unknown", null]
        ])
        expect(journaledReport(detail.entries)).toEqual({ phase: "SAGA_COMPENSATION_FAILED", report: second })

        // The unknown step did not happen: resolved, then compensated, the saga ends compensated.
        const chargeStep = status.steps.find((step) => step.toolName === "charge")!.stepId
        yield* onFile(db, Saga.resolve(sagaId, chargeStep, { outcome: "not-applied", by: "oncall" }))
        const last = yield* onFile(db, withTools(Saga.compensate(sagaId)))
        expect(last.status).toBe("compensated")
        expect(undone).toEqual(["res-A-1"])
        const after = yield* onFile(db, Effect.all({ entries: entriesOf(sagaId), status: Saga.status(sagaId) }))
        expect(journaledReport(after.entries)).toEqual({ phase: "SAGA_COMPENSATED", report: last })
        expect(after.status.status).toBe("compensated")
        expect(stepsOf(after.status)).toEqual([
          ["reserve", "executed", "completed"],
          ["charge", "failed", undefined]
        ])
        expect((yield* cliInProcess("show", sagaId, "--db", db)).code).toBe(0)
      })
  )
})
