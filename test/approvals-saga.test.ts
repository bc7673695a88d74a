import { createHash } from "node:crypto"
import { assert, describe, expect, it } from "@effect/vitest"
import type { Duration } from "effect"
import { Cause, Effect, Layer, Logger, Option, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Saga, SagaError, Timeline } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { entriesOf } from "./fixtures/journal-reads.js"
import { tickingClock } from "./fixtures/tickingClock.js"

describe("approvals in a saga", () => {
  it.effect("an irreversible step waits for approval, journaled with its input digest, without running", () =>
    Effect.gen(function* () {
      const { log, program } = fixture()
      const result = yield* Saga.run("wait", program)
      assert(result._tag === "AwaitingApproval")
      expect(result.request).toMatchObject({
        sagaId: "wait",
        toolName: "sendWire",
        input: wireJson,
        inputDigest: wireDigest
      })
      expect(log).toEqual(["reserve A-1"])
      const awaiting = (yield* entriesOf("wait")).find((entry) => entry.phase === "AWAITING_APPROVAL")!
      expect(awaiting).toMatchObject({
        toolName: "sendWire",
        input: wireJson,
        payload: JSON.stringify({ inputDigest: wireDigest })
      })
      expect(yield* statusOf("wait")).toBe("awaiting_approval")
      expect(yield* Approval.pending).toEqual([result.request])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a rejection's reason that is blank or over 4096 UTF-8 bytes is refused: nothing decided, nothing written",
    () =>
      Effect.gen(function* () {
        const { program } = fixture()
        const result = yield* Saga.run("why", program)
        assert(result._tag === "AwaitingApproval")
        const { stepId } = result.request
        const before = yield* entriesOf("why")
        const refusals: Array<readonly [string, string]> = [
          ["  ", "a rejection needs a reason, and this one is blank: nothing was written"],
          [
            "é".repeat(2049),
            `the reason is 4098 UTF-8 bytes, over the limit of ${Saga.MAX_REJECTION_REASON_BYTES}: give a shorter one (nothing was written)`
          ]
        ]
        for (const [reason, why] of refusals) {
          const refused = yield* Effect.flip(Saga.reject("why", stepId, { by: "bob", reason }))
          expect(refused).toMatchObject({ _tag: "CommandRefused", sagaId: "why", stepId, reason: why })
          expect(yield* entriesOf("why")).toEqual(before)
          expect(yield* Approval.pending).toEqual([result.request])
        }
        // At the limit, it is the reason journaled.
        yield* Saga.reject("why", stepId, { by: "bob", reason: "é".repeat(2048) })
        const rejected = (yield* entriesOf("why")).find((entry) => entry.phase === "REJECTED")!
        expect(JSON.parse(rejected.payload!).reason).toBe(`rejected by bob: ${"é".repeat(2048)}`)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "resumed with another input, the request is refused in the journal and withdrawn from the approval service",
    () =>
      Effect.gen(function* () {
        for (const key of [undefined, "payout"]) {
          const sagaId = `changed-${key ?? "unkeyed"}`
          const { log, programWith } = fixture()
          assert((yield* Saga.run(sagaId, programWith(wireInput, key)))._tag === "AwaitingApproval")
          const changed = yield* Saga.run(sagaId, programWith({ ...wireInput, amount: wireInput.amount + 1 }, key))
          expect(changed._tag).toBe("Compensated")
          const refused = (yield* entriesOf(sagaId)).find((entry) => entry.phase === "REJECTED")!
          expect(refused.toolName).toBe("sendWire")
          // Nobody can approve it any more: it is no longer pending, and an approval is refused.
          expect(yield* Approval.pending).toEqual([])
          expect(log).not.toContain("wire")
        }
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("once approved, running the saga again runs the step exactly once and completes", () =>
    Effect.gen(function* () {
      const { log, program } = fixture()
      const waiting = yield* Saga.run("approved", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Approval.approve(waiting.request.requestId, { by: "alice", inputDigest: waiting.request.inputDigest })
      expect((yield* Saga.run("approved", program))._tag).toBe("Completed")
      expect((yield* Saga.run("approved", program))._tag).toBe("Completed")
      expect(log).toEqual(["reserve A-1", "wire 4200 to DE89"])
      const entries = yield* entriesOf("approved")
      const approved = entries.find((entry) => entry.phase === "APPROVED")!
      expect(JSON.parse(approved.payload!)).toMatchObject({ by: "alice", inputDigest: wireDigest })
      expect(wirePhases(entries)).toEqual(["AWAITING_APPROVAL", "APPROVED", "INTENT", "EXECUTED"])
      expect(yield* statusOf("approved")).toBe("completed")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("under layerAutoApprove the step is approved and runs in the first run", () =>
    Effect.gen(function* () {
      const { log, program } = fixture()
      expect(yield* Saga.run("auto", program)).toMatchObject({ _tag: "Completed", value: "wire-4200" })
      expect(log).toEqual(["reserve A-1", "wire 4200 to DE89"])
      const entries = yield* entriesOf("auto")
      expect(wirePhases(entries)).toEqual(["AWAITING_APPROVAL", "APPROVED", "INTENT", "EXECUTED"])
      expect(JSON.parse(entries.find((entry) => entry.phase === "APPROVED")!.payload!)).toMatchObject({
        by: "auto-approve",
        inputDigest: wireDigest
      })
    }).pipe(Effect.provide(Testing.layerWith(Approval.layerAutoApprove)))
  )

  it.effect("under layerRejectAll the step is journaled REJECTED and the steps before it are undone", () =>
    Effect.gen(function* () {
      const { log, program } = fixture()
      const result = yield* Saga.run("rejected", program)
      assert(result._tag === "Compensated")
      expect(refusal(result.cause)).toMatchObject({ _tag: "ApprovalRefused", toolName: "sendWire" })
      expect(result.report.undone).toMatchObject([{ toolName: "reserve", outcome: "completed" }])
      expect(log).toEqual(["reserve A-1", "release res-A-1"])
      expect(wirePhases(yield* entriesOf("rejected"))).toEqual(["AWAITING_APPROVAL", "REJECTED"])
      expect(yield* statusOf("rejected")).toBe("compensated")
    }).pipe(Effect.provide(Testing.layerWith(Approval.layerRejectAll)))
  )

  it.effect("a human rejection compensates on the next run", () =>
    Effect.gen(function* () {
      const { log, program } = fixture()
      const waiting = yield* Saga.run("said-no", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Approval.reject(waiting.request.requestId, { by: "bob", reason: "wrong account" })
      const result = yield* Saga.run("said-no", program)
      assert(result._tag === "Compensated")
      expect(refusal(result.cause)?.reason).toContain("wrong account")
      expect(log).toEqual(["reserve A-1", "release res-A-1"])
      expect(wirePhases(yield* entriesOf("said-no"))).toEqual(["AWAITING_APPROVAL", "REJECTED"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an approval for another input digest is refused and the saga compensates", () =>
    Effect.gen(function* () {
      const { log, program } = fixture()
      const waiting = yield* Saga.run("other-digest", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Approval.approve(waiting.request.requestId, { by: "alice", inputDigest: "0".repeat(64) })
      const result = yield* Saga.run("other-digest", program)
      assert(result._tag === "Compensated")
      expect(refusal(result.cause)?.reason).toContain("different input")
      expect(log).toEqual(["reserve A-1", "release res-A-1"])
      expect(wirePhases(yield* entriesOf("other-digest"))).toEqual(["AWAITING_APPROVAL", "REJECTED"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("compensating a saga withdraws its pending request: it cannot be approved, and the step never runs", () =>
    Effect.gen(function* () {
      const { log, program } = fixture()
      const waiting = yield* Saga.run("late-approval", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Saga.compensate("late-approval")
      // Journaled REJECTED by effect-saga with the reason, and gone from the pending list.
      const withdrawn = (yield* entriesOf("late-approval")).find((entry) => entry.phase === "REJECTED")!
      expect(withdrawn.stepId).toBe(waiting.request.stepId)
      expect(JSON.parse(withdrawn.payload!)).toMatchObject({
        by: "effect-saga",
        reason: expect.stringContaining("withdrawn")
      })
      expect(yield* Approval.pending).toEqual([])
      const late = yield* Effect.flip(
        Approval.approve(waiting.request.requestId, { by: "alice", inputDigest: waiting.request.inputDigest })
      )
      expect(late._tag).toBe("AlreadyDecided")
      expect(yield* Effect.flip(Saga.approve("late-approval", waiting.request.stepId, { by: "alice" }))).toMatchObject({
        _tag: "CommandConflict",
        answer: expect.stringContaining("withdrawn")
      })
      const status = yield* Saga.status("late-approval")
      expect(status.steps.find((step) => step.stepId === waiting.request.stepId)?.state).toBe("refused")
      const before = yield* entriesOf("late-approval")
      const again = yield* Saga.run("late-approval", program)
      expect(again._tag).toBe("Compensated")
      expect(log).toEqual(["reserve A-1", "release res-A-1"])
      expect(yield* entriesOf("late-approval")).toEqual(before)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a withdrawal the approval service missed (a crash in between) is made again by the next compensation pass",
    () =>
      Effect.gen(function* () {
        const { program } = fixture()
        const approvals = Approval.makeMemory()
        let down = true
        const flaky: Approval.Approval["Type"] = {
          ...approvals,
          reject: (requestId, options) =>
            down
              ? Effect.fail(new Journal.JournalError({ operation: "reject", reason: "the approval store is down" }))
              : approvals.reject(requestId, options)
        }
        const store = Saga.layer.pipe(
          Layer.provideMerge(Layer.merge(Journal.layerMemory, Layer.succeed(Approval.Approval, flaky)))
        )
        yield* Effect.gen(function* () {
          const waiting = yield* Saga.run("missed", program)
          assert(waiting._tag === "AwaitingApproval")
          yield* Saga.compensate("missed")
          // Journaled as withdrawn, but the approval service still lists the request.
          expect((yield* entriesOf("missed")).filter((entry) => entry.phase === "REJECTED")).toHaveLength(1)
          expect((yield* approvals.pending).map((request) => request.requestId)).toEqual([waiting.request.requestId])
          down = false
          yield* Saga.compensate("missed")
          expect(yield* approvals.pending).toEqual([])
          expect((yield* entriesOf("missed")).filter((entry) => entry.phase === "REJECTED")).toHaveLength(1)
        }).pipe(Effect.provide(store))
      })
  )

  it.effect("an approval that expired before the run is refused, journaled EXPIRED, and compensates", () =>
    Effect.gen(function* () {
      const { log, program } = fixture()
      const waiting = yield* Saga.run("expired", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Approval.approve(waiting.request.requestId, {
        by: "alice",
        inputDigest: waiting.request.inputDigest,
        expiresAt: new Date(60_000).toISOString()
      })
      yield* TestClock.adjust("2 minutes")
      const result = yield* Saga.run("expired", program)
      expect(result._tag).toBe("Compensated")
      expect(wirePhases(yield* entriesOf("expired"))).toContain("EXPIRED")
      expect(log).toEqual(["reserve A-1", "release res-A-1"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an approved step resumed with a different input is refused, journaled REJECTED, and compensates", () =>
    Effect.gen(function* () {
      const { log, program, programWith } = fixture()
      const waiting = yield* Saga.run("tampered", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Saga.approve("tampered", waiting.request.stepId, { by: "alice" })
      const result = yield* Saga.run("tampered", programWith({ amount: 9999, to: "XX00" }))
      expect(result._tag).toBe("Compensated")
      assert(result._tag === "Compensated")
      expect(Cause.squash(result.cause)).toMatchObject({ _tag: "ApprovalRefused", stepId: waiting.request.stepId })
      expect(wirePhases(yield* entriesOf("tampered"))).toEqual(["AWAITING_APPROVAL", "APPROVED", "REJECTED"])
      expect(log).toEqual(["reserve A-1", "release res-A-1"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a refused step is refused again as journaled: a replay with another input writes nothing", () =>
    Effect.gen(function* () {
      const { log, programWith } = fixture()
      for (const key of [undefined, "payout"]) {
        const sagaId = `refused-${key ?? "unkeyed"}`
        const waiting = yield* Saga.run(sagaId, programWith(wireInput, key))
        assert(waiting._tag === "AwaitingApproval")
        yield* Saga.reject(sagaId, waiting.request.stepId, { by: "bob", reason: "wrong account" })
        const before = yield* entriesOf(sagaId)
        const result = yield* Saga.run(sagaId, programWith({ amount: 9999, to: "XX00" }, key))
        assert(result._tag === "Compensated")
        expect(refusal(result.cause)?.reason).toBe("rejected by bob: wrong account")
        expect(yield* entriesOf(sagaId)).toEqual(before)
      }
      expect(log).toEqual(["reserve A-1", "release res-A-1", "reserve A-1", "release res-A-1"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("after Saga.reject, every replay of the saga ends with the typed ApprovalRefused, never a defect", () =>
    Effect.gen(function* () {
      const { program } = fixture()
      const waiting = yield* Saga.run("rejected-replay", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Saga.reject("rejected-replay", waiting.request.stepId, { by: "bob", reason: "wrong account" })
      const before = yield* entriesOf("rejected-replay")
      for (let replay = 0; replay < 2; replay++) {
        const result = yield* Saga.run("rejected-replay", program)
        assert(result._tag === "Compensated")
        const failure = Option.getOrThrow(Cause.failureOption(result.cause))
        assert(failure instanceof SagaError.ApprovalRefused)
        expect(failure).toMatchObject({
          stepId: waiting.request.stepId,
          toolName: "sendWire",
          reason: "rejected by bob: wrong account"
        })
      }
      expect(yield* entriesOf("rejected-replay")).toEqual(before)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an expiresAt already past, or a day its month does not have, is refused: nothing is written", () =>
    Effect.gen(function* () {
      const { program } = fixture()
      yield* TestClock.setTime(Date.parse("2026-12-02T12:00:00Z"))
      const waiting = yield* Saga.run("past", program)
      assert(waiting._tag === "AwaitingApproval")
      const { stepId } = waiting.request
      const before = yield* entriesOf("past")
      for (const [expiresAt, why] of [
        ["2000-01-01T00:00:00Z", "is already past: the approval would never hold"],
        ["2026-12-02T12:00:00Z", "is already past: the approval would never hold"],
        ["2030-02-30T00:00:00Z", "is not a time (ISO-8601 with its zone, such as 2026-12-31T18:00:00Z)"],
        // Without a zone, each worker would read it in its own local time.
        [
          "2030-01-01T12:01:00",
          "names no zone: add one (2025-01-31T12:00:00Z for UTC, 2025-01-31T13:00+01:00): without it, each host would read it in its own local time"
        ],
        ["January 1, 2030 12:01:00", "is not a time (ISO-8601 with its zone, such as 2026-12-31T18:00:00Z)"]
      ] as const) {
        const refused = yield* Effect.flip(Saga.approve("past", stepId, { by: "alice", expiresAt }))
        expect(refused).toMatchObject({ _tag: "CommandRefused", reason: `expiresAt "${expiresAt}" ${why}` })
      }
      expect(yield* entriesOf("past")).toEqual(before)
      yield* Saga.approve("past", stepId, { by: "alice", expiresAt: "2026-12-02T12:00:01Z" })
      expect((yield* Saga.run("past", program))._tag).toBe("Completed")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a decision whose expiresAt has no zone is read by no worker's local time: the run finds it expired", () =>
    Effect.gen(function* () {
      const { log, program } = fixture()
      yield* TestClock.setTime(Date.parse("2026-12-02T12:00:00Z"))
      const waiting = yield* Saga.run("no-zone", program)
      assert(waiting._tag === "AwaitingApproval")
      const { inputDigest, requestId } = waiting.request
      yield* Approval.approve(requestId, { by: "alice", inputDigest, expiresAt: "2099-01-01T00:00:00" })
      const result = yield* Saga.run("no-zone", program)
      assert(result._tag === "Compensated")
      expect(refusal(result.cause)?.reason).toBe(
        `the approval's expiry "2099-01-01T00:00:00" names no time a worker can read (ISO-8601 with its zone): taken as expired`
      )
      expect(log).toEqual(["reserve A-1", "release res-A-1"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an expiresAt that names no time is refused by approve and renewApproval, and nothing is written", () =>
    Effect.gen(function* () {
      const { program } = fixture()
      const waiting = yield* Saga.run("typo", program)
      assert(waiting._tag === "AwaitingApproval")
      const { stepId } = waiting.request
      const before = yield* entriesOf("typo")
      const refused = yield* Effect.flip(Saga.approve("typo", stepId, { by: "alice", expiresAt: "tomorrow" }))
      expect(refused).toMatchObject({
        _tag: "CommandRefused",
        reason: 'expiresAt "tomorrow" is not a time (ISO-8601 with its zone, such as 2026-12-31T18:00:00Z)'
      })
      expect(yield* entriesOf("typo")).toEqual(before)
      expect(yield* Approval.pending).toEqual([waiting.request])
      yield* Saga.approve("typo", stepId, { by: "alice", expiresAt: "2099-01-01T00:00:00Z" })
      const renewal = yield* Effect.flip(Saga.renewApproval("typo", stepId, { by: "alice", expiresAt: "soon" }))
      expect(renewal).toMatchObject({ _tag: "CommandRefused", reason: expect.stringContaining('"soon" is not a time') })
      expect((yield* Saga.run("typo", program))._tag).toBe("Completed")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.live("a run while the request is pending returns the same AwaitingApproval, to the millisecond", () =>
    Effect.gen(function* () {
      const { program } = fixture()
      const first = yield* Saga.run("same-request", program)
      const again = yield* Saga.run("same-request", program)
      assert(first._tag === "AwaitingApproval")
      expect(again).toEqual(first)
      expect(yield* Approval.pending).toEqual([first.request])
      const awaiting = (yield* entriesOf("same-request")).find((entry) => entry.phase === "AWAITING_APPROVAL")!
      expect(first.request.requestedAt).toBe(awaiting.at)
    }).pipe(
      Effect.provide(Testing.layer),
      Effect.withClock(tickingClock({ from: Date.UTC(2026, 11, 2), step: 1, sleep: () => Effect.void }))
    )
  )

  it.effect(
    "a call in a concurrent branch that dies while the run stops for an approval: the saga needs attention, saying why, and the request stays pending",
    () =>
      Effect.gen(function* () {
        const { log } = fixture()
        const charge = Compensable.make({
          name: "charge",
          input: Schema.Struct({ amount: Schema.Int }),
          success: Schema.String,
          // It dies once the other branch has asked for its approval.
          execute: () => Effect.zipRight(Effect.repeatN(Effect.yieldNow(), 50), Effect.dieMessage("lost connection")),
          compensate: () => Effect.void
        })
        const sendWire = Compensable.make({
          name: "sendWire",
          input: Schema.Struct({ amount: Schema.Int, to: Schema.String }),
          success: Schema.String,
          reversibility: "irreversible",
          execute: () => Effect.sync(() => String(log.push("wire")))
        })
        const program = Effect.all([charge({ amount: 1 }, { key: "card" }), sendWire(wireInput)], {
          concurrency: "unbounded"
        })
        const result = yield* Saga.run("died-in-flight", program)
        assert(result._tag === "NeedsAttention")
        expect(result.unknown).toEqual([
          expect.objectContaining({
            toolName: "charge",
            reason: expect.stringContaining("the call died (a defect: RuntimeException: lost connection)")
          })
        ])
        expect(yield* statusOf("died-in-flight")).toBe("needs_attention")
        const phases = (yield* entriesOf("died-in-flight")).map((entry) => entry.phase)
        expect(phases).toEqual(["SAGA_STARTED", "INTENT", "AWAITING_APPROVAL", "SAGA_NEEDS_ATTENTION"])
        // The request is still asked: nothing withdrew it, and the wire never ran.
        expect((yield* Approval.pending).map((request) => request.toolName)).toEqual(["sendWire"])
        expect(log).toEqual([])
      }).pipe(Effect.provide(Testing.layer))
  )
})

describe("approval expiry and renewal", () => {
  it.effect(
    "Expiry with TestClock: approve at t, resume after the expiry → refused, journaled EXPIRED, compensated",
    () =>
      Effect.gen(function* () {
        const { log, program } = fixture()
        yield* TestClock.setTime(t)
        const waiting = yield* Saga.run("expiry", program)
        assert(waiting._tag === "AwaitingApproval")
        yield* Saga.approve("expiry", waiting.request.stepId, { by: "alice", expiresAt: iso(t + minutes(5)) })
        yield* TestClock.adjust("5 minutes")
        const result = yield* Saga.run("expiry", program)
        assert(result._tag === "Compensated")
        expect(refusal(result.cause)?.reason).toBe(
          `the approval by alice at ${iso(t)} expired at ${iso(t + minutes(5))} (its expiresAt)`
        )
        expect(wirePhases(yield* entriesOf("expiry"))).toEqual(["AWAITING_APPROVAL", "APPROVED", "EXPIRED"])
        expect(log).toEqual(["reserve A-1", "release res-A-1"])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an approval this host's clock dates before the request warns that the clocks disagree", () =>
    Effect.gen(function* () {
      const warnings: Array<string> = []
      const { program } = fixture({ approvalTtl: "30 minutes" })
      // The worker asked at t + 1 h; the operator's host reads an hour less.
      yield* TestClock.setTime(t + hours(1))
      const waiting = yield* Saga.run("behind", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* TestClock.setTime(t)
      yield* Saga.approve("behind", waiting.request.stepId, { by: "alice" }).pipe(
        Effect.provide(
          Logger.add(
            Logger.make(({ logLevel, message }) => {
              if (logLevel._tag === "Warning") warnings.push(String(message))
            })
          )
        )
      )
      expect(warnings).toEqual([
        `effect-saga: this host's clock reads ${iso(t)}, before step ${waiting.request.stepId} of saga behind asked for approval at ${iso(t + hours(1))} (its worker's clock): the clocks disagree, and an approval's TTL counts from ${iso(t)}, so it may have expired when the saga resumes; keep the hosts' clocks synchronised`
      ])
      // It has: the TTL counted from the decision ended before the worker's clock reads now.
      yield* TestClock.setTime(t + hours(1))
      expect(yield* Saga.run("behind", program)).toMatchObject({ _tag: "Compensated" })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("renew → runs: an expired approval renewed to a later expiry runs the step exactly once", () =>
    Effect.gen(function* () {
      const { log, program } = fixture()
      yield* TestClock.setTime(t)
      const waiting = yield* Saga.run("renewed", program)
      assert(waiting._tag === "AwaitingApproval")
      const { stepId } = waiting.request
      yield* Saga.approve("renewed", stepId, { by: "alice", expiresAt: iso(t + minutes(5)) })
      yield* TestClock.adjust("10 minutes")
      yield* Saga.renewApproval("renewed", stepId, { by: "bob", expiresAt: iso(t + minutes(60)) })
      // The same renewal again, even naming the position seen before the first, writes nothing.
      const renewedAt = (yield* Saga.status("renewed")).revision
      yield* TestClock.adjust("1 minute")
      yield* Saga.renewApproval("renewed", stepId, {
        by: "bob",
        expiresAt: iso(t + minutes(60)),
        revision: renewedAt - 1
      })
      expect((yield* Saga.status("renewed")).revision).toBe(renewedAt)
      expect(log).toEqual(["reserve A-1"])
      expect(yield* Saga.run("renewed", program)).toMatchObject({ _tag: "Completed", value: "wire-4200" })
      expect((yield* Saga.run("renewed", program))._tag).toBe("Completed")
      expect(log).toEqual(["reserve A-1", "wire 4200 to DE89"])
      const entries = yield* entriesOf("renewed")
      expect(wirePhases(entries)).toEqual(["AWAITING_APPROVAL", "APPROVED", "APPROVED", "INTENT", "EXECUTED"])
      const renewal = entries.filter((entry) => entry.phase === "APPROVED")[1]!
      expect(Timeline.detailOf(renewal)).toBe("renewed by bob")
      expect(JSON.parse(renewal.payload!)).toEqual({
        _tag: "Approved",
        by: "alice",
        at: iso(t),
        inputDigest: wireDigest,
        expiresAt: iso(t + minutes(60)),
        renewedBy: "bob",
        renewedAt: iso(t + minutes(10)),
        principal: "anonymous"
      })
      expect(yield* approvalOf(waiting.request.requestId)).toMatchObject({
        renewedBy: "bob",
        expiresAt: iso(t + minutes(60))
      })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a renewal naming another input digest is refused and journals nothing", () =>
    Effect.gen(function* () {
      const { log, program } = fixture()
      const waiting = yield* Saga.run("other-renewal", program)
      assert(waiting._tag === "AwaitingApproval")
      const { stepId } = waiting.request
      yield* Saga.approve("other-renewal", stepId, { by: "alice", expiresAt: iso(minutes(5)) })
      const before = yield* entriesOf("other-renewal")
      const refused = yield* Effect.flip(
        Saga.renewApproval("other-renewal", stepId, {
          by: "mallory",
          expiresAt: iso(minutes(60)),
          inputDigest: "0".repeat(64)
        })
      )
      expect(refused).toMatchObject({ _tag: "CommandRefused", stepId })
      expect(yield* entriesOf("other-renewal")).toEqual(before)
      expect(yield* approvalOf(waiting.request.requestId)).toMatchObject({ by: "alice", expiresAt: iso(minutes(5)) })
      yield* Saga.renewApproval("other-renewal", stepId, {
        by: "bob",
        expiresAt: iso(minutes(60)),
        inputDigest: wireDigest
      })
      yield* TestClock.adjust("10 minutes")
      expect((yield* Saga.run("other-renewal", program))._tag).toBe("Completed")
      expect(log).toEqual(["reserve A-1", "wire 4200 to DE89"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a step that is pending, rejected, refused as expired, compensating, already run or never asked cannot be renewed",
    () =>
      Effect.gen(function* () {
        const { log, program } = fixture()
        const renew = (sagaId: string, stepId: string) =>
          Effect.flip(Saga.renewApproval(sagaId, stepId, { by: "mallory", expiresAt: iso(hours(24)) }))

        const pending = yield* Saga.run("pending", program)
        assert(pending._tag === "AwaitingApproval")
        expect(yield* renew("pending", pending.request.stepId)).toMatchObject({
          _tag: "CommandRefused",
          reason: "the step is not approved yet"
        })

        const rejected = yield* Saga.run("rejected", program)
        assert(rejected._tag === "AwaitingApproval")
        yield* Saga.reject("rejected", rejected.request.stepId, { by: "carol", reason: "wrong IBAN" })
        expect(yield* renew("rejected", rejected.request.stepId)).toMatchObject({
          _tag: "CommandRefused",
          reason: "the step was refused (REJECTED): nothing can revive it"
        })

        const expired = yield* Saga.run("expired", program)
        assert(expired._tag === "AwaitingApproval")
        yield* Saga.approve("expired", expired.request.stepId, { by: "alice", expiresAt: iso(minutes(5)) })
        yield* TestClock.adjust("10 minutes")
        expect((yield* Saga.run("expired", program))._tag).toBe("Compensated")
        const before = yield* entriesOf("expired")
        expect(yield* renew("expired", expired.request.stepId)).toMatchObject({
          _tag: "CommandRefused",
          reason: "the step was refused (EXPIRED): nothing can revive it"
        })
        expect(yield* entriesOf("expired")).toEqual(before)
        expect((yield* Saga.run("expired", program))._tag).toBe("Compensated")

        const undone = yield* Saga.run("undone", program)
        assert(undone._tag === "AwaitingApproval")
        yield* Saga.approve("undone", undone.request.stepId, { by: "alice" })
        yield* Saga.compensate("undone")
        expect(yield* renew("undone", undone.request.stepId)).toMatchObject({
          _tag: "CommandRefused",
          reason: "the saga has begun to compensate"
        })

        const ran = yield* Saga.run("ran", program)
        assert(ran._tag === "AwaitingApproval")
        yield* Saga.approve("ran", ran.request.stepId, { by: "alice" })
        yield* Saga.run("ran", program)
        expect(yield* renew("ran", ran.request.stepId)).toMatchObject({
          _tag: "CommandRefused",
          reason: "the step has already run"
        })
        const reserve = (yield* entriesOf("ran")).find((entry) => entry.toolName === "reserve")!
        expect(yield* renew("ran", reserve.stepId!)).toMatchObject({
          _tag: "CommandRefused",
          reason: "the step never asked for approval"
        })
        expect(log.filter((line) => line.startsWith("wire"))).toEqual(["wire 4200 to DE89"])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a tool's approvalTtl: an approval without expiresAt runs before the TTL, is EXPIRED after it", () =>
    Effect.gen(function* () {
      const { log, program } = fixture({ approvalTtl: "15 minutes" })
      for (const sagaId of ["in-time", "too-late"]) {
        const waiting = yield* Saga.run(sagaId, program)
        assert(waiting._tag === "AwaitingApproval")
        yield* Approval.approve(waiting.request.requestId, { by: "alice", inputDigest: wireDigest })
      }
      yield* TestClock.adjust("14 minutes")
      expect((yield* Saga.run("in-time", program))._tag).toBe("Completed")
      yield* TestClock.adjust("1 minute")
      const late = yield* Saga.run("too-late", program)
      assert(late._tag === "Compensated")
      // The journal holds no APPROVED of an approval the service gave: its EXPIRED says whose, and why then.
      const reason = `the approval by alice at ${iso(0)} expired at ${iso(minutes(15))} (approvalTtl 15m from its approval)`
      expect(refusal(late.cause)?.reason).toBe(reason)
      const entries = yield* entriesOf("too-late")
      expect(wirePhases(entries)).toEqual(["AWAITING_APPROVAL", "EXPIRED"])
      expect(Timeline.details(entries)).toContain(reason)
      expect(log.filter((line) => line.startsWith("wire"))).toEqual(["wire 4200 to DE89"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an approvalTtl that ends past the last date JavaScript can name never ends", () =>
    Effect.gen(function* () {
      const { log, program } = fixture({ approvalTtl: "100000000 weeks" })
      const waiting = yield* Saga.run("far", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Saga.approve("far", waiting.request.stepId, { by: "alice" })
      yield* TestClock.adjust("3650 days")
      expect((yield* Saga.run("far", program))._tag).toBe("Completed")
      expect(log.filter((line) => line.startsWith("wire"))).toEqual(["wire 4200 to DE89"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a journaled approval's TTL counts from its renewal; an explicit expiresAt wins over the TTL", () =>
    Effect.gen(function* () {
      const { program } = fixture({ approvalTtl: "15 minutes" })
      const renewed = yield* Saga.run("ttl-renewed", program)
      const explicit = yield* Saga.run("ttl-explicit", program)
      assert(renewed._tag === "AwaitingApproval" && explicit._tag === "AwaitingApproval")
      yield* Saga.approve("ttl-renewed", renewed.request.stepId, { by: "alice" })
      yield* Saga.approve("ttl-explicit", explicit.request.stepId, { by: "alice", expiresAt: iso(minutes(60)) })
      yield* TestClock.adjust("10 minutes")
      yield* Saga.renewApproval("ttl-renewed", renewed.request.stepId, { by: "bob" })
      yield* TestClock.adjust("20 minutes")
      const late = yield* Saga.run("ttl-renewed", program)
      assert(late._tag === "Compensated")
      expect(refusal(late.cause)?.reason).toBe(
        `the approval by alice at ${iso(0)}, renewed by bob at ${iso(minutes(10))}, expired at ${iso(minutes(25))} (approvalTtl 15m from its renewal)`
      )
      expect((yield* Saga.run("ttl-explicit", program))._tag).toBe("Completed")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("the layer's approvalTtl applies to tools that name none; a tool's own TTL wins", () =>
    Effect.gen(function* () {
      const layerTtl = fixture()
      const toolTtl = fixture({ approvalTtl: "1 hour" })
      for (const [sagaId, program] of [
        ["layer-ttl", layerTtl.program],
        ["tool-ttl", toolTtl.program]
      ] as const) {
        const waiting = yield* Saga.run(sagaId, program)
        assert(waiting._tag === "AwaitingApproval")
        yield* Saga.approve(sagaId, waiting.request.stepId, { by: "alice" })
      }
      yield* TestClock.adjust("30 minutes")
      const late = yield* Saga.run("layer-ttl", layerTtl.program)
      assert(late._tag === "Compensated")
      expect(refusal(late.cause)?.reason).toBe(
        `the approval by alice at ${iso(0)} expired at ${iso(minutes(10))} (approvalTtl 10m from its approval)`
      )
      expect((yield* Saga.run("tool-ttl", toolTtl.program))._tag).toBe("Completed")
      expect(layerTtl.log).toEqual(["reserve A-1", "release res-A-1"])
      expect(toolTtl.log).toEqual(["reserve A-1", "wire 4200 to DE89"])
    }).pipe(
      Effect.provide(
        Saga.layerWith({ approvalTtl: "10 minutes" }).pipe(
          Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory))
        )
      )
    )
  )
})

const minutes = (n: number) => n * 60_000
/** A time to approve at: small, because `TestClock` wakes every sleeper (lease renewals too) on its way. */
const t = minutes(3)
const hours = (n: number) => n * 3_600_000
const iso = (millis: number) => new Date(millis).toISOString()

const approvalOf = (requestId: string) =>
  Effect.flatMap(Approval.Approval, (approval) => approval.get(requestId)).pipe(
    Effect.map((entry) => Option.getOrThrow(entry).decision)
  )

const wireInput = { amount: 4200, to: "DE89" }
const wireJson = JSON.stringify(wireInput)
const wireDigest = createHash("sha256").update(wireJson).digest("hex")

const fixture = (options: { readonly approvalTtl?: Duration.DurationInput } = {}) => {
  const log: Array<string> = []
  const reserve = Compensable.make({
    name: "reserve",
    input: Schema.Struct({ sku: Schema.String }),
    success: Schema.String,
    execute: ({ sku }) =>
      Effect.sync(() => {
        log.push(`reserve ${sku}`)
        return `res-${sku}`
      }),
    compensate: (ctx) => Effect.sync(() => log.push(`release ${ctx.result}`))
  })
  const sendWire = Compensable.make({
    name: "sendWire",
    input: Schema.Struct({ amount: Schema.Int, to: Schema.String }),
    success: Schema.String,
    reversibility: "irreversible",
    ...options,
    execute: ({ amount, to }) =>
      Effect.sync(() => {
        log.push(`wire ${amount} to ${to}`)
        return `wire-${amount}`
      })
  })
  const programWith = (input: typeof wireInput, key?: string) =>
    Effect.zipRight(reserve({ sku: "A-1" }), key === undefined ? sendWire(input) : sendWire(input, { key }))
  return { log, program: programWith(wireInput), programWith }
}

const statusOf = (sagaId: string) =>
  Effect.flatMap(Journal.Journal, (journal) => journal.get(sagaId)).pipe(
    Effect.map((record) => Option.getOrThrow(record).status)
  )

const wirePhases = (entries: ReadonlyArray<Journal.Entry>) =>
  entries.filter((entry) => entry.toolName === "sendWire").map((entry) => entry.phase)

const refusal = (cause: Cause.Cause<unknown>) =>
  Option.getOrUndefined(Cause.failureOption(cause)) as SagaError.ApprovalRefused | undefined
