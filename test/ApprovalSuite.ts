/**
 * The approval service's conformance suite, for backends where a request waits for a human
 * (`Approval.layerMemory`, the persisted one beside the SQL journal).
 */
import { describe, expect, it } from "@effect/vitest"
import type { Layer } from "effect"
import { Effect, Option, TestClock } from "effect"
import { Approval } from "../src/index.js"

export const suite = (name: string, layer: Layer.Layer<Approval.Approval>) =>
  describe(`Approval conformance: ${name}`, () => {
    it.effect("a new request is pending and listed as pending", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        expect(yield* approval.request(request("s/a"))).toEqual({ _tag: "Pending" })
        expect(yield* Approval.pending).toEqual([request("s/a")])
      }).pipe(Effect.provide(layer))
    )

    it.effect("asking again for the same request registers it once", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        yield* approval.request(request("s/a"))
        expect(yield* approval.request(request("s/a"))).toEqual({ _tag: "Pending" })
        expect(yield* Approval.pending).toHaveLength(1)
      }).pipe(Effect.provide(layer))
    )

    it.effect("an approval names who, when and the input digest, and is what the next request sees", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        yield* approval.request(request("s/a"))
        yield* TestClock.setTime(Date.UTC(2025, 5, 1, 12))
        yield* Approval.approve("s/a", { by: "alice", inputDigest: "d-1", expiresAt: "2025-06-02T00:00:00.000Z" })
        const approved = {
          _tag: "Approved",
          by: "alice",
          at: "2025-06-01T12:00:00.000Z",
          inputDigest: "d-1",
          expiresAt: "2025-06-02T00:00:00.000Z"
        }
        expect(yield* approval.request(request("s/a"))).toEqual(approved)
        expect(yield* approval.get("s/a")).toEqual(Option.some({ request: request("s/a"), decision: approved }))
        expect(yield* Approval.pending).toEqual([])
      }).pipe(Effect.provide(layer))
    )

    it.effect("a rejection names who and why", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        yield* approval.request(request("s/a"))
        yield* Approval.reject("s/a", { by: "bob", reason: "wrong account" })
        expect(yield* approval.request(request("s/a"))).toMatchObject({
          _tag: "Rejected",
          by: "bob",
          reason: "wrong account"
        })
        expect(yield* Approval.pending).toEqual([])
      }).pipe(Effect.provide(layer))
    )

    it.effect("a decided request cannot be decided again", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        yield* approval.request(request("s/a"))
        yield* approval.request(request("s/b"))
        yield* Approval.approve("s/a", { by: "alice", inputDigest: "d-1" })
        yield* Approval.reject("s/b", { by: "bob", reason: "no" })
        expect(yield* Effect.flip(Approval.approve("s/a", { by: "mallory", inputDigest: "d-2" }))).toMatchObject({
          _tag: "AlreadyDecided",
          requestId: "s/a",
          decision: "approved"
        })
        expect(yield* Effect.flip(Approval.reject("s/a", { by: "mallory", reason: "changed my mind" }))).toMatchObject({
          _tag: "AlreadyDecided",
          decision: "approved"
        })
        expect(yield* Effect.flip(Approval.approve("s/b", { by: "mallory", inputDigest: "d-1" }))).toMatchObject({
          _tag: "AlreadyDecided",
          requestId: "s/b",
          decision: "rejected"
        })
        expect(yield* approval.request(request("s/a"))).toMatchObject({
          _tag: "Approved",
          by: "alice",
          inputDigest: "d-1"
        })
      }).pipe(Effect.provide(layer))
    )

    it.effect("deciding an unknown request fails with ApprovalNotFound", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        expect(yield* Effect.flip(Approval.approve("nope", { by: "alice", inputDigest: "d-1" }))).toMatchObject({
          _tag: "ApprovalNotFound",
          requestId: "nope"
        })
        expect((yield* Effect.flip(Approval.reject("nope", { by: "alice", reason: "no" })))._tag).toBe(
          "ApprovalNotFound"
        )
        expect(Option.isNone(yield* approval.get("nope"))).toBe(true)
      }).pipe(Effect.provide(layer))
    )

    it.effect("pending lists only undecided requests, oldest first", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        for (const id of ["s/1", "s/2", "s/3"]) {
          yield* approval.request(request(id))
          yield* TestClock.adjust("1 second")
        }
        yield* Approval.approve("s/2", { by: "alice", inputDigest: "d-1" })
        expect((yield* Approval.pending).map((pending) => pending.requestId)).toEqual(["s/1", "s/3"])
      }).pipe(Effect.provide(layer))
    )
  })

const request = (requestId: string): Approval.ApprovalRequest => {
  const [sagaId, stepId] = requestId.split("/") as [string, string]
  return {
    requestId,
    sagaId,
    stepId,
    toolName: "sendWire",
    input: '{"amount":4200}',
    inputDigest: "d-1",
    requestedAt: "2025-01-01T00:00:00.000Z"
  }
}
