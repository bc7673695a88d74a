import * as path from "node:path"
import { assert, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Schema } from "effect"
import type { Browser, Page } from "playwright-core"
import { Compensable, Journal, Outcome, Saga } from "../src/index.js"
import * as SagaApi from "../src/SagaApi.js"
import { answered, consolePage, fields, follow, postForm, signedIn, unescaped } from "./fixtures/console-forms.js"
import { epochClock } from "./fixtures/epoch-clock.js"
import {
  awaiting,
  clientAs,
  consoleCookie,
  freshDb,
  onDb,
  payout,
  raw,
  serveOn,
  shipping,
  snapshot,
  tokens
} from "./fixtures/http-saga.js"
import { renamedPastUnknown } from "./fixtures/renamed-past-unknown.js"
import { siblingCut } from "./fixtures/sibling-cut.js"
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
          Effect.all([
            Saga.run("payout-1", payout),
            Saga.run("payout-2", payout),
            Saga.run("payout-t", payout),
            Saga.run("pay out 3", payout)
          ])
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
        // A card is named by its heading (aria-labelledby), a saga id with spaces in it too.
        const spaced = page.getByRole("article", { name: "sendWireTransfer in pay out 3", exact: true })
        expect(yield* step(() => spaced.count())).toBe(1)
        const tamperedCard = page.locator("article").filter({ hasText: "payout-t" })
        expect(yield* step(() => tamperedCard.getByRole("alert").textContent())).toContain("TAMPERED")
        expect(yield* step(() => tamperedCard.getByRole("button").count())).toBe(0)

        yield* step(async () => {
          await inbox.getByRole("button", { name: "Approve" }).click()
          await page.getByRole("status").filter({ hasText: "approved by alice" }).waitFor()
        })
        expect(page.url()).toBe(`${baseUrl}/console`)
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
          await page.getByRole("status").filter({ hasText: "Reload to see" }).waitFor()
        })
        expect(yield* step(() => page.getByRole("status").textContent())).toMatch(
          /^Refused: .*payout-2.*\. Reload to see where the saga stands now\.$/
        )
        // A notice is shown once: reloaded, the page has none.
        yield* step(() => page.reload())
        expect(yield* step(() => page.getByRole("status").count())).toBe(0)

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

        // The token is typed unseen; signing out forgets it.
        yield* step(() => page.goto(`${baseUrl}/console`))
        yield* step(async () => {
          await page.getByRole("button", { name: "Sign out" }).click()
          await page.waitForURL(`${baseUrl}/console/login`)
        })
        const input = page.getByLabel("API token")
        expect(yield* step(() => input.getAttribute("type"))).toBe("password")
        expect(yield* step(() => input.getAttribute("autocomplete"))).toBe("off")
        yield* step(() => page.goto(`${baseUrl}/console`))
        expect(page.url()).toBe(`${baseUrl}/console/login`)
      }),
    60_000
  )

  it.scopedLive(
    "at phone width (375 px) a saga id with no place to break wraps: no page scrolls sideways",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console-phone")
        // An id as long as an explicit undo's run has (trip-1/bookRoom:b8c49cd317ccfaab#1/compensate-effect), unbroken.
        const long = `payout-${"b8c49cd317ccfaab".repeat(4)}`
        yield* onDb(db, Saga.run(long, payout))
        const baseUrl = yield* serveOn(db)
        const { page } = yield* openPage(yield* browser, baseUrl, { width: 375, height: 740 })
        yield* signIn(page, baseUrl)
        for (const path of ["/console", "/console/sagas", `/console/sagas/${long}`]) {
          const wider = yield* step(async () => {
            await page.goto(`${baseUrl}${path}`)
            await page.getByText(long).first().waitFor()
            return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
          })
          expect([path, wider]).toEqual([path, 0])
        }
      }),
    60_000
  )
})

describe("a saga's page in headless Chromium", { timeout: 60_000 }, () => {
  it.scopedLive(
    "offers the decisions its steps await, as the inbox does, and leads back to itself: the inbox's first page need not list it",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console-saga-decides")
        yield* onDb(db, Effect.all([Saga.run("payout-1", payout), Saga.run("payout-2", payout)]))
        const baseUrl = yield* serveOn(db)
        const { page, elsewhere } = yield* openPage(yield* browser, baseUrl)
        yield* signIn(page, baseUrl)
        const sagaUrl = `${baseUrl}/console/sagas/payout-2`
        yield* step(() => page.goto(sagaUrl))
        const decide = page.locator("#decide")
        expect(yield* step(() => decide.locator("p").first().textContent())).toBe(
          "1 step(s) await approval: decide here (the inbox lists every saga's requests)."
        )
        const card = decide.locator("article")
        expect(yield* step(() => card.count())).toBe(1)
        expect(yield* step(() => card.locator("pre").textContent())).toContain('"to": "DE89 3704 0044 0532 0130 00"')
        yield* step(async () => {
          await card.getByRole("button", { name: "Approve" }).click()
          await page.getByRole("status").filter({ hasText: "approved by alice" }).waitFor()
        })
        expect(page.url()).toBe(sagaUrl)
        expect(yield* step(() => page.locator("#decide").count())).toBe(0)
        const approved = yield* onDb(db, Saga.status("payout-2"))
        expect(approved.steps.find((step) => step.toolName === "sendWireTransfer")?.state).toBe("approved")
        // The inbox no longer lists it; the other saga's page rejects, and leads back to that page.
        yield* step(() => page.goto(`${baseUrl}/console`))
        expect(yield* step(() => page.locator("article").filter({ hasText: "payout-2" }).count())).toBe(0)
        yield* step(async () => {
          await page.goto(`${baseUrl}/console/sagas/payout-1`)
          await page.getByRole("textbox", { name: "Reason for rejecting" }).fill("unknown payee")
          await page.getByRole("button", { name: "Reject" }).click()
          await page.getByRole("status").filter({ hasText: "rejected by alice" }).waitFor()
        })
        expect(page.url()).toBe(`${baseUrl}/console/sagas/payout-1`)
        expect(yield* step(() => page.locator("h1").textContent())).toContain("compensated")
        expect(elsewhere).toEqual([])
      }),
    60_000
  )
})

