import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Tool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import * as Agent from "../src/Agent.js"
import * as SagaDefinition from "../src/SagaDefinition.js"
import * as Testing from "../src/Testing.js"
import * as Scripted from "./fixtures/agent-scripted.js"

/**
 * The travel agent of examples/agent.ts (model turns and tool calls as saga steps, a scripted model)
 * explored at every crash point: the model, the airline and the card are the world; the agent's
 * handlers and its model layer are what a restarted service builds again.
 */
describe("an agent explored at every crash point", () => {
  it.effect(
    "searches, holds a seat, pays, issues the ticket once approved: every point passes",
    () =>
      Effect.gen(function* () {
        const summary = yield* Testing.exploreCrashes(
          TravelAgent,
          { request: "GVA to LIS, cheapest" },
          {
            world: World,
            services: Services,
            invariants: [paidOnceForOneSeat],
            approvals: ["approve", "reject"],
            // An agent's run is slow (its turns journal the whole conversation): a seeded sample of its
            // 69 points (34 approved, 35 rejected) keeps this test short. Without the cap, every point passes too.
            maxPoints: 8,
            seed: 19
          }
        )
        expect(summary).toMatchObject({ found: 68, points: 18, recoveries: 16 })
        expect(summary.endings.Completed).toBeGreaterThan(0)
        expect(summary.endings.Compensated).toBeGreaterThan(0)
        // The model's turns are steps too: asked again only where a crash lost the answer.
        expect(summary.calls.LanguageModel?.execute).toBeGreaterThan(summary.points * 4)
      }),
    300_000
  )
})

const SearchFlights = Tool.make("SearchFlights", {
  parameters: { from: Schema.String, to: Schema.String },
  success: Schema.Array(Schema.Struct({ flight: Schema.String, price: Schema.Int }))
}).annotate(Tool.Readonly, true)

const HoldSeat = Tool.make("HoldSeat", {
  parameters: { flight: Schema.String },
  success: Schema.Struct({ holdId: Schema.String })
}).annotate(Tool.Idempotent, true)

const ChargeCard = Tool.make("ChargeCard", {
  parameters: { amount: Schema.Int },
  success: Schema.Struct({ chargeId: Schema.String })
})

const IssueTicket = Tool.make("IssueTicket", {
  parameters: { holdId: Schema.String, chargeId: Schema.String },
  success: Schema.Struct({ ticket: Schema.String })
}) // destructive by default and without an undo: irreversible, it waits for an approval

const TravelTools = AiToolkit.make(SearchFlights, HoldSeat, ChargeCard, IssueTicket)

/** The airline and the card: what the agent's tools change. */
class Airline extends Context.Tag("Airline")<
  Airline,
  { readonly held: Set<string>; charged: number; readonly tickets: Array<string> }
>() {}

const Travel = Agent.make(TravelTools, {
  undo: {
    HoldSeat: ({ result }) =>
      Effect.map(Airline, (airline) => {
        airline.held.delete(result.holdId)
      }),
    ChargeCard: ({ input }) =>
      Effect.map(Airline, (airline) => {
        airline.charged -= input.amount
      })
  }
})

const script: Scripted.Script = ({ results, said, turn }) => {
  switch (turn) {
    case 1:
      return Scripted.calls(Scripted.call("call-1", "SearchFlights", { from: "GVA", to: "LIS" }))
    case 2:
      return Scripted.calls(Scripted.call("call-2", "HoldSeat", { flight: results.get("call-1")!.result[0].flight }))
    case 3:
      return Scripted.calls(Scripted.call("call-3", "ChargeCard", { amount: results.get("call-1")!.result[0].price }))
    case 4: {
      const { holdId } = results.get("call-2")!.result
      const { chargeId } = results.get("call-3")!.result
      return Scripted.calls(Scripted.call("call-4", "IssueTicket", { holdId, chargeId }))
    }
    case 5:
      return Agent.isAwaitingApproval(results.get("call-4")!.result)
        ? Scripted.says("The ticket awaits an approval.")
        : Scripted.says(`Done: ${results.get("call-4")!.result.ticket}`)
    default:
      return Scripted.says(`Done: ${said}`)
  }
}

const World = Layer.merge(
  Layer.sync(Airline, () => ({ held: new Set<string>(), charged: 0, tickets: [] })),
  Layer.effect(
    LanguageModel.LanguageModel,
    Scripted.make(script, () => {})
  )
)

const Services = Layer.merge(
  Travel.toLayer({
    SearchFlights: () => Effect.succeed([{ flight: "TP 943", price: 129 }]),
    HoldSeat: ({ flight }, step) =>
      Effect.map(Airline, (airline) => {
        const holdId = `hold-${flight.replace(" ", "")}-${step.sagaId}` // the same hold for a replayed key
        airline.held.add(holdId)
        return { holdId }
      }),
    ChargeCard: ({ amount }) =>
      Effect.map(Airline, (airline) => {
        airline.charged += amount
        return { chargeId: `ch-${amount}` }
      }),
    IssueTicket: ({ holdId }) =>
      Effect.map(Airline, (airline) => {
        airline.tickets.push(holdId)
        return { ticket: `ticket-${holdId}` }
      })
  }),
  Agent.layerModel
)

const TravelAgent = SagaDefinition.make("travel-agent", {
  input: Schema.Struct({ request: Schema.String }),
  program: ({ request }) =>
    Effect.map(Agent.loop({ prompt: request, toolkit: Travel.toolkit }), (conversation) => conversation.text)
})

const paidOnceForOneSeat: Testing.Invariant<Airline> = {
  name: "a completed trip is paid once, for one held seat and one ticket; a compensated one left nothing",
  holds: (ending) =>
    Effect.map(Airline, ({ charged, held, tickets }) =>
      ending === "Completed"
        ? charged === 129 && held.size === 1 && tickets.length === 1
        : ending === "Compensated"
          ? charged === 0 && held.size === 0 && tickets.length === 0
          : tickets.length === 0
    )
}
