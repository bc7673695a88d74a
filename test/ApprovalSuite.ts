/**
 * The approval service's conformance suite, for backends where a request waits for a human
 * (`Approval.layerMemory`, the persisted one beside the SQL journal).
 *
 * Every test asks for requests of a saga of its own and narrows `pending` to it, so a backend whose
 * storage outlives one test still passes.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import type { Layer } from "effect"
import { Effect, Option, TestClock } from "effect"
import { Approval } from "../src/index.js"

export const suite = (name: string, layer: Layer.Layer<Approval.Approval, unknown>) =>
  describe(`Approval conformance: ${name}`, () => {
    let sagas = 0
    /** A saga id no other test of this suite uses, and the requests of that saga still pending. */
    const fresh = () => {
      const sagaId = `approval-${++sagas}`
      const pendingOf = Effect.map(Approval.pending, (requests) =>
        requests.filter((request) => request.sagaId === sagaId)
      )
      return { id: (step: string) => `${sagaId}/${step}`, pendingOf }
    }

    it.effect("a new request is pending and listed as pending", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id, pendingOf } = fresh()
        expect(yield* approval.request(request(id("a")))).toEqual({ _tag: "Pending" })
        expect(yield* pendingOf).toEqual([request(id("a"))])
      }).pipe(Effect.provide(layer))
    )

    it.effect("asking again for the same request registers it once", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id, pendingOf } = fresh()
        yield* approval.request(request(id("a")))
        expect(yield* approval.request(request(id("a")))).toEqual({ _tag: "Pending" })
        expect(yield* pendingOf).toHaveLength(1)
      }).pipe(Effect.provide(layer))
    )

    it.effect("an approval names who, when and the input digest, and is what the next request sees", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id, pendingOf } = fresh()
        yield* approval.request(request(id("a")))
        yield* TestClock.setTime(Date.UTC(2025, 5, 1, 12))
        yield* Approval.approve(id("a"), { by: "alice", inputDigest: "d-1", expiresAt: "2025-06-02T00:00:00.000Z" })
        const approved = {
          _tag: "Approved",
          by: "alice",
          at: "2025-06-01T12:00:00.000Z",
          inputDigest: "d-1",
          expiresAt: "2025-06-02T00:00:00.000Z"
        }
        expect(yield* approval.request(request(id("a")))).toEqual(approved)
        expect(yield* approval.get(id("a"))).toEqual(Option.some({ request: request(id("a")), decision: approved }))
        expect(yield* pendingOf).toEqual([])
      }).pipe(Effect.provide(layer))
    )

    it.effect("an approval keeps the digest the approver gave, not the request's", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id } = fresh()
        yield* approval.request(request(id("a")))
        yield* Approval.approve(id("a"), { by: "alice", inputDigest: "d-other" })
        const held = yield* approval.get(id("a"))
        assert(Option.isSome(held) && held.value.decision._tag === "Approved")
        expect(held.value.decision.inputDigest).toBe("d-other")
        expect(yield* approval.request(request(id("a")))).toMatchObject({ _tag: "Approved", inputDigest: "d-other" })
      }).pipe(Effect.provide(layer))
    )

    it.effect("an approval without an expiry has none", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id } = fresh()
        yield* approval.request(request(id("a")))
        yield* Approval.approve(id("a"), { by: "alice", inputDigest: "d-1" })
        const decision = yield* approval.request(request(id("a")))
        expect(decision).toEqual({ _tag: "Approved", by: "alice", at: "1970-01-01T00:00:00.000Z", inputDigest: "d-1" })
        expect("expiresAt" in decision).toBe(false)
      }).pipe(Effect.provide(layer))
    )

    it.effect("a rejection names who and why", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id, pendingOf } = fresh()
        yield* approval.request(request(id("a")))
        yield* Approval.reject(id("a"), { by: "bob", reason: "wrong account" })
        expect(yield* approval.request(request(id("a")))).toMatchObject({
          _tag: "Rejected",
          by: "bob",
          reason: "wrong account"
        })
        expect(yield* pendingOf).toEqual([])
      }).pipe(Effect.provide(layer))
    )

    it.effect("a decided request cannot be decided again", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id } = fresh()
        yield* approval.request(request(id("a")))
        yield* approval.request(request(id("b")))
        yield* Approval.approve(id("a"), { by: "alice", inputDigest: "d-1" })
        yield* Approval.reject(id("b"), { by: "bob", reason: "no" })
        expect(yield* Effect.flip(Approval.approve(id("a"), { by: "mallory", inputDigest: "d-2" }))).toMatchObject({
          _tag: "AlreadyDecided",
          requestId: id("a"),
          decision: "approved"
        })
        expect(
          yield* Effect.flip(Approval.reject(id("a"), { by: "mallory", reason: "changed my mind" }))
        ).toMatchObject({
          _tag: "AlreadyDecided",
          decision: "approved"
        })
        expect(yield* Effect.flip(Approval.approve(id("b"), { by: "mallory", inputDigest: "d-1" }))).toMatchObject({
          _tag: "AlreadyDecided",
          requestId: id("b"),
          decision: "rejected"
        })
        expect(yield* approval.request(request(id("a")))).toMatchObject({
          _tag: "Approved",
          by: "alice",
          inputDigest: "d-1"
        })
      }).pipe(Effect.provide(layer))
    )

    it.effect("deciding an unknown request fails with ApprovalNotFound", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id } = fresh()
        expect(yield* Effect.flip(Approval.approve(id("nope"), { by: "alice", inputDigest: "d-1" }))).toMatchObject({
          _tag: "ApprovalNotFound",
          requestId: id("nope")
        })
        expect((yield* Effect.flip(Approval.reject(id("nope"), { by: "alice", reason: "no" })))._tag).toBe(
          "ApprovalNotFound"
        )
        expect(Option.isNone(yield* approval.get(id("nope")))).toBe(true)
      }).pipe(Effect.provide(layer))
    )

    it.effect("a renewal keeps who approved, when and the digest, takes the new expiry and names who renewed", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id, pendingOf } = fresh()
        yield* approval.request(request(id("a")))
        yield* Approval.approve(id("a"), { by: "alice", inputDigest: "d-1", expiresAt: "1970-01-01T00:01:00.000Z" })
        yield* TestClock.adjust("2 minutes")
        yield* Approval.renew(id("a"), { by: "bob", inputDigest: "d-1", expiresAt: "1970-01-01T01:00:00.000Z" })
        const renewed = {
          _tag: "Approved",
          by: "alice",
          at: "1970-01-01T00:00:00.000Z",
          inputDigest: "d-1",
          expiresAt: "1970-01-01T01:00:00.000Z",
          renewedBy: "bob",
          renewedAt: "1970-01-01T00:02:00.000Z"
        }
        expect(yield* approval.request(request(id("a")))).toEqual(renewed)
        expect(yield* approval.get(id("a"))).toEqual(Option.some({ request: request(id("a")), decision: renewed }))
        expect(yield* pendingOf).toEqual([])
      }).pipe(Effect.provide(layer))
    )

    it.effect("a renewal without an expiry leaves the approval without one; the latest renewal is kept", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id } = fresh()
        yield* approval.request(request(id("a")))
        yield* Approval.approve(id("a"), { by: "alice", inputDigest: "d-1", expiresAt: "1970-01-01T00:01:00.000Z" })
        yield* Approval.renew(id("a"), { by: "bob", inputDigest: "d-1", expiresAt: "1970-01-01T00:05:00.000Z" })
        yield* TestClock.adjust("1 minute")
        yield* Approval.renew(id("a"), { by: "carol", inputDigest: "d-1" })
        const decision = yield* approval.request(request(id("a")))
        expect(decision).toEqual({
          _tag: "Approved",
          by: "alice",
          at: "1970-01-01T00:00:00.000Z",
          inputDigest: "d-1",
          renewedBy: "carol",
          renewedAt: "1970-01-01T00:01:00.000Z"
        })
        expect("expiresAt" in decision).toBe(false)
      }).pipe(Effect.provide(layer))
    )

    it.effect("a renewal naming another input digest fails with ApprovalMismatch and changes nothing", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id } = fresh()
        yield* approval.request(request(id("a")))
        yield* Approval.approve(id("a"), { by: "alice", inputDigest: "d-1", expiresAt: "1970-01-01T00:01:00.000Z" })
        const before = yield* approval.get(id("a"))
        const failure = yield* Effect.flip(
          Approval.renew(id("a"), { by: "mallory", inputDigest: "d-2", expiresAt: "2099-01-01T00:00:00.000Z" })
        )
        expect(failure).toMatchObject({
          _tag: "ApprovalMismatch",
          requestId: id("a"),
          approvedDigest: "d-1",
          inputDigest: "d-2"
        })
        expect(yield* approval.get(id("a"))).toEqual(before)
      }).pipe(Effect.provide(layer))
    )

    it.effect("only an approved request can be renewed: pending, rejected and unknown ones fail, unchanged", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id, pendingOf } = fresh()
        yield* approval.request(request(id("waiting")))
        yield* approval.request(request(id("refused")))
        yield* Approval.reject(id("refused"), { by: "bob", reason: "no" })
        const renew = (step: string) => Effect.flip(Approval.renew(id(step), { by: "mallory", inputDigest: "d-1" }))
        expect(yield* renew("waiting")).toMatchObject({ _tag: "NotApproved", requestId: id("waiting") })
        expect(yield* renew("refused")).toMatchObject({
          _tag: "AlreadyDecided",
          requestId: id("refused"),
          decision: "rejected"
        })
        expect(yield* renew("nope")).toMatchObject({ _tag: "ApprovalNotFound", requestId: id("nope") })
        expect(yield* pendingOf).toEqual([request(id("waiting"))])
        expect(yield* approval.request(request(id("refused")))).toMatchObject({ _tag: "Rejected", by: "bob" })
      }).pipe(Effect.provide(layer))
    )

    it.effect("pending lists only undecided requests, oldest first", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id, pendingOf } = fresh()
        for (const step of ["1", "2", "3"]) {
          yield* approval.request(request(id(step)))
          yield* TestClock.adjust("1 second")
        }
        yield* Approval.approve(id("2"), { by: "alice", inputDigest: "d-1" })
        expect((yield* pendingOf).map((pending) => pending.requestId)).toEqual([id("1"), id("3")])
      }).pipe(Effect.provide(layer))
    )

    it.effect("a request made at another time under a decided request's id (an earlier saga's) is pending anew", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id, pendingOf } = fresh()
        yield* approval.request(request(id("a")))
        yield* Approval.approve(id("a"), { by: "alice", inputDigest: "d-1" })
        const later = { ...request(id("a")), requestedAt: "2025-03-01T00:00:00.000Z" }
        expect(yield* approval.request(later)).toEqual({ _tag: "Pending" })
        expect(yield* pendingOf).toEqual([later])
        expect(yield* approval.request(later)).toEqual({ _tag: "Pending" })
      }).pipe(Effect.provide(layer))
    )

    it.effect("a fresh request replaces a decided record under its id, even one requested at the same time", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id, pendingOf } = fresh()
        yield* approval.request(request(id("a")))
        yield* Approval.reject(id("a"), { by: "bob", reason: "not this month" })
        expect(yield* approval.request(request(id("a")), { fresh: true })).toEqual({ _tag: "Pending" })
        expect(yield* pendingOf).toEqual([request(id("a"))])
        // Asked again (a later run), not fresh: the record is the request's own now.
        yield* Approval.approve(id("a"), { by: "alice", inputDigest: "d-1" })
        expect((yield* approval.request(request(id("a"))))._tag).toBe("Approved")
      }).pipe(Effect.provide(layer))
    )

    it.effect("requests registered at the same instant are pending in the order they were registered", () =>
      Effect.gen(function* () {
        const approval = yield* Approval.Approval
        const { id, pendingOf } = fresh()
        for (const step of ["c", "a", "b"]) yield* approval.request(request(id(step)))
        expect((yield* pendingOf).map((pending) => pending.requestId)).toEqual([id("c"), id("a"), id("b")])
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
