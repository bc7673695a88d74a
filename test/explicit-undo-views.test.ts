/**
 * A completed saga's own views after a support agent undid one of its steps explicitly
 * (`compensateEffect`): the undo is a run of its own and the saga's journal is only read (its step
 * stays `executed`, `undo` undefined in `Saga.status`), so `effect-saga show` (and `--json`), `GET /api/sagas/:sagaId`
 * and the console's saga page say, beside the step, what came of the run (completed; awaiting its own
 * approval), with its run id or a link to its page. A run whose journal does not verify is said to
 * be so, its status and answer not shown.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Compensable, Outcome, Saga } from "../src/index.js"
import { cliInProcess } from "./fixtures/cli-in-process.js"
import { bookRoom, clientAs, consoleCookie, freshDb, onDb, raw, serveOn } from "./fixtures/http-saga.js"
import { edit } from "./fixtures/sqlite-raw.js"

/**
 * Trip-1, two nights booked and completed; each night's undo asked for on its own (both wait for
 * their approval), the first approved and asked for again: it completed, the second still waits.
 */
const world = (name: string) =>
  Effect.gen(function* () {
    const db = freshDb(name)
    const steps = yield* onDb(
      db,
      Effect.gen(function* () {
        yield* Saga.run("trip-1", Effect.zipRight(bookRoom({ night: "n1" }), bookRoom({ night: "n2" })))
        const { steps } = yield* Saga.status("trip-1")
        for (const step of steps) expect((yield* Saga.compensateEffect(step.effectId))._tag).toBe("AwaitingApproval")
        const first = steps[0]!
        const run = yield* Saga.status(`${first.effectId}/compensate-effect`)
        yield* Saga.approve(run.sagaId, first.stepId, { by: "alice", revision: run.revision, digest: run.digest })
        expect(yield* Saga.compensateEffect(first.effectId)).toMatchObject({ _tag: "Settled", outcome: "completed" })
        return steps
      })
    )
    const runs = steps.map((step) => `${step.effectId}/compensate-effect`)
    return { db, steps, runs }
  })

