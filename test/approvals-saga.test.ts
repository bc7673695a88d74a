import { createHash } from "node:crypto"
import { assert, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Option, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"

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

  it.effect("an approval given after an operator compensated the saga never runs the step", () =>
    Effect.gen(function* () {
      const { log, program } = fixture()
      const waiting = yield* Saga.run("late-approval", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Saga.compensate("late-approval")
      yield* Approval.approve(waiting.request.requestId, { by: "alice", inputDigest: waiting.request.inputDigest })
      const before = yield* entriesOf("late-approval")
      const again = yield* Saga.run("late-approval", program)
      expect(again._tag).toBe("Compensated")
      expect(log).toEqual(["reserve A-1", "release res-A-1"])
      expect(yield* entriesOf("late-approval")).toEqual(before)
    }).pipe(Effect.provide(Testing.layer))
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
})

const wireInput = { amount: 4200, to: "DE89" }
const wireJson = JSON.stringify(wireInput)
const wireDigest = createHash("sha256").update(wireJson).digest("hex")

const fixture = () => {
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
    execute: ({ amount, to }) =>
      Effect.sync(() => {
        log.push(`wire ${amount} to ${to}`)
        return `wire-${amount}`
      })
  })
  const programWith = (input: typeof wireInput) => Effect.zipRight(reserve({ sku: "A-1" }), sendWire(input))
  return { log, program: programWith(wireInput), programWith }
}

const entriesOf = (sagaId: string) => Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))

const statusOf = (sagaId: string) =>
  Effect.flatMap(Journal.Journal, (journal) => journal.get(sagaId)).pipe(
    Effect.map((record) => Option.getOrThrow(record).status)
  )

const wirePhases = (entries: ReadonlyArray<Journal.Entry>) =>
  entries.filter((entry) => entry.toolName === "sendWire").map((entry) => entry.phase)

const refusal = (cause: Cause.Cause<unknown>) =>
  Option.getOrUndefined(Cause.failureOption(cause)) as Saga.ApprovalRefused | undefined
