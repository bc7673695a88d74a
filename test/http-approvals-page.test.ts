/**
 * `GET /api/approvals` pages the sagas with something waiting (`offset`, `limit`; default 50, at
 * most 500): its answer stays an array, `X-Total-Count` counts every waiting saga, bad parameters
 * are 400 as for `GET /api/sagas`, the typed client's `pending()` still takes no argument, and the
 * console's inbox links its pages (a page past the last says how many wait and links back to the last).
 */
import * as OpenApi from "@effect/platform/OpenApi"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Saga } from "../src/index.js"
import * as Pages from "../src/internal/http/console/pages.js"
import * as SagaApi from "../src/SagaApi.js"
import { clientAs, consoleCookie, freshDb, onDb, payout, raw, serveOn, tokens } from "./fixtures/http-saga.js"

/** Three sagas awaiting approval of their wire transfer, served over a fresh SQLite file. */
const threeWaiting = (name: string) =>
  Effect.gen(function* () {
    const db = freshDb(name)
    yield* onDb(
      db,
      Effect.forEach(["payout-1", "payout-2", "payout-3"], (sagaId) => Saga.run(sagaId, payout), { discard: true })
    )
    return yield* serveOn(db)
  })

const get = (baseUrl: string, path: string, headers: Record<string, string>) =>
  Effect.promise(async () => {
    const response = await fetch(`${baseUrl}${path}`, { headers })
    return { status: response.status, total: response.headers.get("x-total-count"), text: await response.text() }
  })

const asAlice = { authorization: `Bearer ${tokens.alice}` }