/** A body of `size` bytes sent in chunks, with no `Content-Length`. */
const chunked = (prefix: string, size: number) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(prefix))
      for (let sent = prefix.length; sent < size; sent += 1024) controller.enqueue(new Uint8Array(1024).fill(97))
      controller.close()
    }
  })

describe("the console's forms, posted as a browser posts them", { timeout: 30_000 }, () => {
  it.scopedLive("resolve takes exactly applied or not-applied, a result only with applied, and only JSON", () =>
    Effect.gen(function* () {
      const db = freshDb("console-resolve")
      yield* onDb(db, Saga.run("ship-1", shipping))
      const baseUrl = yield* serveOn(db)
      const detail = yield* (yield* clientAs(baseUrl, "alice")).sagas.get({ path: { sagaId: "ship-1" } })
      const seen = {
        sagaId: "ship-1",
        stepId: detail.steps.find((candidate) => candidate.state === "unknown")!.stepId,
        revision: String(detail.saga.revision),
        digest: detail.saga.digest
      }
      const before = snapshot(db)
      const refused: ReadonlyArray<[Record<string, string>, RegExp]> = [
        [{ outcome: "Applied", result: '{"tracking":"TRK-9"}' }, /outcome is "Applied"/],
        [{}, /outcome is ""/],
        [{ outcome: "aplied" }, /outcome is "aplied"/],
        [{ outcome: "not-applied", result: '"parcel-17"' }, /result is given only with the outcome applied/],
        [{ outcome: "applied", result: '{"tracking":"x"' }, /result is not JSON/],
        [{ outcome: "applied", result: "parcel-17" }, /result is not JSON/],
        [
          { outcome: "applied", result: `${"[".repeat(3000)}${"]".repeat(3000)}` },
          /^Refused: the result nests arrays and objects deeper than 64 levels; nothing was written$/
        ]
      ]
      for (const [form, reason] of refused) {
        const answer = yield* postForm(baseUrl, "/console/resolve", fields({ ...seen, ...form }))
        expect(answer.status).toBe(303)
        expect(new URL(answer.location!, baseUrl).pathname).toBe("/console/sagas/ship-1")
        const { notice } = yield* follow(baseUrl, answer)
        expect(notice?.kind).toBe("error")
        expect(notice?.text).toMatch(reason)
        expect(snapshot(db)).toBe(before)
      }
      const applied = yield* postForm(
        baseUrl,
        "/console/resolve",
        fields({ ...seen, outcome: "applied", result: '"parcel-17"' })
      )
      expect((yield* follow(baseUrl, applied)).notice).toMatchObject({
        kind: "ok",
        text: `Step ${seen.stepId}: resolved as applied by alice; resume the saga to go on.`
      })
      const status = yield* onDb(db, Saga.status("ship-1"))
      expect(status.steps.find((candidate) => candidate.stepId === seen.stepId)!.state).toBe("executed")
      // Still needs_attention until resumed: the page says so, and no longer offers to resolve.
      expect(status.status).toBe("needs_attention")
      const page = yield* consolePage(baseUrl, `/console/sagas/ship-1`)
      expect(page.text).toContain(
        '<p class="approved" id="resume">Nothing is left to resolve: the saga goes on when it is resumed, by a worker that has its program (a Recovery pass does not take a saga that needs attention).</p>'
      )
      expect(page.text).not.toContain('action="/console/resolve"')
      // The diagram says who resolved it, as the CLI's timeline does.
      expect(page.text).toContain("executed: result &quot;parcel-17&quot;; resolved as applied by alice")
    })
  )

  it.scopedLive(
    "a call a failing sibling cut: the page says the provider may still act; resolved, that a resume compensates",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console-cut")
        const { program } = siblingCut()
        const first = yield* onDb(db, Saga.run("cut-1", program))
        assert(first._tag === "NeedsAttention")
        const held = first.unknown[0]!.stepId
        const baseUrl = yield* serveOn(db)
        const cut = unescaped((yield* consolePage(baseUrl, "/console/sagas/cut-1")).text)
        expect(cut).toContain(
          `Before "It was not applied", make sure the call cannot still happen: the program cut the call while it ran, and the provider may still act on what it received (ask it about the key cut-1/${held}); a resume may not settle it: it stops at the step again or, for a tool that retries by key, may cut the call again.`
        )
        const at = yield* onDb(db, Saga.status("cut-1"))
        const seen = { sagaId: "cut-1", stepId: held, revision: String(at.revision), digest: at.digest }
        const applied = yield* postForm(
          baseUrl,
          "/console/resolve",
          fields({ ...seen, outcome: "applied", result: '"h-A"' })
        )
        const failed = at.steps.find((step) => step.toolName === "check")!
        // The notice says what a resume does, as show's next line does.
        expect((yield* follow(baseUrl, applied)).notice).toMatchObject({
          kind: "ok",
          text: `Step ${held}: resolved as applied by alice; resume the saga: it compensates (step ${failed.stepId} failed, which binds it to compensate).`
        })
        const resolved = unescaped((yield* consolePage(baseUrl, "/console/sagas/cut-1")).text)
        expect(resolved).toContain(
          `Nothing is left to resolve: the saga compensates (step ${failed.stepId} failed, which binds it to compensate) when it is resumed, by a worker that has its program`
        )
      })
  )

  it.scopedLive(
    "a step a changed program did not reach, resolved as applied: the notice and the page say to compensate, not resume",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console-moved")
        const { renamed, stoppedInPay } = renamedPastUnknown()
        yield* onDb(db, stoppedInPay("moved-1"))
        const stopped = yield* onDb(db, Saga.resume("moved-1", renamed))
        assert(stopped._tag === "NeedsAttention")
        const pay = stopped.unknown[0]!.stepId
        const baseUrl = yield* serveOn(db)
        const at = yield* onDb(db, Saga.status("moved-1"))
        const seen = { sagaId: "moved-1", stepId: pay, revision: String(at.revision), digest: at.digest }
        const applied = yield* postForm(
          baseUrl,
          "/console/resolve",
          fields({ ...seen, outcome: "applied", result: '"pay-2"' })
        )
        const compensateNotResume = `do not resume the saga: its program's last run ended without reaching step ${pay} (a changed program), executed now, so a resume of that program fails with NonDeterminism at its end, writing nothing (only a release that makes it again could go on); compensate it instead`
        expect((yield* follow(baseUrl, applied)).notice).toMatchObject({
          kind: "ok",
          text: `Step ${pay}: resolved as applied by alice; ${compensateNotResume} (effect-saga compensate, or POST /api/sagas/moved-1/compensate).`
        })
        expect(unescaped((yield* consolePage(baseUrl, "/console/sagas/moved-1")).text)).toContain(
          `Nothing is left to resolve, but ${compensateNotResume} (effect-saga compensate moved-1 --register MODULE --as WHO, or POST /api/sagas/moved-1/compensate).`
        )
      })
  )

  it.scopedLive("the saga page says why a step's outcome is unknown and that a lease lapsed, escaped as HTML", () =>
    Effect.gen(function* () {
      const db = freshDb("console-why")
      const carrier = Compensable.make({
        name: "pingCarrier",
        input: Schema.String,
        success: Schema.String,
        execute: () => Effect.fail(Outcome.unknown('<script>alert("x")</script> & no answer'))
      })
      yield* onDb(
        db,
        Effect.zipRight(
          Saga.run("ship-x", carrier("o-1")),
          // A worker that died mid-step: its lease lapses a millisecond later.
          Effect.flatMap(Journal.Journal, (journal) =>
            journal.append(
              "dead-1",
              Journal.empty,
              [
                { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null },
                { stepId: "reserveFunds:1", toolName: "reserveFunds", phase: "INTENT", input: "1", payload: null }
              ],
              { owner: "w-dead", ttlMillis: 1 }
            )
          )
        )
      )
      const baseUrl = yield* serveOn(db)
      const page = (sagaId: string) => consolePage(baseUrl, `/console/sagas/${sagaId}`)
      const why = yield* page("ship-x")
      expect(why.text).toContain(
        '<p id="unknown-reason">Its outcome is unknown (outcome unknown: &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; no answer): find out whether it happened, then say so.</p>'
      )
      expect(why.text).not.toContain("<script>")
      // Not applied comes with what to make sure of first: a lapsed lease does not prove the worker gone.
      expect(unescaped(why.text)).toMatch(
        /Before "It was not applied", make sure the call cannot still happen: a worker whose lease lapsed may only be paused \(its process dead or restarted, or the provider refusing the key ship-x\/[^ ]+ from now on\)\./
      )
      // Applied is offered, without a receipt: the CLI takes one.
      expect(why.text).toContain('name="outcome" value="applied"')
      expect(why.text).toContain(
        "The console takes no receipt: if its undo needs the provider's receipt, resolve it with <code>effect-saga resolve --receipt</code>, or the API's resolve with <code>receipt</code>."
      )
      expect(why.text).toContain('<dd id="lease">none</dd>')
      const dead = yield* page("dead-1")
      const expiresAt = (yield* onDb(db, Saga.status("dead-1"))).lease!.expiresAt
      expect(dead.text).toContain(`<dd id="lease">w-dead lapsed at ${expiresAt}: no worker is driving it</dd>`)
    })
  )

  it.scopedLive("the saga page's Undos table says what each undo left, in full and escaped as HTML", () =>
    Effect.gen(function* () {
      const db = freshDb("console-undos")
      const holdStock = Compensable.make({
        name: "holdStock",
        input: Schema.String,
        success: Schema.String,
        execute: (sku) => Effect.succeed(`hold-${sku}`),
        compensate: () => Effect.fail(Outcome.partial(`2 units <still> held at the warehouse & ${"x".repeat(200)}`))
      })
      const chargeCard = Compensable.make({
        name: "chargeCard",
        input: Schema.Int,
        success: Schema.String,
        execute: (amount) => Effect.succeed(`ch-${amount}`),
        compensate: () => Effect.fail(Outcome.failed("warehouse API down"))
      })
      const program = Effect.zipRight(Effect.zipRight(holdStock("sku-1"), chargeCard(300)), Effect.fail("boom"))
      yield* onDb(db, Saga.run("undo-dirty", program))
      const baseUrl = yield* serveOn(db)
      const page = (yield* consolePage(baseUrl, "/console/sagas/undo-dirty")).text
      const undos = page.slice(page.indexOf("<h2>Undos</h2>"))
      expect(undos).toContain("<th>detail</th>")
      expect(undos).toContain(`<td>2 units &lt;still&gt; held at the warehouse &amp; ${"x".repeat(200)}</td>`)
      expect(undos).toContain("<td>failed (not applied): warehouse API down</td>")
      expect(undos).not.toContain("<still>")
    })
  )

  it.scopedLive("the saga page lists undos that were unavailable as the saga's last report does", () =>
    Effect.gen(function* () {
      const db = freshDb("console-unavailable")
      const lockSeat = Compensable.make({
        name: "lockSeat",
        input: Schema.String,
        success: Schema.String,
        execute: (seat) => Effect.succeed(`lock-${seat}`),
        compensate: () => Effect.void
      })
      yield* onDb(db, Saga.run("undo-unavailable", lockSeat("12A")))
      // A service of its own, which never ran lockSeat: it does not have its undo, and journals none.
      const report = yield* onDb(db, Saga.compensate("undo-unavailable"))
      expect(report.undone).toMatchObject([{ toolName: "lockSeat", outcome: "unavailable" }])
      const baseUrl = yield* serveOn(db)
      const page = (yield* consolePage(baseUrl, "/console/sagas/undo-unavailable")).text
      expect(page).not.toContain("No undo was asked for")
      // The steps table's undo column, then the Undos table, with why.
      expect(page).toMatch(/<td>lockSeat<\/td><td>.*<\/td><td>unavailable<\/td><\/tr>/)
      expect(page).toMatch(
        /<td>lockSeat<\/td><td><code>[^<]+<\/code><\/td><td><span class="badge unavailable">unavailable<\/span><\/td><td>tool lockSeat is not registered in this process<\/td>/
      )
    })
  )

  it.scopedLive("the saga page says until when an approval holds, and once it lapsed that a resume compensates", () =>
    Effect.gen(function* () {
      const db = freshDb("console-approval-expiry")
      yield* onDb(db, Effect.zipRight(Saga.run("payout-h", payout), Saga.run("payout-l", payout)))
      const approve = (sagaId: string, expiresAt: string) =>
        Effect.flatMap(onDb(db, Saga.status(sagaId)), (status) =>
          onDb(
            db,
            Saga.approve(sagaId, status.steps.find((step) => step.state === "awaiting_approval")!.stepId, {
              by: "bob",
              expiresAt
            })
          )
        )
      yield* approve("payout-h", "2999-01-01T00:00:00.000Z")
      // Approved at a clock that reads 1970: its expiry, in 2000, is long past now.
      yield* Effect.withClock(approve("payout-l", "2000-01-01T00:00:00.000Z"), epochClock)
      const baseUrl = yield* serveOn(db)
      const page = (sagaId: string) => consolePage(baseUrl, `/console/sagas/${sagaId}`)
      const wire = (yield* onDb(db, Saga.status("payout-h"))).steps.find((step) => step.state === "approved")!.stepId
      expect((yield* page("payout-h")).text).toContain(
        `<p class="approved">Step ${wire} is approved until 2999-01-01T00:00:00.000Z: it runs when the saga is resumed before then, by a worker that has its program (a Recovery pass does not take a saga awaiting approval).</p>`
      )
      const path = `/api/sagas/payout-l/steps/${encodeURIComponent(wire)}/renew`
      expect((yield* page("payout-l")).text).toContain(
        `<p class="approved">The approval of step ${wire} lapsed at 2000-01-01T00:00:00.000Z: resumed as it is, the saga journals EXPIRED and compensates. To run the step still, renew the approval first (effect-saga renew-approval, or POST ${path}), then resume the saga.</p>`
      )
    })
  )

  it.scopedLive("the saga page says a step a live worker runs is in flight, with no resolve form: wait", () =>
    Effect.gen(function* () {
      const db = freshDb("console-in-flight")
      // A worker mid-step: INTENT journaled, its call not answered yet, its lease live for a minute.
      yield* onDb(
        db,
        Effect.flatMap(Journal.Journal, (journal) =>
          journal.append(
            "live-1",
            Journal.empty,
            [
              { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null },
              { stepId: "reserveFunds:1", toolName: "reserveFunds", phase: "INTENT", input: "1", payload: null }
            ],
            { owner: "w-live", ttlMillis: 60_000 }
          )
        )
      )
      const baseUrl = yield* serveOn(db)
      const page = yield* consolePage(baseUrl, `/console/sagas/live-1`)
      const expiresAt = (yield* onDb(db, Saga.status("live-1"))).lease!.expiresAt
      expect(page.text).toContain(
        `<p id="in-flight">It is in flight: running now, by w-live, lease until ${expiresAt}. Its worker journals the outcome when the call answers: wait. Only if that lease lapses with no outcome journaled is its outcome unknown, to resolve here.</p>`
      )
      expect(page.text).toContain('<span class="badge in_flight">in flight</span>')
      // The API's step says so too (a dashboard reading its state finds nothing unknown).
      const detail = yield* (yield* clientAs(baseUrl, "alice")).sagas.get({ path: { sagaId: "live-1" } })
      expect(detail.steps).toMatchObject([{ stepId: "reserveFunds:1", state: "in_flight" }])
      expect(page.text).not.toContain('action="/console/resolve"')
      expect(page.text).not.toContain('id="unknown-reason"')
    })
  )

  it.scopedLive(
    "once compensation undid an earlier step, the saga page offers applied-and-undone or not-applied; applied alone, posted anyway, shows the API's refusal; applied and undone is taken",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console-late-resolve")
        yield* onDb(db, Effect.zipRight(Saga.run("ship-1", shipping), Saga.compensate("ship-1")))
        const baseUrl = yield* serveOn(db)
        const detail = yield* (yield* clientAs(baseUrl, "alice")).sagas.get({ path: { sagaId: "ship-1" } })
        const stepId = detail.steps.find((candidate) => candidate.state === "unknown")!.stepId
        const shown = yield* consolePage(baseUrl, `/console/sagas/ship-1`)
        expect(shown.status).toBe(200)
        expect(shown.text).toContain('name="outcome" value="not-applied"')
        // The only applied form says the effect was undone by hand since.
        expect(shown.text.split('name="outcome" value="applied"').length).toBe(2)
        expect(shown.text).toContain(
          '<input type="hidden" name="outcome" value="applied"><input type="hidden" name="undone" value="true">'
        )
        expect(shown.text).toContain("It was applied, and I undid it by hand")
        expect(unescaped(shown.text)).toContain("Compensation already began the undo of step reserveFunds")
        const seen = { revision: detail.saga.revision, digest: detail.saga.digest }
        const api = yield* raw(baseUrl, "POST", `/api/sagas/ship-1/steps/${encodeURIComponent(stepId)}/resolve`, {
          as: "alice",
          body: JSON.stringify({ ...seen, outcome: "applied", result: "parcel-17" })
        })
        expect(api.status).toBe(422)
        const before = snapshot(db)
        const posted = yield* postForm(
          baseUrl,
          "/console/resolve",
          fields({
            sagaId: "ship-1",
            stepId,
            revision: String(seen.revision),
            digest: seen.digest,
            outcome: "applied",
            result: '"parcel-17"'
          })
        )
        const { notice } = yield* follow(baseUrl, posted)
        expect(notice).toEqual({ kind: "error", text: `Refused: ${(api.body as { message: string }).message}` })
        expect(notice?.text).not.toMatch(/resolved as applied/)
        expect(snapshot(db)).toBe(before)

        // undone with not-applied is refused, not dropped: by the API (400) and the console's form.
        const notApplied = yield* raw(
          baseUrl,
          "POST",
          `/api/sagas/ship-1/steps/${encodeURIComponent(stepId)}/resolve`,
          { as: "alice", body: JSON.stringify({ ...seen, outcome: "not-applied", undone: true }) }
        )
        expect(notApplied.status).toBe(400)
        const notAppliedForm = yield* postForm(
          baseUrl,
          "/console/resolve",
          fields({
            sagaId: "ship-1",
            stepId,
            revision: String(seen.revision),
            digest: seen.digest,
            outcome: "not-applied",
            undone: "true"
          })
        )
        expect((yield* follow(baseUrl, notAppliedForm)).notice).toMatchObject({ kind: "error" })
        expect(snapshot(db)).toBe(before)
        // As the card's form posts it: applied, undone by hand; a compensation again counts it undone.
        const undone = yield* postForm(
          baseUrl,
          "/console/resolve",
          fields({
            sagaId: "ship-1",
            stepId,
            revision: String(seen.revision),
            digest: seen.digest,
            outcome: "applied",
            undone: "true",
            result: '"parcel-17"'
          })
        )
        const taken = yield* follow(baseUrl, undone)
        expect(taken.notice?.kind).toBe("ok")
        expect(taken.notice?.text).toContain("resolved as applied and undone by hand by alice")
        const step = (yield* onDb(db, Saga.status("ship-1"))).steps.find((candidate) => candidate.stepId === stepId)
        expect(step).toMatchObject({ state: "executed", undo: "completed", undoDetail: "resolved as undone by alice" })
      })
  )

  it.scopedLive(
    "a saga whose compensation failed on an unknown step: the Undos table names it as the report does, and resolved not applied, the notice and page say to compensate again, not to resume",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console-compensated-resolve")
        const report = yield* onDb(db, Effect.zipRight(Saga.run("ship-1", shipping), Saga.compensate("ship-1")))
        expect(report.status).toBe("compensation_failed")
        const baseUrl = yield* serveOn(db)
        const detail = yield* (yield* clientAs(baseUrl, "alice")).sagas.get({ path: { sagaId: "ship-1" } })
        const stepId = detail.steps.find((candidate) => candidate.state === "unknown")!.stepId
        const undos = (text: string) => text.slice(text.indexOf("<h2>Undos</h2>"))
        // The report: reserveFunds undone, pingCarrier not undone, its outcome unknown (show: may still be live).
        const notUndone = `<tr><td>pingCarrier</td><td><code>${stepId}</code></td><td><span class="badge not_undone">not undone</span></td><td>outcome unknown when the last report was journaled</td></tr>`
        const before = (yield* consolePage(baseUrl, "/console/sagas/ship-1")).text
        expect(undos(before)).toContain(notUndone)
        expect(undos(before)).toMatch(
          /<td>reserveFunds<\/td><td><code>[^<]+<\/code><\/td><td><span class="badge completed">/
        )
        // Nothing to compensate again while a step is still unknown: resolving it comes first.
        expect(before).not.toContain("compensate it again")
        const posted = yield* postForm(
          baseUrl,
          "/console/resolve",
          fields({
            sagaId: "ship-1",
            stepId,
            revision: String(detail.saga.revision),
            digest: detail.saga.digest,
            outcome: "not-applied"
          })
        )
        const { notice } = yield* follow(baseUrl, posted)
        expect(notice).toEqual({
          kind: "ok",
          text: `Step ${stepId}: resolved as not-applied by alice; its compensation already ran: compensate the saga again (effect-saga compensate, or POST /api/sagas/ship-1/compensate), which runs any undo still owed and journals a new report.`
        })
        const after = (yield* consolePage(baseUrl, "/console/sagas/ship-1")).text
        expect(after).toContain(
          '<p class="approved compensate">Nothing is left dirty since the last report: its compensation already ran, so compensate it again (effect-saga compensate ship-1 --as WHO, or POST /api/sagas/ship-1/compensate; no undo is left to run, so no module to register): that journals a new report, and the saga ends compensated.</p>'
        )
        expect(after).not.toContain("resumed")
        expect(undos(after)).toContain(notUndone)
        // As the page says: compensated again, the saga ends compensated.
        expect((yield* onDb(db, Saga.compensate("ship-1"))).status).toBe("compensated")
      })
  )

  it.scopedLive(
    "a tampered saga's heading shows no status, as effect-saga show prints none: its badge says tampered",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console-tampered-heading")
        yield* onDb(db, Saga.run("payout-t", payout))
        const file = new Database(db)
        file
          .prepare("UPDATE effect_saga_entries SET input = ? WHERE saga_id = ? AND seq = 2")
          .run('{"amount":1}', "payout-t")
        file.close()
        const baseUrl = yield* serveOn(db)
        const page = (yield* consolePage(baseUrl, "/console/sagas/payout-t")).text
        expect(page).toContain('<h1>Saga payout-t <span class="badge tampered">tampered</span></h1>')
        expect(page).not.toContain("awaiting approval</span>")
      })
  )

  it.scopedLive(
    "a tampered saga's step with entries past the break has no state on its page: the journal's unknown there is no fact",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console-tampered-steps")
        yield* onDb(db, Saga.run("payout-t", payout))
        const file = new Database(db)
        const executed = file
          .prepare("SELECT seq FROM effect_saga_entries WHERE saga_id = ? AND phase = 'EXECUTED' ORDER BY seq")
          .get("payout-t") as { seq: number }
        file
          .prepare("UPDATE effect_saga_entries SET payload = ? WHERE saga_id = ? AND seq = ?")
          .run('{"result":"hold-666"}', "payout-t", executed.seq)
        file.close()
        const baseUrl = yield* serveOn(db)
        const page = (yield* consolePage(baseUrl, "/console/sagas/payout-t")).text
        const steps = page.slice(page.indexOf("<h2>Steps</h2>"), page.indexOf("<h2>Timeline</h2>"))
        expect(steps).toContain(
          `<span class="badge tampered">tampered</span> <span class="muted">its entries from seq ${executed.seq} on do not verify: no state is a fact</span>`
        )
        expect(steps).not.toContain('class="badge unknown"')
        expect(page).not.toContain("It was not applied")
      })
  )

  it.scopedLive(
    "a saga whose only request is marked tampered says no decision is offered on its page, not to decide there",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console-forged-row")
        yield* onDb(db, Saga.run("payout-f", payout))
        const file = new Database(db)
        file
          .prepare("UPDATE effect_saga_approvals SET input = ? WHERE saga_id = ?")
          .run('{"to":"GB00 MALLORY","amount":1}', "payout-f")
        file.close()
        const baseUrl = yield* serveOn(db)
        const page = (yield* consolePage(baseUrl, "/console/sagas/payout-f")).text
        expect(page).toContain("1 step(s) await approval: no decision is offered on them: each card below says why.")
        expect(page).not.toContain("decide here")
        expect(page).not.toContain('action="/console/approve"')
      })
  )

  it.scopedLive("the browser's ask for /favicon.ico is answered 204, with the console's headers", () =>
    Effect.gen(function* () {
      const baseUrl = yield* serveOn(freshDb("console-favicon"))
      const answer = yield* Effect.promise(() => fetch(`${baseUrl}/favicon.ico`))
      expect(answer.status).toBe(204)
      expect(answer.headers.get("content-security-policy")).toContain("default-src 'none'")
    })
  )

  it.scopedLive(
    "the sagas page reads its filter as GET /api/sagas does: a status that is none is refused with its message",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console-filter")
        yield* onDb(db, Effect.all([Saga.run("payout-1", payout), Saga.run("ship-1", shipping)]))
        const baseUrl = yield* serveOn(db)
        const page = (query: string) => consolePage(baseUrl, `/console/sagas?${query}`)
        const api = (query: string) =>
          Effect.promise(() =>
            fetch(`${baseUrl}/api/sagas?${query}`, { headers: { authorization: `Bearer ${tokens.alice}` } }).then(
              (response) => response.json() as Promise<{ message: string }>
            )
          )
        for (const query of ["status=bogus", "status=awaiting_approval,bogus"]) {
          const refused = yield* page(query)
          expect([query, refused.status]).toEqual([query, 400])
          expect(unescaped(refused.text)).toContain(`<p>${(yield* api(query)).message}</p>`)
          expect(refused.text).not.toContain("saga(s)")
        }
        const several = yield* page("status=awaiting_approval,needs_attention")
        expect(several.status).toBe(200)
        expect(several.text).toContain("2 saga(s)")
        expect((yield* page("status=needs_attention")).text).toContain("1 saga(s)")
      })
  )

  it.scopedLive("approve and reject decode their fields with the API's schemas: bad input is refused, never 500", () =>
    Effect.gen(function* () {
      const db = freshDb("console-schemas")
      yield* onDb(db, Saga.run("payout-1", payout))
      const baseUrl = yield* serveOn(db)
      const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
      const seen = { sagaId: "payout-1", stepId, revision: String(revision), digest }
      const before = snapshot(db)
      const refused: ReadonlyArray<[string, Record<string, string>, RegExp]> = [
        ["/console/approve", { revision: "1.5" }, /revision: Expected an integer/],
        ["/console/approve", { revision: "abc" }, /revision: Expected number/],
        ["/console/approve", { revision: "99999999999999999999" }, /revision: Expected an integer/],
        ["/console/approve", { revision: "-1" }, /revision: Expected a non-negative number/],
        // Digits and nothing else, as a query's offset: not read as the revision they would be.
        ["/console/approve", { revision: ` ${revision}` }, /revision: Expected number/],
        ["/console/approve", { revision: `${revision} ` }, /revision: Expected number/],
        ["/console/approve", { revision: `${revision}.0` }, /revision: Expected number/],
        [
          "/console/approve",
          { expiresAt: "soon" },
          /expiresAt: "soon" is not an ISO-8601 time: .*; nothing was written$/
        ],
        ["/console/reject", { reason: "   " }, /reason: /],
        ["/console/reject", { revision: "1.5", reason: "no" }, /revision: Expected an integer/]
      ]
      for (const [path, form, reason] of refused) {
        const answer = yield* postForm(baseUrl, path, fields({ ...seen, ...form }))
        expect(answer.status).toBe(303)
        expect(new URL(answer.location!, baseUrl).pathname).toBe("/console")
        const { notice } = yield* follow(baseUrl, answer)
        expect(notice?.kind).toBe("error")
        expect(notice?.text).toMatch(reason)
        expect(snapshot(db)).toBe(before)
      }
      const rejected = yield* postForm(baseUrl, "/console/reject", fields({ ...seen, reason: "  unknown payee  " }))
      expect((yield* follow(baseUrl, rejected)).notice).toMatchObject({ kind: "ok" })
      const reasons = new Database(db, { readonly: true })
      const row = reasons
        .prepare("SELECT payload FROM effect_saga_entries WHERE saga_id = ? AND phase = 'REJECTED'")
        .get("payout-1") as { payload: string }
      reasons.close()
      expect(row.payload).toContain('"reason":"rejected by alice: unknown payee"')
      // The saga's page says why under the step's state, whole (the diagram's label cuts it).
      const page = yield* consolePage(baseUrl, "/console/sagas/payout-1")
      expect(page.text).toContain(
        '<span class="badge refused">refused</span><br><span class="refusal">rejected by alice: unknown payee</span>'
      )
    })
  )

  it.scopedLive("a form over maxBodyBytes is 413 with nothing done, signed in or not (the sign-in form too)", () =>
    Effect.gen(function* () {
      const db = freshDb("console-limit")
      yield* onDb(db, Saga.run("payout-1", payout))
      const baseUrl = yield* serveOn(db, { maxBodyBytes: 2048 })
      const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
      const before = snapshot(db)
      const token = `token=${"a".repeat(4096)}`
      const login = yield* postForm(baseUrl, "/console/login", token, { cookie: "" })
      expect([login.status, login.cookies]).toEqual([413, []])
      expect(login.text).toContain("over the limit of 2048 bytes")
      // Sent without a length, it is cut off where it passes the limit: the connection is closed, as for the API.
      const streamed = yield* Effect.either(
        postForm(baseUrl, "/console/login", chunked("token=", 64 * 1024), { cookie: "" })
      )
      expect(streamed._tag).toBe("Left")
      const approve = fields({ sagaId: "payout-1", stepId, revision: String(revision), digest, pad: "x".repeat(4096) })
      expect((yield* postForm(baseUrl, "/console/approve", approve)).status).toBe(413)
      expect(snapshot(db)).toBe(before)
      // Under the limit, the same forms are read.
      expect((yield* postForm(baseUrl, "/console/login", `token=${tokens.alice}`, { cookie: "" })).status).toBe(303)
    })
  )

  it.scopedLive(
    "a notice is never taken from the URL: it comes in a cookie the redirect sets, signed, shown once",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console-notice")
        yield* onDb(db, Saga.run("payout-1", payout))
        const baseUrl = yield* serveOn(db)
        const forged = yield* Effect.promise(async () =>
          fetch(
            `${baseUrl}/console?kind=ok&notice=${encodeURIComponent("Session expired: paste your token at https://evil.example")}`,
            { headers: { cookie: await signedIn(baseUrl) } }
          ).then(answered)
        )
        expect(forged.status).toBe(200)
        expect(forged.text).not.toContain("evil.example")
        expect(forged.text).not.toContain('role="status"')

        const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
        const answer = yield* postForm(
          baseUrl,
          "/console/approve",
          fields({ sagaId: "payout-1", stepId, revision: String(revision), digest })
        )
        expect(answer.location).toBe("/console")
        expect(answer.cookies).toEqual([expect.stringMatching(/^effect_saga_notice=.*HttpOnly.*SameSite=Strict/)])
        const shown = yield* follow(baseUrl, answer)
        expect(shown.notice).toEqual({
          kind: "ok",
          text: `Step ${stepId} of saga payout-1: approved by alice; the step runs when the saga is resumed.`
        })
        expect(shown.cookies).toEqual([expect.stringMatching(/^effect_saga_notice=; Max-Age=0/)])

        // Cookies are not kept apart by port: another app on this host can set one. A notice this
        // server did not sign is not shown: one with no MAC, or a signed one whose text was changed.
        const encoded = (text: string) =>
          Buffer.from(JSON.stringify({ kind: "ok", text }), "utf8").toString("base64url")
        const [, mac] = answer.cookies[0]!.split(";")[0]!.split("=")[1]!.split(".")
        const lure = "Session expired: paste your token at https://evil.example"
        for (const value of [encoded(lure), `${encoded(lure)}.${mac}`]) {
          const planted = yield* follow(baseUrl, { ...answer, cookies: [`effect_saga_notice=${value}`] })
          expect(planted.notice).toBeUndefined()
        }
      })
  )

  it.scopedLive("the token is typed unseen; sign-out clears the sign-in cookie, and is refused from another site", () =>
    Effect.gen(function* () {
      const baseUrl = yield* serveOn(freshDb("console-logout"))
      const login = yield* Effect.promise(() => fetch(`${baseUrl}/console/login`).then((response) => response.text()))
      expect(login).toContain('<input type="password" name="token" autocomplete="off"')
      const elsewhere = yield* postForm(baseUrl, "/console/logout", "", { origin: "https://evil.example" })
      expect([elsewhere.status, elsewhere.cookies]).toEqual([403, []])
      const out = yield* postForm(baseUrl, "/console/logout", "")
      expect(out.status).toBe(303)
      expect(out.location).toBe("/console/login")
      expect(out.cookies).toEqual([expect.stringMatching(/^effect_saga_console=; Max-Age=0.*Path=\/;.*HttpOnly/)])
    })
  )

  it.scopedLive("a form sent as another type, or as none, is refused before it is read: nothing is written", () =>
    Effect.gen(function* () {
      const db = freshDb("console-form-type")
      yield* onDb(db, Saga.run("payout-1", payout))
      const baseUrl = yield* serveOn(db)
      const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
      const form = fields({ sagaId: "payout-1", stepId, revision: String(revision), digest })
      const before = snapshot(db)
      for (const type of [null, "text/plain", "application/json", "multipart/form-data; boundary=x"]) {
        const answer = yield* postForm(baseUrl, "/console/approve", form, { type })
        expect([type, answer.status, answer.cookies]).toEqual([type, 400, []])
        expect(unescaped(answer.text)).toContain(
          "The form was not read: a form must be sent with Content-Type: application/x-www-form-urlencoded; nothing was written. Nothing was done."
        )
      }
      expect(snapshot(db)).toBe(before)
      const sent = yield* postForm(baseUrl, "/console/approve", form, {
        type: "application/x-www-form-urlencoded; charset=UTF-8"
      })
      expect(sent.status).toBe(303)
    })
  )

  it.scopedLive("with layerInsecure, no sign-in is asked: pages and forms act as anonymous", () =>
    Effect.gen(function* () {
      const db = freshDb("console-insecure")
      yield* onDb(db, Saga.run("payout-1", payout))
      const baseUrl = yield* serveOn(db, { authentication: SagaApi.layerInsecure })
      const page = yield* Effect.promise(() =>
        fetch(`${baseUrl}/console/sagas/payout-1`, { redirect: "manual" }).then(answered)
      )
      expect(page.status).toBe(200)
      expect(page.text).toContain("anonymous")
      const { stepId, revision, digest } = yield* awaiting(baseUrl, "payout-1")
      const answer = yield* postForm(
        baseUrl,
        "/console/approve",
        fields({ sagaId: "payout-1", stepId, revision: String(revision), digest }),
        { cookie: "" }
      )
      expect([answer.status, answer.location]).toEqual([303, "/console"])
      expect((yield* onDb(db, Saga.status("payout-1"))).steps.find((step) => step.stepId === stepId)?.state).toBe(
        "approved"
      )
    })
  )

  it.scopedLive(
    "the sign-in cookie names a session, never the token: the token as a cookie signs no one in, and sign-out ends the session on the server",
    () =>
      Effect.gen(function* () {
        const db = freshDb("console-session")
        yield* onDb(db, Saga.run("payout-1", payout))
        const baseUrl = yield* serveOn(db)
        const signIn = yield* postForm(baseUrl, "/console/login", fields({ token: tokens.alice }), { cookie: "" })
        expect(signIn.status).toBe(303)
        expect(signIn.cookies).toEqual([
          expect.stringMatching(/^effect_saga_console=[\w-]{43}; Max-Age=43200; .*Path=\/;.*HttpOnly.*SameSite=Strict/)
        ])
        expect(signIn.cookies.join()).not.toContain(tokens.alice)
        const cookie = signIn.cookies[0]!.split(";")[0]!
        const as = (value: string) =>
          Effect.promise(() =>
            fetch(`${baseUrl}/console/sagas/payout-1`, { redirect: "manual", headers: { cookie: value } }).then(
              answered
            )
          )
        expect((yield* as(cookie)).status).toBe(200)
        const theToken = yield* as(`effect_saga_console=${tokens.alice}`)
        expect([theToken.status, theToken.location]).toEqual([303, "/console/login?next=%2Fconsole%2Fsagas%2Fpayout-1"])
        // Another sign-in is another session: signing one out leaves the other.
        const other = yield* Effect.promise(() => consoleCookie(baseUrl))
        expect(other).not.toBe(cookie)
        expect((yield* postForm(baseUrl, "/console/logout", "", { cookie })).status).toBe(303)
        const after = yield* as(cookie)
        expect([after.status, after.location]).toEqual([303, "/console/login?next=%2Fconsole%2Fsagas%2Fpayout-1"])
        expect((yield* as(other)).status).toBe(200)
      })
  )
})
