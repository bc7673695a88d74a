/**
 * A request the approvals table holds otherwise than a journal that verifies (here: a decision the
 * journal lacks, as an `approve` stopped between its two writes leaves one) is marked in the
 * console's inbox without buttons, and its banner says what `effect-saga approvals` says: no new
 * decision, and `effect-saga show SAGA` says what to do (the same command again, or a backup).
 */

import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { Saga } from "../src/index.js"
import { consoleCookie, freshDb, onDb, payout, serveOn } from "./fixtures/http-saga.js"

describe("the console's inbox, a decision the journal lacks", { timeout: 30_000 }, () => {
  it.scopedLive("is marked with what to do next and offers no Approve or Reject", () =>
    Effect.gen(function* () {
      const db = freshDb("console-doubted")
      yield* onDb(db, Saga.run("payout-1", payout))
      const file = new Database(db)
      file
        .prepare(
          `UPDATE effect_saga_approvals SET status = 'approved', decided_at = requested_at,
             decision = json_object('_tag', 'Approved', 'by', 'mallory', 'at', requested_at, 'inputDigest', input_digest)
           WHERE saga_id = 'payout-1'`
        )
        .run()
      file.close()
      const baseUrl = yield* serveOn(db)
      const cookie = yield* Effect.promise(() => consoleCookie(baseUrl))
      const html = yield* Effect.promise(() =>
        fetch(`${baseUrl}/console`, { headers: { cookie } }).then((r) => r.text())
      )
      const card = html.slice(html.indexOf("<article"), html.indexOf("</article>"))
      expect(card).toContain("was approved by mallory, but the journal holds no such decision")
      expect(card).toContain("Make no new decision on it; effect-saga show payout-1 says what to do.")
      expect(card).not.toContain("Do not decide")
      expect(card).not.toContain("<button")
    })
  )
})