describe("GET /api/approvals, a page at a time", { timeout: 30_000 }, () => {
  it.scopedLive("limit and offset page the waiting sagas; the answer is an array, X-Total-Count counts all", () =>
    Effect.gen(function* () {
      const baseUrl = yield* threeWaiting("approvals-page")
      const sagasOf = (text: string) => (JSON.parse(text) as Array<{ sagaId: string }>).map((request) => request.sagaId)
      const whole = yield* get(baseUrl, "/api/approvals", asAlice)
      expect([whole.status, whole.total, sagasOf(whole.text)]).toEqual([200, "3", ["payout-1", "payout-2", "payout-3"]])
      const first = yield* get(baseUrl, "/api/approvals?limit=2", asAlice)
      expect([first.status, first.total, sagasOf(first.text)]).toEqual([200, "3", ["payout-1", "payout-2"]])
      const rest = yield* get(baseUrl, "/api/approvals?limit=2&offset=2", asAlice)
      expect([rest.status, rest.total, sagasOf(rest.text)]).toEqual([200, "3", ["payout-3"]])
      const past = yield* get(baseUrl, "/api/approvals?offset=9", asAlice)
      expect([past.status, past.total, sagasOf(past.text)]).toEqual([200, "3", []])
      // The typed client's call written before the page existed still works, and reads the first page.
      const api = yield* clientAs(baseUrl, "alice")
      expect((yield* api.approvals.pending()).map((request) => request.sagaId)).toEqual([
        "payout-1",
        "payout-2",
        "payout-3"
      ])
      const [requests, response] = yield* api.approvals.pending({ withResponse: true })
      expect([requests.length, response.headers["x-total-count"]]).toEqual([3, "3"])
    })
  )

  it.scopedLive("a limit or offset off its schema is 400 Malformed, as for GET /api/sagas", () =>
    Effect.gen(function* () {
      const baseUrl = yield* threeWaiting("approvals-page-bad")
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["limit=0", "invalid limit: expected a number between 1 and 500, got 0; nothing was written"],
        ["limit=501", "invalid limit: expected a number between 1 and 500, got 501; nothing was written"],
        ["limit=abc", 'invalid limit: expected a whole number in decimal digits, got "abc"; nothing was written'],
        ["limit=2.5", 'invalid limit: expected a whole number in decimal digits, got "2.5"; nothing was written'],
        ["limit=0x10", 'invalid limit: expected a whole number in decimal digits, got "0x10"; nothing was written'],
        ["limit=1e2", 'invalid limit: expected a whole number in decimal digits, got "1e2"; nothing was written'],
        ["limit=%2050", 'invalid limit: expected a whole number in decimal digits, got " 50"; nothing was written'],
        ["offset=-1", 'invalid offset: expected a whole number in decimal digits, got "-1"; nothing was written']
      ]
      for (const [query, message] of cases) {
        const answer = yield* raw(baseUrl, "GET", `/api/approvals?${query}`, { as: "alice" })
        const sagas = yield* raw(baseUrl, "GET", `/api/sagas?${query}`, { as: "alice" })
        expect([query, answer]).toEqual([query, { status: 400, body: { _tag: "Malformed", message } }])
        expect(sagas).toEqual(answer)
      }
      // Without a token it is 401 before the parameters are looked at.
      expect((yield* raw(baseUrl, "GET", "/api/approvals?limit=0")).status).toBe(401)
    })
  )

  it("the OpenAPI document lists offset and limit, as integers on both pages", () => {
    const { paths } = OpenApi.fromApi(SagaApi.Api)
    const operation = paths["/api/approvals"]?.get
    expect(operation?.parameters?.map((parameter) => "name" in parameter && parameter.name)).toEqual([
      "offset",
      "limit"
    ])
    const typeOf = (path: string, name: string) => {
      const parameter = paths[path]?.get?.parameters?.find((one) => "name" in one && one.name === name)
      const { type, minimum, maximum } = (parameter as unknown as { schema: Record<string, unknown> }).schema
      return { type, minimum, maximum }
    }
    for (const path of ["/api/approvals", "/api/sagas"]) {
      expect(typeOf(path, "offset"), path).toEqual({ type: "integer", minimum: 0, maximum: undefined })
      expect(typeOf(path, "limit"), path).toEqual({ type: "integer", minimum: 1, maximum: 500 })
    }
    // The statuses GET /api/sagas filters by are named, not "a string that will be split".
    const status = paths["/api/sagas"]?.get?.parameters?.find((one) => "name" in one && one.name === "status")
    expect(JSON.stringify(status)).toContain("compensation_failed")
  })

  it.scopedLive("/api/openapi.json declares X-Total-Count on GET /api/approvals's 200 answer, and keeps its body", () =>
    Effect.gen(function* () {
      const baseUrl = yield* threeWaiting("approvals-page-openapi")
      const document = (yield* raw(baseUrl, "GET", "/api/openapi.json")).body as OpenApi.OpenAPISpec
      const answers = document.paths["/api/approvals"]?.get?.responses as unknown as Record<
        string,
        Record<string, unknown>
      >
      expect(answers["200"]?.headers).toEqual({
        "X-Total-Count": {
          description: "how many sagas have a request waiting, in all (the answer holds one page of them)",
          required: true,
          schema: { type: "integer", minimum: 0 }
        }
      })
      expect(answers["200"]?.content).toEqual(
        JSON.parse(JSON.stringify(OpenApi.fromApi(SagaApi.Api).paths["/api/approvals"]?.get?.responses[200]?.content))
      )
      // Every other answer is still there, as on GET /api/sagas.
      expect(Object.keys(answers)).toEqual(Object.keys(document.paths["/api/sagas"]?.get?.responses ?? {}))
      // No other answer declares it: `GET /api/sagas` counts in its body.
      expect(JSON.stringify(document).match(/X-Total-Count"/g)).toHaveLength(1)
    })
  )

  it.scopedLive("the console's inbox shows a page, and links the one before it", () =>
    Effect.gen(function* () {
      const baseUrl = yield* threeWaiting("approvals-page-console")
      const page = yield* get(baseUrl, "/console?offset=1", {
        cookie: yield* Effect.promise(() => consoleCookie(baseUrl))
      })
      expect(page.status).toBe(200)
      expect(page.text).toContain("(2 waiting; sagas 2–3 of 3)")
      expect(page.text).toContain('<a rel="prev" href="/console">previous 50</a>')
      expect(page.text).not.toContain("payout-1/")
      expect(page.text).not.toContain('rel="next"')
    })
  )

  it.scopedLive("the console's inbox past its last page says how many wait, none shown, and links the last page", () =>
    Effect.gen(function* () {
      const baseUrl = yield* threeWaiting("approvals-page-console-past")
      for (const offset of [3, 5000]) {
        const page = yield* get(baseUrl, `/console?offset=${offset}`, {
          cookie: yield* Effect.promise(() => consoleCookie(baseUrl))
        })
        expect(page.status).toBe(200)
        expect(page.text).toContain("(3 saga(s) with something waiting, none shown)")
        expect(page.text).not.toContain("No approval is waiting.")
        expect(page.text).not.toContain("sagas 3–3 of 3")
        expect(page.text).toContain('<a rel="prev" href="/console">last page</a>')
        expect(page.text).not.toContain('rel="next"')
      }
    })
  )
})

/** The links of a page's pager, as `rel` and `href`. */
const linksOf = (html: string) =>
  Array.from(html.matchAll(/<a rel="(prev|next)" href="([^"]*)">([^<]*)<\/a>/g), ([, rel, href, text]) => ({
    rel,
    href,
    text
  }))

