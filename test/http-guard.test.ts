import * as http from "node:http"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Saga } from "../src/index.js"
import * as SagaApi from "../src/SagaApi.js"
import { awaiting, freshDb, onDb, payout, reserveFunds, serveOn, snapshot, tokens } from "./fixtures/http-saga.js"

interface Sent {
  readonly method?: string
  /** The request target exactly as written on the request line (`/API/…`, `//api/…`, `http://…/api/…`). */
  readonly target: string
  readonly headers?: Record<string, string>
  readonly body?: string
}

interface Received {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly text: string
  readonly body: unknown
}

/** A request sent by Node's HTTP client, its target and headers as given (fetch would normalize them). */
const send = (baseUrl: string, sent: Sent) =>
  Effect.async<Received>((resume) => {
    const { hostname, port } = new URL(baseUrl)
    const request = http.request(
      { hostname, port, method: sent.method ?? "POST", path: sent.target, headers: sent.headers ?? {} },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          let body: unknown = text
          try {
            body = JSON.parse(text)
          } catch {}
          resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, text, body }))
        })
      }
    )
    request.on("error", (error) => resume(Effect.die(error)))
    request.end(sent.body)
  })

const json = { "content-type": "application/json" }
const as = (who: keyof typeof tokens) => ({ authorization: `Bearer ${tokens[who]}` })

/** A saga awaiting approval of its wire transfer, served with a body limit of 200 bytes; what it takes to approve it. */
const servedPayout = (name: string) =>
  Effect.gen(function* () {
    const db = freshDb(name)
    yield* onDb(db, Saga.run("payout-1", payout))
    const baseUrl = yield* serveOn(db, { maxBodyBytes: 200 })
    const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
    return {
      db,
      baseUrl,
      stepId,
      revision,
      digest,
      approve: `/sagas/payout-1/steps/${encodeURIComponent(stepId)}/approve`
    }
  })

