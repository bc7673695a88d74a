/**
 * The run of an explicit undo (`compensateEffect`) on the console, as a person meets it there: its
 * undo's approval decided in the inbox, then the run's page. Nothing resumes a run: once approved,
 * the page and the notice say to ask for the undo again (and that works as printed). Rejected, the
 * run's answer is shown (`undo failed: rejected by alice: …`) with what is left to do with the
 * effect, which is still live, as `effect-saga show` says it; `Saga.status` gives the step that
 * answer as its undo.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Saga } from "../src/index.js"
import { cliInProcess } from "./fixtures/cli-in-process.js"
import { consolePage, fields, follow, postForm } from "./fixtures/console-forms.js"
import { epochClock } from "./fixtures/epoch-clock.js"
import { bookRoom, chargeCard, freshDb, onDb, raw, serveOn } from "./fixtures/http-saga.js"

/** A trip of two nights, each night's undo asked for on its own: both runs await their approval. */
const world = (name: string) =>
  Effect.gen(function* () {
    const db = freshDb(name)
    const effects = yield* onDb(
      db,
      Effect.gen(function* () {
        yield* Saga.run("trip-1", Effect.zipRight(bookRoom({ night: "n1" }), bookRoom({ night: "n2" })))
        const { steps } = yield* Saga.status("trip-1")
        for (const step of steps) expect((yield* Saga.compensateEffect(step.effectId))._tag).toBe("AwaitingApproval")
        return steps
      })
    )
    const baseUrl = yield* serveOn(db)
    return { db, baseUrl, steps: effects }
  })

/** The inbox's form for the run's step, posted as the browser posts it; the notice of the next page. */
const decide = (
  world: { readonly db: string; readonly baseUrl: string },
  runId: string,
  verb: "approve" | "reject",
  reason = ""
) =>
  Effect.gen(function* () {
    const run = yield* onDb(world.db, Saga.status(runId))
    const form = {
      sagaId: runId,
      stepId: run.steps[0]!.stepId,
      revision: `${run.revision}`,
      digest: run.digest,
      reason
    }
    const posted = yield* postForm(world.baseUrl, `/console/${verb}`, fields(form))
    return (yield* follow(world.baseUrl, posted)).notice?.text
  })

/** The console's page of `sagaId`, as alice signed in sees it. */
const pageOf = (baseUrl: string, sagaId: string) =>
  Effect.map(consolePage(baseUrl, `/console/sagas/${encodeURIComponent(sagaId)}`), (page) => page.text)

/** The text of the `tag` element with `id` (one that holds no other `tag`), its markup dropped, unescaped. */
const textOf = (html: string, id: string, tag = "p") => {
  const found = new RegExp(`id="${id}">([\\s\\S]*?)</${tag}>`).exec(html)?.[1]
  return found
    ?.replace(/<[^>]+>/g, " ")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replace(/\s+/g, " ")
    .trim()
}

