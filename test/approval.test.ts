import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Approval } from "../src/index.js"
import { suite } from "./ApprovalSuite.js"

suite("layerMemory", Approval.layerMemory)

describe("Approval policy layers", () => {
  it.effect("layerAutoApprove approves every request at once, for exactly the digest it names", () =>
    Effect.gen(function* () {
      const approval = yield* Approval.Approval
      const decision = yield* approval.request(request)
      expect(decision).toMatchObject({ _tag: "Approved", by: "auto-approve", inputDigest: request.inputDigest })
      expect(yield* Approval.pending).toEqual([])
      expect((yield* Effect.flip(Approval.reject(request.requestId, { by: "bob", reason: "late" })))._tag).toBe(
        "AlreadyDecided"
      )
    }).pipe(Effect.provide(Approval.layerAutoApprove))
  )

  it.effect("layerRejectAll rejects every request at once", () =>
    Effect.gen(function* () {
      const approval = yield* Approval.Approval
      expect(yield* approval.request(request)).toMatchObject({ _tag: "Rejected", by: "reject-all" })
      expect(yield* Approval.pending).toEqual([])
      expect(
        (yield* Effect.flip(Approval.approve(request.requestId, { by: "alice", inputDigest: request.inputDigest })))
          ._tag
      ).toBe("AlreadyDecided")
    }).pipe(Effect.provide(Approval.layerRejectAll))
  )
})

const request: Approval.ApprovalRequest = {
  requestId: "saga-1/sendWire:abc#1",
  sagaId: "saga-1",
  stepId: "sendWire:abc#1",
  toolName: "sendWire",
  input: '{"amount":4200}',
  inputDigest: "7f3a9c",
  requestedAt: "2025-01-01T00:00:00.000Z"
}
