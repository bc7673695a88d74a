/**
 * Every answer of the API, its refusals too, may be neither sniffed as another type nor kept by a
 * cache: a saga's journal or an inbox read by an operator must not stay in a proxy's or a browser's
 * cache.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { freshDb, serveOn, tokens } from "./fixtures/http-saga.js"

const answer = (url: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    await response.text()
    return {
      status: response.status,
      nosniff: response.headers.get("x-content-type-options"),
      cache: response.headers.get("cache-control")
    }
  })

const asAlice = { headers: { authorization: `Bearer ${tokens.alice}` } }

describe("the API's answers", () => {
  it.scopedLive("carry nosniff and no-store, an answer and a refusal alike", () =>
    Effect.gen(function* () {
      const baseUrl = yield* serveOn(freshDb("answer-headers"))
      const answers = yield* Effect.all({
        list: answer(`${baseUrl}/api/sagas`, asAlice),
        inbox: answer(`${baseUrl}/api/approvals`, asAlice),
        missing: answer(`${baseUrl}/api/sagas/no-such-saga`, asAlice),
        unauthenticated: answer(`${baseUrl}/api/sagas`),
        noEndpoint: answer(`${baseUrl}/api/nothing-here`, asAlice),
        openApi: answer(`${baseUrl}/api/openapi.json`),
        docs: answer(`${baseUrl}/api/docs`)
      })
      expect(Object.fromEntries(Object.entries(answers).map(([name, { status }]) => [name, status]))).toEqual({
        list: 200,
        inbox: 200,
        missing: 404,
        unauthenticated: 401,
        noEndpoint: 404,
        openApi: 200,
        docs: 200
      })
      for (const { nosniff, cache } of Object.values(answers)) {
        expect({ nosniff, cache }).toEqual({ nosniff: "nosniff", cache: "no-store" })
      }
    })
  )
})