describe("an explicit undo's run on the console", { timeout: 60_000 }, () => {
  it.scopedLive(
    "approved in the inbox: the notice and the run's page say to ask again, and asked again as printed, it runs",
    () =>
      Effect.gen(function* () {
        const trip = yield* world("undo-run-approved")
        const step = trip.steps[0]!
        const runId = `${step.effectId}/compensate-effect`
        const askAgain = `the undo runs when it is asked for again (nothing resumes a run): effect-saga compensate-effect ${step.effectId} --register MODULE`
        const path = `/api/sagas/trip-1/steps/${encodeURIComponent(step.stepId)}/compensate-effect`

        const notice = yield* decide(trip, runId, "approve")
        expect(notice?.replaceAll("&quot;", '"').replaceAll("&#39;", "'")).toBe(
          `Step ${step.stepId} of saga ${runId}: approved by alice; ${askAgain}, POST ${path} (with the saga's revision and digest), or Saga.compensateEffect("${step.effectId}").`
        )
        const page = yield* pageOf(trip.baseUrl, runId)
        expect(page).not.toContain("when the saga is resumed")
        expect(textOf(page, "ask-again")).toBe(
          `Step ${step.stepId} is approved: ${askAgain}, or POST ${path} (with the saga's revision and digest), or Saga.compensateEffect("${step.effectId}").`
        )

        // As printed: the API's compensate-effect, at the saga's position, runs the approved undo.
        const saga = yield* onDb(trip.db, Saga.status("trip-1"))
        const asked = yield* raw(trip.baseUrl, "POST", path, {
          as: "alice",
          body: JSON.stringify({ revision: saga.revision, digest: saga.digest })
        })
        expect(asked).toMatchObject({ status: 200, body: { runId, result: "completed" } })
        const done = yield* pageOf(trip.baseUrl, runId)
        expect(done).toContain('<span class="badge completed">completed</span>')
        expect(done).not.toContain("No undo was asked for.")
        expect(done).not.toContain('id="ask-again"')
      })
  )

  it.scopedLive(
    "rejected in the inbox: the notice and the run's page say what the run answered, and that the effect is still live, as show does",
    () =>
      Effect.gen(function* () {
        const trip = yield* world("undo-run-rejected")
        const step = trip.steps[1]!
        const runId = `${step.effectId}/compensate-effect`
        const notice = yield* decide(trip, runId, "reject", "keep the room")

        const saga = yield* onDb(trip.db, Saga.status("trip-1"))
        const run0 = yield* onDb(trip.db, Saga.status(runId))
        const at = `--as WHO --revision ${run0.revision} --digest ${run0.digest}`
        const left = `the effect ${step.effectId} is still live: undo it by hand, at the provider, or compensate the saga, which runs its undo as if nobody had asked (key trip-1/${step.stepId}/undo) and undoes every other executed step too: effect-saga compensate trip-1 --register MODULE --as WHO --revision ${saga.revision} --digest ${saga.digest}; asking again runs nothing, and the run stays compensation_failed until it is closed: once the effect is undone, effect-saga resolve ${runId} ${step.stepId} --applied ${at}; to keep the effect as it is (as decided), close it so: effect-saga resolve ${runId} ${step.stepId} --not-applied ${at}`
        expect(notice?.replaceAll("&#39;", "'")).toBe(
          `Step ${step.stepId} of saga ${runId}: rejected by alice; the undo never runs: the run answered undo failed (rejected by alice: keep the room); ${left}.`
        )
        const shown = yield* cliInProcess("show", runId, "--db", trip.db)
        expect(shown.stdout).toContain(`next: ${left}`)

        const page = yield* pageOf(trip.baseUrl, runId)
        expect(textOf(page, "run-answer", "div")).toBe(
          `The run's answer The run answered: undo failed (rejected by alice: keep the room). ${left.charAt(0).toUpperCase()}${left.slice(1)}. Its saga: trip-1 . Its effect is undone now: close the run Keep the effect as it is: close the run`
        )
        expect(page).not.toContain("No undo was asked for.")
        expect(page).toContain(
          `<td><code>${step.stepId}</code></td><td><span class="badge failed">failed</span></td><td>rejected by alice: keep the room</td>`
        )

        // Saga.status gives the run's step its answer as its undo, as show --json and the API do.
        const run = yield* onDb(trip.db, Saga.status(runId))
        expect(run.steps).toEqual([
          {
            stepId: step.stepId,
            toolName: "bookRoom",
            effectId: step.effectId,
            state: "refused",
            undo: "failed",
            undoDetail: "rejected by alice: keep the room"
          }
        ])

        // Kept as decided: the card's second button closes the run, which leaves the dirty ones.
        const kept = { sagaId: runId, stepId: step.stepId, revision: `${run.revision}`, digest: run.digest }
        const posted = yield* postForm(trip.baseUrl, "/console/resolve", fields({ ...kept, outcome: "not-applied" }))
        const closed = yield* follow(trip.baseUrl, posted)
        expect(closed.notice?.kind).toBe("ok")
        expect(closed.notice?.text).toContain(
          "the run answers failed and is closed: the effect stays in place (the saga's own compensation runs its undo, unless it settled the step already)"
        )
        expect((yield* onDb(trip.db, Saga.status(runId))).status).toBe("completed")
        expect(yield* pageOf(trip.baseUrl, runId)).not.toContain('id="run-answer"')
      })
  )
})