describe("what the server checks before an endpoint's handler", { timeout: 30_000 }, () => {
  it.scopedLive(
    "the body limit and the JSON check hold however the target is written (/API/, //api/, absolute form, %61pi)",
    () =>
      Effect.gen(function* () {
        const { db, baseUrl, revision, digest } = yield* servedPayout("target-forms")
        const before = snapshot(db)
        const large = JSON.stringify({ revision, digest, pad: "a".repeat(4000) })
        for (const prefix of ["/api", "/API", "//api", "/Api/", `${baseUrl}/api`, "/%61pi"]) {
          const target = `${prefix}/sagas/payout-1/compensate`.replace("//sagas", "/sagas")
          const over = yield* send(baseUrl, { target, headers: { ...json, ...as("alice") }, body: large })
          expect([target, over.status, over.body]).toEqual([
            target,
            413,
            { _tag: "TooLarge", message: "the body is over the limit of 200 bytes; nothing was written" }
          ])
          const text = yield* send(baseUrl, {
            target,
            headers: { "content-type": "text/plain", ...as("alice") },
            body: JSON.stringify({ revision, digest })
          })
          expect([target, text.status, (text.body as { _tag: string })._tag]).toEqual([target, 400, "Malformed"])
        }
        expect(snapshot(db)).toBe(before)
      })
  )

  it.scopedLive("a caller without a valid token is 401 before its body is read, with WWW-Authenticate: Bearer", () =>
    Effect.gen(function* () {
      const { db, baseUrl, revision, digest, approve } = yield* servedPayout("unauthenticated")
      const before = snapshot(db)
      const callers: ReadonlyArray<[string, Record<string, string>]> = [
        ["no token", {}],
        ["a wrong token", { authorization: "Bearer wrong-token" }]
      ]
      const bodies: ReadonlyArray<[string, string, Record<string, string>]> = [
        ["not JSON", "{x", json],
        ["over the limit", JSON.stringify({ revision, digest, pad: "a".repeat(4000) }), json],
        ["not sent as JSON", "a=1", { "content-type": "application/x-www-form-urlencoded" }],
        ["a valid command", JSON.stringify({ revision, digest }), json]
      ]
      for (const [who, authorization] of callers) {
        for (const [what, body, type] of bodies) {
          const answer = yield* send(baseUrl, {
            target: `/api${approve}`,
            headers: { ...type, ...authorization },
            body
          })
          expect([who, what, answer.status, answer.headers["www-authenticate"], answer.body]).toEqual([
            who,
            what,
            401,
            "Bearer",
            { _tag: "Unauthenticated", message: "no valid bearer token: send Authorization: Bearer <token>" }
          ])
        }
      }
      const read = yield* send(baseUrl, { method: "GET", target: "/api/sagas" })
      expect([read.status, read.headers["www-authenticate"]]).toEqual([401, "Bearer"])
      expect(snapshot(db)).toBe(before)
    })
  )

  it.scopedLive("a body sent without a Content-Type, or an empty one, is 400 and nothing is written", () =>
    Effect.gen(function* () {
      const { db, baseUrl, revision, digest, approve } = yield* servedPayout("no-content-type")
      const before = snapshot(db)
      const untyped = yield* send(baseUrl, {
        target: `/api${approve}`,
        headers: as("alice"),
        body: JSON.stringify({ revision, digest })
      })
      expect([untyped.status, untyped.body]).toEqual([
        400,
        {
          _tag: "Malformed",
          message: "the body must be JSON, sent with Content-Type: application/json; nothing was written"
        }
      ])
      const lookalike = yield* send(baseUrl, {
        target: `/api${approve}`,
        headers: { "content-type": "text/plain; note=application/json", ...as("alice") },
        body: JSON.stringify({ revision, digest })
      })
      expect(lookalike.status).toBe(400)
      const empty = yield* send(baseUrl, { target: `/api${approve}`, headers: { ...json, ...as("alice") } })
      expect([empty.status, empty.body]).toEqual([
        400,
        { _tag: "Malformed", message: "the body is empty: send a JSON object; nothing was written" }
      ])
      expect(snapshot(db)).toBe(before)
      const typed = yield* send(baseUrl, {
        target: `/api${approve}`,
        headers: { "content-type": "Application/JSON; charset=utf-8", ...as("alice") },
        body: JSON.stringify({ revision, digest })
      })
      expect(typed.status).toBe(200)
    })
  )

  it.scopedLive(
    `a body nested deeper than ${SagaApi.MAX_JSON_DEPTH} levels is 400 before it is decoded, never 500; one at the limit is decoded`,
    () =>
      Effect.gen(function* () {
        const db = freshDb("deep")
        yield* onDb(db, Saga.run("payout-1", payout))
        const baseUrl = yield* serveOn(db)
        const { stepId, revision } = yield* awaiting(baseUrl, "payout-1")
        const before = snapshot(db)
        const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`
        const post = (body: string) =>
          send(baseUrl, {
            target: `/api/sagas/payout-1/steps/${encodeURIComponent(stepId)}/approve`,
            headers: { ...json, ...as("alice") },
            body
          })
        for (const levels of [3000, SagaApi.MAX_JSON_DEPTH]) {
          // The body's object is a level: its digest nests one fewer.
          const answer = yield* post(`{"revision":${revision},"digest":${nested(levels)}}`)
          expect([levels, answer.status, answer.body]).toEqual([
            levels,
            400,
            {
              _tag: "Malformed",
              message: `the body nests arrays and objects deeper than ${SagaApi.MAX_JSON_DEPTH} levels; nothing was written`
            }
          ])
        }
        const atLimit = yield* post(`{"revision":${revision},"digest":${nested(SagaApi.MAX_JSON_DEPTH - 1)}}`)
        expect([atLimit.status, atLimit.body]).toEqual([
          400,
          { _tag: "Malformed", message: expect.stringMatching(/^invalid digest: expected string, got \[\[\[/) }
        ])
        // Brackets inside a string are text, not depth.
        const inText = yield* post(JSON.stringify({ revision, digest: "[".repeat(200) }))
        expect(inText.status).toBe(409)
        expect(snapshot(db)).toBe(before)
      })
  )

  it.scopedLive(
    "a path segment over MAX_PATH_PARAMETER_LENGTH as sent is 400 with the API's body; a path of the API no endpoint answers is a JSON 404",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* servedPayout("targets")
        const get = (target: string) => send(baseUrl, { method: "GET", target, headers: as("alice") })
        const max = SagaApi.MAX_PATH_PARAMETER_LENGTH
        for (const sagaId of ["%41".repeat(2000), "A".repeat(max + 1), `${"%C3%A9".repeat(600)}`]) {
          const answer = yield* get(`/api/sagas/${sagaId}`)
          expect([answer.status, answer.body]).toEqual([
            400,
            {
              _tag: "Malformed",
              message: `a segment of the path is ${sagaId.length} characters as sent, over the limit of ${max} (no id is that long); nothing was written`
            }
          ])
        }
        // At the limit as sent (the longest id the engine reads, each byte encoded), the id reaches the engine.
        const atLimit = yield* get(`/api/sagas/${"%41".repeat(max / 3)}`)
        expect([atLimit.status, atLimit.body]).toEqual([
          404,
          { _tag: "NotFound", message: `no saga "${"A".repeat(64)}"… in the journal` }
        ])
        for (const [target, shown] of [
          ["/api/nope", "/api/nope"],
          ["/API/sagas/payout-1/nope", "/API/sagas/payout-1/nope"],
          ["/api/sagas/%zz", "/api/sagas/%zz"]
        ]) {
          const answer = yield* get(target!)
          expect([target, answer.status, answer.body]).toEqual([
            target,
            404,
            {
              _tag: "NotFound",
              message: `no endpoint answers GET "${shown}": the endpoints are listed at /api/docs`
            }
          ])
        }
        const console = yield* send(baseUrl, { method: "GET", target: `/console/sagas/${"A".repeat(max + 1)}` })
        expect([console.status, console.headers["content-type"]]).toEqual([400, "text/plain"])
        expect(console.text).toMatch(/^a segment of the path is 3073 characters as sent/)
      })
  )
})

describe("serve without authentication, on a loopback address", { timeout: 30_000 }, () => {
  it.scopedLive(
    "answers only requests sent to localhost, 127.0.0.1 or [::1]: another Host is 403, a console form from it too (DNS rebinding)",
    () =>
      Effect.gen(function* () {
        const db = freshDb("rebinding")
        yield* onDb(db, Saga.run("payout-1", payout))
        const baseUrl = yield* serveOn(db, { authentication: undefined, insecure: true })
        const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
        const port = new URL(baseUrl).port
        const before = snapshot(db)
        const rebound = { host: `attacker.example:${port}`, origin: `http://attacker.example:${port}` }
        const refusal = `this server runs without authentication and answers only requests sent to localhost, 127.0.0.1 or [::1]: Host "attacker.example:${port}" is not one`
        const read = yield* send(baseUrl, { method: "GET", target: "/api/sagas", headers: rebound })
        expect([read.status, read.body]).toEqual([403, { _tag: "Forbidden", message: refusal }])
        // An answer under /api, as every other: not sniffed, not cached.
        expect(read.headers).toMatchObject({ "x-content-type-options": "nosniff", "cache-control": "no-store" })
        const reject = yield* send(baseUrl, {
          target: `/api/sagas/payout-1/steps/${encodeURIComponent(stepId)}/reject`,
          headers: { ...json, ...rebound },
          body: JSON.stringify({ revision, digest, reason: "rebound" })
        })
        expect([reject.status, reject.body]).toEqual([403, { _tag: "Forbidden", message: refusal }])
        const form = yield* send(baseUrl, {
          target: "/console/approve",
          headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin", ...rebound },
          body: new URLSearchParams({ sagaId: "payout-1", stepId, revision: String(revision), digest }).toString()
        })
        expect([form.status, form.text]).toEqual([403, refusal])
        const page = yield* send(baseUrl, { method: "GET", target: "/console", headers: rebound })
        expect(page.status).toBe(403)
        expect(snapshot(db)).toBe(before)
        for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, "LOCALHOST"]) {
          const answer = yield* send(baseUrl, { method: "GET", target: "/api/sagas", headers: { host } })
          expect([host, answer.status]).toEqual([host, 200])
        }
      })
  )

  it.scopedLive("with tokens, the Host is not what lets a caller in: the token is", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* servedPayout("tokens-any-host")
      const answer = yield* send(baseUrl, {
        method: "GET",
        target: "/api/sagas",
        headers: { host: "sagas.example.com", ...as("alice") }
      })
      expect(answer.status).toBe(200)
    })
  )
})

describe("GET /api/sagas's filters", { timeout: 30_000 }, () => {
  it.scopedLive("combine: a saga is listed when it passes every one (status and awaitingApproval too)", () =>
    Effect.gen(function* () {
      const db = freshDb("filters")
      yield* onDb(db, Effect.all([Saga.run("payout-1", payout), Saga.run("done-1", reserveFunds({ amount: 1 }))]))
      const baseUrl = yield* serveOn(db)
      const listed = (query: string) =>
        Effect.map(send(baseUrl, { method: "GET", target: `/api/sagas?${query}`, headers: as("alice") }), (answer) =>
          (answer.body as { sagas: ReadonlyArray<{ sagaId: string }> }).sagas.map((saga) => saga.sagaId)
        )
      expect(yield* listed("status=completed")).toEqual(["done-1"])
      expect(yield* listed("awaitingApproval=true")).toEqual(["payout-1"])
      expect(yield* listed("status=completed&awaitingApproval=true")).toEqual([])
      expect(yield* listed("status=completed,awaiting_approval&awaitingApproval=true")).toEqual(["payout-1"])
      expect(yield* listed("status=completed,awaiting_approval&awaitingApproval=false")).toEqual(["payout-1", "done-1"])
    })
  )
})
