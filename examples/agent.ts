/**
 * A travel agent on @effect/ai whose model turns and tool calls are saga steps, journaled in an
 * SQLite file. The model is scripted (no network): it searches flights, holds a seat, charges the
 * card and issues the ticket, which no code may do without a human's approval. The model is told
 * the ticket awaits approval; once approved, the same conversation goes on and it is told the ticket.
 *
 * Every stage opens the file anew, as a separate process would: what carries over is in the file.
 *
 * Run: npx tsx examples/agent.ts
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { LanguageModel, Tool, Toolkit } from "@effect/ai"
import type * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import { Console, Effect, Layer, Schema, Stream } from "effect"
import { CompensationReport, Journal, Saga, SagaDefinition, SqlStore, Timeline } from "effect-saga"
import * as Agent from "effect-saga/ai"

// --- the tools, as the model sees them ------------------------------------------------------

class CardDeclined extends Schema.TaggedError<CardDeclined>()("CardDeclined", { reason: Schema.String }) {}

const SearchFlights = Tool.make("SearchFlights", {
  description: "Flights between two airports, cheapest first",
  parameters: { from: Schema.String, to: Schema.String },
  success: Schema.Array(Schema.Struct({ flight: Schema.String, price: Schema.Int }))
}).annotate(Tool.Readonly, true) // reads only: no undo needed, retried safely after a crash

const HoldSeat = Tool.make("HoldSeat", {
  description: "Hold a seat on a flight",
  parameters: { flight: Schema.String },
  success: Schema.Struct({ holdId: Schema.String }) // the handle the undo needs
}).annotate(Tool.Idempotent, true) // the airline accepts a replay of the idempotency key

const ChargeCard = Tool.make("ChargeCard", {
  description: "Charge the traveller's card",
  parameters: { amount: Schema.Int },
  success: Schema.Struct({ chargeId: Schema.String }),
  failure: CardDeclined,
  failureMode: "return" // a declined card is told to the model, which answers the traveller
})

const IssueTicket = Tool.make("IssueTicket", {
  description: "Issue the ticket: it cannot be taken back",
  parameters: { holdId: Schema.String, chargeId: Schema.String },
  success: Schema.Struct({ ticket: Schema.String })
}) // Tool.Destructive by default, and no undo: irreversible, so it waits for an approval

const TravelTools = Toolkit.make(SearchFlights, HoldSeat, ChargeCard, IssueTicket)

// --- a pretend outside world ------------------------------------------------------------------

const world = { held: [] as Array<string>, charged: 0, tickets: [] as Array<string>, cardWorks: true }

const Travel = Agent.make(TravelTools, {
  undo: {
    HoldSeat: ({ result }) =>
      Effect.sync(() => {
        world.held = world.held.filter((id) => id !== result.holdId)
      }),
    ChargeCard: ({ input }) =>
      Effect.sync(() => {
        world.charged -= input.amount // a refund: a correction, not an erasure
      })
  }
})

const TravelHandlers = Travel.toLayer({
  SearchFlights: () =>
    Effect.succeed([
      { flight: "TP 943", price: 129 },
      { flight: "EZS 1471", price: 154 }
    ]),
  HoldSeat: ({ flight }, step) =>
    Effect.sync(() => {
      const holdId = `hold-${flight.replace(" ", "")}-${step.sagaId}`
      if (!world.held.includes(holdId)) world.held.push(holdId)
      return { holdId }
    }),
  ChargeCard: ({ amount }) =>
    Effect.suspend(() => {
      if (!world.cardWorks) return Effect.fail(new CardDeclined({ reason: "insufficient funds" }))
      world.charged += amount
      return Effect.succeed({ chargeId: `ch-${amount}` })
    }),
  IssueTicket: ({ holdId }) =>
    Effect.sync(() => {
      world.tickets.push(holdId)
      return { ticket: `ticket-${holdId}` }
    })
})

// --- the model: scripted, counting what it is asked -----------------------------------------

let asked = 0

/** Turn N answers the conversation so far (N = the assistant messages in it, plus one). */
const answer = (prompt: Prompt.Prompt): Array<Response.PartEncoded> => {
  const turn = prompt.content.filter((message) => message.role === "assistant").length + 1
  const results = new Map(
    prompt.content.flatMap((message) => (message.role === "tool" ? message.content.map((part) => [part.id, part]) : []))
  )
  const call = (id: string, name: string, params: unknown): Array<Response.PartEncoded> => [
    { type: "tool-call", id, name, params },
    { type: "finish", reason: "tool-calls", usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } }
  ]
  const say = (text: string): Array<Response.PartEncoded> => [
    { type: "text", text },
    { type: "finish", reason: "stop", usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } }
  ]
  const result = (id: string) => results.get(id)?.result as any
  const lastSaid = prompt.content.flatMap((message) =>
    message.role === "user" ? message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])) : []
  )
  switch (turn) {
    case 1:
      return call("call-1", "SearchFlights", { from: "GVA", to: "LIS" })
    case 2:
      return call("call-2", "HoldSeat", { flight: result("call-1")[0].flight })
    case 3:
      return call("call-3", "ChargeCard", { amount: result("call-1")[0].price })
    case 4:
      return results.get("call-3")?.isFailure
        ? say(`Sorry: your card was declined (${result("call-3").reason}). Nothing is booked.`)
        : call("call-4", "IssueTicket", { holdId: result("call-2").holdId, chargeId: result("call-3").chargeId })
    case 5:
      return Agent.isAwaitingApproval(result("call-4"))
        ? say("Your seat is held and paid for. Issuing the ticket awaits an approval; I will confirm then.")
        : say(`Done: ${result("call-4").ticket}, flight ${result("call-1")[0].flight}.`)
    default: {
      // Told in a user message: "The call call-4 of IssueTicket was approved and has run. Its result: {...}"
      const told = lastSaid.at(-1) ?? ""
      const { ticket } = JSON.parse(told.slice(told.indexOf("{")))
      return say(`Done: ${ticket}, flight ${result("call-1")[0].flight}.`)
    }
  }
}