describe("an explicit undo's run whose approval lapsed", { timeout: 60_000 }, () => {
  it.scopedLive("its page says that asked again as it is, the run answers failed, and to renew it first", () =>
    Effect.gen(function* () {
      const trip = yield* world("undo-run-lapsed")
      const step = trip.steps[0]!
      const runId = `${step.effectId}/compensate-effect`
      const waiting = yield* onDb(trip.db, Saga.status(runId))
      // Approved at the epoch, until 2001: it has lapsed by now.
      yield* onDb(
        trip.db,
        Saga.approve(runId, step.stepId, {
          by: "alice",
          expiresAt: "2001-01-01T00:00:00.000Z",
          revision: waiting.revision,
          digest: waiting.digest
        }).pipe(Effect.withClock(epochClock))
      )
      const run = yield* onDb(trip.db, Saga.status(runId))
      const page = yield* pageOf(trip.baseUrl, runId)
      expect(textOf(page, "ask-again")).toBe(
        `The approval of ${step.stepId} lapsed at 2001-01-01T00:00:00.000Z: asked for again as it is, the run journals EXPIRED and answers failed (the undo never runs, the effect stays live); to run the undo still, renew it first: effect-saga renew-approval ${runId} ${step.stepId} --as WHO --expires-at TIME --revision ${run.revision} --digest ${run.digest}, then ask again: effect-saga compensate-effect ${step.effectId} --register MODULE, or POST /api/sagas/trip-1/steps/${encodeURIComponent(step.stepId)}/compensate-effect (with the saga's revision and digest), or Saga.compensateEffect("${step.effectId}").`
      )
      const shown = yield* cliInProcess("show", runId, "--db", trip.db)
      expect(shown.stdout).toContain(
        `next: the approval of ${step.stepId} lapsed at 2001-01-01T00:00:00.000Z: asked for again`
      )
      expect(shown.stdout).not.toContain("Recovery.resume")
    })
  )
})

describe("an explicit undo's run whose undo answered unknown", { timeout: 60_000 }, () => {
  it.scopedLive("resolved through the API: the run answers, and nothing is resumed", () =>
    Effect.gen(function* () {
      const db = freshDb("undo-run-resolve")
      const runId = yield* onDb(
        db,
        Effect.gen(function* () {
          yield* Saga.run("charge-1", chargeCard({ amount: 5 }))
          const [charge] = (yield* Saga.status("charge-1")).steps
          const answer = yield* Saga.compensateEffect(charge!.effectId)
          expect(answer).toMatchObject({ _tag: "Settled", outcome: "unknown" })
          return `${charge!.effectId}/compensate-effect`
        })
      )
      const baseUrl = yield* serveOn(db)
      const run = yield* onDb(db, Saga.status(runId))
      const step = run.steps[0]!
      const resolved = yield* raw(
        baseUrl,
        "POST",
        `/api/sagas/${encodeURIComponent(runId)}/steps/${encodeURIComponent(step.stepId)}/resolve`,
        {
          as: "alice",
          body: JSON.stringify({ revision: run.revision, digest: run.digest, outcome: "applied" })
        }
      )
      expect(resolved.status).toBe(200)
      expect((resolved.body as { readonly message: string }).message).toBe(
        "resolved as applied by alice; the run answers completed"
      )
      expect((yield* onDb(db, Saga.status(runId))).status).toBe("completed")
    })
  )

  it.scopedLive(
    "once the saga's own compensation undid the effect, the run's page offers to close it as undone only",
    () =>
      Effect.gen(function* () {
        const trip = yield* world("undo-run-saga-undid")
        const step = trip.steps[0]!
        const runId = `${step.effectId}/compensate-effect`
        yield* decide(trip, runId, "reject", "keep the room")
        const before = yield* pageOf(trip.baseUrl, runId)
        expect(before).toContain("Keep the effect as it is: close the run")
        // The saga's own compensation runs the undo as if nobody had asked.
        expect((yield* onDb(trip.db, Saga.compensate("trip-1"))).status).toBe("compensated")
        const after = yield* pageOf(trip.baseUrl, runId)
        expect(after).toContain(`The saga&#39;s own compensation settled ${step.stepId} since (undo completed)`)
        expect(after).toContain("Its effect is undone now: close the run")
        expect(after).not.toContain("Keep the effect as it is")
        const shown = yield* cliInProcess("show", runId, "--db", trip.db)
        expect(shown.stdout).toContain("once the effect is undone, effect-saga resolve")
        expect(shown.stdout).not.toContain("--not-applied")
      })
  )
})

