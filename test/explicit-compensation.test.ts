import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as AiTool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Deferred, Effect, Fiber, Layer, Option, Redacted, Schema, TestClock } from "effect"
import * as Agent from "../src/Agent.js"
import { Approval, Compensable, Journal, Outcome, Saga, SqlStore, Timeline } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { booking, markerLines, undoMillis } from "./fixtures/explicit-tools.js"
import type { WorkerAnswer } from "./fixtures/explicit-worker.js"
import { entriesOf, payloadOf, phasesOf } from "./fixtures/journal-reads.js"
import { edit } from "./fixtures/sqlite-raw.js"
import { startWorker } from "./fixtures/worker-process.js"

describe("Saga.compensateEffect", () => {
  it.effect(
    "undoes one applied step as a run of its own (SAGA_STARTED, COMPENSATING, COMPENSATED, SAGA_COMPLETED); the saga's step stays EXECUTED",
    () =>
      Effect.gen(function* () {
        const book = counted("book", () => Effect.void)
        const charge = counted("charge", () => Effect.void)
        yield* Saga.run("trip-1", Effect.zipRight(book.tool("room-12"), charge.tool("4200")))
        const effectId = yield* effectIdOf("trip-1", "book")
        const sagaBefore = yield* entriesOf("trip-1")

        const answer = yield* Saga.compensateEffect(effectId)

        const runId = `${effectId}/compensate-effect`
        expect(answer).toEqual({ _tag: "Settled", effectId, runId, outcome: "completed", detail: undefined })
        expect(book.calls).toEqual({ execute: 1, undo: 1 })
        expect(charge.calls).toEqual({ execute: 1, undo: 0 })
        const run = yield* entriesOf(runId)
        expect(run.map((entry) => entry.phase)).toEqual([
          "SAGA_STARTED",
          "COMPENSATING",
          "COMPENSATED",
          "SAGA_COMPLETED"
        ])
        expect(payloadOf(run[0]!)).toEqual({ effectId })
        expect(payloadOf(run[1]!)).toEqual({ idempotencyKey: runId })
        expect(payloadOf(run.at(-1)!)).toEqual({ effectId, outcome: "completed" })
        expect(Timeline.detailOf(run.at(-1)!)).toBe("undo completed")
        expect((yield* Saga.status(runId)).status).toBe("completed")
        expect(yield* Journal.verify(runId)).toMatchObject({ _tag: "Intact", entries: 4 })
        // The saga's own journal is only read.
        expect(yield* entriesOf("trip-1")).toEqual(sagaBefore)
        const step = (yield* Saga.status("trip-1")).steps.find((step) => step.toolName === "book")!
        expect(step).toMatchObject({ state: "executed", undo: undefined, effectId })
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "the explicit undo sees the saga's id, the step's id, input, result and receipt, and an idempotency key of its own",
    () =>
      Effect.gen(function* () {
        const seen: Array<Compensable.CompensationContext<string, string>> = []
        const tool = Compensable.make({
          name: "book",
          input: Schema.String,
          success: Schema.String,
          execute: (room, step) => Effect.as(step.setReceipt(`ref-${room}`), `booking-${room}`),
          compensate: (ctx) => Effect.sync(() => seen.push(ctx))
        })
        yield* Saga.run("trip-ctx", tool("12"))
        const status = yield* Saga.status("trip-ctx")
        const { effectId, stepId } = status.steps[0]!
        yield* Saga.compensateEffect(effectId)
        const ctx = seen[0]!
        expect(ctx.input).toBe("12")
        expect(ctx.result).toBe("booking-12")
        expect(Option.map(ctx.receipt, Redacted.value)).toEqual(Option.some("ref-12"))
        expect(ctx.idempotencyKey).toBe(`${effectId}/compensate-effect`)
        expect(ctx.idempotencyKey).not.toBe(effectId)
        expect(ctx.idempotencyKey).not.toBe(`trip-ctx/${stepId}/undo`)
        expect(ctx.stepId).toBe(stepId)
        expect(ctx.sagaId).toBe("trip-ctx")
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("asked twice, the undo runs once: the second call returns the first answer and writes nothing", () =>
    Effect.gen(function* () {
      const book = counted("book", () => Effect.void)
      yield* Saga.run("trip-2", book.tool("room-3"))
      const effectId = yield* effectIdOf("trip-2", "book")
      const runId = `${effectId}/compensate-effect`
      const first = yield* Saga.compensateEffect(effectId)
      const run = yield* entriesOf(runId)
      const revision = (yield* Saga.status(runId)).revision
      const saga = yield* entriesOf("trip-2")

      const second = yield* Saga.compensateEffect(effectId)

      expect(second).toEqual(first)
      expect(book.calls.undo).toBe(1)
      expect(yield* entriesOf(runId)).toEqual(run)
      expect((yield* Saga.status(runId)).revision).toBe(revision)
      expect(yield* entriesOf("trip-2")).toEqual(saga)
      expect((yield* Saga.status("trip-2")).steps[0]!.state).toBe("executed")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an undo that fails with Outcome.partial is partial: COMPENSATION_PARTIAL, SAGA_COMPENSATION_FAILED", () =>
    Effect.gen(function* () {
      const book = counted("book", () => Effect.fail(Outcome.partial("2 of 3 nights released")))
      yield* Saga.run("trip-partial", book.tool("room-4"))
      const effectId = yield* effectIdOf("trip-partial", "book")
      const answer = yield* Saga.compensateEffect(effectId)
      expect(answer).toMatchObject({ _tag: "Settled", outcome: "partial", detail: "2 of 3 nights released" })
      const run = yield* entriesOf(`${effectId}/compensate-effect`)
      expect(run.map((entry) => entry.phase)).toEqual([
        "SAGA_STARTED",
        "COMPENSATING",
        "COMPENSATION_PARTIAL",
        "SAGA_COMPENSATION_FAILED"
      ])
      expect(payloadOf(run[2]!)).toEqual({ remaining: "2 of 3 nights released" })
      expect(payloadOf(run[3]!)).toEqual({ effectId, outcome: "partial", detail: "2 of 3 nights released" })
      expect(Timeline.detailOf(run[3]!)).toBe("undo partial: 2 of 3 nights released")
      expect(Timeline.format(run)).toContain("undo partial: 2 of 3 nights released")
      expect((yield* Saga.status(`${effectId}/compensate-effect`)).status).toBe("compensation_failed")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an undo that fails with an ordinary error or Outcome.failed is failed: COMPENSATION_FAILED, SAGA_COMPENSATION_FAILED",
    () =>
      Effect.gen(function* () {
        const plain = counted("plain", () => Effect.fail(new Error("the card network is down")))
        const proved = counted("proved", () => Effect.fail(Outcome.failed("the refund was declined")))
        yield* Saga.run("trip-failed", Effect.zipRight(plain.tool("a"), proved.tool("b")))
        for (const [tool, reason] of [
          ["plain", "the card network is down"],
          ["proved", "the refund was declined"]
        ] as const) {
          const effectId = yield* effectIdOf("trip-failed", tool)
          const answer = yield* Saga.compensateEffect(effectId)
          expect(answer).toMatchObject({ _tag: "Settled", outcome: "failed" })
          assert(answer._tag === "Settled")
          expect(answer.detail).toContain(reason)
          const run = yield* entriesOf(`${effectId}/compensate-effect`)
          expect(run.map((entry) => entry.phase)).toEqual([
            "SAGA_STARTED",
            "COMPENSATING",
            "COMPENSATION_FAILED",
            "SAGA_COMPENSATION_FAILED"
          ])
          expect(String(payloadOf(run[2]!)?.reason)).toContain(reason)
          expect(payloadOf(run[3]!)).toEqual({ effectId, outcome: "failed", detail: answer.detail })
        }
        expect([plain.calls.undo, proved.calls.undo]).toEqual([1, 1])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an undo that fails with Outcome.unknown is unknown: COMPENSATION_UNKNOWN, SAGA_NEEDS_ATTENTION", () =>
    Effect.gen(function* () {
      const book = counted("book", () => Effect.fail(Outcome.unknown("the provider did not answer")))
      yield* Saga.run("trip-unknown", book.tool("room-5"))
      const effectId = yield* effectIdOf("trip-unknown", "book")
      const runId = `${effectId}/compensate-effect`
      const answer = yield* Saga.compensateEffect(effectId)
      expect(answer).toMatchObject({ _tag: "Settled", outcome: "unknown", detail: "the provider did not answer" })
      const run = yield* entriesOf(runId)
      expect(run.map((entry) => entry.phase)).toEqual([
        "SAGA_STARTED",
        "COMPENSATING",
        "COMPENSATION_UNKNOWN",
        "SAGA_NEEDS_ATTENTION"
      ])
      expect(payloadOf(run[3]!)).toEqual({ effectId, outcome: "unknown", detail: "the provider did not answer" })
      expect(Timeline.detailOf(run[3]!)).toBe("undo unknown: the provider did not answer")
      expect((yield* Saga.status(runId)).status).toBe("needs_attention")
      // An unknown answer is an answer too: asking again reads it, nothing runs.
      expect(yield* Saga.compensateEffect(effectId)).toEqual(answer)
      expect(book.calls.undo).toBe(1)
      expect(yield* entriesOf(runId)).toEqual(run)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an undo that outlives the tool's timeout is unknown, and compensateEffect answers when the timeout fires",
    () =>
      Effect.gen(function* () {
        const book = counted("book", () => Effect.sleep("1 minute"), { timeout: "5 seconds" })
        yield* Saga.run("trip-slow", book.tool("room-6"))
        const effectId = yield* effectIdOf("trip-slow", "book")
        const fiber = yield* Effect.fork(Saga.compensateEffect(effectId))
        // The answer arrives once the 5-second timeout fires, long before the undo's minute is up.
        let early = yield* Fiber.poll(fiber)
        for (let second = 0; second < 30 && Option.isNone(early); second++) {
          yield* TestClock.adjust("1 second")
          early = yield* Fiber.poll(fiber)
        }
        // Let a blocked undo finish before asserting, so that a failure here does not hang the test.
        yield* TestClock.adjust("1 minute")
        const answer = yield* Fiber.join(fiber)
        expect(answer).toMatchObject({ _tag: "Settled", outcome: "unknown", detail: "the undo timed out" })
        expect((yield* entriesOf(`${effectId}/compensate-effect`)).map((entry) => entry.phase)).toEqual([
          "SAGA_STARTED",
          "COMPENSATING",
          "COMPENSATION_UNKNOWN",
          "SAGA_NEEDS_ATTENTION"
        ])
        expect(Option.isSome(early)).toBe(true)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a tool with no undo is unavailable: SAGA_STARTED, SAGA_COMPENSATION_FAILED, nothing runs", () =>
    Effect.gen(function* () {
      const note = counted("note", undefined)
      yield* Saga.run("trip-no-undo", note.tool("hello"))
      const effectId = yield* effectIdOf("trip-no-undo", "note")
      const answer = yield* Saga.compensateEffect(effectId)
      expect(answer).toMatchObject({ _tag: "Settled", outcome: "unavailable", detail: "no undo declared" })
      const run = yield* entriesOf(`${effectId}/compensate-effect`)
      expect(run.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "SAGA_COMPENSATION_FAILED"])
      expect(payloadOf(run[1]!)).toEqual({ effectId, outcome: "unavailable", detail: "no undo declared" })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("Saga.status of a run that ended unavailable lists the step it concerns, its undo unavailable", () =>
    Effect.gen(function* () {
      const note = counted("note", undefined)
      yield* Saga.run("trip-no-undo-status", note.tool("hello"))
      const [step] = (yield* Saga.status("trip-no-undo-status")).steps
      yield* Saga.compensateEffect(step!.effectId)
      const run = yield* Saga.status(`${step!.effectId}/compensate-effect`)
      expect(run.status).toBe("compensation_failed")
      expect(run.steps).toEqual([
        {
          stepId: step!.stepId,
          toolName: "note",
          effectId: step!.effectId,
          state: "executed",
          undo: "unavailable",
          undoDetail: "no undo declared"
        }
      ])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a tool with receiptRequired whose step set no receipt is unavailable and its undo never runs; with a receipt it runs",
    () =>
      Effect.gen(function* () {
        const undone: Array<string> = []
        const cancel = Compensable.make({
          name: "cancel",
          input: Schema.Struct({ room: Schema.String, receipt: Schema.Boolean }),
          success: Schema.String,
          receiptRequired: true,
          execute: ({ receipt, room }, step) =>
            Effect.as(receipt ? step.setReceipt(`ref-${room}`) : Effect.void, `booking-${room}`),
          compensate: (ctx) =>
            Effect.sync(() => undone.push(Option.getOrElse(Option.map(ctx.receipt, Redacted.value), () => "none")))
        })
        yield* Saga.run(
          "trip-receipt",
          Effect.zipRight(cancel({ room: "7", receipt: false }), cancel({ room: "8", receipt: true }))
        )
        const [without, withReceipt] = (yield* Saga.status("trip-receipt")).steps
        const missing = yield* Saga.compensateEffect(without!.effectId)
        expect(missing).toMatchObject({ _tag: "Settled", outcome: "unavailable" })
        assert(missing._tag === "Settled")
        expect(missing.detail).toContain("receipt")
        const run = yield* entriesOf(`${without!.effectId}/compensate-effect`)
        expect(run.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "SAGA_COMPENSATION_FAILED"])
        expect(payloadOf(run[1]!)).toEqual({
          effectId: without!.effectId,
          outcome: "unavailable",
          detail: missing.detail
        })
        expect(undone).toEqual([])

        expect(yield* Saga.compensateEffect(withReceipt!.effectId)).toMatchObject({ outcome: "completed" })
        expect(undone).toEqual(["ref-8"])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a tool not registered in this process is unavailable with nothing journaled; a process that has it undoes it",
    () =>
      Effect.gen(function* () {
        const book = counted("book", () => Effect.void)
        yield* Saga.run("trip-elsewhere", book.tool("room-9"))
        const effectId = yield* effectIdOf("trip-elsewhere", "book")
        const runId = `${effectId}/compensate-effect`
        const saga = yield* entriesOf("trip-elsewhere")
        // Another Saga service over the same journal, that has never seen the tool.
        const elsewhere = yield* Saga.compensateEffect(effectId).pipe(Effect.provide(Saga.layer))
        expect(elsewhere).toEqual({
          _tag: "Settled",
          effectId,
          runId,
          outcome: "unavailable",
          detail: "tool book is not registered in this process"
        })
        expect(yield* entriesOf(runId)).toEqual([])
        expect(Option.isNone(yield* Effect.flatMap(Journal.Journal, (journal) => journal.get(runId)))).toBe(true)
        expect(yield* entriesOf("trip-elsewhere")).toEqual(saga)
        expect(book.calls.undo).toBe(0)

        expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ outcome: "completed" })
        expect(book.calls.undo).toBe(1)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an irreversible step is answered alike in a process without its tool: its run journals unavailable", () =>
    Effect.gen(function* () {
      yield* Saga.run("trip-wired", wire("DE00"))
      const effectId = yield* effectIdOf("trip-wired", "wire")
      // Another Saga service over the same journal, that has never seen the tool.
      const elsewhere = yield* Saga.compensateEffect(effectId).pipe(Effect.provide(Saga.layer))
      const expected = {
        _tag: "Settled",
        effectId,
        runId: `${effectId}/compensate-effect`,
        outcome: "unavailable",
        detail: "irreversible: no undo exists"
      }
      expect(elsewhere).toEqual(expected)
      expect((yield* entriesOf(`${effectId}/compensate-effect`)).map((entry) => entry.phase)).toEqual([
        "SAGA_STARTED",
        "SAGA_COMPENSATION_FAILED"
      ])
      // The process that ran it reads the same answer from the run.
      expect(yield* Saga.compensateEffect(effectId)).toEqual(expected)
    }).pipe(Effect.provide(Testing.layerWith(Approval.layerAutoApprove)))
  )

  it.effect("a read (changesNothing) has nothing to undo: unavailable with nothing journaled, in any process", () =>
    Effect.gen(function* () {
      const stock = Compensable.make({
        name: "stock",
        input: Schema.String,
        success: Schema.Number,
        changesNothing: true,
        execute: () => Effect.succeed(3)
      })
      yield* Saga.run("trip-read", stock("A-1"))
      const effectId = yield* effectIdOf("trip-read", "stock")
      const runId = `${effectId}/compensate-effect`
      const saga = yield* entriesOf("trip-read")
      const expected = {
        _tag: "Settled",
        effectId,
        runId,
        outcome: "unavailable",
        detail: "a read (changesNothing): it changed nothing, so there is nothing to undo"
      }
      // In the process that ran it, and in one that has never seen the tool.
      expect(yield* Saga.compensateEffect(effectId)).toEqual(expected)
      expect(yield* Saga.compensateEffect(effectId).pipe(Effect.provide(Saga.layer))).toEqual(expected)
      expect(yield* entriesOf(runId)).toEqual([])
      expect(yield* entriesOf("trip-read")).toEqual(saga)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "approveExplicitUndo: AwaitingApproval of its own; asking again writes nothing; Saga.approve on the run, then completed",
    () =>
      Effect.gen(function* () {
        const book = counted("book", () => Effect.void, { approveExplicitUndo: true })
        yield* Saga.run("trip-approve", book.tool("room-10"))
        const status = yield* Saga.status("trip-approve")
        const { effectId, stepId } = status.steps[0]!
        const runId = `${effectId}/compensate-effect`

        const waiting = yield* Saga.compensateEffect(effectId)
        assert(waiting._tag === "AwaitingApproval")
        expect(waiting).toMatchObject({ effectId, runId })
        expect(waiting.request).toMatchObject({
          requestId: `${runId}/${stepId}`,
          sagaId: runId,
          stepId,
          toolName: "book"
        })
        expect(book.calls.undo).toBe(0)
        const awaiting = yield* entriesOf(runId)
        expect(awaiting.map((entry) => entry.phase)).toEqual([
          "SAGA_STARTED",
          "AWAITING_APPROVAL",
          "SAGA_AWAITING_APPROVAL"
        ])
        expect(payloadOf(awaiting[1]!)).toEqual({ inputDigest: waiting.request.inputDigest })
        expect((yield* Saga.status(runId)).status).toBe("awaiting_approval")

        // Still waiting: the same answer, and nothing new in the journal.
        const again = yield* Saga.compensateEffect(effectId)
        expect(again).toEqual(waiting)
        expect(yield* entriesOf(runId)).toEqual(awaiting)

        yield* Saga.approve(runId, stepId, { by: "alice" })
        expect(book.calls.undo).toBe(0)
        const done = yield* Saga.compensateEffect(effectId)
        expect(done).toMatchObject({ _tag: "Settled", outcome: "completed" })
        expect(book.calls.undo).toBe(1)
        const run = yield* entriesOf(runId)
        expect(run.map((entry) => entry.phase)).toEqual([
          "SAGA_STARTED",
          "AWAITING_APPROVAL",
          "SAGA_AWAITING_APPROVAL",
          "APPROVED",
          "SAGA_RESUMED",
          "COMPENSATING",
          "COMPENSATED",
          "SAGA_COMPLETED"
        ])
        expect(payloadOf(run[3]!)).toMatchObject({ by: "alice", inputDigest: waiting.request.inputDigest })
        expect(yield* Saga.compensateEffect(effectId)).toEqual(done)
        expect(book.calls.undo).toBe(1)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "the explicit undo's approval is its own: the forward step has none to inherit, and cannot be approved in its saga",
    () =>
      Effect.gen(function* () {
        const book = counted("book", () => Effect.void, { approveExplicitUndo: true })
        // The forward step of a compensatable tool runs without any approval.
        const result = yield* Saga.run("trip-own", book.tool("room-11"))
        expect(result._tag).toBe("Completed")
        const { effectId, stepId } = (yield* Saga.status("trip-own")).steps[0]!
        expect(yield* Approval.pending).toEqual([])
        const waiting = yield* Saga.compensateEffect(effectId)
        assert(waiting._tag === "AwaitingApproval")
        expect(waiting.request.requestId).not.toBe(`trip-own/${stepId}`)
        expect((yield* Approval.pending).map((request) => request.requestId)).toEqual([waiting.request.requestId])
        // Approving the saga's step is not approving the undo: it never asked.
        const refused = yield* Effect.flip(Saga.approve("trip-own", stepId, { by: "alice" }))
        expect(refused).toMatchObject({ _tag: "CommandRefused", reason: "the step is not awaiting approval" })
        expect(yield* Saga.compensateEffect(effectId)).toEqual(waiting)
        expect(book.calls.undo).toBe(0)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an undo that cannot run is unavailable at once, before anyone is asked to approve it", () =>
    Effect.gen(function* () {
      const note = counted("note", undefined, { approveExplicitUndo: true })
      const ticket = counted("ticket", () => Effect.void, { approveExplicitUndo: true, receiptRequired: true })
      yield* Saga.run("trip-cannot", Effect.zipRight(note.tool("hello"), ticket.tool("seat-2")))
      for (const [toolName, detail] of [
        ["note", "no undo declared"],
        ["ticket", expect.stringContaining("receipt")]
      ] as const) {
        const effectId = yield* effectIdOf("trip-cannot", toolName)
        expect(yield* Saga.compensateEffect(effectId)).toMatchObject({
          _tag: "Settled",
          outcome: "unavailable",
          detail
        })
        const run = yield* entriesOf(`${effectId}/compensate-effect`)
        expect(run.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "SAGA_COMPENSATION_FAILED"])
      }
      expect(yield* Approval.pending).toEqual([])
      expect(ticket.calls.undo).toBe(0)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "the explicit undo's approval lasts the layer's approvalTtl, not the tool's (that is for forward approvals)",
    () =>
      Effect.gen(function* () {
        const book = counted("book", () => Effect.void, { approveExplicitUndo: true, approvalTtl: "1 minute" })
        yield* Saga.run("trip-ttl", book.tool("room-3"))
        const { effectId, stepId } = (yield* Saga.status("trip-ttl")).steps[0]!
        const waiting = yield* Saga.compensateEffect(effectId)
        assert(waiting._tag === "AwaitingApproval")
        yield* Saga.approve(waiting.runId, stepId, { by: "alice" })
        yield* TestClock.adjust("1 hour")
        // Testing.layer sets no approvalTtl: the approval does not expire.
        expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ _tag: "Settled", outcome: "completed" })
        expect(book.calls.undo).toBe(1)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a saga cannot take an explicit undo's run id, and an undo's run cannot be compensated itself", () =>
    Effect.gen(function* () {
      const book = counted("book", () => Effect.void)
      yield* Saga.run("trip-run-id", book.tool("room-5"))
      const effectId = yield* effectIdOf("trip-run-id", "book")
      const runId = `${effectId}/compensate-effect`
      const taken = yield* Effect.flip(Saga.run(runId, Effect.succeed("mine")))
      expect(taken).toMatchObject({
        _tag: "InvalidIdentifier",
        kind: "saga id",
        reason: 'it ends with "/compensate-effect", which names the run of an explicit undo'
      })
      expect(yield* entriesOf(runId)).toEqual([])
      expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ _tag: "Settled", outcome: "completed" })
      const run = yield* entriesOf(runId)
      const refused = yield* Effect.flip(Saga.compensate(runId))
      expect(refused).toMatchObject({
        _tag: "CommandRefused",
        reason:
          "this is the run of an explicit undo (compensateEffect): it cannot be compensated itself; ask for its effect again (compensateEffect) for its answer, and close a run that needs attention or ended compensation_failed with resolve of its step (effect-saga show of the run says how)"
      })
      expect(yield* entriesOf(runId)).toEqual(run)
      expect(book.calls.undo).toBe(1)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an explicit undo whose approval is rejected never runs: the answer is failed, with the rejection", () =>
    Effect.gen(function* () {
      const book = counted("book", () => Effect.void, { approveExplicitUndo: true })
      yield* Saga.run("trip-reject", book.tool("room-12"))
      const { effectId, stepId } = (yield* Saga.status("trip-reject")).steps[0]!
      const runId = `${effectId}/compensate-effect`
      const waiting = yield* Saga.compensateEffect(effectId)
      assert(waiting._tag === "AwaitingApproval")
      yield* Saga.reject(runId, stepId, { by: "bob", reason: "the guest is already checked in" })
      // Nothing was compensated: the run must not say so.
      expect((yield* Saga.status(runId)).status).not.toBe("compensated")
      const answer = yield* Saga.compensateEffect(effectId)
      expect(answer).toMatchObject({ _tag: "Settled", outcome: "failed" })
      assert(answer._tag === "Settled")
      expect(answer.detail).toContain("the guest is already checked in")
      expect(book.calls.undo).toBe(0)
      expect((yield* entriesOf(runId)).map((entry) => entry.phase)).toEqual([
        "SAGA_STARTED",
        "AWAITING_APPROVAL",
        "SAGA_AWAITING_APPROVAL",
        "REJECTED",
        "SAGA_COMPENSATION_FAILED"
      ])
      expect((yield* Saga.status(runId)).status).toBe("compensation_failed")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("with Approval.layerAutoApprove the explicit undo's approval is journaled in its run, then it runs", () =>
    Effect.gen(function* () {
      const book = counted("book", () => Effect.void, { approveExplicitUndo: true })
      yield* Saga.run("trip-auto", book.tool("room-13"))
      const effectId = yield* effectIdOf("trip-auto", "book")
      expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ outcome: "completed" })
      const run = yield* entriesOf(`${effectId}/compensate-effect`)
      expect(run.map((entry) => entry.phase)).toEqual([
        "SAGA_STARTED",
        "AWAITING_APPROVAL",
        "APPROVED",
        "COMPENSATING",
        "COMPENSATED",
        "SAGA_COMPLETED"
      ])
      expect(payloadOf(run[2]!)).toMatchObject({ by: "auto-approve" })
    }).pipe(Effect.provide(Testing.layerWith(Approval.layerAutoApprove)))
  )

  it.effect(
    "after compensateEffect completed, the saga's own compensation does not undo that step again: it reports it by compensateEffect",
    () =>
      Effect.gen(function* () {
        const book = counted("book", () => Effect.void)
        const charge = counted("charge", () => Effect.void)
        yield* Saga.run("trip-then-saga", Effect.zipRight(book.tool("room-14"), charge.tool("100")))
        const effectId = yield* effectIdOf("trip-then-saga", "book")
        yield* Saga.compensateEffect(effectId)
        const report = yield* Saga.compensate("trip-then-saga")
        expect(book.calls.undo).toBe(1)
        expect(charge.calls.undo).toBe(1)
        expect(report.status).toBe("compensated")
        expect(report.undone.map(({ detail, outcome, toolName }) => ({ toolName, outcome, detail }))).toEqual([
          { toolName: "charge", outcome: "completed", detail: undefined },
          { toolName: "book", outcome: "completed", detail: "by compensateEffect" }
        ])
        const bookStep = (yield* Saga.status("trip-then-saga")).steps.find((step) => step.toolName === "book")!
        expect(yield* phasesOf("trip-then-saga", bookStep.stepId)).toEqual(["INTENT", "EXECUTED", "COMPENSATED"])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect.each(["applied", "not-applied"] as const)(
    "an unknown explicit undo the saga's compensation took over, then resolved %s on its run: the saga's next compensation follows the run",
    (outcome) =>
      Effect.gen(function* () {
        let attempts = 0
        const book = counted("book", () =>
          ++attempts === 1 ? Effect.fail(Outcome.unknown("the provider timed out")) : Effect.void
        )
        const sagaId = `trip-taken-${outcome}`
        yield* Saga.run(sagaId, book.tool("room-16"))
        const effectId = yield* effectIdOf(sagaId, "book")
        expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ outcome: "unknown" })
        const first = yield* Saga.compensate(sagaId)
        expect(first.status).toBe("compensation_failed")
        expect(first.undone.map((step) => step.outcome)).toEqual(["unknown"])

        const runId = `${effectId}/compensate-effect`
        const stepId = (yield* Saga.status(sagaId)).steps[0]!.stepId
        yield* Saga.resolve(runId, stepId, { outcome, by: "oncall" })
        const report = yield* Saga.compensate(sagaId)

        expect(report.status).toBe("compensated")
        const expected =
          outcome === "applied"
            ? { outcome: "completed", detail: "by compensateEffect: resolved as undone by oncall" }
            : { outcome: "completed", detail: undefined }
        expect(report.undone.map(({ detail, outcome }) => ({ outcome, detail }))).toEqual([expected])
        // The undo ran once more only where the run says it was not applied.
        expect(book.calls.undo).toBe(outcome === "applied" ? 1 : 2)
        const phases = yield* phasesOf(sagaId, stepId)
        expect(phases).toEqual(
          outcome === "applied"
            ? ["INTENT", "EXECUTED", "COMPENSATION_UNKNOWN", "COMPENSATED"]
            : ["INTENT", "EXECUTED", "COMPENSATION_UNKNOWN", "COMPENSATING", "COMPENSATED"]
        )
        // Asked again, the journal's report stands: nothing is written or run.
        const again = yield* Saga.compensate(sagaId)
        expect(again).toEqual(report)
        expect(yield* phasesOf(sagaId, stepId)).toEqual(phases)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a partial explicit undo the saga's compensation took over, then closed applied on its run: the saga's next compensation follows the run",
    () =>
      Effect.gen(function* () {
        const book = counted("book", () => Effect.fail(Outcome.partial("1 of 2 nights still booked")))
        yield* Saga.run("trip-partial-taken", book.tool("room-17"))
        const effectId = yield* effectIdOf("trip-partial-taken", "book")
        expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ outcome: "partial" })
        const first = yield* Saga.compensate("trip-partial-taken")
        expect(first.status).toBe("compensation_failed")
        expect(first.undone.map(({ detail, outcome }) => ({ outcome, detail }))).toEqual([
          { outcome: "partial", detail: "by compensateEffect: 1 of 2 nights still booked" }
        ])
        // Asked again before the run is closed, the saga's report stands.
        expect(yield* Saga.compensate("trip-partial-taken")).toEqual(first)

        // The rest undone by hand, the run is closed applied (as its own next: line says): once.
        const stepId = (yield* Saga.status("trip-partial-taken")).steps[0]!.stepId
        yield* Saga.resolve(`${effectId}/compensate-effect`, stepId, { outcome: "applied", by: "oncall" })
        const report = yield* Saga.compensate("trip-partial-taken")
        expect(report.status).toBe("compensated")
        expect(report.undone.map(({ detail, outcome }) => ({ outcome, detail }))).toEqual([
          { outcome: "completed", detail: "by compensateEffect: resolved as undone by oncall" }
        ])
        expect(book.calls.undo).toBe(1)
        expect(yield* phasesOf("trip-partial-taken", stepId)).toEqual([
          "INTENT",
          "EXECUTED",
          "COMPENSATION_PARTIAL",
          "COMPENSATED"
        ])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "after compensateEffect failed, the saga's own compensation still tries the undo (it was not applied)",
    () =>
      Effect.gen(function* () {
        let attempts = 0
        const book = counted("book", () =>
          ++attempts === 1 ? Effect.fail(Outcome.failed("the provider said no")) : Effect.void
        )
        yield* Saga.run("trip-retry", book.tool("room-15"))
        const effectId = yield* effectIdOf("trip-retry", "book")
        expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ outcome: "failed" })
        const report = yield* Saga.compensate("trip-retry")
        expect(report.undone).toMatchObject([{ toolName: "book", outcome: "completed" }])
        expect(book.calls.undo).toBe(2)
        // The explicit run keeps its own answer.
        expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ outcome: "failed" })
        expect(book.calls.undo).toBe(2)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("after the saga's own compensation undid a step, compensateEffect answers from it without running", () =>
    Effect.gen(function* () {
      const book = counted("book", () => Effect.void)
      const result = yield* Saga.run("trip-saga-first", Effect.zipRight(book.tool("room-16"), Effect.fail("no")))
      expect(result._tag).toBe("Compensated")
      expect(book.calls.undo).toBe(1)
      const effectId = yield* effectIdOf("trip-saga-first", "book")
      const answer = yield* Saga.compensateEffect(effectId)
      expect(answer).toMatchObject({
        _tag: "Settled",
        outcome: "completed",
        detail: "settled by the saga's compensation"
      })
      expect(book.calls.undo).toBe(1)
      const run = yield* entriesOf(`${effectId}/compensate-effect`)
      expect(run.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "SAGA_COMPLETED"])
      // The run journaled no entry of the step: its status lists it from the answer, as any run's does.
      expect((yield* Saga.status(`${effectId}/compensate-effect`)).steps).toMatchObject([
        { toolName: "book", effectId, state: "executed", undo: "completed" }
      ])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an effect id that names nothing is EffectNotFound", () =>
    Effect.gen(function* () {
      const book = counted("book", () => Effect.void)
      yield* Saga.run("trip-ids", book.tool("room-17"))
      const { stepId } = (yield* Saga.status("trip-ids")).steps[0]!
      for (const effectId of ["nope", "nope/book:0#1", `trip-ids/${stepId}x`, "trip-ids", `trip-ids/${stepId}/undo`]) {
        expect(yield* Effect.flip(Saga.compensateEffect(effectId))).toMatchObject({ _tag: "EffectNotFound", effectId })
      }
      expect(book.calls.undo).toBe(0)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a FAILED step or one whose outcome is unknown is refused with CommandRefused, and nothing is journaled",
    () =>
      Effect.gen(function* () {
        const book = counted("book", () => Effect.void)
        const failing = Compensable.make({
          name: "failing",
          input: Schema.String,
          success: Schema.String,
          execute: () => Effect.fail(Outcome.failed("sold out")),
          compensate: () => Effect.void
        })
        yield* Saga.run("trip-refused", Effect.zipRight(book.tool("room-18"), failing("x")))
        const failed = yield* effectIdOf("trip-refused", "failing")
        const unknown = yield* Saga.run("trip-unknown-step", book.tool("room-19")).pipe(
          Effect.provide(Testing.faults({ tool: "book", fault: "unknown" }))
        )
        expect(unknown._tag).toBe("NeedsAttention")
        const lost = yield* effectIdOf("trip-unknown-step", "book")
        for (const effectId of [failed, lost]) {
          expect(yield* Effect.flip(Saga.compensateEffect(effectId))).toMatchObject({ _tag: "CommandRefused" })
          expect(yield* entriesOf(`${effectId}/compensate-effect`)).toEqual([])
        }
        expect((yield* Effect.flip(Saga.compensateEffect(lost))).message).toContain("unknown")
        expect(book.calls.undo).toBe(1)
      }).pipe(Effect.provide(Testing.layer))
  )
})

describe("compensateEffect of a step still in flight on another worker", () => {
  it.live("waits for the worker driving the saga, then undoes the step once it is applied", () =>
    Effect.gen(function* () {
      const stores = Layer.merge(Journal.layerMemory, Approval.layerMemory)
      const shared = yield* Layer.build(stores)
      const workerOf = (owner: string) =>
        Layer.build(Saga.layerWith({ owner }).pipe(Layer.provide(Layer.succeedContext(shared))))
      const entered = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const undone: Array<string> = []
      const slow = Compensable.make({
        name: "slow",
        input: Schema.String,
        success: Schema.String,
        execute: (id) =>
          Effect.as(Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(release)), `slow-${id}`),
        compensate: (ctx) => Effect.sync(() => undone.push(ctx.result))
      })
      const a = yield* workerOf("worker-a")
      const b = yield* workerOf("worker-b")
      yield* Effect.provide(
        Effect.flatMap(Saga.Saga, (saga) => saga.register([slow])),
        b
      )
      const run = yield* Effect.fork(Effect.provide(Saga.run("in-flight", slow("x")), a))
      yield* Deferred.await(entered)
      const effectId = (yield* Effect.provide(Saga.status("in-flight"), b)).steps[0]!.effectId
      const asked = yield* Effect.fork(Effect.provide(Saga.compensateEffect(effectId), b))
      // Its turns come while the step is in flight: it waits for the saga's lease instead of refusing.
      yield* Effect.repeatN(Effect.yieldNow(), 20)
      expect(undone).toEqual([])
      yield* Deferred.succeed(release, undefined)
      expect((yield* Fiber.join(run))._tag).toBe("Completed")
      expect(yield* Fiber.join(asked)).toMatchObject({ _tag: "Settled", outcome: "completed" })
      expect(undone).toEqual(["slow-x"])
    }).pipe(Effect.scoped)
  )
})

describe("the inverse is bounded", () => {
  it.effect(
    "an undo that calls a compensable tool fails (COMPENSATION_FAILED naming the DeclarationError), and the tool never runs",
    () =>
      Effect.gen(function* () {
        const inner = counted("inner", () => Effect.void)
        const nesting = Compensable.make({
          name: "nesting",
          input: Schema.String,
          success: Schema.String,
          execute: (input) => Effect.succeed(`nested-${input}`),
          // The type checker refuses this declaration (see the next test): only a cast gets it this far.
          compensate: () => inner.tool("from-an-undo") as unknown as Effect.Effect<void>
        })
        // By the saga's own compensation…
        const result = yield* Saga.run("bounded-1", Effect.zipRight(nesting("a"), Effect.fail("stop")))
        assert(result._tag === "CompensationFailed")
        expect(result.report.undone).toMatchObject([{ toolName: "nesting", outcome: "failed" }])
        expect(result.report.undone[0]!.detail).toContain("an undo cannot call a compensable tool")
        const stepId = result.report.undone[0]!.stepId
        const failedEntry = (yield* entriesOf("bounded-1")).find((entry) => entry.phase === "COMPENSATION_FAILED")!
        expect(String(payloadOf(failedEntry)?.reason)).toContain("an undo cannot call a compensable tool")
        expect(yield* phasesOf("bounded-1", stepId)).toEqual([
          "INTENT",
          "EXECUTED",
          "COMPENSATING",
          "COMPENSATION_FAILED"
        ])
        // …and by compensateEffect.
        yield* Saga.run("bounded-2", nesting("b"))
        const answer = yield* Saga.compensateEffect(yield* effectIdOf("bounded-2", "nesting"))
        expect(answer).toMatchObject({ _tag: "Settled", outcome: "failed" })
        assert(answer._tag === "Settled")
        expect(answer.detail).toContain("an undo cannot call a compensable tool")
        expect(inner.calls.execute).toBe(0)
      }).pipe(Effect.provide(Testing.layer))
  )

  it("declaring an undo that calls a compensable tool or starts a saga does not type-check", () => {
    const inner = counted("inner", () => Effect.void)
    const declare = () => [
      Compensable.make({
        name: "callsATool",
        input: Schema.String,
        success: Schema.String,
        execute: (input) => Effect.succeed(input),
        // @ts-expect-error an undo cannot call a compensable tool
        compensate: () => inner.tool("x")
      }),
      Compensable.make({
        name: "startsASaga",
        input: Schema.String,
        success: Schema.String,
        execute: (input) => Effect.succeed(input),
        // @ts-expect-error an undo cannot start a saga
        compensate: () => Saga.run("inner", Effect.void)
      })
    ]
    expect(declare).toBeTypeOf("function")
  })

  it.effect(
    "an undo that starts a saga (Saga.run) or asks for compensateEffect fails the same way; nothing is started",
    () =>
      Effect.gen(function* () {
        const inner = counted("inner", () => Effect.void)
        const starting = Compensable.make({
          name: "starting",
          input: Schema.String,
          success: Schema.String,
          execute: (input) => Effect.succeed(input),
          compensate: () => Saga.run("started-from-an-undo", inner.tool("x")) as unknown as Effect.Effect<void>
        })
        const explicit = Compensable.make({
          name: "explicit",
          input: Schema.String,
          success: Schema.String,
          execute: (input) => Effect.succeed(input),
          compensate: (ctx) => Saga.compensateEffect(`${ctx.sagaId}/${ctx.stepId}`) as unknown as Effect.Effect<void>
        })
        const result = yield* Saga.run("bounded-3", Effect.zipRight(starting("a"), Effect.fail("stop")))
        assert(result._tag === "CompensationFailed")
        // The refusal names the tool whose undo tried, not a tool called "Saga".
        expect(result.report.undone[0]!.detail).toBe(
          "DeclarationError: tool starting: an undo cannot start, resume or compensate a saga: the inverse of a step is one undo call"
        )
        yield* Saga.run("bounded-4", starting("b"))
        const answer = yield* Saga.compensateEffect(yield* effectIdOf("bounded-4", "starting"))
        assert(answer._tag === "Settled")
        expect(answer).toMatchObject({ outcome: "failed" })
        expect(answer.detail).toContain("an undo cannot start, resume or compensate a saga")
        expect(yield* entriesOf("started-from-an-undo")).toEqual([])
        expect(inner.calls.execute).toBe(0)

        const nested = yield* Saga.run("bounded-5", Effect.zipRight(explicit("c"), Effect.fail("stop")))
        assert(nested._tag === "CompensationFailed")
        expect(nested.report.undone[0]!.detail).toContain(
          "tool explicit: an undo cannot start, resume or compensate a saga"
        )
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an agent's undo that starts a saga fails the same way; nothing is started", () => {
    const inner = counted("inner", () => Effect.void)
    const Hold = AiTool.make("Hold", { parameters: { seat: Schema.String }, success: Schema.String })
    const agent = Agent.make(AiToolkit.make(Hold), {
      // The type checker refuses this undo (test/types/bounded-undo.ts): only a cast gets it this far.
      undo: { Hold: () => Saga.run("started-from-an-agent-undo", inner.tool("x")) as unknown as Effect.Effect<void> }
    })
    const handlers = agent.toLayer({ Hold: ({ seat }) => Effect.succeed(seat) })
    return Effect.gen(function* () {
      const program = Effect.zipRight(
        Effect.flatMap(agent.toolkit, (toolkit) => toolkit.handle("Hold", { seat: "1A" })),
        Effect.fail("stop")
      )
      const result = yield* Saga.run("bounded-agent", program)
      assert(result._tag === "CompensationFailed")
      expect(result.report.undone[0]!.detail).toBe(
        "DeclarationError: tool Hold: an undo cannot start, resume or compensate a saga: the inverse of a step is one undo call"
      )
      expect(yield* entriesOf("started-from-an-agent-undo")).toEqual([])
      expect(inner.calls.execute).toBe(0)
    }).pipe(Effect.provide(handlers.pipe(Layer.provideMerge(Testing.layer))))
  })
})

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-explicit-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("compensateEffect from two OS processes on one SQLite file", () => {
  it.scopedLive(
    "the undo runs once across both, both get the same answer, and the run's journal holds one undo",
    () =>
      Effect.gen(function* () {
        const filename = path.join(dir, "explicit.db")
        const marker = path.join(dir, "undos.log")
        const tool = booking(marker)
        const effectId = yield* Effect.gen(function* () {
          const result = yield* Saga.run("trip-race", tool("room-20"))
          expect(result._tag).toBe("Completed")
          return (yield* Saga.status("trip-race")).steps[0]!.effectId
        }).pipe(Effect.provide(Saga.layer.pipe(Layer.provide(SqlStore.layerSqlite({ filename })))))

        const workers = yield* Effect.forEach([1, 2], () =>
          startWorker<WorkerAnswer>(workerScript, [filename, marker, effectId], "worker")
        )
        yield* Effect.forEach(workers, (worker) => worker.ready, { concurrency: "unbounded", discard: true })
        yield* Effect.forEach(workers, (worker) => worker.go, { discard: true })
        const answers = yield* Effect.forEach(workers, (worker) => worker.report, { concurrency: "unbounded" })

        const runId = `${effectId}/compensate-effect`
        expect(answers[0]!.answer).toEqual({ ok: { _tag: "Settled", effectId, runId, outcome: "completed" } })
        expect(answers[1]!.answer).toEqual(answers[0]!.answer)
        const undos = markerLines(marker)
        expect(undos).toHaveLength(1)
        const [pid, startedAt] = undos[0]!.split(" ").map(Number) as [number, number]
        expect(answers.map((answer) => answer.pid)).toContain(pid)
        // Not vacuous: the other process asked while the undo was running, and waited for its answer.
        const other = answers.find((answer) => answer.pid !== pid)!
        expect(other.askedAt).toBeLessThan(startedAt + undoMillis)
        expect(other.answeredAt).toBeGreaterThanOrEqual(startedAt + undoMillis)

        const stored = yield* Effect.gen(function* () {
          const journal = yield* Journal.Journal
          return {
            run: yield* journal.read(runId),
            saga: yield* Saga.status("trip-race"),
            verification: yield* Journal.verify(runId)
          }
        }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))))
        expect(stored.run.map((entry) => entry.phase)).toEqual([
          "SAGA_STARTED",
          "COMPENSATING",
          "COMPENSATED",
          "SAGA_COMPLETED"
        ])
        expect(stored.verification).toMatchObject({ _tag: "Intact", entries: 4 })
        expect(stored.saga.steps[0]).toMatchObject({ state: "executed", undo: undefined })
      }),
    60_000
  )
})

describe("an approved explicit undo holds its run's lease while it runs", () => {
  const stores = [
    ["in memory", () => Testing.layer],
    [
      "on SQLite",
      () =>
        Saga.layer.pipe(
          Layer.provideMerge(SqlStore.layerSqlite({ filename: path.join(dir, `lease-${Date.now()}.db`) }))
        )
    ]
  ] as const
  for (const [name, layer] of stores) {
    it.effect(`${name}: another worker's claim of the run is LeaseHeld, and the undo's outcome is journaled`, () =>
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        const finish = yield* Deferred.make<void>()
        const book = counted(
          "book",
          () => Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(finish)),
          {
            approveExplicitUndo: true
          }
        )
        yield* Saga.run("trip-held", book.tool("room-30"))
        const effectId = yield* effectIdOf("trip-held", "book")
        const runId = `${effectId}/compensate-effect`
        const waiting = yield* Saga.compensateEffect(effectId)
        assert(waiting._tag === "AwaitingApproval")
        yield* Saga.approve(runId, waiting.request.stepId, { by: "alice" })

        const undo = yield* Effect.fork(Saga.compensateEffect(effectId))
        yield* Deferred.await(started)
        // The run is being driven again: running, and leased, so no other caller can take it over.
        // (The undo is let go whatever the checks find: it cannot be interrupted.)
        const journal = yield* Journal.Journal
        yield* Effect.gen(function* () {
          const during = yield* Saga.status(runId)
          expect(during.status).toBe("running")
          expect(during.lease).not.toBeNull()
          const claim = yield* Effect.flip(journal.claim(runId, { owner: "other-worker", ttlMillis: 30_000 }))
          expect(claim._tag).toBe("LeaseHeld")
        }).pipe(Effect.ensuring(Deferred.succeed(finish, undefined)))

        expect(yield* Fiber.join(undo)).toMatchObject({ _tag: "Settled", outcome: "completed" })
        expect(book.calls.undo).toBe(1)
        expect((yield* entriesOf(runId)).map((entry) => entry.phase)).toEqual([
          "SAGA_STARTED",
          "AWAITING_APPROVAL",
          "SAGA_AWAITING_APPROVAL",
          "APPROVED",
          "SAGA_RESUMED",
          "COMPENSATING",
          "COMPENSATED",
          "SAGA_COMPLETED"
        ])
        expect(yield* Journal.verify(runId)).toMatchObject({ _tag: "Intact" })
      }).pipe(Effect.provide(layer()))
    )
  }
})

describe("an explicit undo's run that does not verify, under a journal key", () => {
  const key = `k1:${Buffer.alloc(32, 7).toString("base64")}`
  const withKey = Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["EFFECT_SAGA_JOURNAL_KEYS", key]])))
  const onFile = (filename: string) => Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))

  /**
   * A saga on a new file that executed `book` and `charge` and awaits approval of a wire, with a
   * forged, unsigned "completed" explicit-undo run of `book` (written past the library).
   */
  const forgedSetUp = (name: string) =>
    Effect.gen(function* () {
      const filename = path.join(dir, `${name}.db`)
      const book = counted("book", () => Effect.void)
      const charge = counted("charge", () => Effect.void)
      const program = Effect.zipRight(book.tool("room-1"), Effect.zipRight(charge.tool("42"), wire("DE00")))
      const layer = onFile(filename)
      const { effectId, wireStep } = yield* Effect.gen(function* () {
        expect((yield* Saga.run(name, program))._tag).toBe("AwaitingApproval")
        const steps = (yield* Saga.status(name)).steps
        return {
          effectId: steps.find((step) => step.toolName === "book")!.effectId,
          wireStep: steps.find((step) => step.toolName === "wire")!.stepId
        }
      }).pipe(Effect.provide(layer))
      const runId = `${effectId}/compensate-effect`
      const at = new Date(0).toISOString()
      const stepId = effectId.slice(name.length + 1)
      const drafts = [
        { stepId: null, toolName: null, phase: "SAGA_STARTED", payload: { effectId } },
        { stepId, toolName: "book", phase: "COMPENSATING", payload: { idempotencyKey: runId } },
        { stepId, toolName: "book", phase: "COMPENSATED", payload: null },
        { stepId: null, toolName: null, phase: "SAGA_COMPLETED", payload: { effectId, outcome: "completed" } }
      ]
      let previous = "0".repeat(64)
      drafts.forEach((draft, i) => {
        const entry = {
          sagaId: runId,
          seq: i + 1,
          stepId: draft.stepId,
          toolName: draft.toolName,
          phase: draft.phase as Journal.Entry["phase"],
          input: null,
          payload: draft.payload === null ? null : JSON.stringify(draft.payload),
          at
        }
        previous = Journal.hashEntry(previous, entry)
        edit(
          filename,
          "INSERT INTO effect_saga_entries (saga_id, seq, step_id, tool_name, phase, input, payload, at, hash, mac) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
          ...Object.values(entry),
          previous
        )
      })
      edit(
        filename,
        "INSERT INTO effect_saga_sagas (saga_id, status, revision, digest, created_at, updated_at) VALUES (?, 'completed', 4, ?, ?, ?)",
        runId,
        previous,
        at,
        at
      )
      return { layer, runId, wireStep, book, charge }
    })

  it.effect("Saga.reject is refused before it decides, journals or undoes anything", () =>
    Effect.gen(function* () {
      const { layer, runId, wireStep, book, charge } = yield* forgedSetUp("forged-reject")
      yield* Effect.gen(function* () {
        const before = yield* entriesOf("forged-reject")
        const refused = yield* Effect.flip(Saga.reject("forged-reject", wireStep, { by: "alice", reason: "no" }))
        expect(refused).toMatchObject({ _tag: "JournalTampered", sagaId: runId, seq: 1, problem: "unsigned" })
        expect(yield* entriesOf("forged-reject")).toEqual(before)
        expect((yield* Approval.pending).map((request) => request.stepId)).toEqual([wireStep])
        expect({ book: book.calls.undo, charge: charge.calls.undo }).toEqual({ book: 0, charge: 0 })
      }).pipe(Effect.provide(layer))
    }).pipe(withKey)
  )

  it.effect("Saga.compensate is refused before it journals or undoes anything", () =>
    Effect.gen(function* () {
      const { layer, runId, book, charge } = yield* forgedSetUp("forged-compensate")
      yield* Effect.gen(function* () {
        const before = yield* entriesOf("forged-compensate")
        const refused = yield* Effect.flip(Saga.compensate("forged-compensate"))
        expect(refused).toMatchObject({ _tag: "JournalTampered", sagaId: runId, seq: 1, problem: "unsigned" })
        expect(yield* entriesOf("forged-compensate")).toEqual(before)
        expect({ book: book.calls.undo, charge: charge.calls.undo }).toEqual({ book: 0, charge: 0 })
      }).pipe(Effect.provide(layer))
    }).pipe(withKey)
  )
})

/** A tool whose forward calls and undos are counted; `undo: undefined` declares none. */
/** An irreversible transfer: it waits for an approval and has no undo. */
const wire = Compensable.make({
  name: "wire",
  input: Schema.String,
  success: Schema.String,
  reversibility: "irreversible",
  execute: (to) => Effect.succeed(`wired-${to}`)
})

const counted = (
  name: string,
  undo: ((ctx: Compensable.CompensationContext<string, string>) => Effect.Effect<unknown, unknown>) | undefined,
  options: Compensable.ToolOptions = {}
) => {
  const calls = { execute: 0, undo: 0 }
  const tool = Compensable.make({
    ...options,
    name,
    input: Schema.String,
    success: Schema.String,
    execute: (input) => Effect.sync(() => `${name}-${input}-${++calls.execute}`),
    compensate:
      undo === undefined
        ? undefined
        : (ctx) =>
            Effect.suspend(() => {
              calls.undo++
              return undo(ctx)
            })
  })
  return { calls, tool }
}

/** The effect id of the first step of `toolName` in saga `sagaId`. */
const effectIdOf = (sagaId: string, toolName: string) =>
  Effect.map(Saga.status(sagaId), (status) => status.steps.find((step) => step.toolName === toolName)!.effectId)

const workerScript = fileURLToPath(new URL("./fixtures/explicit-worker.ts", import.meta.url))
