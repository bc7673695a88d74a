/**
 * A console list's `offset` and `limit` are read as `GET /api/sagas` and `GET /api/approvals` read
 * them: what the API answers 400 `Malformed` (`offset=-1`, `offset=abc`, `limit=0`, `limit=-5`) the
 * console answers 400 with a page that says the same, never the first page as if nothing were
 * wrong; a `limit` the API takes, the console takes too, and its page links keep it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Saga } from "../src/index.js"
import { consolePage, unescaped } from "./fixtures/console-forms.js"
import { freshDb, onDb, payout, raw, serveOn } from "./fixtures/http-saga.js"

const bad = ["offset=-1", "offset=abc", "offset=1.5", "offset=", "limit=0", "limit=-5", "limit=501", "limit=abc"]

/** The lists of the console and the endpoint of the API each reads its query as. */
const lists = [
  { console: "/console/sagas", api: "/api/sagas" },
  { console: "/console", api: "/api/approvals" }
]

describe("a console list's offset and limit", () => {
  it.scopedLive("what the API refuses, the console refuses with the same message: never read as the first page", () =>
    Effect.gen(function* () {
      const db = freshDb("console-page-params")
      yield* onDb(db, Saga.run("payout-1", payout))
      const baseUrl = yield* serveOn(db)
      for (const list of lists) {
        for (const query of bad) {
          const api = yield* raw(baseUrl, "GET", `${list.api}?${query}`, { as: "alice" })
          expect([query, api.status, (api.body as { _tag: string })._tag]).toEqual([query, 400, "Malformed"])
          const page = yield* consolePage(baseUrl, `${list.console}?${query}`)
          const said = /<h1>Not shown<\/h1><p>([^<]*)<\/p>/.exec(page.text)?.[1]
          expect([list.console, query, page.status, said === undefined ? undefined : unescaped(said)]).toEqual([
            list.console,
            query,
            400,
            (api.body as { message: string }).message
          ])
        }
      }
    })
  )

  it.scopedLive("a limit the API takes, the console takes, and its page links keep it", () =>
    Effect.gen(function* () {
      const db = freshDb("console-page-limit")
      for (const sagaId of ["payout-1", "payout-2", "payout-3"]) yield* onDb(db, Saga.run(sagaId, payout))
      const baseUrl = yield* serveOn(db)
      const sagas = yield* consolePage(baseUrl, "/console/sagas?limit=2")
      expect(sagas.status).toBe(200)
      expect(sagas.text).toContain("3 saga(s), 1–2 shown")
      expect(sagas.text).toContain('<a rel="next" href="/console/sagas?limit=2&amp;offset=2">next 2</a>')
      expect(sagas.text).toContain('<input type="hidden" name="limit" value="2">')
      const inbox = yield* consolePage(baseUrl, "/console?limit=2&offset=2")
      expect(inbox.status).toBe(200)
      expect(inbox.text).toContain("sagas 3–3 of 3")
      expect(inbox.text).toContain('<a rel="prev" href="/console?limit=2">previous 2</a>')
    })
  )
})