describe("explicit undos' runs awaiting approval that the saga's own compensation overtook", {
  timeout: 60_000
}, () => {
  it.scopedLive(
    "the inbox, the API and the runs' pages offer no decision and say why; asked again as said, the run answers the saga's and withdraws its request",
    () =>
      Effect.gen(function* () {
        const trip = yield* world("undo-run-overtaken")
        const [first, second] = trip.steps
        const waitingRun = `${first!.effectId}/compensate-effect`
        const approvedRun = `${second!.effectId}/compensate-effect`
        expect(yield* decide(trip, approvedRun, "approve")).toContain("approved by alice")
        const inboxBefore = (yield* consolePage(trip.baseUrl, "/console")).text
        expect(inboxBefore).toContain('action="/console/approve"')
        // The saga's own compensation undoes both nights, as if nobody had asked.
        expect((yield* onDb(trip.db, Saga.compensate("trip-1"))).status).toBe("compensated")

        const said = (step: typeof first, rest: string) =>
          `the saga's own compensation has reached ${step!.stepId} since (undo completed): ${rest}: effect-saga compensate-effect ${step!.effectId} --register MODULE`
        const elsewhere = (step: typeof first) =>
          `, or POST /api/sagas/trip-1/steps/${encodeURIComponent(step!.stepId)}/compensate-effect (with the saga's revision and digest), or Saga.compensateEffect("${step!.effectId}").`
        const waitingSaid = said(
          first,
          "nothing is left to approve; asked again, the run answers that and withdraws this request"
        )
        const approvedSaid = said(second, "the approved undo will not run; asked again, the run answers that")
        const capital = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`

        const inbox = (yield* consolePage(trip.baseUrl, "/console")).text
        expect(inbox).not.toContain('action="/console/approve"')
        expect(inbox).not.toContain('action="/console/reject"')
        expect(textOf(inbox, `settled-${first!.stepId}`)).toBe(`${capital(waitingSaid)}${elsewhere(first)}`)
        const api = yield* raw(trip.baseUrl, "GET", "/api/approvals", { as: "alice" })
        expect(api.status).toBe(200)
        expect(api.body).toMatchObject([{ sagaId: waitingRun, stepId: first!.stepId, settled: waitingSaid }])

        const waitingPage = yield* pageOf(trip.baseUrl, waitingRun)
        expect(waitingPage).not.toContain("await approval: decide in the")
        expect(textOf(waitingPage, `settled-${first!.stepId}`)).toBe(`${capital(waitingSaid)}${elsewhere(first)}`)
        const approvedPage = yield* pageOf(trip.baseUrl, approvedRun)
        expect(approvedPage).not.toContain('id="ask-again"')
        expect(textOf(approvedPage, `settled-${second!.stepId}`)).toBe(`${capital(approvedSaid)}${elsewhere(second)}`)

        // Asked again as said (through the API): each run answers what the saga's compensation did.
        const saga = yield* onDb(trip.db, Saga.status("trip-1"))
        for (const step of [first, second]) {
          const asked = yield* raw(
            trip.baseUrl,
            "POST",
            `/api/sagas/trip-1/steps/${encodeURIComponent(step!.stepId)}/compensate-effect`,
            { as: "alice", body: JSON.stringify({ revision: saga.revision, digest: saga.digest }) }
          )
          expect(asked).toMatchObject({ status: 200, body: { result: "completed" } })
        }
        expect(yield* raw(trip.baseUrl, "GET", "/api/approvals", { as: "alice" })).toMatchObject({
          status: 200,
          body: []
        })
        expect((yield* onDb(trip.db, Saga.status(waitingRun))).status).toBe("completed")
      })
  )
})
