import * as Tool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import { assert, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Layer, Schema } from "effect"
import * as Agent from "../src/Agent.js"
import { Approval, Compensable, Journal, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import * as Scripted from "./fixtures/agent-scripted.js"

describe("an irreversible call in a saga a failure has bound to compensate", () => {
  it.effect(
    "an agent's card is declined, then it asks to issue the ticket → not run, no approval asked, the model told why; every replay answers the same",
    () =>
      Effect.gen(function* () {
        const world: World = { log: [] }
        const { live, model } = travel(world, ({ turn }) =>
          turn === 1
            ? Scripted.calls(
                Scripted.call("c1", "Hold", { flight: "TP1" }),
                Scripted.call("c2", "Charge", { amount: 5000 })
              )
            : turn === 2
              ? Scripted.calls(Scripted.call("c3", "Issue", { holdId: "H-TP1" }))
              : Scripted.says("Sorry.")
        )
        yield* Effect.gen(function* () {
          const result = yield* Saga.run("trip-1", trip)
          assert(result._tag === "Compensated")
          expect(Cause.squash(result.cause)).toMatchObject({ _tag: "StepFailed", stepId: "Charge:c2#1" })
          expect(world.log).toEqual(["hold TP1", "charge 5000: declined", "release H-TP1"])

          // The model was told, as a failed result, that the call did not run, and why.
          const told = model.questions[2]!.results.get("c3")!
          expect(told).toMatchObject({ name: "Issue", isFailure: true })
          expect(Agent.isNotRun(told.result)).toBe(true)
          expect(told.result.message).toBe(
            "This call was not run: the saga will be undone when the run ends, because step Charge:c2#1 (Charge) failed. Do not call it again."
          )

          // Nothing was asked of anyone: no request, nothing in the inbox, the journal says why.
          const issue = (yield* journalOf("trip-1")).filter((entry) => entry.toolName === "Issue")
          expect(issue.map((entry) => entry.phase)).toEqual(["REJECTED"])
          expect(JSON.parse(issue[0]!.payload!)).toEqual({
            by: "effect-saga",
            reason: "not run: the saga will be undone when the run ends, because step Charge:c2#1 (Charge) failed",
            boundToUndo: true
          })
          expect(yield* Approval.pending).toEqual([])
          expect(yield* Approval.inbox).toEqual([])
          const status = yield* Saga.status("trip-1")
          expect(status.steps.find((step) => step.toolName === "Issue")).toMatchObject({ state: "refused" })
          const approve = yield* Effect.flip(Saga.approve("trip-1", "Issue:c3#1", { by: "alice" }))
          expect(approve._tag).toBe("CommandConflict")

          // A replay asks nothing, runs nothing, writes nothing, and answers the call as it did.
          const before = yield* journalOf("trip-1")
          expect((yield* Saga.run("trip-1", trip))._tag).toBe("Compensated")
          expect(yield* journalOf("trip-1")).toEqual(before)
          expect(model.turnsAsked()).toEqual({ 1: 1, 2: 1, 3: 1 })
          expect(world.log).toEqual(["hold TP1", "charge 5000: declined", "release H-TP1"])
        }).pipe(Effect.provide(live))
      })
  )

  it.effect(
    "a request filed before the failure is withdrawn with it: the approved call before it runs, the other is told it did not",
    () =>
      Effect.gen(function* () {
        const world: World = { log: [] }
        const { live, model } = travel(world, ({ turn }) =>
          turn === 1
            ? Scripted.calls(Scripted.call("c1", "Wire", { amount: 5000 }))
            : turn === 2
              ? Scripted.calls(Scripted.call("c2", "Issue", { holdId: "H-TP1" }))
              : Scripted.says("Done.")
        )
        yield* Effect.gen(function* () {
          const first = yield* Saga.run("trip-2", trip)
          assert(first._tag === "AwaitingApproval")
          expect((yield* Approval.pending).map((request) => request.stepId)).toEqual(["Wire:c1#1", "Issue:c2#1"])
          yield* Saga.approve("trip-2", "Wire:c1#1", { by: "alice" })

          // The approved wire runs and fails (fed to the model): the saga is bound to compensate.
          const second = yield* Saga.run("trip-2", trip)
          assert(second._tag === "Compensated")
          expect(world.log).toEqual(["wire 5000: rejected"])
          const entries = yield* journalOf("trip-2")
          const failed = entries.find((entry) => entry.phase === "FAILED")!
          const withdrawn = entries.find((entry) => entry.toolName === "Issue" && entry.phase === "REJECTED")!
          expect(withdrawn.seq).toBe(failed.seq + 1)
          expect(JSON.parse(withdrawn.payload!)).toMatchObject({ boundToUndo: true })
          expect(yield* Approval.pending).toEqual([])
          expect(model.questions.at(-1)!.said).toBe(
            'The call c1 of Wire was approved and has run, and failed: {"reason":"over the limit","_tag":"WireRejected"}\n' +
              "The call c2 of Issue was not run: the saga will be undone when the run ends, because step Wire:c1#1 (Wire) failed"
          )
          expect((yield* Effect.flip(Saga.approve("trip-2", "Issue:c2#1", { by: "alice" })))._tag).toBe(
            "CommandConflict"
          )
        }).pipe(Effect.provide(live))
      })
  )

  it.effect("a call approved before the failure but not run yet does not run either", () =>
    Effect.gen(function* () {
      const world: World = { log: [] }
      const { live } = travel(world, ({ turn }) =>
        turn === 1
          ? Scripted.calls(
              Scripted.call("c1", "Wire", { amount: 5000 }),
              Scripted.call("c2", "Issue", { holdId: "H-1" })
            )
          : Scripted.says("Done.")
      )
      yield* Effect.gen(function* () {
        assert((yield* Saga.run("trip-4", trip))._tag === "AwaitingApproval")
        yield* Saga.approve("trip-4", "Wire:c1#1", { by: "alice" })
        yield* Saga.approve("trip-4", "Issue:c2#1", { by: "alice" })
        const result = yield* Saga.run("trip-4", trip)
        assert(result._tag === "Compensated")
        expect(world.log).toEqual(["wire 5000: rejected"])
        const issue = (yield* journalOf("trip-4")).filter((entry) => entry.toolName === "Issue")
        expect(issue.map((entry) => entry.phase)).toEqual(["AWAITING_APPROVAL", "APPROVED", "REJECTED"])
        expect((yield* Saga.run("trip-4", trip))._tag).toBe("Compensated")
        expect(world.log).toEqual(["wire 5000: rejected"])
      }).pipe(Effect.provide(live))
    })
  )

  it.effect(
    "a run that stops after the failure leaves no request pending: nobody is asked to approve what cannot matter",
    () =>
      Effect.gen(function* () {
        const world: World = { log: [] }
        const { live } = travel(world, ({ turn }) =>
          turn === 1
            ? Scripted.calls(Scripted.call("c1", "Issue", { holdId: "H-TP1" }))
            : turn === 2
              ? Scripted.calls(Scripted.call("c2", "Charge", { amount: 5000 }))
              : turn === 3
                ? Scripted.calls(Scripted.call("c3", "Hold", { flight: "crash" }))
                : Scripted.says("Done.")
        )
        yield* Effect.gen(function* () {
          const result = yield* Saga.run("trip-3", trip)
          assert(result._tag === "NeedsAttention")
          expect(yield* Approval.pending).toEqual([])
          expect(yield* Approval.inbox).toEqual([])
          const status = yield* Saga.status("trip-3")
          expect(status.steps.find((step) => step.toolName === "Issue")).toMatchObject({ state: "refused" })
        }).pipe(Effect.provide(live))
      })
  )

  it.effect(
    "an operator's resolution as not applied binds the saga too: the request waiting is withdrawn with it",
    () =>
      Effect.gen(function* () {
        const world: World = { log: [] }
        const { live } = travel(world, ({ turn }) =>
          turn === 1
            ? Scripted.calls(Scripted.call("c1", "Issue", { holdId: "H-TP1" }))
            : turn === 2
              ? Scripted.calls(Scripted.call("c2", "Hold", { flight: "crash" }))
              : Scripted.says("Done.")
        )
        yield* Effect.gen(function* () {
          assert((yield* Saga.run("trip-5", trip))._tag === "NeedsAttention")
          expect((yield* Approval.inbox).map((request) => request.stepId)).toEqual(["Issue:c1#1"])
          yield* Saga.resolve("trip-5", "Hold:c2#1", { outcome: "not-applied", by: "oncall" })
          expect(yield* Approval.inbox).toEqual([])
          expect((yield* Effect.flip(Saga.approve("trip-5", "Issue:c1#1", { by: "alice" })))._tag).toBe(
            "CommandConflict"
          )
          const result = yield* Saga.run("trip-5", trip)
          assert(result._tag === "Compensated")
          expect(world.log).toEqual([])
        }).pipe(Effect.provide(live))
      })
  )

  it.effect(
    "a program that caught a failure and goes on to an irreversible step: not run, not asked; it compensates",
    () =>
      Effect.gen(function* () {
        const log: Array<string> = []
        const charge = Compensable.make({
          name: "charge",
          input: Schema.Number,
          success: Schema.String,
          failure: Schema.String,
          execute: (amount) => Effect.fail(`declined ${amount}`),
          compensate: () => Effect.void
        })
        const wire = Compensable.make({
          name: "wire",
          input: Schema.Number,
          success: Schema.String,
          reversibility: "irreversible",
          execute: (amount) => Effect.sync(() => log.push(`wire ${amount}`)).pipe(Effect.as("w-1"))
        })
        const program = Effect.zipRight(Effect.either(charge(10, { key: "card" })), wire(10))
        const result = yield* Saga.run("plain-1", program)
        assert(result._tag === "Compensated")
        expect(Cause.squash(result.cause)).toMatchObject({
          _tag: "ApprovalRefused",
          reason: "not run: the saga will be undone when the run ends, because step charge:card#1 (charge) failed"
        })
        expect(log).toEqual([])
        expect(yield* Approval.pending).toEqual([])
        const phases = (yield* journalOf("plain-1")).map((entry) => entry.phase)
        expect(phases).not.toContain("AWAITING_APPROVAL")
      }).pipe(Effect.provide(Testing.layer))
  )
})

interface World {
  readonly log: Array<string>
}

class CardDeclined extends Schema.TaggedError<CardDeclined>()("CardDeclined", { reason: Schema.String }) {}
class WireRejected extends Schema.TaggedError<WireRejected>()("WireRejected", { reason: Schema.String }) {}

const Hold = Tool.make("Hold", {
  parameters: { flight: Schema.String },
  success: Schema.Struct({ holdId: Schema.String })
})

const Charge = Tool.make("Charge", {
  parameters: { amount: Schema.Int },
  success: Schema.Struct({ chargeId: Schema.String }),
  failure: CardDeclined,
  failureMode: "return"
})

/** Irreversible (destructive, no undo): it waits for an approval. */
const Issue = Tool.make("Issue", {
  parameters: { holdId: Schema.String },
  success: Schema.Struct({ ticket: Schema.String })
})

/** Irreversible too, and its failure is fed to the model. */
const Wire = Tool.make("Wire", {
  parameters: { amount: Schema.Int },
  success: Schema.String,
  failure: WireRejected,
  failureMode: "return"
})

const Travel = AiToolkit.make(Hold, Charge, Issue, Wire)

const travel = (world: World, script: Scripted.Script) => {
  const model = Scripted.layer(script)
  const agent = Agent.make(Travel, {
    undo: {
      Hold: (ctx) => Effect.sync(() => world.log.push(`release ${ctx.result.holdId}`)),
      Charge: (ctx) => Effect.sync(() => world.log.push(`refund ${ctx.result.chargeId}`))
    }
  })
  const handlers = agent.toLayer({
    Hold: ({ flight }) =>
      flight === "crash"
        ? Effect.die(new Error("the airline client crashed"))
        : Effect.sync(() => {
            world.log.push(`hold ${flight}`)
            return { holdId: `H-${flight}` }
          }),
    Charge: ({ amount }) =>
      Effect.suspend(() => {
        world.log.push(`charge ${amount}: declined`)
        return Effect.fail(new CardDeclined({ reason: "insufficient funds" }))
      }),
    Issue: ({ holdId }) =>
      Effect.sync(() => {
        world.log.push(`issue ${holdId}`)
        return { ticket: `T-${holdId}` }
      }),
    Wire: ({ amount }) =>
      Effect.suspend(() => {
        world.log.push(`wire ${amount}: rejected`)
        return Effect.fail(new WireRejected({ reason: "over the limit" }))
      })
  })
  const live = Layer.mergeAll(handlers, Agent.layerModel.pipe(Layer.provide(model.layer))).pipe(
    Layer.provideMerge(Testing.layer)
  )
  return { live, model }
}

/** The agent's toolkit as the model is given it (the handlers and undos come from `travel`'s layer). */
const Shape = Agent.make(Travel, { undo: { Hold: () => Effect.void, Charge: () => Effect.void } })

const trip = Effect.map(
  Agent.loop({ prompt: "Book TP1.", toolkit: Shape.toolkit }),
  (conversation) => conversation.text
)

const journalOf = (sagaId: string) => Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
