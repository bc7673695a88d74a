import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Outcome, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"

// Every payload text below was recorded from these same runs on the main of before the payloads had
// schemas (commit 8c59a11): the hash chain covers the text, so a key moved or an omission changed
// shows here. Two changes since, on purpose: a read's INTENT says `"changesNothing":true` (written
// only for reads, so that its unknown outcome needs no operator), and the INTENT of a tool that
// declares an undo says `"undo":true` (so that a compensation where it declares none is not taken
// for one that needs none); every other INTENT is as it was.

describe("the payloads a saga journals", () => {
  it.effect("approved, renewed, run and compensated: every payload is the text it always was", () =>
    Effect.gen(function* () {
      const { program } = fixture()
      yield* TestClock.setTime(t)
      const waiting = yield* Saga.run("trip", program)
      assert(waiting._tag === "AwaitingApproval")
      const { stepId } = waiting.request
      yield* Saga.approve("trip", stepId, { by: "alice", expiresAt: iso(t + minutes(5)) })
      yield* TestClock.adjust("1 minute")
      yield* Saga.renewApproval("trip", stepId, { by: "bob", expiresAt: iso(t + minutes(60)) })
      yield* TestClock.adjust("1 minute")
      yield* Saga.renewApproval("trip", stepId, { by: "carol" })
      expect((yield* Saga.run("trip", program))._tag).toBe("Completed")
      expect((yield* Saga.compensate("trip")).status).toBe("compensated")
      expect(yield* journalOf("trip")).toEqual([
        "SAGA_STARTED null",
        'INTENT {"idempotencyKey":"trip/reserve:8589efab68c9a803#1","attempt":1,"undo":true}',
        'EXECUTED {"result":"res-A-1","receipt":"ref-A-1"}',
        'INTENT {"idempotencyKey":"trip/stock:8589efab68c9a803#1","attempt":1,"changesNothing":true}',
        'EXECUTED {"result":3,"changesNothing":true}',
        'AWAITING_APPROVAL {"inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d"}',
        'SAGA_AWAITING_APPROVAL {"stepId":"sendWire:4dbb8d1ebbf10271#1","requestId":"trip/sendWire:4dbb8d1ebbf10271#1"}',
        'APPROVED {"_tag":"Approved","by":"alice","at":"1970-01-01T00:03:00.000Z","inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d","expiresAt":"1970-01-01T00:08:00.000Z","principal":"anonymous"}',
        'APPROVED {"_tag":"Approved","by":"alice","at":"1970-01-01T00:03:00.000Z","inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d","principal":"anonymous","expiresAt":"1970-01-01T01:03:00.000Z","renewedBy":"bob","renewedAt":"1970-01-01T00:04:00.000Z"}',
        'APPROVED {"_tag":"Approved","by":"alice","at":"1970-01-01T00:03:00.000Z","inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d","principal":"anonymous","renewedBy":"carol","renewedAt":"1970-01-01T00:05:00.000Z"}',
        "SAGA_RESUMED null",
        'INTENT {"idempotencyKey":"trip/sendWire:4dbb8d1ebbf10271#1","attempt":1}',
        'EXECUTED {"result":"wire-4200"}',
        "SAGA_COMPLETED null",
        'SAGA_COMPENSATING {"cause":"an operator asked for compensation"}',
        'SKIPPED {"reason":"irreversible: no undo exists"}',
        'COMPENSATING {"idempotencyKey":"trip/reserve:8589efab68c9a803#1/undo"}',
        "COMPENSATED null",
        'SAGA_COMPENSATED {"sagaId":"trip","status":"compensated","undone":[{"stepId":"sendWire:4dbb8d1ebbf10271#1","toolName":"sendWire","outcome":"skipped","detail":"irreversible: no undo exists"},{"stepId":"reserve:8589efab68c9a803#1","toolName":"reserve","outcome":"completed"}],"notUndone":[]}'
      ])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("rejected by an operator: the rejection and the compensation it starts", () =>
    Effect.gen(function* () {
      const { program } = fixture()
      yield* TestClock.setTime(t)
      const waiting = yield* Saga.run("rejected", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Saga.reject("rejected", waiting.request.stepId, { by: "dave", reason: "wrong IBAN" })
      expect(yield* journalOf("rejected")).toEqual([
        "SAGA_STARTED null",
        'INTENT {"idempotencyKey":"rejected/reserve:8589efab68c9a803#1","attempt":1,"undo":true}',
        'EXECUTED {"result":"res-A-1","receipt":"ref-A-1"}',
        'INTENT {"idempotencyKey":"rejected/stock:8589efab68c9a803#1","attempt":1,"changesNothing":true}',
        'EXECUTED {"result":3,"changesNothing":true}',
        'AWAITING_APPROVAL {"inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d"}',
        'SAGA_AWAITING_APPROVAL {"stepId":"sendWire:4dbb8d1ebbf10271#1","requestId":"rejected/sendWire:4dbb8d1ebbf10271#1"}',
        'REJECTED {"_tag":"Rejected","by":"dave","at":"1970-01-01T00:03:00.000Z","reason":"rejected by dave: wrong IBAN","principal":"anonymous"}',
        'SAGA_COMPENSATING {"cause":"step sendWire:4dbb8d1ebbf10271#1 was rejected by dave"}',
        'COMPENSATING {"idempotencyKey":"rejected/reserve:8589efab68c9a803#1/undo"}',
        "COMPENSATED null",
        'SAGA_COMPENSATED {"sagaId":"rejected","status":"compensated","undone":[{"stepId":"reserve:8589efab68c9a803#1","toolName":"reserve","outcome":"completed"}],"notUndone":[]}'
      ])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("unknown outcomes resolved by an operator, applied and not applied", () =>
    Effect.gen(function* () {
      const { reserve } = fixture()
      yield* TestClock.setTime(t)
      for (const sagaId of ["applied", "not-applied"]) {
        const first = yield* Saga.run(sagaId, reserve({ sku: "A-1" })).pipe(
          Effect.provide(Testing.faults({ tool: "reserve", fault: "unknown" }))
        )
        assert(first._tag === "NeedsAttention")
        const stepId = first.unknown[0]!.stepId
        yield* sagaId === "applied"
          ? Saga.resolve(sagaId, stepId, { outcome: "applied", by: "erin", result: "res-found" })
          : Saga.resolve(sagaId, stepId, { outcome: "not-applied", by: "erin" })
        yield* Saga.run(sagaId, reserve({ sku: "A-1" }))
      }
      expect([...(yield* journalOf("applied")), ...(yield* journalOf("not-applied"))]).toEqual([
        "SAGA_STARTED null",
        'INTENT {"idempotencyKey":"applied/reserve:8589efab68c9a803#1","attempt":1,"undo":true}',
        'SAGA_NEEDS_ATTENTION {"unknown":[{"stepId":"reserve:8589efab68c9a803#1","toolName":"reserve","reason":"outcome unknown: injected fault: reserve execute lost its answer"}]}',
        'EXECUTED {"result":"res-found","resolvedBy":"erin","principal":"anonymous"}',
        "SAGA_RESUMED null",
        "SAGA_COMPLETED null",
        "SAGA_STARTED null",
        'INTENT {"idempotencyKey":"not-applied/reserve:8589efab68c9a803#1","attempt":1,"undo":true}',
        'SAGA_NEEDS_ATTENTION {"unknown":[{"stepId":"reserve:8589efab68c9a803#1","toolName":"reserve","reason":"outcome unknown: injected fault: reserve execute lost its answer"}]}',
        'FAILED {"description":"failed (not applied): resolved as not applied by erin","defect":false,"error":{"_tag":"OutcomeFailed","reason":"resolved as not applied by erin"},"resolvedBy":"erin","principal":"anonymous"}',
        "SAGA_RESUMED null",
        'SAGA_COMPENSATING {"cause":"OutcomeFailed: failed (not applied): resolved as not applied by erin"}',
        'SAGA_COMPENSATED {"sagaId":"not-applied","status":"compensated","undone":[],"notUndone":[{"stepId":"reserve:8589efab68c9a803#1","toolName":"reserve","phase":"FAILED"}]}'
      ])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("failures, a defect, and undos that fail or leave something behind", () =>
    Effect.gen(function* () {
      const { declined, crash, partial, broken } = fixture()
      yield* TestClock.setTime(t)
      const program = Effect.all([partial({ n: 1 }), broken({ n: 2 }), Effect.either(declined({ n: 3 }))]).pipe(
        Effect.zipRight(crash({ n: 4 }))
      )
      expect((yield* Saga.run("failing", program))._tag).toBe("CompensationFailed")
      expect(yield* journalOf("failing")).toEqual([
        "SAGA_STARTED null",
        'INTENT {"idempotencyKey":"failing/partial:2bfd14f43d17fc7c#1","attempt":1,"undo":true}',
        'EXECUTED {"result":null}',
        'INTENT {"idempotencyKey":"failing/broken:363379742f80b51b#1","attempt":1,"undo":true}',
        'EXECUTED {"result":null}',
        'INTENT {"idempotencyKey":"failing/declined:215ddd5567ca2590#1","attempt":1}',
        'FAILED {"description":"Declined: { \\"reason\\": \\"insufficient funds\\" }","defect":false,"error":{"reason":"insufficient funds","_tag":"Declined"}}',
        'INTENT {"idempotencyKey":"failing/crash:f3e0792e105e2bfe#1","attempt":1,"changesNothing":true}',
        'FAILED {"description":"RuntimeException: the client crashed","defect":true}',
        'SAGA_COMPENSATING {"cause":"RuntimeException: the client crashed"}',
        'COMPENSATING {"idempotencyKey":"failing/broken:363379742f80b51b#1/undo"}',
        'COMPENSATION_FAILED {"reason":"the provider refused"}',
        'COMPENSATING {"idempotencyKey":"failing/partial:2bfd14f43d17fc7c#1/undo"}',
        'COMPENSATION_PARTIAL {"remaining":"1 of 2 seats"}',
        'SAGA_COMPENSATION_FAILED {"sagaId":"failing","status":"compensation_failed","undone":[{"stepId":"broken:363379742f80b51b#1","toolName":"broken","outcome":"failed","detail":"the provider refused"},{"stepId":"partial:2bfd14f43d17fc7c#1","toolName":"partial","outcome":"partial","detail":"1 of 2 seats"}],"notUndone":[{"stepId":"declined:215ddd5567ca2590#1","toolName":"declined","phase":"FAILED"},{"stepId":"crash:f3e0792e105e2bfe#1","toolName":"crash","phase":"FAILED"}]}'
      ])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an effect undone on request: the run of its own and its answer", () =>
    Effect.gen(function* () {
      const { reserve } = fixture()
      yield* TestClock.setTime(t)
      expect((yield* Saga.run("booked", reserve({ sku: "B-2" })))._tag).toBe("Completed")
      const [step] = (yield* Saga.status("booked")).steps
      const answer = yield* Saga.compensateEffect(step!.effectId)
      assert(answer._tag === "Settled")
      expect(yield* journalOf(answer.runId)).toEqual([
        'SAGA_STARTED {"effectId":"booked/reserve:fea32d721611bb83#1"}',
        'COMPENSATING {"idempotencyKey":"booked/reserve:fea32d721611bb83#1/compensate-effect"}',
        "COMPENSATED null",
        'SAGA_COMPLETED {"effectId":"booked/reserve:fea32d721611bb83#1","outcome":"completed"}'
      ])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("decided in the approval store: an approval and a rejection as the store gave them", () =>
    Effect.gen(function* () {
      const { program } = fixture()
      yield* TestClock.setTime(t)
      const decided = (sagaId: string, layer: typeof Testing.layer) =>
        Effect.provide(Effect.zipRight(Saga.run(sagaId, program), journalOf(sagaId)), layer)
      expect(yield* decided("auto", Testing.layerWith(Approval.layerAutoApprove))).toEqual([
        "SAGA_STARTED null",
        'INTENT {"idempotencyKey":"auto/reserve:8589efab68c9a803#1","attempt":1,"undo":true}',
        'EXECUTED {"result":"res-A-1","receipt":"ref-A-1"}',
        'INTENT {"idempotencyKey":"auto/stock:8589efab68c9a803#1","attempt":1,"changesNothing":true}',
        'EXECUTED {"result":3,"changesNothing":true}',
        'AWAITING_APPROVAL {"inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d"}',
        'APPROVED {"_tag":"Approved","by":"auto-approve","at":"1970-01-01T00:03:00.000Z","inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d"}',
        'INTENT {"idempotencyKey":"auto/sendWire:4dbb8d1ebbf10271#1","attempt":1}',
        'EXECUTED {"result":"wire-4200"}',
        "SAGA_COMPLETED null"
      ])
      expect(yield* decided("refused", Testing.layerWith(Approval.layerRejectAll))).toEqual([
        "SAGA_STARTED null",
        'INTENT {"idempotencyKey":"refused/reserve:8589efab68c9a803#1","attempt":1,"undo":true}',
        'EXECUTED {"result":"res-A-1","receipt":"ref-A-1"}',
        'INTENT {"idempotencyKey":"refused/stock:8589efab68c9a803#1","attempt":1,"changesNothing":true}',
        'EXECUTED {"result":3,"changesNothing":true}',
        'AWAITING_APPROVAL {"inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d"}',
        'REJECTED {"_tag":"Rejected","by":"reject-all","at":"1970-01-01T00:03:00.000Z","reason":"rejected by reject-all: every request is rejected"}',
        'SAGA_COMPENSATING {"cause":"ApprovalRefused: step sendWire:4dbb8d1ebbf10271#1 (sendWire) was refused: rejected by reject-all: every request is rejected"}',
        'COMPENSATING {"idempotencyKey":"refused/reserve:8589efab68c9a803#1/undo"}',
        "COMPENSATED null",
        'SAGA_COMPENSATED {"sagaId":"refused","status":"compensated","undone":[{"stepId":"reserve:8589efab68c9a803#1","toolName":"reserve","outcome":"completed"}],"notUndone":[]}'
      ])
    })
  )

  it.effect("a deferred call settled once approved, one withdrawn by compensation, an approval that expired", () =>
    Effect.gen(function* () {
      const { reserve, sendWire } = fixture()
      yield* TestClock.setTime(t)
      const deferring = (then: Effect.Effect<unknown, string>) =>
        Effect.gen(function* () {
          const saga = yield* Saga.CurrentSaga
          yield* reserve({ sku: "A-1" })
          yield* Effect.flip(saga.step(sendWire.spec, { amount: 4200, to: "DE89" }, "wire", { deferApproval: true }))
          return yield* then
        })
      const waiting = yield* Saga.run("deferred", deferring(Effect.void))
      assert(waiting._tag === "AwaitingApproval")
      yield* Saga.approve("deferred", waiting.request.stepId, { by: "alice" })
      expect((yield* Saga.run("deferred", deferring(Effect.void)))._tag).toBe("Completed")
      expect(yield* journalOf("deferred")).toEqual([
        "SAGA_STARTED null",
        'INTENT {"idempotencyKey":"deferred/reserve:8589efab68c9a803#1","attempt":1,"undo":true}',
        'EXECUTED {"result":"res-A-1","receipt":"ref-A-1"}',
        'AWAITING_APPROVAL {"inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d","deferred":true}',
        'SAGA_AWAITING_APPROVAL {"stepId":"sendWire:wire#1","requestId":"deferred/sendWire:wire#1"}',
        'APPROVED {"_tag":"Approved","by":"alice","at":"1970-01-01T00:03:00.000Z","inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d","principal":"anonymous"}',
        "SAGA_RESUMED null",
        'INTENT {"idempotencyKey":"deferred/sendWire:wire#1","attempt":1,"deferred":true}',
        'EXECUTED {"result":"wire-4200"}',
        "SAGA_COMPLETED null"
      ])

      expect((yield* Saga.run("withdrawn", deferring(Effect.fail("out of stock"))))._tag).toBe("Compensated")
      expect(yield* journalOf("withdrawn")).toEqual([
        "SAGA_STARTED null",
        'INTENT {"idempotencyKey":"withdrawn/reserve:8589efab68c9a803#1","attempt":1,"undo":true}',
        'EXECUTED {"result":"res-A-1","receipt":"ref-A-1"}',
        'AWAITING_APPROVAL {"inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d","deferred":true}',
        'SAGA_COMPENSATING {"cause":"Error: out of stock"}',
        'REJECTED {"by":"effect-saga","reason":"withdrawn: the saga began to compensate before this call was approved"}',
        'COMPENSATING {"idempotencyKey":"withdrawn/reserve:8589efab68c9a803#1/undo"}',
        "COMPENSATED null",
        'SAGA_COMPENSATED {"sagaId":"withdrawn","status":"compensated","undone":[{"stepId":"reserve:8589efab68c9a803#1","toolName":"reserve","outcome":"completed"}],"notUndone":[]}'
      ])

      const { program } = fixture()
      const expiring = yield* Saga.run("expired", program)
      assert(expiring._tag === "AwaitingApproval")
      yield* Saga.approve("expired", expiring.request.stepId, { by: "alice", expiresAt: iso(t + minutes(5)) })
      yield* TestClock.adjust("10 minutes")
      expect((yield* Saga.run("expired", program))._tag).toBe("Compensated")
      expect(yield* journalOf("expired")).toEqual([
        "SAGA_STARTED null",
        'INTENT {"idempotencyKey":"expired/reserve:8589efab68c9a803#1","attempt":1,"undo":true}',
        'EXECUTED {"result":"res-A-1","receipt":"ref-A-1"}',
        'INTENT {"idempotencyKey":"expired/stock:8589efab68c9a803#1","attempt":1,"changesNothing":true}',
        'EXECUTED {"result":3,"changesNothing":true}',
        'AWAITING_APPROVAL {"inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d"}',
        'SAGA_AWAITING_APPROVAL {"stepId":"sendWire:4dbb8d1ebbf10271#1","requestId":"expired/sendWire:4dbb8d1ebbf10271#1"}',
        'APPROVED {"_tag":"Approved","by":"alice","at":"1970-01-01T00:03:00.000Z","inputDigest":"4dbb8d1ebbf102718155680c11f6ebc1ffac11b44724681bff9c4a5cd4160a7d","expiresAt":"1970-01-01T00:08:00.000Z","principal":"anonymous"}',
        "SAGA_RESUMED null",
        'EXPIRED {"reason":"the approval by alice at 1970-01-01T00:03:00.000Z expired at 1970-01-01T00:08:00.000Z (its expiresAt)"}',
        'SAGA_COMPENSATING {"cause":"ApprovalRefused: step sendWire:4dbb8d1ebbf10271#1 (sendWire) was refused: the approval by alice at 1970-01-01T00:03:00.000Z expired at 1970-01-01T00:08:00.000Z (its expiresAt)"}',
        'COMPENSATING {"idempotencyKey":"expired/reserve:8589efab68c9a803#1/undo"}',
        "COMPENSATED null",
        'SAGA_COMPENSATED {"sagaId":"expired","status":"compensated","undone":[{"stepId":"reserve:8589efab68c9a803#1","toolName":"reserve","outcome":"completed"}],"notUndone":[]}'
      ])
    }).pipe(Effect.provide(Testing.layer))
  )
})

const minutes = (n: number) => n * 60_000
/** A time to start at: small, because `TestClock` wakes every sleeper (lease renewals too) on its way. */
const t = minutes(3)
const iso = (millis: number) => new Date(millis).toISOString()

/** A saga's journal as `PHASE payload` lines: the payload exactly as stored. */
const journalOf = (sagaId: string) =>
  Effect.map(
    Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId)),
    (entries) => entries.map((entry) => `${entry.phase} ${entry.payload}`)
  )

class Declined extends Schema.TaggedError<Declined>()("Declined", { reason: Schema.String }) {}

const fixture = () => {
  const reserve = Compensable.make({
    name: "reserve",
    input: Schema.Struct({ sku: Schema.String }),
    success: Schema.String,
    execute: ({ sku }, step) => Effect.as(step.setReceipt(`ref-${sku}`), `res-${sku}`),
    compensate: () => Effect.void
  })
  const stock = Compensable.make({
    name: "stock",
    input: Schema.Struct({ sku: Schema.String }),
    success: Schema.Number,
    changesNothing: true,
    execute: () => Effect.succeed(3)
  })
  const sendWire = Compensable.make({
    name: "sendWire",
    input: Schema.Struct({ amount: Schema.Int, to: Schema.String }),
    success: Schema.String,
    reversibility: "irreversible",
    execute: ({ amount }) => Effect.succeed(`wire-${amount}`)
  })
  const program = reserve({ sku: "A-1" }).pipe(
    Effect.zipRight(stock({ sku: "A-1" })),
    Effect.zipRight(sendWire({ amount: 4200, to: "DE89" }))
  )
  const Step = Schema.Struct({ n: Schema.Int })
  const declined = Compensable.make({
    name: "declined",
    input: Step,
    success: Schema.Null,
    failure: Declined,
    execute: () => Effect.fail(new Declined({ reason: "insufficient funds" }))
  })
  const crash = Compensable.make({
    name: "crash",
    input: Step,
    success: Schema.Null,
    // A read: a read that dies is journaled FAILED (a defect); a call that changes something is left unknown.
    changesNothing: true,
    execute: () => Effect.dieMessage("the client crashed")
  })
  const partial = Compensable.make({
    name: "partial",
    input: Step,
    success: Schema.Null,
    execute: () => Effect.succeed(null),
    compensate: () => Effect.fail(Outcome.partial("1 of 2 seats"))
  })
  const broken = Compensable.make({
    name: "broken",
    input: Step,
    success: Schema.Null,
    execute: () => Effect.succeed(null),
    compensate: () => Effect.fail(new Error("the provider refused"))
  })
  return { program, reserve, sendWire, declined, crash, partial, broken }
}
