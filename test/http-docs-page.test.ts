/**
 * The API's docs page (`/api/docs`): it may not be framed by another site nor sniffed as another
 * type, and under its Content-Security-Policy Swagger UI still draws every endpoint, from nothing
 * but the page and this server.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Browser } from "playwright-core"
import { freshDb, serveOn } from "./fixtures/http-saga.js"
import { launchChromium } from "./support/chromium.js"

const browser = Effect.acquireRelease(
  Effect.promise(() => launchChromium()),
  (opened: Browser) => Effect.promise(() => opened.close())
)

const headersOf = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    await response.text()
    return { status: response.status, headers: response.headers }
  })

describe("the API's docs page", { timeout: 60_000 }, () => {
  it.scopedLive("is served with nosniff and a CSP that forbids framing; the OpenAPI document is not changed", () =>
    Effect.gen(function* () {
      const baseUrl = yield* serveOn(freshDb("docs-headers"))
      const docs = yield* headersOf(`${baseUrl}/api/docs`)
      expect(docs.status).toBe(200)
      expect(docs.headers.get("x-content-type-options")).toBe("nosniff")
      expect(docs.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
      expect(docs.headers.get("content-security-policy")).toContain("default-src 'none'")
      const document = yield* headersOf(`${baseUrl}/api/openapi.json`)
      expect(document.status).toBe(200)
      expect(document.headers.get("content-security-policy")).toBeNull()
    })
  )

  it.scopedLive("still draws every endpoint in Chromium, with nothing refused by its policy", () =>
    Effect.gen(function* () {
      const baseUrl = yield* serveOn(freshDb("docs-browser"))
      const opened = yield* browser
      const seen = yield* Effect.promise(async () => {
        const page = await opened.newPage()
        const refused: Array<string> = []
        const elsewhere: Array<string> = []
        // A browser says what a policy refused on the console (the missing favicon is a 404, not a refusal).
        page.on("console", (message) => {
          if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text())
        })
        page.on("pageerror", (error) => refused.push(error.message))
        page.on("request", (request) => {
          if (!request.url().startsWith(baseUrl) && !request.url().startsWith("data:")) elsewhere.push(request.url())
        })
        await page.goto(`${baseUrl}/api/docs`)
        await page.locator(".opblock").first().waitFor()
        return { operations: await page.locator(".opblock").count(), refused, elsewhere }
      })
      expect(seen).toEqual({ operations: 10, refused: [], elsewhere: [] })
    })
  )
})
