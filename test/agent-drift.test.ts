import * as Tool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as Agent from "../src/Agent.js"
import { Journal, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import * as Scripted from "./fixtures/agent-scripted.js"

describe("an agent resumed with a toolkit that changed", () => {
  it.effect(
    "a tool's parameters changed while a call awaits approval → NonDeterminism at the turn: nothing written, undone or run",
    () =>
      Effect.gen(function* () {
        const world: World = { log: [] }
        const first = yield* runWith(version(Schema.String, world))
        assert(first._tag === "AwaitingApproval")
        yield* Saga.approve("trip-1", first.request.stepId, { by: "alice" })
        const before = yield* journalOf("trip-1")

        // A deploy made `flight` a number: the journaled answer calls Hold with a string.
        const error = yield* Effect.flip(runWith(version(Schema.Number, world)))
        expect(error).toMatchObject({
          _tag: "NonDeterminism",
          sagaId: "trip-1",
          stepId: expect.stringMatching(/^LanguageModel:/)
        })
        expect(error.message).toContain(
          "the journaled answer calls Hold (call c1) with parameters this toolkit's Hold no longer accepts"
        )
        // The parameters the model passed are inputs: the error names the schema, not the value.
        expect(error.message).toContain("Expected number")
        expect(error.message).not.toContain("TP1")
        expect(yield* journalOf("trip-1")).toEqual(before)
        expect(world.log).toEqual(["hold TP1"])
        expect((yield* Saga.status("trip-1")).status).toBe("awaiting_approval")

        // The journal is intact: the code that wrote it goes on from where it stopped.
        const done = yield* runWith(version(Schema.String, world))
        assert(done._tag === "Completed")
        expect(world.log).toEqual(["hold TP1", "issue H-TP1"])
      }).pipe(Effect.provide(Testing.layer))
  )
})

interface World {
  readonly log: Array<string>
}

/** A travel agent whose `Hold` takes its flight as `flight` says: a string in v1, a number after a deploy. */
const version = (flight: Schema.Schema<any, any>, world: World) => {
  const Hold = Tool.make("Hold", { parameters: { flight }, success: Schema.Struct({ holdId: Schema.String }) })
  const Issue = Tool.make("Issue", {
    parameters: { holdId: Schema.String },
    success: Schema.Struct({ ticket: Schema.String })
  })
  const agent = Agent.make(AiToolkit.make(Hold, Issue), {
    undo: { Hold: (ctx) => Effect.sync(() => world.log.push(`release ${ctx.result.holdId}`)) }
  })
  const handlers = agent.toLayer({
    Hold: ({ flight }) =>
      Effect.sync(() => {
        world.log.push(`hold ${flight}`)
        return { holdId: `H-${flight}` }
      }),
    Issue: ({ holdId }) =>
      Effect.sync(() => {
        world.log.push(`issue ${holdId}`)
        return { ticket: `T-${holdId}` }
      })
  })
  return { agent, handlers }
}

const script: Scripted.Script = ({ turn }) =>
  turn === 1
    ? Scripted.calls(Scripted.call("c1", "Hold", { flight: "TP1" }))
    : turn === 2
      ? Scripted.calls(Scripted.call("c2", "Issue", { holdId: "H-TP1" }))
      : Scripted.says("Booked.")

const runWith = ({ agent, handlers }: ReturnType<typeof version>) =>
  Saga.run(
    "trip-1",
    Effect.map(Agent.loop({ prompt: "Book TP1.", toolkit: agent.toolkit }), (conversation) => conversation.text)
  ).pipe(Effect.provide(Layer.merge(handlers, Agent.layerModel.pipe(Layer.provide(Scripted.layer(script).layer)))))

const journalOf = (sagaId: string) => Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