const pageOf = (baseUrl: string, cookie: string, sagaId: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${baseUrl}/console/sagas/${encodeURIComponent(sagaId)}`, { headers: { cookie } })
    return response.text()
  })

/** A refund the bank refuses once, then makes. */
const refusals = { left: 0 }
const charge = Compensable.make({
  name: "charge",
  input: Schema.Number,
  success: Schema.String,
  execute: (amount) => Effect.succeed(`ch-${amount}`),
  compensate: () => (refusals.left-- > 0 ? Effect.fail(Outcome.failed("the bank refused the refund")) : Effect.void)
})

describe("a completed saga with a step undone explicitly, in the saga's own views", { timeout: 60_000 }, () => {
  it.scopedLive(
    "an explicit undo that failed, then the saga's own compensation that undid the step: both are said",
    () =>
      Effect.gen(function* () {
        const db = freshDb("explicit-undo-then-saga")
        refusals.left = 1
        const { step, report } = yield* onDb(
          db,
          Effect.gen(function* () {
            yield* Saga.run("order-9", charge(7))
            const [step] = (yield* Saga.status("order-9")).steps
            expect(yield* Saga.compensateEffect(step!.effectId)).toMatchObject({ _tag: "Settled", outcome: "failed" })
            return { step: step!, report: yield* Saga.compensate("order-9") }
          })
        )
        expect(report.status).toBe("compensated")
        const shown = yield* cliInProcess("show", "order-9", "--db", db)
        expect(shown.stdout).toContain(
          `${step.stepId}: explicit undo failed (not applied: the bank refused the refund); the saga's own compensation: undo completed; its run: effect-saga show ${step.effectId}/compensate-effect`
        )
        // The run's own timeline, and a second explicit undo's answer line, leave out the repeated words too.
        const run = yield* cliInProcess("show", `${step.effectId}/compensate-effect`, "--db", db)
        expect(run.stdout).toContain("undo failed: not applied: the bank refused the refund")
        expect(run.stdout).not.toContain("undo failed: failed (not applied)")
        const baseUrl = yield* serveOn(db)
        const cookie = yield* Effect.promise(() => consoleCookie(baseUrl))
        const page = yield* pageOf(baseUrl, cookie, "order-9")
        expect(page).toContain(
          "explicit undo failed (not applied: the bank refused the refund); the saga&#39;s own compensation: undo completed"
        )
        // The step's own undo and its explicit undo are two lines of the cell, as show prints two.
        expect(page).toContain(`<td>completed<br><span class="explicit-undo" data-step="${step.stepId}">`)
      })
  )

  it.scopedLive("the API, show and the console say what came of each step's run, Saga.status unchanged", () =>
    Effect.gen(function* () {
      const trip = yield* world("explicit-undo-views")
      const [done, waiting] = trip.runs as [string, string]
      const [first, second] = trip.steps as [Saga.StepStatus, Saga.StepStatus]

      // Saga.status keeps its meaning: the saga's journal is only read, its steps stay executed.
      const status = yield* onDb(trip.db, Saga.status("trip-1"))
      expect(status.status).toBe("completed")
      expect(status.steps.map((step) => [step.state, step.undo])).toEqual([
        ["executed", undefined],
        ["executed", undefined]
      ])

      const baseUrl = yield* serveOn(trip.db)
      const detail = yield* raw(baseUrl, "GET", "/api/sagas/trip-1", { as: "alice" })
      expect(detail.status).toBe(200)
      const steps = (detail.body as { steps: ReadonlyArray<Record<string, unknown>> }).steps
      expect(steps[0]).toMatchObject({
        stepId: first.stepId,
        state: "executed",
        undo: null,
        explicitUndo: { runId: done, status: "completed", undo: "completed", tampered: null }
      })
      expect(steps[1]).toMatchObject({
        stepId: second.stepId,
        state: "executed",
        undo: null,
        explicitUndo: { runId: waiting, status: "awaiting_approval", undo: null, tampered: null }
      })

      // The typed client decodes the field.
      const api = yield* clientAs(baseUrl, "alice")
      const typed = yield* api.sagas.get({ path: { sagaId: "trip-1" } })
      expect(typed.steps.map((step) => step.explicitUndo?.status)).toEqual(["completed", "awaiting_approval"])

      const shown = yield* cliInProcess("show", "trip-1", "--db", trip.db)
      expect(shown.stdout).toContain(`${first.stepId}: explicit undo completed; its run: effect-saga show ${done}`)
      expect(shown.stdout).toContain(
        `${second.stepId}: explicit undo awaiting approval; its run: effect-saga show ${waiting}`
      )
      expect(shown.code).toBe(0)

      // `--json` carries each step's run as the API does.
      const json = yield* cliInProcess("show", "trip-1", "--db", trip.db, "--json")
      const printed = JSON.parse(json.stdout) as { saga: { steps: ReadonlyArray<Record<string, unknown>> } }
      expect(printed.saga.steps.map((step) => step.explicitUndo)).toEqual([
        steps[0]!.explicitUndo,
        steps[1]!.explicitUndo
      ])

      const cookie = yield* Effect.promise(() => consoleCookie(baseUrl))
      const page = yield* pageOf(baseUrl, cookie, "trip-1")
      expect(page).toContain(
        `explicit undo completed (<a href="/console/sagas/${encodeURIComponent(done)}">its run</a>)`
      )
      expect(page).toContain(
        `explicit undo awaiting approval (<a href="/console/sagas/${encodeURIComponent(waiting)}">its run</a>)`
      )
      expect(page).not.toContain("No undo was asked for.")

      // Its undo approved and not yet asked for again: said so, not "awaiting approval".
      yield* onDb(trip.db, Saga.approve(waiting, second.stepId, { by: "alice" }))
      const approvedSaid = "explicit undo approved: it runs when it is asked for again (compensateEffect)"
      const again = yield* cliInProcess("show", "trip-1", "--db", trip.db)
      expect(again.stdout).toContain(`${second.stepId}: ${approvedSaid}; its run: effect-saga show ${waiting}`)
      const approvedDetail = yield* raw(baseUrl, "GET", "/api/sagas/trip-1", { as: "alice" })
      expect((approvedDetail.body as { steps: ReadonlyArray<Record<string, unknown>> }).steps[1]).toMatchObject({
        explicitUndo: { runId: waiting, status: "awaiting_approval", undo: null, approved: true }
      })
      expect(yield* pageOf(baseUrl, cookie, "trip-1")).toContain(approvedSaid)
    })
  )

  it.scopedLive("a run whose journal does not verify is said to be so: its status and answer are not shown", () =>
    Effect.gen(function* () {
      const trip = yield* world("explicit-undo-views-tampered")
      const [done] = trip.runs as [string, string]
      edit(trip.db, "DELETE FROM effect_saga_sagas WHERE saga_id = ?", done)

      const baseUrl = yield* serveOn(trip.db)
      const detail = yield* raw(baseUrl, "GET", "/api/sagas/trip-1", { as: "alice" })
      const step = (detail.body as { steps: ReadonlyArray<Record<string, unknown>> }).steps[0]
      expect(step).toMatchObject({
        state: "executed",
        explicitUndo: { runId: done, status: null, undo: null, tampered: { problem: "row" } }
      })

      const shown = yield* cliInProcess("show", "trip-1", "--db", trip.db)
      expect(shown.stdout).toMatch(
        /explicit undo: its run's journal does not verify at seq \d+ \(row\): nothing of it is a fact; its run: /
      )
      expect(shown.stdout).not.toContain("explicit undo completed")
      // The saga completed, but what came of its undo is no fact: show exits 1, with or without --json.
      expect(shown.code).toBe(1)
      const json = yield* cliInProcess("show", "trip-1", "--db", trip.db, "--json")
      expect(json.code).toBe(1)
      const printed = JSON.parse(json.stdout) as { saga: { steps: ReadonlyArray<Record<string, unknown>> } }
      expect(printed.saga.steps[0]!.explicitUndo).toMatchObject({
        runId: done,
        status: null,
        tampered: { problem: "row" }
      })
    })
  )
})