describe("the console's lists past their last page", () => {
  it("the inbox: 301 waiting, offset 301 or 5000: none shown, nothing claims none wait, back to the last page", () => {
    for (const offset of [301, 5000]) {
      const html = Pages.inbox([], { total: 301, offset, limit: 50 })
      expect(html).toContain("(301 saga(s) with something waiting, none shown)")
      expect(html).not.toContain("No approval is waiting.")
      expect(html).not.toContain("301–301")
      expect(linksOf(html)).toEqual([{ rel: "prev", href: "/console?offset=300", text: "last page" }])
    }
    // The last page itself is as before.
    const last = Pages.inbox([], { total: 301, offset: 300, limit: 50 })
    expect(last).toContain("sagas 301–301 of 301")
    expect(linksOf(last)).toEqual([{ rel: "prev", href: "/console?offset=250", text: "previous 50" }])
  })

  it("the inbox with nothing waiting: past the end it says so, and links the first page", () => {
    const html = Pages.inbox([], { total: 0, offset: 50, limit: 50 })
    expect(html).toContain("(0 waiting)")
    expect(html).toContain("No approval is waiting.")
    expect(linksOf(html)).toEqual([{ rel: "prev", href: "/console", text: "first page" }])
  })

  it("the sagas: offset 9000 of 3005 says none shown and links back to the last page, keeping the filter", () => {
    const html = Pages.sagas({ sagas: [], total: 3005, offset: 9000, limit: 500 }, { status: "completed", search: "" })
    expect(html).toContain("3005 saga(s), none shown")
    expect(linksOf(html)).toEqual([
      { rel: "prev", href: "/console/sagas?status=completed&amp;offset=3000", text: "last page" }
    ])
  })
})

describe("the console shows what would reorder or hide text as its escape, as the CLI does", () => {
  const override = "\u202e"
  const request = {
    requestId: `r-${override}1`,
    sagaId: `order-${override}1-fdp`,
    stepId: "sendWire:abc#1",
    toolName: "sendWire",
    input: JSON.stringify({ to: `DE89 3704 ${override}00 0310 2350 4400`, note: "a\u2028b\u0007c" }),
    inputDigest: "0".repeat(64),
    requestedAt: "2026-12-04T10:00:00.000Z",
    revision: 3,
    digest: "f".repeat(64),
    tampered: null,
    settled: null
  }

  it("the inbox: the payee's IBAN and the saga id are shown escaped; the forms still send the exact saga id", () => {
    const html = Pages.inbox([request])
    expect(html).toContain("DE89 3704 \\u202e00 0310 2350 4400")
    expect(html).toContain("a\\u2028b\\u0007c")
    expect(html).toContain(">order-\\u202e1-fdp</a>")
    // Only the hidden fields the forms post back keep the character itself.
    const raw = Array.from(html.matchAll(/(?![\n\t])[\u202e\u2028\p{Cc}]/gu), (match) =>
      html.slice(match.index - 60, match.index)
    )
    expect(raw.length).toBeGreaterThan(0)
    for (const before of raw) expect(before).toMatch(/<input type="hidden" name="sagaId" value="order-$/)
  })

  it("the inbox: a bidi mark (U+200F) in the saga id and the input is shown as its escape, as an override is", () => {
    const mark = "\u200f"
    const html = Pages.inbox([
      { ...request, sagaId: `order-${mark}1`, input: JSON.stringify({ to: `DE89 ${mark}3704` }) }
    ])
    expect(html).toContain("DE89 \\u200f3704")
    expect(html).toContain(">order-\\u200f1</a>")
    const raw = Array.from(html.matchAll(/\u200f/gu), (match) => html.slice(match.index - 60, match.index))
    for (const before of raw) expect(before).toMatch(/<input type="hidden" name="sagaId" value="order-$/)
  })

  it("two requests whose ids differ only by a character and its escape written out get two element ids", () => {
    const spelled = { ...request, requestId: "r-\\u202e1" }
    const html = Pages.inbox([request, spelled])
    const ids = Array.from(html.matchAll(/ id="(req-[^"]*)"/g), (match) => match[1])
    expect(ids).toHaveLength(2)
    expect(new Set(ids).size).toBe(2)
    for (const id of ids) expect(html).toContain(`aria-labelledby="${id}"`)
  })

  it("the saga list: the id is shown escaped, its link and the search field keep it exact", () => {
    const html = Pages.sagas(
      {
        sagas: [
          {
            sagaId: request.sagaId,
            status: "awaiting_approval",
            revision: 3,
            digest: request.digest,
            createdAt: request.requestedAt,
            updatedAt: request.requestedAt,
            tampered: null
          } as never
        ],
        total: 1,
        offset: 0,
        limit: 50
      },
      { status: "", search: `${override}1` }
    )
    expect(html).toContain(`<a href="/console/sagas/${encodeURIComponent(request.sagaId)}">order-\\u202e1-fdp</a>`)
    expect(html).toContain(`name="search" value="${override}1"`)
  })
})