const ScriptedModel = Layer.effect(
  LanguageModel.LanguageModel,
  LanguageModel.make({
    generateText: (options) =>
      Effect.sync(() => {
        asked++
        return answer(options.prompt)
      }),
    streamText: () => Stream.dieMessage("this model is not scripted to stream")
  })
)

// --- the agent: one saga per trip, recoverable from its definition ---------------------------

const TripAgent = SagaDefinition.make("trip-agent", {
  input: Schema.Struct({ request: Schema.String }),
  program: ({ request }) =>
    Effect.map(Agent.loop({ prompt: request, toolkit: Travel.toolkit }), (conversation) => conversation.text)
})

const filename = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-agent-")), "agent.db")

/** A "process": the journal on the file, the saga service, the handlers and the journaled model. */
const process_ = () =>
  Layer.mergeAll(TravelHandlers, Agent.layerModel.pipe(Layer.provide(ScriptedModel))).pipe(
    Layer.provideMerge(Saga.layer),
    Layer.provideMerge(SqlStore.layerSqlite({ filename }))
  )

const stage = <A, E>(title: string, effect: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof process_>>>) =>
  Effect.zipRight(Console.log(`\n== ${title} ==`), Effect.provide(effect, process_()))

const trip = { request: "Book me the cheapest flight from Geneva to Lisbon." }

const demo = Effect.gen(function* () {
  yield* stage(
    "trip-1: the agent searches, holds, charges, asks to issue the ticket, and is told it awaits approval",
    Effect.gen(function* () {
      const result = yield* Saga.start(TripAgent, "trip-1", trip)
      yield* Console.log(`result: ${result._tag}; the model was asked ${asked} times (turn 5: told, it said so)`)
      if (result._tag === "AwaitingApproval") {
        yield* Console.log(
          `waiting: ${result.request.toolName} ${result.request.input} (step ${result.request.stepId})`
        )
      }
    })
  )

  yield* stage(
    "an operator approves the ticket",
    Effect.gen(function* () {
      const status = yield* Saga.status("trip-1")
      const waiting = status.steps.find((step) => step.state === "awaiting_approval")!
      yield* Saga.approve("trip-1", waiting.stepId, { by: "alice", revision: status.revision, digest: status.digest })
      yield* Console.log(`approved ${waiting.stepId} by alice`)
    })
  )

  yield* stage(
    "trip-1 resumes: the journal answers the turns already asked; the model is asked only what is new",
    Effect.gen(function* () {
      const before = asked
      const result = yield* Saga.start(TripAgent, "trip-1", trip)
      yield* Console.log(`result: ${result._tag} ${result._tag === "Completed" ? JSON.stringify(result.value) : ""}`)
      yield* Console.log(
        `the model was asked ${asked - before} more time (turn 6, told the ticket; 1 to 5 came from the journal)`
      )
    })
  )

  yield* stage(
    "trip-2: the card is declined; the model is told, apologises, and the saga releases the seat",
    Effect.gen(function* () {
      world.cardWorks = false
      const result = yield* Saga.start(TripAgent, "trip-2", trip)
      yield* Console.log(`result: ${result._tag}`)
      if (result._tag === "Compensated" || result._tag === "CompensationFailed") {
        yield* Console.log(CompensationReport.format(result.report))
      }
    })
  )

  yield* stage(
    "what the file holds",
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      for (const saga of yield* journal.list()) {
        yield* Console.log(`\n${saga.sagaId}: ${saga.status}, revision ${saga.revision}`)
        yield* Console.log(Timeline.format(yield* journal.read(saga.sagaId)))
      }
    })
  )

  yield* Console.log(`\nworld: ${JSON.stringify(world)}`)
  // Six turns for trip-1 (each asked once), four for trip-2.
  if (world.tickets.length !== 1 || world.held.length !== 1 || world.charged !== 129 || asked !== 6 + 4) {
    return yield* Effect.dieMessage("the world is not what the agent should have left")
  }
})

Effect.runPromise(demo).then(
  () => fs.rmSync(path.dirname(filename), { recursive: true, force: true }),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
