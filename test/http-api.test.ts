import * as fs from "node:fs"
import * as NodeHttp from "node:http"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as OpenApi from "@effect/platform/OpenApi"
import { assert, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Config, Context, Effect, Either, Layer, Logger, Redacted, Schema } from "effect"
import { Compensable, Journal, Saga } from "../src/index.js"
import * as body from "../src/internal/http/body.js"
import * as guard from "../src/internal/http/guard.js"
import * as handlers from "../src/internal/http/handlers.js"
import * as server from "../src/internal/http/server.js"
import * as SagaApi from "../src/SagaApi.js"
import {
  awaiting,
  clientAs,
  freshDb,
  onDb,
  payout,
  raw,
  reserveFunds,
  sendWireTransfer,
  serveOn,
  services,
  shipping,
  snapshot,
  tokens
} from "./fixtures/http-saga.js"
import { edit } from "./fixtures/sqlite-raw.js"
import { unansweredRefund } from "./fixtures/unanswered-refund.js"

/** A saga `sagaId` awaiting approval of its wire transfer in a fresh file, served; the URL and file. */
const awaitingPayout = (name: string, options: Partial<SagaApi.ServeOptions> = {}) =>
  Effect.gen(function* () {
    const db = freshDb(name)
    yield* onDb(db, Saga.run("payout-1", payout))
    return { db, baseUrl: yield* serveOn(db, options) }
  })

const encoded = (id: string) => encodeURIComponent(id)

/** Runs `effect` with Effect's logger replaced by one that keeps each line's level and message. */
const logged = <A, E, R>(effect: (lines: Array<string>) => Effect.Effect<A, E, R>) => {
  const lines: Array<string> = []
  const keeping = Logger.make(({ logLevel, message }) => {
    lines.push(`${logLevel.label} ${(Array.isArray(message) ? message : [message]).join(" ")}`)
  })
  return Effect.provide(effect(lines), Logger.replace(Logger.defaultLogger, keeping))
}

const phases = (db: string, sagaId: string) =>
  onDb(
    db,
    Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId)).pipe(
      Effect.map((entries) => entries.map((entry) => entry.phase))
    )
  )

