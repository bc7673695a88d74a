import { assert, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Saga } from "../src/index.js"
import { clientAs, freshDb, onDb, payout, serveOn } from "./fixtures/http-saga.js"

describe("SagaApi through its typed client, on a real server on 127.0.0.1 over SQLite", { timeout: 30_000 }, () => {
  it.scopedLive("lists sagas, gets one, approves its wire transfer; resumed from code it completes", () =>
    Effect.gen(function* () {
      const db = freshDb("approve")
      const first = yield* onDb(db, Saga.run("payout-1", payout))
      expect(first._tag).toBe("AwaitingApproval")
      const baseUrl = yield* serveOn(db)
      const api = yield* clientAs(baseUrl, "alice")
      const page = yield* api.sagas.list({ urlParams: {} })
      expect(page.sagas.map((saga) => [saga.sagaId, saga.status, saga.needsHuman])).toEqual([
        ["payout-1", "awaiting_approval", true]
      ])
      const detail = yield* api.sagas.get({ path: { sagaId: "payout-1" } })
      const waiting = detail.steps.find((step) => step.state === "awaiting_approval")
      assert(waiting !== undefined)
      expect(waiting.toolName).toBe("sendWireTransfer")
      const answer = yield* api.approvals.approve({
        path: { sagaId: "payout-1", stepId: waiting.stepId },
        payload: { revision: detail.saga.revision, digest: detail.saga.digest }
      })
      expect(answer.changed).toBe(true)
      const resumed = yield* onDb(db, Saga.resume("payout-1", payout))
      expect(resumed._tag).toBe("Completed")
    })
  )
})
