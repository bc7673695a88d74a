import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import type { Browser, Page } from "playwright-core"
import { Saga } from "../src/index.js"
import { awaiting, clientAs, freshDb, onDb, payout, serveOn, tokens } from "./fixtures/http-saga.js"
import { launchChromium } from "./support/chromium.js"

/** Chromium for the scope of a test. */
const browser = Effect.acquireRelease(
  Effect.promise(() => launchChromium()),
  (opened: Browser) => Effect.promise(() => opened.close())
)

/** A page that records every request to a host other than the server's: nothing may come from a CDN. */
const openPage = (opened: Browser, baseUrl: string, viewport = { width: 1280, height: 800 }) =>
  Effect.promise(async () => {
    const page = await opened.newPage({ viewport })
    const elsewhere: Array<string> = []
    page.on("request", (request) => {
      const url = request.url()
      if (!url.startsWith(baseUrl) && !url.startsWith("data:")) elsewhere.push(url)
    })
    return { page, elsewhere }
  })

const step = <A>(run: () => Promise<A>) => Effect.promise(run)

const signIn = (page: Page, baseUrl: string) =>
  step(async () => {
    await page.goto(`${baseUrl}/console`)
    await page.getByLabel("API token").fill(tokens.alice)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL(`${baseUrl}/console`)
  })

describe("the web console in headless Chromium", { timeout: 60_000 }, () => {
  it.scopedLive(
    "approves a wire transfer from the inbox, draws the timeline, and marks a tampered saga",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console")
        const shots = path.dirname(db)
        yield* onDb(
          db,
          Effect.all([Saga.run("payout-1", payout), Saga.run("payout-2", payout), Saga.run("payout-t", payout)])
        )
        const file = new Database(db)
        file
          .prepare("UPDATE effect_saga_entries SET input = ? WHERE saga_id = ? AND seq = 2")
          .run('{"amount":1}', "payout-t")
        file.close()
        const baseUrl = yield* serveOn(db)
        const { page, elsewhere } = yield* openPage(yield* browser, baseUrl)
        yield* signIn(page, baseUrl)

        const inbox = yield* step(async () => {
          await page.screenshot({ path: path.join(shots, "inbox.png"), fullPage: true })
          return page.locator("article").filter({ hasText: "payout-1" })
        })
        expect(yield* step(() => inbox.locator("pre").textContent())).toContain('"to": "DE89 3704 0044 0532 0130 00"')
        expect(yield* step(() => inbox.textContent())).toMatch(/input sha256\s*[0-9a-f]{64}/)
        const tamperedCard = page.locator("article").filter({ hasText: "payout-t" })
        expect(yield* step(() => tamperedCard.getByRole("alert").textContent())).toContain("TAMPERED")
        expect(yield* step(() => tamperedCard.getByRole("button").count())).toBe(0)

        yield* step(async () => {
          await inbox.getByRole("button", { name: "Approve" }).click()
          await page.waitForURL(/notice=/)
        })
        expect(yield* step(() => page.getByRole("status").textContent())).toContain("approved by alice")
        expect(yield* step(() => page.locator("article").filter({ hasText: "payout-1" }).count())).toBe(0)
        yield* step(() => page.screenshot({ path: path.join(shots, "inbox-after.png"), fullPage: true }))

        // The saga moves on behind the page's back: the console refuses and says to reload.
        const stale = page.locator("article").filter({ hasText: "payout-2" })
        const other = yield* awaiting(baseUrl, "payout-2")
        const api = yield* clientAs(baseUrl, "bob")
        yield* api.approvals.approve({
          path: { sagaId: "payout-2", stepId: other.stepId },
          payload: { revision: other.revision, digest: other.digest }
        })
        yield* step(async () => {
          await stale.getByRole("textbox", { name: "Reason for rejecting" }).fill("not this one")
          await stale.getByRole("button", { name: "Reject" }).click()
          await page.waitForURL(/notice=/)
        })
        expect(yield* step(() => page.getByRole("status").textContent())).toMatch(/saga moved on.*reload/)

        yield* step(() => page.goto(`${baseUrl}/console/sagas/payout-1`))
        const diagram = yield* step(() => page.locator(".diagram svg").innerHTML())
        expect(diagram).toContain("reserveFunds")
        expect(diagram).toContain("sendWireTransfer")
        expect(diagram).toContain("approved")
        yield* step(() => page.screenshot({ path: path.join(shots, "saga.png"), fullPage: true }))

        yield* step(() => page.goto(`${baseUrl}/console/sagas/payout-t`))
        expect(yield* step(() => page.locator("#tampered").textContent())).toMatch(/TAMPERED.*seq 2/)
        yield* step(() => page.screenshot({ path: path.join(shots, "saga-tampered.png"), fullPage: true }))

        yield* step(() => page.goto(`${baseUrl}/console/sagas`))
        const rows = yield* step(() => page.locator("tbody tr").allInnerTexts())
        expect(rows[0]).toContain("payout-t")
        yield* step(() => page.screenshot({ path: path.join(shots, "sagas.png"), fullPage: true }))

        yield* step(async () => {
          await page.setViewportSize({ width: 390, height: 844 })
          await page.goto(`${baseUrl}/console`)
          await page.screenshot({ path: path.join(shots, "inbox-phone.png"), fullPage: true })
        })
        const overflow = yield* step(() =>
          page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        )
        expect(overflow).toBeLessThanOrEqual(0)

        yield* step(async () => {
          await page.setViewportSize({ width: 1280, height: 800 })
          await page.goto(`${baseUrl}/api/docs`)
          await page.getByText("/api/sagas/{sagaId}/steps/{stepId}/approve").first().waitFor()
          await page.screenshot({ path: path.join(shots, "api-docs.png") })
        })
        expect(elsewhere).toEqual([])
      }),
    60_000
  )
})