describe("SagaApi through its typed client, on a real server on 127.0.0.1 over SQLite", { timeout: 30_000 }, () => {
  it.scopedLive("lists sagas, gets one, approves its wire transfer; resumed from code it completes", () =>
    Effect.gen(function* () {
      const { db, baseUrl } = yield* awaitingPayout("approve")
      const api = yield* clientAs(baseUrl, "alice")
      const page = yield* api.sagas.list({ urlParams: {} })
      expect(page.sagas.map((saga) => [saga.sagaId, saga.status, saga.needsHuman])).toEqual([
        ["payout-1", "awaiting_approval", true]
      ])
      const detail = yield* api.sagas.get({ path: { sagaId: "payout-1" } })
      expect(detail.steps.map((step) => [step.toolName, step.state])).toEqual([
        ["reserveFunds", "executed"],
        ["sendWireTransfer", "awaiting_approval"]
      ])
      const pending = yield* api.approvals.pending()
      expect(pending).toHaveLength(1)
      expect(pending[0]!.input).toBe('{"amount":4200,"to":"DE89 3704 0044 0532 0130 00"}')
      expect(pending[0]!.inputDigest).toMatch(/^[0-9a-f]{64}$/)
      const stepId = detail.steps[1]!.stepId
      const answer = yield* api.approvals.approve({
        path: { sagaId: "payout-1", stepId },
        payload: { revision: detail.saga.revision, digest: detail.saga.digest }
      })
      expect(answer.changed).toBe(true)
      expect(answer.revision).toBe(detail.saga.revision + 1)
      const approved = (yield* onDb(
        db,
        Effect.flatMap(Journal.Journal, (journal) => journal.read("payout-1"))
      )).at(-1)
      expect(approved?.phase).toBe("APPROVED")
      expect(JSON.parse(approved!.payload!).by).toBe("alice")
      expect(yield* api.approvals.pending()).toEqual([])
      const again = yield* api.approvals.approve({
        path: { sagaId: "payout-1", stepId },
        payload: { revision: answer.revision, digest: answer.digest }
      })
      expect(again.changed).toBe(false)
      const resumed = yield* onDb(db, Saga.resume("payout-1", payout))
      expect(resumed._tag).toBe("Completed")
      const verified = yield* api.sagas.verify({ path: { sagaId: "payout-1" } })
      expect(verified).toMatchObject({ sagaId: "payout-1", intact: true, tampered: null })
      const completed = yield* api.sagas.list({ urlParams: { status: ["completed"] } })
      expect(completed.sagas.map((saga) => saga.sagaId)).toEqual(["payout-1"])
      expect((yield* api.sagas.list({ urlParams: { needsHuman: true } })).total).toBe(0)
    })
  )

  it.scopedLive(
    "reaches a saga whose id is at its limit of 512 bytes, and its steps, by the typed client and by hand",
    () =>
      Effect.gen(function* () {
        const db = freshDb("long-ids")
        const sagaId = `${"é".repeat(200)}/${"p".repeat(111)}`
        expect(Buffer.byteLength(sagaId)).toBe(Saga.MAX_SAGA_ID_BYTES)
        yield* onDb(db, Saga.run(sagaId, payout))
        const baseUrl = yield* serveOn(db)
        const api = yield* clientAs(baseUrl, "alice")
        const detail = yield* api.sagas.get({ path: { sagaId } })
        expect(detail.saga.sagaId).toBe(sagaId)
        const byHand = yield* raw(baseUrl, "GET", `/api/sagas/${encoded(sagaId)}`, { as: "alice" })
        expect(byHand.status).toBe(200)
        const stepId = detail.steps[1]!.stepId
        const answer = yield* api.approvals.approve({
          path: { sagaId, stepId },
          payload: { revision: detail.saga.revision, digest: detail.saga.digest }
        })
        expect(answer.changed).toBe(true)
      })
  )

  it.scopedLive("the client refuses a saga or step id of . or .. with Malformed before anything is sent", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* awaitingPayout("dot-ids")
      const api = yield* clientAs(baseUrl, "alice")
      const refused = (kind: string, id: string) => ({
        _tag: "Malformed",
        message: `invalid ${kind} "${id}": it is "${id}", which a URL takes as a step of its path: the HTTP API could not name it; nothing was sent`
      })
      for (const sagaId of [".", ".."]) {
        expect(yield* Effect.flip(api.sagas.get({ path: { sagaId } }))).toMatchObject(refused("saga id", sagaId))
        expect(yield* Effect.flip(api.sagas.verify({ path: { sagaId } }))).toMatchObject(refused("saga id", sagaId))
        expect(
          yield* Effect.flip(api.operations.compensate({ path: { sagaId }, payload: { revision: 1, digest: "x" } }))
        ).toMatchObject(refused("saga id", sagaId))
      }
      const approve = yield* Effect.flip(
        api.approvals.approve({ path: { sagaId: "payout-1", stepId: ".." }, payload: { revision: 1, digest: "x" } })
      )
      expect(approve).toMatchObject(refused("step id", ".."))
      expect(approve).toBeInstanceOf(SagaApi.Malformed)
      expect((yield* api.sagas.get({ path: { sagaId: "payout-1" } })).saga.sagaId).toBe("payout-1")
    })
  )

  it.scopedLive(
    "the typed client's errors, decoded from responses, pass SagaApi.isSagaApiError; their bodies stay { _tag, message }",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* awaitingPayout("guarded-errors")
        const api = yield* clientAs(baseUrl, "alice")
        const step = yield* awaiting(baseUrl, "payout-1")
        const errors = [
          yield* Effect.flip(api.sagas.get({ path: { sagaId: "nope" } })),
          yield* Effect.flip(
            api.approvals.approve({
              path: { sagaId: "payout-1", stepId: step.stepId },
              payload: { revision: step.revision + 1, digest: step.digest }
            })
          ),
          yield* Effect.flip(Effect.flatMap(clientAs(baseUrl, undefined), (anonymous) => anonymous.approvals.pending()))
        ]
        expect(errors.map((error) => error._tag)).toEqual(["NotFound", "Conflict", "Unauthenticated"])
        for (const error of errors) expect(SagaApi.isSagaApiError(error), error._tag).toBe(true)
        // On the wire: the tag and the message, nothing more; read by hand, a body is no SagaApi error.
        const byHand = yield* raw(baseUrl, "GET", "/api/sagas/nope", { as: "alice" })
        expect(byHand.status).toBe(404)
        expect(Object.keys(byHand.body as object).sort()).toEqual(["_tag", "message"])
        expect(SagaApi.isSagaApiError(byHand.body)).toBe(false)
      })
  )

  it.scopedLive("rejects with a reason (the saga compensates), and renews an approval", () =>
    Effect.gen(function* () {
      const db = freshDb("reject")
      yield* onDb(db, Effect.all([Saga.run("payout-1", payout), Saga.run("payout-2", payout)]))
      const baseUrl = yield* serveOn(db)
      const api = yield* clientAs(baseUrl, "bob")
      const first = yield* awaiting(baseUrl, "payout-1")
      const rejected = yield* api.approvals.reject({
        path: { sagaId: "payout-1", stepId: first.stepId },
        payload: { revision: first.revision, digest: first.digest, reason: "unknown beneficiary" }
      })
      expect(rejected.report.status).toBe("compensated")
      expect(rejected.message).toBe("rejected by bob; the saga is compensated")
      expect(rejected.report.undone.map((step) => [step.toolName, step.outcome])).toEqual([
        ["reserveFunds", "completed"]
      ])
      expect(yield* phases(db, "payout-1")).toContain("REJECTED")
      const second = yield* awaiting(baseUrl, "payout-2")
      const approved = yield* api.approvals.approve({
        path: { sagaId: "payout-2", stepId: second.stepId },
        payload: { revision: second.revision, digest: second.digest }
      })
      const renewed = yield* api.approvals.renew({
        path: { sagaId: "payout-2", stepId: second.stepId },
        payload: { revision: approved.revision, digest: approved.digest, expiresAt: "2999-01-01T00:00:00Z" }
      })
      expect(renewed.changed).toBe(true)
      const status = yield* onDb(db, Saga.status("payout-2"))
      expect(status.steps[1]!.state).toBe("approved")
    })
  )

  it.scopedLive("resolves an unknown outcome, compensates a saga, and undoes one effect", () =>
    Effect.gen(function* () {
      const db = freshDb("operations")
      yield* onDb(
        db,
        Effect.all([
          Saga.run("ship-1", shipping),
          Saga.run("ship-2", shipping),
          Saga.run("payout-1", payout),
          Saga.run("solo-1", payout)
        ])
      )
      const baseUrl = yield* serveOn(db)
      const api = yield* clientAs(baseUrl, "alice")
      const ship = yield* api.sagas.get({ path: { sagaId: "ship-1" } })
      expect(ship.saga.status).toBe("needs_attention")
      const unknown = ship.steps.find((step) => step.state === "unknown")!
      const resolved = yield* api.operations.resolve({
        path: { sagaId: "ship-1", stepId: unknown.stepId },
        payload: { revision: ship.saga.revision, digest: ship.saga.digest, outcome: "not-applied" }
      })
      expect(resolved.changed).toBe(true)
      expect((yield* phases(db, "ship-1")).at(-1)).toBe("FAILED")

      const held = yield* api.sagas.get({ path: { sagaId: "payout-1" } })
      const compensated = yield* api.operations.compensate({
        path: { sagaId: "payout-1" },
        payload: { revision: held.saga.revision, digest: held.saga.digest }
      })
      expect(compensated.report.status).toBe("compensated")
      expect(compensated.message).toBe("compensation asked by alice: the saga is compensated")
      expect((yield* onDb(db, Saga.status("payout-1"))).status).toBe("compensated")
      // A step whose outcome is unknown cannot be undone: the answer says the compensation failed.
      const unsettled = yield* api.sagas.get({ path: { sagaId: "ship-2" } })
      const failed = yield* api.operations.compensate({
        path: { sagaId: "ship-2" },
        payload: { revision: unsettled.saga.revision, digest: unsettled.saga.digest }
      })
      expect(failed.report.status).toBe("compensation_failed")
      // It names that step, to resolve first: a compensation again then runs its undo.
      const toResolve = unsettled.steps.find((step) => step.state === "unknown")!.stepId
      expect(failed.message).toBe(
        `compensation asked by alice: the saga's compensation failed: ${toResolve} was not undone, since its outcome is unknown: resolve it first (POST /api/sagas/ship-2/steps/${encodeURIComponent(toResolve)}/resolve, or effect-saga resolve), then compensate the saga again`
      )

      const solo = yield* awaiting(baseUrl, "solo-1")
      const reserve = solo.detail.steps[0]!
      const undo = yield* api.operations.compensateEffect({
        path: { sagaId: "solo-1", stepId: reserve.stepId },
        payload: { revision: solo.revision, digest: solo.digest }
      })
      expect(undo).toMatchObject({ effectId: reserve.effectId, result: "completed" })
    })
  )

  it.scopedLive(
    "a compensate or compensate-effect sent again as it was answers as the first did, and writes nothing",
    () =>
      Effect.gen(function* () {
        const db = freshDb("replays")
        yield* onDb(db, Effect.all([Saga.run("payout-1", payout), Saga.run("solo-1", payout)]))
        const baseUrl = yield* serveOn(db)
        const api = yield* clientAs(baseUrl, "alice")
        const held = yield* api.sagas.get({ path: { sagaId: "payout-1" } })
        const seen = { revision: held.saga.revision, digest: held.saga.digest }
        const first = yield* api.operations.compensate({ path: { sagaId: "payout-1" }, payload: seen })
        expect(first).toMatchObject({ changed: true, report: { status: "compensated" } })
        const written = snapshot(db)
        const again = yield* api.operations.compensate({ path: { sagaId: "payout-1" }, payload: seen })
        expect(again).toEqual({
          ...first,
          changed: false,
          message: "compensation asked by alice: the saga is compensated: already so, nothing written"
        })
        expect(snapshot(db)).toBe(written)

        const solo = yield* awaiting(baseUrl, "solo-1")
        const reserve = solo.detail.steps[0]!
        const undo = () =>
          api.operations.compensateEffect({
            path: { sagaId: "solo-1", stepId: reserve.stepId },
            payload: { revision: solo.revision, digest: solo.digest }
          })
        const undone = yield* undo()
        expect(undone).toMatchObject({ effectId: reserve.effectId, result: "completed" })
        const undoWritten = snapshot(db)
        expect(yield* undo()).toEqual(undone)
        expect(snapshot(db)).toBe(undoWritten)
      })
  )

  it.scopedLive("each error has its status and one body, and writes nothing", () =>
    Effect.gen(function* () {
      const { db, baseUrl } = yield* awaitingPayout("errors", { maxBodyBytes: 2048 })
      const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
      const approve = `/api/sagas/payout-1/steps/${encoded(stepId)}/approve`
      const before = snapshot(db)
      const cases: ReadonlyArray<[string, Effect.Effect<{ status: number; body: unknown }>, number, string]> = [
        ["not JSON", raw(baseUrl, "POST", approve, { as: "alice", body: "{revision" }), 400, "Malformed"],
        [
          "a form",
          raw(baseUrl, "POST", approve, { as: "alice", body: "a=1", type: "application/x-www-form-urlencoded" }),
          400,
          "Malformed"
        ],
        [
          "a body off its schema",
          raw(baseUrl, "POST", approve, { as: "alice", body: JSON.stringify({ revision: "five", digest }) }),
          400,
          "Malformed"
        ],
        ["a bad parameter", raw(baseUrl, "GET", "/api/sagas?limit=0", { as: "alice" }), 400, "Malformed"],
        [
          "a bad time",
          raw(baseUrl, "POST", approve, { as: "alice", body: JSON.stringify({ revision, digest, expiresAt: "soon" }) }),
          400,
          "Malformed"
        ],
        [
          "no token",
          raw(baseUrl, "POST", approve, { body: JSON.stringify({ revision, digest }) }),
          401,
          "Unauthenticated"
        ],
        ["no token, to read", raw(baseUrl, "GET", "/api/sagas"), 401, "Unauthenticated"],
        [
          "a principal the authority refuses",
          raw(baseUrl, "POST", approve, { as: "mallory", body: JSON.stringify({ revision, digest }) }),
          403,
          "Forbidden"
        ],
        ["an unknown saga", raw(baseUrl, "GET", "/api/sagas/nope", { as: "alice" }), 404, "NotFound"],
        [
          "an unknown step",
          raw(baseUrl, "POST", "/api/sagas/payout-1/steps/nope/approve", {
            as: "alice",
            body: JSON.stringify({ revision, digest })
          }),
          404,
          "NotFound"
        ],
        [
          "a saga that moved on",
          raw(baseUrl, "POST", approve, { as: "alice", body: JSON.stringify({ revision: revision - 1, digest }) }),
          409,
          "Conflict"
        ],
        [
          "another digest",
          raw(baseUrl, "POST", approve, { as: "alice", body: JSON.stringify({ revision, digest: "0".repeat(64) }) }),
          409,
          "Conflict"
        ],
        [
          "a step not awaiting approval",
          raw(
            baseUrl,
            "POST",
            `/api/sagas/payout-1/steps/${encoded((yield* awaiting(baseUrl, "payout-1")).detail.steps[0]!.stepId)}/approve`,
            { as: "alice", body: JSON.stringify({ revision, digest }) }
          ),
          422,
          "Refused"
        ],
        [
          "a body over the limit",
          raw(baseUrl, "POST", approve, {
            as: "alice",
            body: JSON.stringify({ revision, digest, pad: "x".repeat(4096) })
          }),
          413,
          "TooLarge"
        ]
      ]
      for (const [what, request, status, tag] of cases) {
        const response = yield* request
        expect([what, response.status], JSON.stringify(response.body)).toEqual([what, status])
        expect(response.body).toEqual({ _tag: tag, message: expect.any(String) })
        expect(JSON.stringify(response.body)).not.toMatch(/stack|at .*\.ts:|-token-/)
      }
      expect(snapshot(db)).toBe(before)
      const typed = yield* clientAs(baseUrl, "alice").pipe(
        Effect.flatMap((api) =>
          api.approvals.approve({ path: { sagaId: "payout-1", stepId }, payload: { revision: revision - 1, digest } })
        ),
        Effect.flip
      )
      expect(typed._tag).toBe("Conflict")
      expect(snapshot(db)).toBe(before)
    })
  )

  it.scopedLive("a step id that cannot be one is 400 before the saga is read; a 404 names an id escaped and cut", () =>
    Effect.gen(function* () {
      const { db, baseUrl } = yield* awaitingPayout("step-ids")
      const { revision, digest } = yield* awaiting(baseUrl, "payout-1")
      const before = snapshot(db)
      const approve = (sagaId: string, stepId: string) =>
        raw(baseUrl, "POST", `/api/sagas/${encoded(sagaId)}/steps/${encoded(stepId)}/approve`, {
          as: "alice",
          body: JSON.stringify({ revision, digest })
        })
      expect(yield* approve("nope", "a\nb\u001b[31m")).toEqual({
        status: 400,
        body: {
          _tag: "Malformed",
          message:
            'invalid step id "a\\nb\\u001b[31m": it holds a control character (U+000A) at index 1; nothing was journaled or run'
        }
      })
      expect(yield* approve("payout-1", `x\u202e${"y".repeat(900)}`)).toEqual({
        status: 404,
        body: { _tag: "NotFound", message: `saga payout-1 has no step "x\\u202e${"y".repeat(62)}"…` }
      })
      expect(yield* approve("n".repeat(900), "step")).toEqual({
        status: 404,
        body: { _tag: "NotFound", message: `no saga "${"n".repeat(64)}"… in the journal` }
      })
      expect(snapshot(db)).toBe(before)
    })
  )

  it.scopedLive(
    "an approvals row whose status was edited is listed marked tampered (approval); approving it is 422, nothing is written",
    () =>
      Effect.gen(function* () {
        const { db, baseUrl } = yield* awaitingPayout("approval-row-edited")
        const file = new Database(db)
        file.prepare("UPDATE effect_saga_approvals SET status = 'weird' WHERE saga_id = 'payout-1'").run()
        file.close()
        const api = yield* clientAs(baseUrl, "alice")
        const reason = `the approvals table's row was edited: its status column says "weird", not pending, approved or rejected`
        const [request] = yield* api.approvals.pending()
        expect(request).toMatchObject({ sagaId: "payout-1", tampered: { problem: "approval", reason } })
        const before = snapshot(db)
        const refused = yield* Effect.flip(
          api.approvals.approve({
            path: { sagaId: "payout-1", stepId: request!.stepId },
            payload: { revision: request!.revision, digest: request!.digest }
          })
        )
        expect(refused).toMatchObject({ _tag: "Refused", message: expect.stringContaining(reason) })
        expect(snapshot(db)).toBe(before)
      })
  )

  it.scopedLive(
    "an approvals row whose time of request alone was edited is listed marked tampered; approving it is 422, nothing is written",
    () =>
      Effect.gen(function* () {
        const { db, baseUrl } = yield* awaitingPayout("approval-time-edited")
        edit(
          db,
          "UPDATE effect_saga_approvals SET requested_at = '1999-01-01T00:00:00.000Z' WHERE saga_id = 'payout-1'"
        )
        const api = yield* clientAs(baseUrl, "alice")
        const [request] = yield* api.approvals.pending()
        expect(request).toMatchObject({
          sagaId: "payout-1",
          tampered: { problem: "approval", reason: expect.stringContaining("names another tool or time") }
        })
        const before = snapshot(db)
        const refused = yield* Effect.flip(
          api.approvals.approve({
            path: { sagaId: "payout-1", stepId: request!.stepId },
            payload: { revision: request!.revision, digest: request!.digest }
          })
        )
        expect(refused).toMatchObject({ _tag: "Refused", message: expect.stringContaining(request!.tampered!.reason) })
        expect(snapshot(db)).toBe(before)
      })
  )

  it.scopedLive(
    "GET /api/approvals lists what the journal waits on: a request whose row was deleted, and one the journal already answered marked",
    () =>
      Effect.gen(function* () {
        const { db, baseUrl } = yield* awaitingPayout("approvals-inbox")
        const api = yield* clientAs(baseUrl, "alice")
        const [listed] = yield* api.approvals.pending()
        edit(db, "DELETE FROM effect_saga_approvals")
        expect(yield* api.approvals.pending()).toEqual([listed])

        const approved = yield* api.approvals.approve({
          path: { sagaId: "payout-1", stepId: listed!.stepId },
          payload: { revision: listed!.revision, digest: listed!.digest }
        })
        expect(yield* api.approvals.pending()).toEqual([])
        // The approvals table restored from a copy taken before the decision.
        edit(
          db,
          `UPDATE effect_saga_approvals SET status = 'pending', decided_at = NULL, decision = '{"_tag":"Pending"}'`
        )
        const [restored] = yield* api.approvals.pending()
        expect(restored).toMatchObject({
          sagaId: "payout-1",
          revision: approved.revision,
          tampered: { problem: "approval" }
        })
        expect(restored!.tampered!.reason).toContain(`the journal answered it at seq ${approved.revision} (APPROVED)`)
      })
  )

  it.scopedLive(
    "a saga whose journal does not verify is 422 for every command, a step past the break included; nothing is written",
    () =>
      Effect.gen(function* () {
        const { db, baseUrl } = yield* awaitingPayout("tampered")
        const { stepId, revision, digest, detail } = yield* awaiting(baseUrl, "payout-1")
        edit(
          db,
          `UPDATE effect_saga_entries SET payload = '{"result":"hold-HACK"}' WHERE saga_id = 'payout-1' AND seq = 3`
        )
        const shown = yield* clientAs(baseUrl, "alice").pipe(
          Effect.flatMap((api) => api.sagas.get({ path: { sagaId: "payout-1" } }))
        )
        expect(shown.saga.tampered?.seq).toBe(3)
        expect(shown.steps.map((step) => step.stepId)).not.toContain(stepId)
        const before = snapshot(db)
        const seen = { revision, digest }
        const step = `/api/sagas/payout-1/steps/${encoded(stepId)}`
        const commands: ReadonlyArray<[string, string, object]> = [
          ["approve", `${step}/approve`, seen],
          ["reject", `${step}/reject`, { ...seen, reason: "no" }],
          ["renew", `${step}/renew`, { ...seen, expiresAt: "2999-01-01T00:00:00Z" }],
          ["resolve", `${step}/resolve`, { ...seen, outcome: "not-applied" }],
          ["compensate-effect", `${step}/compensate-effect`, seen],
          [
            "compensate-effect, a step before the break",
            `/api/sagas/payout-1/steps/${encoded(detail.steps[0]!.stepId)}/compensate-effect`,
            seen
          ],
          ["compensate", "/api/sagas/payout-1/compensate", seen]
        ]
        for (const [what, path, body] of commands) {
          const response = yield* raw(baseUrl, "POST", path, { as: "alice", body: JSON.stringify(body) })
          expect([what, response.status, response.body]).toEqual([
            what,
            422,
            { _tag: "Refused", message: expect.stringMatching(/^journal of saga payout-1 does not verify at seq 3 \(/) }
          ])
        }
        expect(snapshot(db)).toBe(before)
      })
  )

  it.scopedLive("resolve not-applied with a result is 400 (it would be dropped); nothing is written", () =>
    Effect.gen(function* () {
      const db = freshDb("resolve-result")
      yield* onDb(db, Saga.run("ship-1", shipping))
      const baseUrl = yield* serveOn(db)
      const api = yield* clientAs(baseUrl, "alice")
      const ship = yield* api.sagas.get({ path: { sagaId: "ship-1" } })
      const stepId = ship.steps.find((step) => step.state === "unknown")!.stepId
      const before = snapshot(db)
      const response = yield* raw(baseUrl, "POST", `/api/sagas/ship-1/steps/${encoded(stepId)}/resolve`, {
        as: "alice",
        body: JSON.stringify({
          revision: ship.saga.revision,
          digest: ship.saga.digest,
          outcome: "not-applied",
          result: { tracking: "TRK" }
        })
      })
      expect(response).toEqual({
        status: 400,
        body: {
          _tag: "Malformed",
          message:
            "invalid result: a step resolved not-applied has no result: send outcome applied with its result, or no result; nothing was written"
        }
      })
      expect(snapshot(db)).toBe(before)
    })
  )

  it.scopedLive(
    "resolve applied takes the receipt an undo needs, and says so when none is sent; never sends it back",
    () =>
      Effect.gen(function* () {
        const db = freshDb("resolve-receipt")
        const refund = unansweredRefund
        yield* onDb(db, Effect.all([Saga.run("rc-1", refund(1)), Saga.run("rc-2", refund(2))]))
        const baseUrl = yield* serveOn(db)
        const api = yield* clientAs(baseUrl, "alice")
        const resolve = (sagaId: string, extra: object) =>
          Effect.gen(function* () {
            const detail = yield* api.sagas.get({ path: { sagaId } })
            const step = detail.steps[0]!
            expect(step).toMatchObject({ state: "unknown", receiptRequired: true, unknownReason: expect.any(String) })
            const body = { revision: detail.saga.revision, digest: detail.saga.digest, outcome: "applied", result: "r" }
            return yield* raw(baseUrl, "POST", `/api/sagas/${sagaId}/steps/${encoded(step.stepId)}/resolve`, {
              as: "alice",
              body: JSON.stringify({ ...body, ...extra })
            })
          })
        const secret = "rcpt-from-the-bank-41"
        const given = yield* resolve("rc-1", { receipt: secret })
        expect(given.status).toBe(200)
        expect(JSON.stringify(given.body)).not.toContain(secret)
        expect(JSON.stringify(given.body)).not.toContain("given no receipt")
        const executed = (yield* onDb(
          db,
          Effect.flatMap(Journal.Journal, (journal) => journal.read("rc-1"))
        )).at(-1)!
        expect(JSON.parse(executed.payload!).receipt).toBe(secret)
        const none = yield* resolve("rc-2", {})
        expect(none.status).toBe(200)
        expect(JSON.stringify(none.body)).toContain(
          "resolved as applied by alice; given no receipt, though its undo needs the provider's receipt: resolved as applied without it (the API's receipt, or effect-saga resolve --receipt), effect-saga can never undo the call's effect"
        )
      })
  )

  it.scopedLive("compensate-effect at the revision seen with another digest says the digest differs (409)", () =>
    Effect.gen(function* () {
      const { db, baseUrl } = yield* awaitingPayout("effect-digest")
      const { revision, detail } = yield* awaiting(baseUrl, "payout-1")
      const before = snapshot(db)
      const response = yield* raw(
        baseUrl,
        "POST",
        `/api/sagas/payout-1/steps/${encoded(detail.steps[0]!.stepId)}/compensate-effect`,
        { as: "alice", body: JSON.stringify({ revision, digest: "f".repeat(64) }) }
      )
      expect(response).toEqual({
        status: 409,
        body: {
          _tag: "Conflict",
          message: `saga payout-1 is at revision ${revision}, with another digest than the one given: it moved on, nothing was written: read the saga again`
        }
      })
      expect(snapshot(db)).toBe(before)
    })
  )

  it.scopedLive(
    "a request off its schema is one line: the field, what it expects, what was sent, cut and escaped",
    () =>
      Effect.gen(function* () {
        const { db, baseUrl } = yield* awaitingPayout("malformed")
        const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
        const approve = `/api/sagas/payout-1/steps/${encoded(stepId)}/approve`
        const post = (body: unknown, path = approve) =>
          raw(baseUrl, "POST", path, { as: "alice", body: JSON.stringify(body) })
        const reject = `/api/sagas/payout-1/steps/${encoded(stepId)}/reject`
        const before = snapshot(db)
        const cases: ReadonlyArray<[string, Effect.Effect<{ status: number; body: unknown }>, string]> = [
          [
            "limit=0",
            raw(baseUrl, "GET", "/api/sagas?limit=0", { as: "alice" }),
            "invalid limit: expected a number between 1 and 500, got 0; nothing was written"
          ],
          [
            "limit=abc",
            raw(baseUrl, "GET", "/api/sagas?limit=abc", { as: "alice" }),
            'invalid limit: expected a whole number in decimal digits, got "abc"; nothing was written'
          ],
          [
            "an offset past the largest whole number accepted",
            raw(baseUrl, "GET", "/api/sagas?offset=9007199254740992", { as: "alice" }),
            "invalid offset: expected a whole number up to 9007199254740991, the largest accepted, got 9007199254740992; nothing was written"
          ],
          [
            "offset=1.5",
            raw(baseUrl, "GET", "/api/sagas?offset=1.5", { as: "alice" }),
            'invalid offset: expected a whole number in decimal digits, got "1.5"; nothing was written'
          ],
          [
            "needsHuman=yes",
            raw(baseUrl, "GET", "/api/sagas?needsHuman=yes", { as: "alice" }),
            'invalid needsHuman: expected one of "true", "false", got "yes"; nothing was written'
          ],
          [
            "a 900 KB revision",
            post({ revision: `\u001b[31m${"x".repeat(900_000)}`, digest }),
            `invalid revision: expected number, got "\\u001b[31m${"x".repeat(59)}"…; nothing was written`
          ],
          ["no revision", post({ digest }), "revision is missing; nothing was written"],
          [
            "a body that is not an object",
            post([1]),
            "invalid body: expected a JSON object, got [1]; nothing was written"
          ],
          [
            "a time that is not one",
            post({ revision, digest, expiresAt: "soon\n" }),
            'invalid expiresAt: "soon\\n" is not an ISO-8601 time: a date (2025-01-31) or a date and time with its zone (2025-01-31T12:00:00Z, 2025-01-31T13:00+01:00); nothing was written'
          ],
          [
            "a reason with blanks at its ends",
            post({ revision, digest, reason: "  unknown payee  " }, reject),
            'invalid reason: expected a string with no leading or trailing whitespace, got "  unknown payee  "; nothing was written'
          ],
          [
            "status=bogus",
            raw(baseUrl, "GET", "/api/sagas?status=bogus", { as: "alice" }),
            'invalid status[0]: expected one of "running", "awaiting_approval", "needs_attention", "suspended", "compensating", "completed", "compensated", "compensation_failed", got "bogus"; nothing was written'
          ],
          [
            "a blank reason",
            post({ revision, digest, reason: "   " }, reject),
            'invalid reason: expected a string with no leading or trailing whitespace, got "   "; nothing was written'
          ]
        ]
        for (const [what, request, message] of cases) {
          const response = yield* request
          expect([what, response.status, response.body]).toEqual([what, 400, { _tag: "Malformed", message }])
        }
        expect(snapshot(db)).toBe(before)
      })
  )

  it.scopedLive("finishedBefore is a time as the CLI reads it: 2025-02-30 is 400, a time with its zone lists", () =>
    Effect.gen(function* () {
      const db = freshDb("finished-before")
      yield* onDb(db, Effect.all([Saga.run("done-1", reserveFunds({ amount: 1 })), Saga.run("payout-1", payout)]))
      const baseUrl = yield* serveOn(db)
      const list = (before: string) =>
        raw(baseUrl, "GET", `/api/sagas?finishedBefore=${encoded(before)}`, { as: "alice" })
      for (const before of ["2025-02-30", "2025-01-31T12:00", "2025-13-01T00:00:00Z", "soon"]) {
        const response = yield* list(before)
        expect([before, response.status, (response.body as { _tag: string })._tag]).toEqual([before, 400, "Malformed"])
      }
      const ids = (response: { readonly body: unknown }) =>
        (response.body as { sagas: ReadonlyArray<{ sagaId: string }> }).sagas.map((saga) => saga.sagaId)
      const future = yield* list("2999-01-31T13:00+01:00")
      expect([future.status, ids(future)]).toEqual([200, ["done-1"]])
      const past = yield* list("2025-01-31T13:00+01:00")
      expect([past.status, ids(past)]).toEqual([200, []])
    })
  )

  it.scopedLive("a store that cannot be used is 503 to the caller, and its cause is logged at Error", () =>
    logged((lines) =>
      Effect.gen(function* () {
        const { db, baseUrl } = yield* awaitingPayout("unavailable")
        edit(db, "ALTER TABLE effect_saga_entries RENAME TO effect_saga_entries_gone")
        const response = yield* raw(baseUrl, "GET", "/api/sagas/payout-1", { as: "alice" })
        expect(response).toEqual({
          status: 503,
          body: { _tag: "Unavailable", message: expect.stringMatching(/^the store could not be used \(/) }
        })
        expect(JSON.stringify(response.body)).not.toContain("effect_saga_entries")
        const errors = lines.filter((line) => line.startsWith("ERROR"))
        expect(errors).toEqual([
          expect.stringMatching(
            /^ERROR effect-saga: GET \/api\/sagas\/payout-1 answered 503: journal \w+ failed: .*effect_saga_entries/
          )
        ])
        expect(errors.join("\n")).not.toContain(tokens.alice)
      })
    )
  )

  it.scopedLive(
    "an authentication layer that names a principal that cannot be one, or dies, is 500 Internal (a console sign-in: its text), logged",
    () =>
      logged((lines) =>
        Effect.gen(function* () {
          const db = freshDb("verify")
          yield* onDb(db, Saga.run("payout-1", payout))
          const verify = (token: Redacted.Redacted<string>) => {
            const value = Redacted.value(token)
            if (value === "die") return Effect.die(new Error("the identity provider exploded"))
            if (value === "ctrl") return Effect.succeed({ id: "ev\nil" })
            if (value === "blank") return Effect.succeed({ id: "  " })
            if (value === "long") return Effect.succeed({ id: "x".repeat(5000) })
            if (value === "noid") return Effect.succeed({} as { id: string })
            if (value === "numeric") return Effect.succeed({ id: 7 } as unknown as { id: string })
            return Effect.succeed(value === "alice" ? { id: "alice" } : undefined)
          }
          const baseUrl = yield* serveOn(db, { authentication: SagaApi.layerAuthentication(verify) })
          const before = snapshot(db)
          const call = (token: string) =>
            Effect.promise(async () => {
              const response = await fetch(`${baseUrl}/api/sagas/payout-1`, {
                headers: { authorization: `Bearer ${token}` }
              })
              return { status: response.status, body: await response.text() }
            })
          for (const token of ["die", "ctrl", "blank", "long", "noid", "numeric"]) {
            const response = yield* call(token)
            expect([token, response.status, JSON.parse(response.body)]).toEqual([
              token,
              500,
              {
                _tag: "Internal",
                message: "the server could not answer this request: its log says why (nothing in this answer does)"
              }
            ])
          }
          expect((yield* call("alice")).status).toBe(200)
          expect((yield* call("nobody")).status).toBe(401)
          // A console sign-in that meets the same defect says so, not an empty page.
          const page = yield* Effect.promise(async () => {
            const response = await fetch(`${baseUrl}/console/login`, {
              method: "POST",
              redirect: "manual",
              headers: { "content-type": "application/x-www-form-urlencoded", origin: baseUrl },
              body: "token=die"
            })
            return { status: response.status, body: await response.text() }
          })
          expect(page).toEqual({
            status: 500,
            body: "the server could not answer this request: its log says why (nothing in this answer does)"
          })
          const errors = lines.filter((line) => line.startsWith("ERROR"))
          expect(errors).toEqual([
            "ERROR effect-saga: GET /api/sagas/payout-1 answered 500: Error: the identity provider exploded",
            'ERROR effect-saga: GET /api/sagas/payout-1 answered 500: RuntimeException: the authentication layer named a principal that cannot be one: "ev\\nil": it holds a control character (U+000A) at index 2',
            'ERROR effect-saga: GET /api/sagas/payout-1 answered 500: RuntimeException: the authentication layer named a principal that cannot be one: "  ": it is blank: it names no one',
            `ERROR effect-saga: GET /api/sagas/payout-1 answered 500: RuntimeException: the authentication layer named a principal that cannot be one: "${"x".repeat(64)}"…: it is 5000 UTF-8 bytes, over the limit of 256`,
            "ERROR effect-saga: GET /api/sagas/payout-1 answered 500: RuntimeException: the authentication layer named a principal that cannot be one: its id is undefined, not text",
            "ERROR effect-saga: GET /api/sagas/payout-1 answered 500: RuntimeException: the authentication layer named a principal that cannot be one: its id is a number, not text",
            "ERROR effect-saga: POST /console/login answered 500: Error: the identity provider exploded"
          ])
          expect(snapshot(db)).toBe(before)
        })
      )
  )

  it.scopedLive("a step already answered otherwise is 409 (CommandConflict); nothing is written", () =>
    Effect.gen(function* () {
      const db = freshDb("conflict")
      yield* onDb(db, Saga.run("ship-1", shipping))
      const baseUrl = yield* serveOn(db)
      const api = yield* clientAs(baseUrl, "alice")
      const ship = yield* api.sagas.get({ path: { sagaId: "ship-1" } })
      const stepId = ship.steps.find((step) => step.state === "unknown")!.stepId
      const first = yield* api.operations.resolve({
        path: { sagaId: "ship-1", stepId },
        payload: { revision: ship.saga.revision, digest: ship.saga.digest, outcome: "applied", result: "parcel-1" }
      })
      const before = snapshot(db)
      const error = yield* Effect.flip(
        api.operations.resolve({
          path: { sagaId: "ship-1", stepId },
          payload: { revision: first.revision, digest: first.digest, outcome: "not-applied" }
        })
      )
      expect(error._tag).toBe("Conflict")
      expect(snapshot(db)).toBe(before)
    })
  )

  it.scopedLive("an undo this server holds no tool for is refused (422) before anything is written", () =>
    Effect.gen(function* () {
      const { db, baseUrl } = yield* awaitingPayout("tools", { tools: new Set(["sendWireTransfer"]) })
      const { revision, digest } = yield* awaiting(baseUrl, "payout-1")
      const before = snapshot(db)
      const response = yield* raw(baseUrl, "POST", "/api/sagas/payout-1/compensate", {
        as: "alice",
        body: JSON.stringify({ revision, digest })
      })
      expect(response.status).toBe(422)
      expect((response.body as { message: string }).message).toContain("reserveFunds")
      expect(snapshot(db)).toBe(before)
    })
  )

  it.scopedLive("rejecting a step already approved is refused as the conflict, before any tool is asked for", () =>
    Effect.gen(function* () {
      const { db, baseUrl } = yield* awaitingPayout("tools-approved", { tools: new Set(["sendWireTransfer"]) })
      const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
      const path = `/api/sagas/payout-1/steps/${encoded(stepId)}`
      const approved = yield* raw(baseUrl, "POST", `${path}/approve`, {
        as: "alice",
        body: JSON.stringify({ revision, digest })
      })
      expect(approved.status).toBe(200)
      const before = snapshot(db)
      const { saga } = (yield* raw(baseUrl, "GET", "/api/sagas/payout-1", { as: "bob" })).body as {
        saga: { revision: number; digest: string }
      }
      const response = yield* raw(baseUrl, "POST", `${path}/reject`, {
        as: "bob",
        body: JSON.stringify({ revision: saga.revision, digest: saga.digest, reason: "no" })
      })
      expect(response.status).toBe(409)
      const { message } = response.body as { message: string }
      expect(message).toContain("was already approved by alice: a different command is refused")
      expect(message).not.toContain("reserveFunds")
      expect(snapshot(db)).toBe(before)
    })
  )

  it.scopedLive("rejecting on an edited approvals row is refused as the tampering, before any tool is asked for", () =>
    Effect.gen(function* () {
      const { db, baseUrl } = yield* awaitingPayout("tools-row-edited", { tools: new Set(["sendWireTransfer"]) })
      const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
      edit(db, "UPDATE effect_saga_approvals SET status = 'weird' WHERE saga_id = 'payout-1'")
      const before = snapshot(db)
      const response = yield* raw(baseUrl, "POST", `/api/sagas/payout-1/steps/${encoded(stepId)}/reject`, {
        as: "alice",
        body: JSON.stringify({ revision, digest, reason: "no" })
      })
      expect(response.status).toBe(422)
      const { message } = response.body as { message: string }
      expect(message).toMatch(
        /^journal of saga payout-1 does not verify at seq \d+ \(approval\): approval request payout-1\/\S+ cannot be trusted: the approvals table's row was edited: its status column says "weird"/
      )
      expect(message).not.toContain("reserveFunds")
      expect(snapshot(db)).toBe(before)
    })
  )

  it.scopedLive(
    "a step that changes nothing (a read, a model turn) needs no tool: rejecting its saga is not refused",
    () =>
      Effect.gen(function* () {
        const db = freshDb("reads")
        // A rate lookup no process registers, then the wire transfer: only the transfer's tool is held.
        const lookupRate = Compensable.make({
          name: "lookupRate",
          input: Schema.Struct({ currency: Schema.String }),
          success: Schema.Number,
          changesNothing: true,
          execute: () => Effect.succeed(1.08)
        })
        const quoted = Effect.zipRight(
          lookupRate({ currency: "EUR" }),
          sendWireTransfer({ amount: 4200, to: "DE89 3704 0044 0532 0130 00" })
        )
        yield* onDb(db, Saga.run("quoted-1", quoted))
        const baseUrl = yield* serveOn(db, { tools: new Set(["sendWireTransfer"]) })
        const { stepId, revision, digest } = yield* awaiting(baseUrl, "quoted-1")
        const response = yield* raw(baseUrl, "POST", `/api/sagas/quoted-1/steps/${encoded(stepId)}/reject`, {
          as: "alice",
          body: JSON.stringify({ revision, digest, reason: "no" })
        })
        expect(response.status).toBe(200)
        expect((response.body as { report: { status: string; undone: ReadonlyArray<unknown> } }).report).toMatchObject({
          status: "compensated",
          undone: []
        })
      })
  )

  it.scopedLive("50 clients approve the same step at once: exactly one APPROVED is journaled", () =>
    Effect.gen(function* () {
      const { db, baseUrl } = yield* awaitingPayout("fifty")
      const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
      const answers = yield* Effect.forEach(
        Array.from({ length: 50 }, (_, i): "alice" | "bob" => (i % 2 === 0 ? "alice" : "bob")),
        (who) =>
          clientAs(baseUrl, who).pipe(
            Effect.flatMap((api) =>
              api.approvals.approve({ path: { sagaId: "payout-1", stepId }, payload: { revision, digest } })
            ),
            Effect.either
          ),
        { concurrency: "unbounded" }
      )
      const approved = (yield* phases(db, "payout-1")).filter((phase) => phase === "APPROVED")
      expect(approved).toHaveLength(1)
      const changed = answers.filter((answer) => Either.isRight(answer) && answer.right.changed)
      expect(changed).toHaveLength(1)
      for (const answer of answers) {
        if (Either.isLeft(answer)) expect(answer.left._tag).toBe("Conflict")
        else expect(answer.right.revision).toBe(revision + 1)
      }
    })
  )

  it.scopedLive("serve refuses to start without authentication unless on loopback and told it is insecure", () =>
    Effect.gen(function* () {
      const db = freshDb("insecure")
      yield* onDb(db, Saga.run("payout-1", payout))
      const start = (options: SagaApi.ServeOptions) =>
        Layer.build(SagaApi.serve({ port: 0, ...options }).pipe(Layer.provide(services(db)))).pipe(Effect.flip)
      expect((yield* start({}))._tag).toBe("InsecureServer")
      expect((yield* start({ host: "0.0.0.0", insecure: true }))._tag).toBe("InsecureServer")
      for (const port of [99_999, -1, 1.5]) {
        const error = yield* start({ insecure: true, port })
        expect(error._tag).toBe("ServeError")
        expect(String((error as { cause?: unknown }).cause)).toContain(`port ${port} is not a port`)
      }
      expect(SagaApi.isLoopback("127.0.0.1") && SagaApi.isLoopback("::1") && !SagaApi.isLoopback("10.0.0.1")).toBe(true)
      const baseUrl = yield* serveOn(db, { authentication: undefined, insecure: true })
      const api = yield* clientAs(baseUrl, undefined)
      const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
      yield* api.approvals.approve({ path: { sagaId: "payout-1", stepId }, payload: { revision, digest } })
      const approved = (yield* onDb(
        db,
        Effect.flatMap(Journal.Journal, (journal) => journal.read("payout-1"))
      )).at(-1)
      expect(JSON.parse(approved!.payload!).by).toBe("anonymous")
    })
  )

  it.scopedLive("serve given layerInsecure refuses a non-loopback host as insecure: true does", () =>
    Effect.gen(function* () {
      const db = freshDb("insecure-layer")
      const start = (host: string) =>
        Layer.build(
          SagaApi.serve({ port: 0, host, authentication: SagaApi.layerInsecure }).pipe(Layer.provide(services(db)))
        ).pipe(Effect.flip)
      for (const host of ["0.0.0.0", "::", "10.0.0.1"]) {
        const error = yield* start(host)
        expect(SagaApi.isInsecureServer(error), host).toBe(true)
        expect(error.message).toBe(
          `refusing to serve on ${host}: insecure serving is allowed on a loopback address only`
        )
      }
    })
  )

  it.scopedLive(
    "serve knows layerInsecure however it is composed: a fallback when no tokens are set, a fresh copy",
    () =>
      Effect.gen(function* () {
        const db = freshDb("insecure-composed")
        const noTokens = SagaApi.layerTokens(Config.redacted("EFFECT_SAGA_TEST_NO_SUCH_TOKENS"))
        const composed = [
          ["Layer.orElse(layerTokens(), () => layerInsecure)", Layer.orElse(noTokens, () => SagaApi.layerInsecure)],
          ["Layer.fresh(layerInsecure)", Layer.fresh(SagaApi.layerInsecure)]
        ] as const
        for (const [name, authentication] of composed) {
          const refused = yield* Layer.build(
            SagaApi.serve({ port: 0, host: "0.0.0.0", authentication }).pipe(Layer.provide(services(db)))
          ).pipe(Effect.flip)
          expect(SagaApi.isInsecureServer(refused), name).toBe(true)
          // On a loopback address it serves, and answers only a loopback Host, as insecure: true does.
          const server = yield* Layer.build(
            SagaApi.serve({ port: 0, authentication }).pipe(Layer.provide(services(db)))
          ).pipe(Effect.map((context) => Context.get(context, HttpServer.HttpServer)))
          assert(server.address._tag === "TcpAddress")
          const status = (host: string) => statusWithHost(server.address as HttpServer.TcpAddress, host)
          expect(yield* status("attacker.example"), name).toBe(403)
          expect(yield* status("localhost"), name).toBe(200)
        }
      })
  )

  it.scopedLive("serve and layerWith refuse options they cannot work with when built; tools may be an array", () =>
    Effect.gen(function* () {
      const db = freshDb("options")
      yield* onDb(db, Saga.run("payout-1", payout))
      const start = (options: object) =>
        Layer.build(
          SagaApi.serve({ port: 0, insecure: true, ...(options as SagaApi.ServeOptions) }).pipe(
            Layer.provide(services(db))
          )
        ).pipe(Effect.flip)
      const refusals = [
        [{ tools: "reserveFunds" }, 'tools is "reserveFunds", not a list: give an array or a Set of the tools\' names'],
        [{ tools: 42 }, "tools is 42, not a list: give an array or a Set of the tools' names"],
        [{ tools: ["reserveFunds", 7] }, "tools holds a number at index 1: give the tools' names, as text"],
        ...[Number.POSITIVE_INFINITY, Number.NaN, -5, 0, 1.5].map(
          (bytes) =>
            [
              { maxBodyBytes: bytes },
              `maxBodyBytes is ${bytes}, not a limit: give a whole number of bytes, 1 or more`
            ] as const
        ),
        [{ maxBodyBytes: "big" }, 'maxBodyBytes is "big", not a limit: give a whole number of bytes, 1 or more'],
        // A misspelled option is refused, not ignored for its default.
        [
          { maxBodyByte: 1 },
          'options name "maxBodyByte", which is no option: the options are tools, maxBodyBytes, host, port, authentication, insecure'
        ]
      ] as const
      for (const [options, reason] of refusals) {
        const error = yield* start(options)
        expect(error._tag, JSON.stringify(options)).toBe("InvalidApiOptions")
        expect(error.message).toBe(`SagaApi.layerWith: ${reason}`)
      }
      const withOptions = (options: unknown) =>
        SagaApi.layerWith(options as SagaApi.Options).pipe(
          Layer.provide(
            Layer.merge(
              services(db),
              SagaApi.layerAuthentication(() => Effect.succeed(undefined))
            )
          )
        )
      for (const [options, reason] of [
        [{ maxBodyByte: 1 }, 'options name "maxBodyByte", which is no option: the options are tools, maxBodyBytes'],
        [{ tools: [], port: 80 }, 'options name "port", which is no option: the options are tools, maxBodyBytes'],
        ["x", "options are a string, not an object: give { tools, maxBodyBytes }"]
      ] as const) {
        const error = yield* Effect.flip(Effect.scoped(Layer.build(withOptions(options))))
        expect(error).toMatchObject({ _tag: "InvalidApiOptions", option: "options" })
        expect(error.message).toBe(`SagaApi.layerWith: ${reason}`)
      }
      // From JavaScript: no options at all are the defaults.
      for (const none of [undefined, null]) {
        expect(yield* Effect.exit(Effect.scoped(Layer.build(withOptions(none))))).toMatchObject({
          _tag: "Success"
        })
      }
      const host = yield* Effect.sync(() => start({ host: 42 })).pipe(Effect.flatten)
      expect(host._tag).toBe("ServeError")
      expect(String((host as { cause?: unknown }).cause)).toBe(
        "TypeError: host 42 is not a host: give an address or a name, as text"
      )
      const port = yield* start({ port: "8081" })
      expect(String((port as { cause?: unknown }).cause)).toBe(
        'RangeError: port "8081" is not a port: give a whole number, 0–65535 (0 picks a free one)'
      )

      const baseUrl = yield* serveOn(db, { tools: ["sendWireTransfer"], maxBodyBytes: 4096 })
      const { revision, digest } = yield* awaiting(baseUrl, "payout-1")
      const before = snapshot(db)
      const refused = yield* raw(baseUrl, "POST", "/api/sagas/payout-1/compensate", {
        as: "alice",
        body: JSON.stringify({ revision, digest })
      })
      expect(refused.status).toBe(422)
      expect((refused.body as { message: string }).message).toContain("reserveFunds")
      const large = yield* raw(baseUrl, "POST", "/api/sagas/payout-1/compensate", {
        as: "alice",
        body: JSON.stringify({ revision, digest, pad: "x".repeat(5000) })
      })
      expect(large).toEqual({
        status: 413,
        body: { _tag: "TooLarge", message: "the body is over the limit of 4096 bytes; nothing was written" }
      })
      expect(snapshot(db)).toBe(before)
    })
  )

  it.scopedLive(
    "a server without an irreversible step's tool compensates its saga: the step is skipped, not refused",
    () =>
      Effect.gen(function* () {
        const { db, baseUrl } = yield* awaitingPayout("irreversible-tool", { tools: ["reserveFunds"] })
        const api = yield* clientAs(baseUrl, "alice")
        const waiting = yield* api.sagas.get({ path: { sagaId: "payout-1" } })
        yield* api.approvals.approve({
          path: { sagaId: "payout-1", stepId: waiting.steps[1]!.stepId },
          payload: { revision: waiting.saga.revision, digest: waiting.saga.digest }
        })
        expect((yield* onDb(db, Saga.resume("payout-1", payout)))._tag).toBe("Completed")
        const done = yield* api.sagas.get({ path: { sagaId: "payout-1" } })
        expect(done.steps.map((step) => [step.toolName, step.irreversible])).toEqual([
          ["reserveFunds", undefined],
          ["sendWireTransfer", true]
        ])
        const compensated = yield* raw(baseUrl, "POST", "/api/sagas/payout-1/compensate", {
          as: "alice",
          body: JSON.stringify({ revision: done.saga.revision, digest: done.saga.digest })
        })
        expect(compensated.status).toBe(200)
        expect(yield* phases(db, "payout-1")).toContain("SKIPPED")
        expect((yield* api.sagas.get({ path: { sagaId: "payout-1" } })).saga.status).toBe("compensated")
      })
  )

  it.scopedLive("a defect while a body is read is logged and answered 500 with the API's error body", () =>
    logged((lines) =>
      Effect.gen(function* () {
        const db = freshDb("body-defect")
        yield* onDb(db, Saga.run("payout-1", payout))
        // A limit the checked options never let through: reading the body under it dies.
        const app = guard.layer.pipe(
          Layer.provideMerge(
            HttpApiBuilder.api(SagaApi.Api).pipe(
              Layer.provide(handlers.layer({})),
              Layer.provide(body.layer(Number.POSITIVE_INFINITY))
            )
          )
        )
        const context = yield* Layer.build(
          server.serve(app, { port: 0, authentication: SagaApi.layerInsecure }).pipe(Layer.provide(services(db)))
        )
        const address = Context.get(context, HttpServer.HttpServer).address as HttpServer.TcpAddress
        const baseUrl = `http://127.0.0.1:${address.port}`
        const { revision, digest } = yield* awaiting(baseUrl, "payout-1")
        const answer = yield* raw(baseUrl, "POST", "/api/sagas/payout-1/compensate", {
          body: JSON.stringify({ revision, digest })
        })
        expect(answer).toEqual({
          status: 500,
          body: {
            _tag: "Internal",
            message: "the server could not answer this request: its log says why (nothing in this answer does)"
          }
        })
        expect(lines).toEqual([
          expect.stringMatching(/^ERROR effect-saga: POST \/api\/sagas\/payout-1\/compensate answered 500: /)
        ])
      })
    )
  )

  it.scopedLive("the OpenAPI document is served and validates; the docs page loads with its assets inline", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* awaitingPayout("openapi")
      const document = (yield* raw(baseUrl, "GET", "/api/openapi.json")).body as OpenApi.OpenAPISpec
      expect(document).toEqual(JSON.parse(JSON.stringify(OpenApi.fromApi(SagaApi.Api))))
      expect(document.openapi).toBe("3.1.0")
      // The version it describes is the package's, as the CLI's --version says.
      expect(document.info.version).toBe(JSON.parse(fs.readFileSync("package.json", "utf8")).version)
      const operations = Object.entries(document.paths).flatMap(([path, item]) =>
        Object.entries(item as Record<string, OpenApi.OpenAPISpecOperation>).map(([method, op]) => ({
          path,
          method,
          op
        }))
      )
      expect(operations).toHaveLength(10)
      for (const { path, method, op } of operations) {
        expect(op.responses["200"]?.content?.["application/json"]?.schema, `${method} ${path}`).toBeDefined()
        for (const status of ["400", "401", "403", "404", "409", "413", "422"]) {
          expect((op.responses as Record<string, unknown>)[status], `${method} ${path} ${status}`).toBeDefined()
        }
        if (method === "post") expect(op.requestBody?.content["application/json"]?.schema).toBeDefined()
        expect(op.security).toEqual([{ bearer: [] }])
      }
      const refs = Array.from(JSON.stringify(document).matchAll(/"#\/components\/schemas\/([^"]+)"/g), (match) =>
        match[1]!.replaceAll("~1", "/").replaceAll("~0", "~")
      )
      expect(refs.length).toBeGreaterThan(0)
      for (const ref of refs) expect(Object.keys(document.components.schemas)).toContain(ref)
      const docs = yield* raw(baseUrl, "GET", "/api/docs")
      expect(docs.status).toBe(200)
      expect(String(docs.body)).toContain("SwaggerUIBundle")
      expect(String(docs.body)).not.toMatch(/<(script|link)[^>]+(src|href)="https?:/)
    })
  )
})

/** The status of `GET /api/sagas` with `host` as its `Host` header (fetch would not send another). */
const statusWithHost = (address: HttpServer.TcpAddress, host: string) =>
  Effect.async<number>((resume) => {
    const request = NodeHttp.request(
      { host: "127.0.0.1", port: address.port, path: "/api/sagas", headers: { host } },
      (response) => {
        response.resume()
        resume(Effect.succeed(response.statusCode ?? 0))
      }
    )
    request.on("error", (error) => resume(Effect.die(error)))
    request.end()
  })
