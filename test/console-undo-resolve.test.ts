/**
 * A saga whose compensation failed on an undo that answered unknown, on the console: its page has a
 * card for that undo (ask the provider; undone by hand, say so), whose button journals the undo
 * resolved as undone; the page then says nothing is left dirty, and a compensation again ends the
 * saga compensated without running the undo again.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Outcome, Saga } from "../src/index.js"
import { consolePage, fields, follow, postForm, unescaped } from "./fixtures/console-forms.js"
import { chargeCard, freshDb, onDb, raw, serveOn } from "./fixtures/http-saga.js"

describe("the undo a failed compensation left, on the console", { timeout: 60_000 }, () => {
  it.scopedLive("its card resolves it as undone, and a compensation again ends the saga compensated", () =>
    Effect.gen(function* () {
      const db = freshDb("console-undo-resolve")
      const checkout = Effect.zipRight(chargeCard({ amount: 7 }), Effect.fail(Outcome.failed("no stock")))
      const stepId = yield* onDb(
        db,
        Effect.gen(function* () {
          expect((yield* Saga.run("order-7", checkout))._tag).toBe("CompensationFailed")
          return (yield* Saga.status("order-7")).steps[0]!.stepId
        })
      )
      const baseUrl = yield* serveOn(db)
      const page = (yield* consolePage(baseUrl, "/console/sagas/order-7")).text
      const card = /<div class="card undo-left"[\s\S]*?<\/div>/.exec(page)?.[0] ?? ""
      expect(unescaped(card)).toContain(
        `Its undo answered unknown: it may or may not have happened. (the bank did not answer) effect-saga does not run a settled undo again. Ask the provider (key order-7/${stepId}/undo); if it did not happen, undo the effect by hand.`
      )
      expect(card).toContain("Its effect is undone now")
      expect(card).toContain("The undo did not happen")

      const status = yield* onDb(db, Saga.status("order-7"))
      const posted = yield* postForm(
        baseUrl,
        "/console/resolve",
        fields({
          sagaId: "order-7",
          stepId,
          revision: String(status.revision),
          digest: status.digest,
          outcome: "applied"
        })
      )
      const { notice } = yield* follow(baseUrl, posted)
      expect(notice?.kind).toBe("ok")
      expect(notice?.text).toContain("resolved its undo as undone by alice")

      const after = (yield* consolePage(baseUrl, "/console/sagas/order-7")).text
      expect(after).not.toContain('class="card undo-left"')
      expect(unescaped(after)).toContain("Nothing is left dirty since the last report")
      const resolved = yield* onDb(db, Saga.status("order-7"))
      const body = JSON.stringify({ revision: resolved.revision, digest: resolved.digest })
      const compensated = yield* raw(baseUrl, "POST", "/api/sagas/order-7/compensate", { as: "alice", body })
      expect(compensated.status).toBe(200)
      expect((yield* onDb(db, Saga.status("order-7"))).status).toBe("compensated")
    })
  )
})
