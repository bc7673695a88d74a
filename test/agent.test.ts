import * as crypto from "node:crypto"
import * as Chat from "@effect/ai/Chat"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as McpSchema from "@effect/ai/McpSchema"
import * as McpServer from "@effect/ai/McpServer"
import * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import * as Tool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import { assert, describe, expect, it } from "@effect/vitest"
import {
  Cause,
  Chunk,
  Deferred,
  Effect,
  Fiber,
  FiberId,
  Layer,
  Logger,
  Option,
  Queue,
  Schema,
  Sink,
  Stream,
  type Tracer
} from "effect"
import * as Agent from "../src/Agent.js"
import { Approval, Journal, Outcome, Saga, Timeline } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import * as Testing from "../src/Testing.js"
import * as Scripted from "./fixtures/agent-scripted.js"

describe("an agent's tool calls are saga steps", () => {
  it.effect("a booking agent: reserve, charge, then a failing ship → undone in reverse order, report complete", () =>
    Effect.gen(function* () {
      const world = makeWorld({ warehouseUp: false })
      const { live, model } = shop(world, bookingScript)
      const [result, entries] = yield* Effect.provide(Effect.zip(Saga.run("order-1", book), journalOf("order-1")), live)

      assert(result._tag === "Compensated")
      expect(result.report.status).toBe("compensated")
      const tools = result.report.undone.filter((step) => step.toolName !== "LanguageModel")
      expect(tools.map((step) => [step.toolName, step.outcome])).toEqual([
        ["Charge", "completed"],
        ["Reserve", "completed"]
      ])
      expect(result.report.notUndone).toEqual([expect.objectContaining({ toolName: "Ship", phase: "FAILED" })])
      expect(world.log).toEqual([
        "reserve A-1 x2",
        "charge 4200",
        "ship order-1: refused",
        "refund ch-4200",
        "release res-1"
      ])
      expect(world.stock).toBe(10)
      expect(model.turnsAsked()).toEqual({ 1: 1, 2: 1, 3: 1 })
      // Every tool call's step id carries the model's tool-call id.
      expect(new Set(entries.flatMap((entry) => (entry.toolName === "Charge" ? [entry.stepId] : [])))).toEqual(
        new Set(["Charge:call-2#1"])
      )
    })
  )

  it.effect(
    "the model is fed a tool failure as text and answers politely → the saga still compensates; with onToolFailure: continue it does not",
    () =>
      Effect.gen(function* () {
        const compensating = makeWorld({ declineCards: true })
        const first = shop(compensating, declinedScript)
        const [result, entries] = yield* Effect.provide(
          Effect.zip(Saga.run("declined-1", book), journalOf("declined-1")),
          first.live
        )

        // The model saw the failure as a result, and answered.
        const fed = first.model.questions[2]!.results.get("call-2")!
        expect(fed).toMatchObject({ name: "Charge", isFailure: true, result: { _tag: "CardDeclined" } })
        assert(result._tag === "Compensated")
        expect(Cause.squash(result.cause)).toMatchObject({ _tag: "StepFailed", toolName: "Charge" })
        expect(compensating.log).toEqual(["reserve A-1 x2", "charge 4200: declined", "release res-1"])
        const failed = entries.find((entry) => entry.phase === "FAILED")!
        expect(JSON.parse(failed.payload!)).toMatchObject({ error: { _tag: "CardDeclined" } })

        const continuing = makeWorld({ declineCards: true })
        const second = shop(continuing, declinedScript, { onToolFailure: "continue" })
        const [completed, journaled] = yield* Effect.provide(
          Effect.zip(Saga.run("declined-2", book), journalOf("declined-2")),
          second.live
        )
        assert(completed._tag === "Completed")
        expect(completed.value.text).toBe(
          "I am sorry: your card was declined (insufficient funds). Your items stay reserved."
        )
        expect(continuing.log).toEqual(["reserve A-1 x2", "charge 4200: declined"])
        const handled = journaled.find((entry) => entry.phase === "FAILED")!
        expect(JSON.parse(handled.payload!)).toMatchObject({ taints: false, error: { _tag: "CardDeclined" } })
      })
  )

  it.effect(
    "a failure returned to the model that quotes its call's receipt: the model, the journal and the replay see it masked",
    () =>
      Effect.gen(function* () {
        const receipt = `tok-${crypto.randomUUID()}`
        const Pay = Tool.make("Pay", {
          parameters: { amount: Schema.Int },
          success: Schema.String,
          failure: CardDeclined,
          failureMode: "return"
        })
        const Send = Tool.make("Send", { parameters: { to: Schema.String }, success: Schema.String })
        const agent = Agent.make(AiToolkit.make(Pay, Send), {
          undo: { Pay: () => Effect.void },
          onToolFailure: "continue"
        })
        const handlers = agent.toLayer({
          Pay: (_, step) =>
            Effect.zipRight(
              step.setReceipt(receipt),
              Effect.fail(new CardDeclined({ reason: `token ${receipt} refused` }))
            ),
          Send: ({ to }) => Effect.succeed(`sent to ${to}`)
        })
        const model = Scripted.layer(({ turn }) =>
          turn === 1
            ? Scripted.calls(Scripted.call("call-1", "Pay", { amount: 5 }))
            : turn === 2
              ? Scripted.calls(Scripted.call("call-2", "Send", { to: "alice" }))
              : Scripted.says("Done.")
        )
        const live = Layer.mergeAll(handlers, Agent.layerModel.pipe(Layer.provide(model.layer))).pipe(
          Layer.provideMerge(Testing.layer)
        )
        const program = Agent.loop({ prompt: "Pay, then send.", toolkit: agent.toolkit })
        const entries = yield* Effect.gen(function* () {
          // Send has no undo: it awaits approval, and the run after it replays the turns journaled.
          const first = yield* Saga.run("quoted-receipt", program)
          assert(first._tag === "AwaitingApproval")
          yield* Approval.approve(first.request.requestId, { by: "ops", inputDigest: first.request.inputDigest })
          const second = yield* Saga.run("quoted-receipt", program)
          assert(second._tag === "Completed", String(second._tag))
          return yield* journalOf("quoted-receipt")
        }).pipe(Effect.provide(live))

        expect(model.questions[1]!.results.get("call-1")).toMatchObject({
          isFailure: true,
          result: { _tag: "CardDeclined", reason: "token <redacted> refused" }
        })
        expect(JSON.stringify(model.questions.map((question) => question.prompt))).not.toContain(receipt)
        expect(entries.map((entry) => `${entry.input} ${entry.payload}`).join("\n")).not.toContain(receipt)
      })
  )

  it.effect(
    "a rejection from another process that has the agent's layers compensates cleanly, the model's turns included",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const store = Layer.merge(
          Layer.succeed(Journal.Journal, makeMemoryJournal()),
          Layer.succeed(Approval.Approval, Approval.makeMemory())
        )
        const script: Scripted.Script = (question) =>
          question.turn === 1
            ? Scripted.calls(Scripted.call("call-1", "Reserve", { sku: "A-1", quantity: 2 }))
            : question.turn === 2
              ? Scripted.calls(Scripted.call("call-2", "Wire", { amount: 4200, to: "DE89" }))
              : Scripted.says("Paid.")
        const processOf = () => {
          const model = Scripted.layer(script)
          const agent = Agent.make(ShopToolkit, { undo: undosOf(world) })
          return Layer.mergeAll(
            agent.toLayer(handlersOf(world)),
            Agent.layerModel.pipe(Layer.provide(model.layer))
          ).pipe(Layer.provideMerge(Saga.layer), Layer.provideMerge(store))
        }
        const waiting = yield* Effect.provide(Saga.run("reject-1", payout), processOf())
        assert(waiting._tag === "AwaitingApproval")
        const report = yield* Effect.provide(
          Saga.reject("reject-1", waiting.request.stepId, { by: "bob", reason: "not this supplier" }),
          processOf()
        )
        expect(report.status).toBe("compensated")
        // The model's turns change nothing: compensation passes over them, in any process.
        expect(report.undone.map((step) => [step.toolName, step.outcome])).toEqual([["Reserve", "completed"]])
        const plain = yield* Effect.provide(Saga.compensate("reject-1"), Saga.layer.pipe(Layer.provide(store)))
        expect(plain).toEqual(report)
        expect(world.log).toEqual(["reserve A-1 x2", "release res-1"])
      })
  )

  it.effect(
    "a handler that dies may have run: the run stops NeedsAttention, nothing is undone, the process goes on",
    () =>
      Effect.gen(function* () {
        const world = makeWorld({ shipDefect: true })
        const { live } = shop(world, bookingScript)
        const result = yield* Effect.provide(Saga.run("defect-1", book), live)
        assert(result._tag === "NeedsAttention")
        expect(result.unknown.map((step) => [step.toolName, step.reason])).toEqual([
          ["Ship", "the call died (a defect: Error: the warehouse client crashed): it may or may not have run"]
        ])
        expect(world.log).toEqual(["reserve A-1 x2", "charge 4200"])
      })
  )

  it.effect.each([
    ["empty", ""],
    ["with a slash", "call/1"],
    ["over 256 bytes", "c".repeat(300)],
    ["with a newline", "call\n1"]
  ] as const)(
    "a model's call id that cannot be a step key (%s) keys its step by the id's SHA-256: the call runs once, and replays",
    ([, id]) =>
      Effect.gen(function* () {
        const world = makeWorld()
        const script: Scripted.Script = ({ turn }) =>
          turn === 1
            ? Scripted.calls(Scripted.call(id, "Reserve", { sku: "A-1", quantity: 2 }))
            : Scripted.says("Reserved.")
        const { live, model } = shop(world, script)
        const reserve = Agent.loop({ prompt: "Reserve two A-1.", toolkit: Shop.toolkit })
        const [first, again, entries] = yield* Effect.provide(
          Effect.all([Saga.run("odd-id", reserve), Saga.run("odd-id", reserve), journalOf("odd-id")]),
          live
        )
        assert(first._tag === "Completed" && again._tag === "Completed")
        expect(world.log).toEqual(["reserve A-1 x2"])
        expect(model.questions.length).toBe(2)
        const key = crypto.hash("sha256", id, "hex").slice(0, 32)
        expect(new Set(entries.flatMap((entry) => (entry.toolName === "Reserve" ? [entry.stepId] : [])))).toEqual(
          new Set([`Reserve:sha256-${key}#1`])
        )
      })
  )

  it.effect("a read-only tool needs no undo and is never reported as a gap", () =>
    Effect.gen(function* () {
      const world = makeWorld({ warehouseUp: false })
      const { live } = shop(world, (question) =>
        question.turn === 1
          ? Scripted.calls(Scripted.call("call-0", "Lookup", { sku: "A-1" }))
          : bookingScript(question)
      )
      const prompt = "Look up A-1, then book two and ship them."
      const { result, status } = yield* Effect.provide(
        Effect.all({
          result: Saga.run("lookup-1", Agent.loop({ prompt, toolkit: Shop.toolkit })),
          status: Effect.suspend(() => Saga.status("lookup-1"))
        }),
        live
      )
      assert(result._tag === "Compensated")
      // Journaled as changing nothing: no undo entry, no line in the report, never a gap.
      expect(result.report.undone.some((step) => step.toolName === "Lookup")).toBe(false)
      expect(result.report.undone.some((step) => step.outcome === "skipped" || step.outcome === "unavailable")).toBe(
        false
      )
      const lookup = status.steps.find((step) => step.toolName === "Lookup")
      expect(lookup).toMatchObject({ state: "executed", undo: undefined })
    })
  )
})

describe("approvals in a conversation", () => {
  it.effect(
    "an irreversible tool → the model is told the call awaits approval, AwaitingApproval; approve; resume → the conversation continues, no journaled turn is asked again, the tool runs once",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const { live, model } = shop(world, payoutScript)
        yield* Effect.gen(function* () {
          const waiting = yield* Saga.run("payout-1", payout)
          assert(waiting._tag === "AwaitingApproval")
          expect(Timeline.format(yield* journalOf("payout-1"))).toContain(
            "(asked without halting: the program goes on while it is pending)"
          )
          expect(waiting.request).toMatchObject({ toolName: "Wire", stepId: "Wire:call-1#1" })
          expect(JSON.parse(waiting.request.input)).toEqual({ amount: 4200, to: "DE89" })
          expect(world.wired).toBe(0)
          // The model was told, as the call's result, that it awaits approval, and answered.
          const told = model.questions[1]!.results.get("call-1")!
          expect(told).toMatchObject({ name: "Wire", isFailure: false, result: { status: "awaiting-approval" } })
          expect(Agent.isAwaitingApproval(told.result)).toBe(true)
          expect(model.turnsAsked()).toEqual({ 1: 1, 2: 1 })

          // A pure replay while it waits asks the model nothing and runs nothing.
          expect((yield* Saga.resume("payout-1", payout))._tag).toBe("AwaitingApproval")
          expect(model.turnsAsked()).toEqual({ 1: 1, 2: 1 })

          yield* Saga.approve("payout-1", waiting.request.stepId, { by: "alice" })
          const done = yield* Saga.resume("payout-1", payout)
          assert(done._tag === "Completed")
          expect(model.questions[2]!.said).toBe(
            'The call call-1 of Wire was approved and has run. Its result: "wire-4200"'
          )
          expect(done.value.text).toBe("Sent 4200 to DE89 (wire-4200).")
          expect(done.value.turns).toBe(3)
          expect(model.turnsAsked()).toEqual({ 1: 1, 2: 1, 3: 1 })
          expect(world.log).toEqual(["wire 4200 to DE89"])

          // Finished: running it again replays everything from the journal.
          const again = yield* Saga.run("payout-1", payout)
          assert(again._tag === "Completed")
          expect(again.value.text).toBe(done.value.text)
          expect(model.turnsAsked()).toEqual({ 1: 1, 2: 1, 3: 1 })
          expect(world.log).toEqual(["wire 4200 to DE89"])

          // The journal says the call deferred its approval and ran where the loop settled it.
          const wire = (yield* journalOf("payout-1")).filter((entry) => entry.toolName === "Wire")
          expect(wire.map((entry) => entry.phase)).toEqual(["AWAITING_APPROVAL", "APPROVED", "INTENT", "EXECUTED"])
          expect(JSON.parse(wire[0]!.payload!)).toMatchObject({ deferred: true })
          expect(JSON.parse(wire[2]!.payload!)).toMatchObject({ deferred: true })
          const timeline = Timeline.format(wire)
          expect(timeline).toContain("AWAITING_APPROVAL  input sha256")
          expect(timeline).toContain("(deferred: the program went on)")
          expect(timeline).toContain("deferred call, run once approved")
        }).pipe(Effect.provide(live))
      })
  )

  it.effect(
    "while a call awaits approval the conversation goes on: other tools run first, the approved call after, each once",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const script: Scripted.Script = ({ results, said, turn }) => {
          if (turn === 1) return Scripted.calls(Scripted.call("call-1", "Wire", { amount: 4200, to: "DE89" }))
          if (turn === 2 && Agent.isAwaitingApproval(results.get("call-1")?.result)) {
            return Scripted.calls(Scripted.call("call-2", "Reserve", { sku: "A-1", quantity: 1 }))
          }
          if (turn === 3) return Scripted.says("Reserved; the transfer awaits approval.")
          return Scripted.says(said.includes('"wire-4200"') ? "Reserved and paid." : "Something went wrong.")
        }
        const { live, model } = shop(world, script)
        yield* Effect.gen(function* () {
          const waiting = yield* Saga.run("payout-3", payout)
          assert(waiting._tag === "AwaitingApproval")
          expect(world.log).toEqual(["reserve A-1 x1"])
          yield* Saga.approve("payout-3", waiting.request.stepId, { by: "alice" })
          const done = yield* Saga.resume("payout-3", payout)
          assert(done._tag === "Completed")
          expect(done.value.text).toBe("Reserved and paid.")
          expect(world.log).toEqual(["reserve A-1 x1", "wire 4200 to DE89"])
          expect(model.turnsAsked()).toEqual({ 1: 1, 2: 1, 3: 1, 4: 1 })
          // Journal order is execution order: compensation would undo the reservation after the wire.
          const executed = (yield* journalOf("payout-3")).filter(
            (entry) => entry.phase === "EXECUTED" && entry.toolName !== "LanguageModel"
          )
          expect(executed.map((entry) => entry.toolName)).toEqual(["Reserve", "Wire"])
        }).pipe(Effect.provide(live))
      })
  )

  it.effect(
    "with approvals given at once (Approval.layerAutoApprove) the call runs where it is made: nothing is deferred",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const model = Scripted.layer(payoutScript)
        const agent = Agent.make(ShopToolkit, { undo: undosOf(world) })
        const live = Layer.mergeAll(
          agent.toLayer(handlersOf(world)),
          Agent.layerModel.pipe(Layer.provide(model.layer))
        ).pipe(
          Layer.provideMerge(Saga.layer),
          Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerAutoApprove))
        )
        const [done, entries] = yield* Effect.provide(
          Effect.zip(Saga.run("payout-4", payout), journalOf("payout-4")),
          live
        )
        assert(done._tag === "Completed")
        expect(done.value.text).toBe("Sent 4200 to DE89 (wire-4200).")
        expect(model.questions[1]!.results.get("call-1")).toMatchObject({ isFailure: false, result: "wire-4200" })
        const intent = entries.find((entry) => entry.toolName === "Wire" && entry.phase === "INTENT")!
        expect(JSON.parse(intent.payload!).deferred).toBeUndefined()
        // The request was journaled before the decision was known; the timeline says what came of it.
        const timeline = Timeline.format(entries.filter((entry) => entry.toolName === "Wire"))
        expect(timeline).toContain("(approved on the spot: the call ran where the program made it)")
        expect(timeline).toContain("ran where the program made it: approved on the spot")
        expect(timeline).not.toContain("deferred")
      })
  )

  it.effect(
    "a loop of one's own: a call that awaits approval runs when the program ends, once approved; until then AwaitingApproval",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const { live, model } = shop(world, payoutScript)
        const ownLoop = Effect.gen(function* () {
          const first = yield* LanguageModel.generateText({ prompt: "Pay 4200 to DE89.", toolkit: Shop.toolkit })
          return first.toolResults.map((part) => part.result)
        })
        yield* Effect.gen(function* () {
          const waiting = yield* Saga.run("payout-5", ownLoop)
          assert(waiting._tag === "AwaitingApproval")
          expect(world.log).toEqual([])
          yield* Saga.approve("payout-5", waiting.request.stepId, { by: "alice" })
          const done = yield* Saga.resume("payout-5", ownLoop)
          assert(done._tag === "Completed")
          // The program saw the call awaiting approval (its answer where it was made) on every run.
          expect(done.value).toEqual([expect.objectContaining({ status: "awaiting-approval" })])
          expect(world.log).toEqual(["wire 4200 to DE89"])
          expect(model.turnsAsked()).toEqual({ 1: 1 })
        }).pipe(Effect.provide(live))
      })
  )

  it.effect(
    "a rejected call is never run: the saga compensates what ran before, and the model is not asked again",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const script: Scripted.Script = ({ turn }) =>
          turn === 1
            ? Scripted.calls(
                Scripted.call("call-1", "Reserve", { sku: "A-1", quantity: 2 }),
                Scripted.call("call-2", "Wire", { amount: 4200, to: "DE89" })
              )
            : Scripted.says("The transfer awaits approval.")
        const { live, model } = shop(world, script)
        yield* Effect.gen(function* () {
          const waiting = yield* Saga.run("payout-6", payout)
          assert(waiting._tag === "AwaitingApproval")
          const report = yield* Saga.reject("payout-6", waiting.request.stepId, { by: "bob", reason: "wrong account" })
          expect(report.status).toBe("compensated")
          const resumed = yield* Saga.resume("payout-6", payout)
          assert(resumed._tag === "Compensated")
          expect(world.log).toEqual(["reserve A-1 x2", "release res-1"])
          expect(world.wired).toBe(0)
          expect(model.turnsAsked()).toEqual({ 1: 1, 2: 1 })
        }).pipe(Effect.provide(live))
      })
  )
})

describe("model turns are journaled", () => {
  it.effect("a finished agent replays its model turns and tool calls from the journal: nothing is asked or run", () =>
    Effect.gen(function* () {
      const world = makeWorld()
      const { live, model } = shop(world, bookingScript)
      yield* Effect.gen(function* () {
        const first = yield* Saga.run("replay-1", book)
        assert(first._tag === "Completed")
        expect(model.questions.length).toBe(4)
        const again = yield* Saga.run("replay-1", book)
        assert(again._tag === "Completed")
        expect(again.value.text).toBe(first.value.text)
        expect(model.questions.length).toBe(4)
        expect(world.log).toEqual(["reserve A-1 x2", "charge 4200", "ship order-1"])
      }).pipe(Effect.provide(live))
    })
  )

  it.effect("each turn journals only what its conversation added: every message once, the whole prompt by digest", () =>
    Effect.gen(function* () {
      const { live } = shop(makeWorld(), bookingScript)
      const [result, entries] = yield* Effect.provide(
        Effect.zip(Saga.run("growth-1", book), journalOf("growth-1")),
        live
      )
      assert(result._tag === "Completed")
      const prompts = entries
        .filter((entry) => entry.toolName === "LanguageModel" && entry.phase === "INTENT")
        .map((entry) => JSON.parse(entry.input!).prompt)
      // [messages in the prompt, messages it continues, messages journaled]
      expect(
        prompts.map((prompt) => [prompt.messages, prompt.continues?.messages ?? 0, prompt.appended.length])
      ).toEqual([
        [1, 0, 1],
        [3, 1, 2],
        [5, 3, 2],
        [7, 5, 2]
      ])
      expect(prompts[1].continues.digest).toBe(prompts[0].digest)
      expect(prompts[0].appended[0]).toMatchObject({ role: "user" })
      expect(prompts[3].appended.map((message: { role: string }) => message.role)).toEqual(["assistant", "tool"])
    })
  )

  it.effect(
    "a long conversation journals a constant amount per turn, not its whole history",
    () =>
      Effect.gen(function* () {
        const lookups = 40
        const { live, model } = shop(makeWorld(), ({ turn }) =>
          turn <= lookups
            ? Scripted.calls(Scripted.call(`call-${turn}`, "Lookup", { sku: "A-1" }))
            : Scripted.says("10 left.")
        )
        const program = Agent.loop({ prompt: "How many A-1 are left?", toolkit: Shop.toolkit, maxTurns: lookups + 1 })
        const [result, entries, replayed] = yield* Effect.provide(
          Effect.all([Saga.run("growth-2", program), journalOf("growth-2"), Saga.run("growth-2", program)]),
          live
        )
        assert(result._tag === "Completed")
        const inputs = entries
          .filter((entry) => entry.toolName === "LanguageModel" && entry.phase === "INTENT")
          .map((entry) => entry.input!.length)
        expect(inputs.length).toBe(lookups + 1)
        // Every later turn journals the same two messages (an answer and a result) and a digest.
        expect(Math.max(...inputs.slice(2))).toBeLessThan(inputs[1]! * 1.1)
        // Replayed, the long conversation matches every journaled turn and asks the model nothing.
        expect(replayed._tag).toBe("Completed")
        expect(model.questions.length).toBe(lookups + 1)
      }),
    // 82 journaled turns: room for a loaded 2-core machine, not a speed check.
    30_000
  )

  it.effect(
    "an answer over the turn's maxPayloadBytes is a failed turn (MalformedOutput) the program handles, not NeedsAttention",
    () =>
      Effect.gen(function* () {
        const model = Scripted.layer(() => Scripted.says("x".repeat(3000)))
        const live = Agent.layerModelWith({ maxPayloadBytes: 2000 }).pipe(
          Layer.provide(model.layer),
          Layer.provideMerge(Testing.layer)
        )
        yield* Effect.gen(function* () {
          const ask = Agent.loop({ prompt: "hi" }).pipe(
            Effect.catchTag("MalformedOutput", (error) => Effect.succeed(error.description ?? ""))
          )
          const result = yield* Saga.run("big-answer", ask)
          assert(result._tag === "Completed")
          expect(result.value).toMatch(
            /^the model's answer is \d+ bytes encoded, over the turn's maxPayloadBytes of 2000/
          )
          const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("big-answer"))
          expect(entries.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "INTENT", "FAILED", "SAGA_COMPLETED"])
          // What `show` prints of the failed turn: its own words, not `@effect/ai`'s fields as an object.
          expect(JSON.parse(String(entries[2]?.payload))).toMatchObject({
            description: expect.stringMatching(
              /^MalformedOutput in effect-saga\/ai\.generateText: the model's answer is \d+ bytes encoded, over the turn's maxPayloadBytes of 2000: it cannot be journaled$/
            )
          })
          // The replay answers from the journal: the model is not asked again.
          expect((yield* Saga.run("big-answer", ask))._tag).toBe("Completed")
          expect(model.turnsAsked()).toEqual({ 1: 1 })
        }).pipe(Effect.provide(live))
      })
  )

  it.effect.each([
    ["a tool call's parameters", Scripted.calls(Scripted.call("call-1", "Note", { data: nested(5000) }))],
    [
      "a text part's provider metadata",
      [{ type: "text", text: "hi", metadata: { provider: { data: nested(5000) } } }, ...Scripted.says("")]
    ]
  ] as const)(
    "an answer nested too deeply to journal (%s) is a failed turn (MalformedOutput) the program handles",
    ([, answer]) =>
      Effect.gen(function* () {
        const Note = Tool.make("Note", { parameters: { data: Schema.Unknown }, success: Schema.Boolean }).annotate(
          Tool.Readonly,
          true
        )
        const agent = Agent.make(AiToolkit.make(Note))
        const model = Scripted.layer(() => answer as ReadonlyArray<Response.PartEncoded>)
        const live = Layer.mergeAll(
          agent.toLayer({ Note: () => Effect.succeed(true) }),
          Agent.layerModel.pipe(Layer.provide(model.layer))
        ).pipe(Layer.provideMerge(Testing.layer))
        const ask = LanguageModel.generateText({ prompt: "Note it.", toolkit: agent.toolkit }).pipe(Effect.flip)
        yield* Effect.gen(function* () {
          const result = yield* Saga.run("deep-answer", ask)
          assert(result._tag === "Completed", "cause" in result ? Cause.pretty(result.cause) : result._tag)
          expect(result.value).toMatchObject({ _tag: "MalformedOutput", module: "effect-saga/ai" })
          expect(result.value.description).toBe(
            "the model's answer is nested more than 1000 levels deep: it cannot be journaled"
          )
          // The replay answers from the journal: the model is not asked again.
          expect((yield* Saga.run("deep-answer", ask))._tag).toBe("Completed")
          expect(model.turnsAsked()).toEqual({ 1: 1 })
        }).pipe(Effect.provide(live))
      })
  )

  it.effect("an answer holding a key named __proto__ is a failed turn (MalformedOutput): no tool runs", () =>
    Effect.gen(function* () {
      const Note = Tool.make("Note", { parameters: { data: Schema.Unknown }, success: Schema.Boolean }).annotate(
        Tool.Readonly,
        true
      )
      const noted: Array<unknown> = []
      const agent = Agent.make(AiToolkit.make(Note))
      const smuggled = JSON.parse('{"data":{"__proto__":{"admin":true}}}')
      const model = Scripted.layer(() => Scripted.calls(Scripted.call("call-1", "Note", smuggled)))
      const live = Layer.mergeAll(
        agent.toLayer({ Note: (params) => Effect.sync(() => noted.push(params)).pipe(Effect.as(true)) }),
        Agent.layerModel.pipe(Layer.provide(model.layer))
      ).pipe(Layer.provideMerge(Testing.layer))
      const ask = LanguageModel.generateText({ prompt: "Note it.", toolkit: agent.toolkit }).pipe(Effect.flip)
      yield* Effect.gen(function* () {
        const result = yield* Saga.run("proto-answer", ask)
        assert(result._tag === "Completed", "cause" in result ? Cause.pretty(result.cause) : result._tag)
        expect(result.value).toMatchObject({ _tag: "MalformedOutput", module: "effect-saga/ai" })
        expect(result.value.description).toBe(
          "the model's answer holds a key named \"__proto__\", which decoding may make the object's prototype (Schema.Record does): the tool could read properties the journal does not hold: it cannot be journaled"
        )
        expect(noted).toEqual([])
        const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("proto-answer"))
        expect(entries.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "INTENT", "FAILED", "SAGA_COMPLETED"])
        // The replay answers from the journal: the model is not asked again.
        expect((yield* Saga.run("proto-answer", ask))._tag).toBe("Completed")
        expect(model.turnsAsked()).toEqual({ 1: 1 })
      }).pipe(Effect.provide(live))
    })
  )

  it.effect("a prompt nested too deeply to journal is a failed turn (MalformedInput): the model is not asked", () =>
    Effect.gen(function* () {
      const model = Scripted.layer(() => Scripted.says("hi"))
      const live = Agent.layerModel.pipe(Layer.provide(model.layer), Layer.provideMerge(Testing.layer))
      const prompt = Prompt.make([{ role: "user", content: "hi", options: { provider: { data: nested(5000) } } }])
      const result = yield* Saga.run("deep-prompt", LanguageModel.generateText({ prompt }).pipe(Effect.flip)).pipe(
        Effect.provide(live)
      )
      assert(result._tag === "Completed", "cause" in result ? Cause.pretty(result.cause) : result._tag)
      expect(result.value).toMatchObject({ _tag: "MalformedInput", module: "effect-saga/ai" })
      expect(result.value.description).toBe(
        "the turn's prompt is nested more than 1000 levels deep: it cannot be journaled, and the model was not asked"
      )
      expect(model.questions).toEqual([])
    })
  )

  it.effect("another prompt at a journaled turn fails the run with NonDeterminism, and nothing runs", () =>
    Effect.gen(function* () {
      const world = makeWorld()
      const { live, model } = shop(world, payoutScript)
      yield* Effect.gen(function* () {
        expect((yield* Saga.run("payout-2", payout))._tag).toBe("AwaitingApproval")
        const other = Agent.loop({ prompt: "Pay 9999 to someone else.", toolkit: Shop.toolkit })
        const error = yield* Effect.flip(Saga.resume("payout-2", other))
        expect(error).toMatchObject({ _tag: "NonDeterminism", sagaId: "payout-2" })
        expect(model.turnsAsked()).toEqual({ 1: 1, 2: 1 })
        expect(world.log).toEqual([])
      }).pipe(Effect.provide(live))
    })
  )

  it.effect(
    "a Chat's turns are journaled too: its history replays from the journal, and each turn journals what it added",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const { live, model } = shop(world, ({ said, turn }) =>
          turn === 1
            ? Scripted.calls(Scripted.call("call-1", "Reserve", { sku: "A-1", quantity: 1 }))
            : Scripted.says(said === "And ship it?" ? "Not yet: no order id." : "Reserved.")
        )
        const conversation = Effect.gen(function* () {
          const chat = yield* Chat.empty
          const first = yield* chat.generateText({ prompt: "Reserve one A-1.", toolkit: Shop.toolkit })
          const second = yield* chat.generateText({ prompt: "Go on." })
          const third = yield* chat.generateText({ prompt: "And ship it?" })
          return [first.toolResults.length, second.text, third.text]
        })
        yield* Effect.gen(function* () {
          const first = yield* Saga.run("chat-1", conversation)
          assert(first._tag === "Completed")
          expect(first.value).toEqual([1, "Reserved.", "Not yet: no order id."])
          const again = yield* Saga.run("chat-1", conversation)
          assert(again._tag === "Completed")
          expect(again.value).toEqual(first.value)
          expect(model.questions.length).toBe(3)
          expect(world.log).toEqual(["reserve A-1 x1"])
          const prompts = (yield* journalOf("chat-1"))
            .filter((entry) => entry.toolName === "LanguageModel" && entry.phase === "INTENT")
            .map((entry) => JSON.parse(entry.input!).prompt)
          expect(prompts.map((prompt) => [prompt.messages, prompt.continues?.messages ?? 0])).toEqual([
            [1, 0],
            [4, 1],
            [6, 4]
          ])
        }).pipe(Effect.provide(live))
      })
  )

  it.effect("streamText and generateObject are journaled too", () =>
    Effect.gen(function* () {
      const world = makeWorld()
      const { live, model } = shop(world, () => Scripted.says(`{"verdict":"ok","score":3}`))
      const Verdict = Schema.Struct({ verdict: Schema.String, score: Schema.Number })
      const program = Effect.gen(function* () {
        const streamed = yield* Stream.runCollect(LanguageModel.streamText({ prompt: "Stream it." }))
        const object = yield* LanguageModel.generateObject({ prompt: "Judge it.", schema: Verdict })
        return {
          text: Chunk.toArray(streamed).flatMap((part) => (part.type === "text-delta" ? [part.delta] : [])),
          value: object.value
        }
      })
      yield* Effect.gen(function* () {
        const first = yield* Saga.run("formats-1", program)
        const second = yield* Saga.run("formats-1", program)
        assert(first._tag === "Completed" && second._tag === "Completed")
        expect(first.value).toEqual({ text: [`{"verdict":"ok","score":3}`], value: { verdict: "ok", score: 3 } })
        expect(second.value).toEqual(first.value)
        expect(model.questions.length).toBe(2)
      }).pipe(Effect.provide(live))
    })
  )

  it.effect("outside a saga the journaled model asks the model as it is", () =>
    Effect.gen(function* () {
      const model = Scripted.layer(() => Scripted.says("hello"))
      const response = yield* LanguageModel.generateText({ prompt: "Hi" }).pipe(
        Effect.provide(Agent.layerModel.pipe(Layer.provide(model.layer)))
      )
      expect(response.text).toBe("hello")
      expect(model.questions.length).toBe(1)
    })
  )

  it.effect("a plain @effect/ai handler under the journaled model is refused: it would run again on replay", () =>
    Effect.gen(function* () {
      const world = makeWorld()
      const model = Scripted.layer(bookingScript)
      const plain = ShopToolkit.toLayer({
        Lookup: () => Effect.succeed({ stock: 10 }),
        Reserve: () => Effect.succeed({ reservationId: "res-plain" }),
        Charge: () => Effect.succeed({ chargeId: "ch-plain" }),
        Ship: () => Effect.succeed({ parcel: "plain" }),
        Wire: () => Effect.succeed("wire-plain")
      })
      const live = Layer.mergeAll(plain, Agent.layerModel.pipe(Layer.provide(model.layer))).pipe(
        Layer.provideMerge(Testing.layer)
      )
      const program = Agent.loop({ prompt: "Book it.", toolkit: ShopToolkit })
      const result = yield* Effect.provide(Saga.run("plain-1", program), live)
      assert(result._tag === "Compensated")
      expect(Cause.pretty(result.cause)).toContain("did not run as a saga step")
      expect(world.log).toEqual([])
    })
  )
})

describe("policy and declarations", () => {
  it("the policy comes from the tool's annotations and is overridable per tool", () => {
    const agent = Agent.make(ShopToolkit, {
      undo: { Reserve: () => Effect.void, Charge: () => Effect.void },
      policy: { Ship: { retryMode: "idempotency-key" } }
    })
    const summary = Object.values(agent.policies).map((p) => [p.toolName, p.reversibility, p.retryMode, p.gap])
    expect(summary).toEqual([
      ["Lookup", "reversible", "idempotency-key", false],
      ["Reserve", "compensatable", "idempotency-key", false],
      ["Charge", "compensatable", "none", false],
      ["Ship", "compensatable", "idempotency-key", true],
      ["Wire", "irreversible", "none", false]
    ])
    expect(agent.policies.Wire.reason).toContain("Tool.Destructive")
    const overridden = Agent.make(ShopToolkit, { policy: { Wire: { reversibility: "compensatable" } } })
    expect(overridden.policies.Wire).toMatchObject({ reversibility: "compensatable", gap: true })
  })

  it.effect("declaration errors at Layer build: an undo naming no tool of the toolkit", () =>
    Effect.gen(function* () {
      const undo = { Reserve: () => Effect.void, Refund: () => Effect.void } as unknown as Agent.Undos<
        AiToolkit.Tools<typeof ShopToolkit>
      >
      const agent = Agent.make(ShopToolkit, { undo })
      const error = yield* Effect.flip(Layer.build(agent.toLayer(handlersOf(makeWorld()))))
      expect(error).toMatchObject({ _tag: "DeclarationError", toolName: "Refund" })
      expect(error.message).toContain("does not have")
    }).pipe(Effect.scoped, Effect.provide(Testing.layer))
  )

  it.effect("declaration errors at Layer build: an undo on an irreversible tool", () =>
    Effect.gen(function* () {
      const agent = Agent.make(ShopToolkit, {
        undo: { Wire: () => Effect.void },
        policy: { Wire: { reversibility: "irreversible" } }
      })
      const error = yield* Effect.flip(Layer.build(agent.toLayer(handlersOf(makeWorld()))))
      expect(error).toMatchObject({ _tag: "DeclarationError", toolName: "Wire" })
      expect(error.message).toContain("irreversible")
    }).pipe(Effect.scoped, Effect.provide(Testing.layer))
  )

  it.effect("declaration errors at Layer build: an undo on a read-only tool, by annotation or by policy", () =>
    Effect.gen(function* () {
      const annotated = Agent.make(ShopToolkit, { undo: { Lookup: () => Effect.void } })
      const error = yield* Effect.flip(Layer.build(annotated.toLayer(handlersOf(makeWorld()))))
      expect(error).toMatchObject({ _tag: "DeclarationError", toolName: "Lookup" })
      expect(error.message).toContain("read-only")
      const declared = Agent.make(ShopToolkit, {
        undo: { Reserve: () => Effect.void },
        policy: { Reserve: { readonly: true } }
      })
      const byPolicy = yield* Effect.flip(Layer.build(declared.toLayer(handlersOf(makeWorld()))))
      expect(byPolicy).toMatchObject({ _tag: "DeclarationError", toolName: "Reserve" })
    }).pipe(Effect.scoped, Effect.provide(Testing.layer))
  )

  it.effect("building the handlers logs the gaps: tools whose effects compensation would skip", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const logger = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message }) => {
          lines.push(String(message))
        })
      )
      const agent = Agent.make(ShopToolkit, { undo: { Reserve: () => Effect.void, Charge: () => Effect.void } })
      yield* Layer.build(agent.toLayer(handlersOf(makeWorld()))).pipe(Effect.provide(logger))
      expect(lines.some((line) => line.includes("tool Ship is not read-only, not destructive"))).toBe(true)
      expect(lines.some((line) => line.includes('kind: "read" in a manifest'))).toBe(true)
      expect(lines.some((line) => line.includes("Lookup"))).toBe(false)
    }).pipe(Effect.scoped, Effect.provide(Testing.layer))
  )
})

describe("serving the toolkit over MCP", () => {
  it.effect(
    "built inside a span, a call's spans are its own: its step is under the session's run, never under the span the layer was built in",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const chains: Array<ReadonlyArray<string>> = []
        const agent = Agent.make(ShopToolkit, { undo: undosOf(world) })
        const handlers = {
          ...handlersOf(world),
          Lookup: () =>
            Effect.map(Effect.orDie(Effect.currentSpan), (span) => {
              chains.push(spanNames(span))
              return { stock: world.stock }
            })
        }
        const live = Layer.mergeAll(
          agent.toLayer(handlers),
          Agent.layerModel.pipe(Layer.provide(Scripted.layer(bookingScript).layer))
        ).pipe(Layer.provideMerge(Testing.layer))
        const session = Effect.flatMap(McpServer.McpServer, (server) =>
          server.callTool({ name: "Lookup", arguments: { sku: "A-1" } })
        ).pipe(
          Effect.provide(
            Layer.withSpan(Agent.layerMcp(Shop), "boot").pipe(Layer.provideMerge(McpServer.McpServer.layer))
          ),
          Effect.provideService(McpSchema.McpServerClient, {
            clientId: 1,
            getClient: Effect.dieMessage("no client in this test")
          })
        )
        expect((yield* Effect.provide(Saga.run("mcp-spans", session), live))._tag).toBe("Completed")
        expect(chains.length).toBe(1)
        expect(chains[0]).toContain("effect-saga.run")
        expect(chains[0]).not.toContain("boot")
      })
  )

  it.effect("hints match the saga policy; a failure fed to the model is isError: true; each call is a step", () =>
    Effect.gen(function* () {
      const world = makeWorld({ declineCards: true })
      const { live } = shop(world, bookingScript)
      const session = Effect.gen(function* () {
        const server = yield* McpServer.McpServer
        const reserved = yield* server.callTool({ name: "Reserve", arguments: { sku: "A-1", quantity: 1 } })
        const declined = yield* server.callTool({ name: "Charge", arguments: { amount: 10 } })
        return { reserved, declined }
      }).pipe(
        Effect.provide(Agent.layerMcp(Shop).pipe(Layer.provideMerge(McpServer.McpServer.layer))),
        Effect.provideService(McpSchema.McpServerClient, {
          clientId: 1,
          getClient: Effect.dieMessage("no client in this test")
        })
      )
      const calls: Array<{ reserved: McpSchema.CallToolResult; declined: McpSchema.CallToolResult }> = []
      const [result, entries] = yield* Effect.provide(
        Effect.zip(
          Saga.run(
            "mcp-session-1",
            Effect.tap(session, (answers) => {
              calls.push(answers)
            })
          ),
          journalOf("mcp-session-1")
        ),
        live
      )
      expect(calls[0]!.reserved).toMatchObject({ isError: false, structuredContent: { reservationId: "res-1" } })
      expect(calls[0]!.declined).toMatchObject({
        isError: true,
        structuredContent: { _tag: "CardDeclined", reason: "insufficient funds" }
      })
      // The session's saga records the failure and, when the session ends, compensates.
      assert(result._tag === "Compensated")
      expect(Cause.squash(result.cause)).toMatchObject({ _tag: "StepFailed", toolName: "Charge" })
      expect(world.log).toEqual(["reserve A-1 x1", "charge 10: declined", "release res-1"])
      expect(entries.filter((entry) => entry.phase === "INTENT").map((entry) => entry.toolName)).toEqual([
        "Reserve",
        "Charge"
      ])
    })
  )

  it.live(
    "a whole MCP session over JSON-RPC is a saga: hints, isError for a failure fed back, an irreversible call after it not run, compensated at its end",
    () =>
      Effect.gen(function* () {
        const world = makeWorld({ declineCards: true })
        const { live } = shop(world, bookingScript)
        const client = yield* makeClient
        const transport = client.transport
        yield* Effect.gen(function* () {
          const session = yield* Effect.fork(Saga.run("mcp-stdio-1", Agent.mcpSession(Shop, transport)))
          yield* client.initialize
          const list = yield* client.ask(2, "tools/list", {})
          const reserved = yield* client.ask(3, "tools/call", {
            name: "Reserve",
            arguments: { sku: "A-1", quantity: 1 }
          })
          const declined = yield* client.ask(4, "tools/call", { name: "Charge", arguments: { amount: 10 } })
          expect(
            list.result.tools.map((tool: any) => [
              tool.name,
              tool.annotations.readOnlyHint,
              tool.annotations.destructiveHint,
              tool.annotations.idempotentHint
            ])
          ).toEqual([
            ["Lookup", true, false, true],
            ["Reserve", false, false, true],
            ["Charge", false, false, false],
            ["Ship", false, false, false],
            ["Wire", false, true, false]
          ])
          expect(reserved.result).toMatchObject({ isError: false, structuredContent: { reservationId: "res-1" } })
          expect(declined.result).toMatchObject({ isError: true, structuredContent: { _tag: "CardDeclined" } })
          // The failure bound the saga to compensate: an irreversible call is not run, nor asked for.
          const wire = yield* client.ask(5, "tools/call", { name: "Wire", arguments: { amount: 4200, to: "DE89" } })
          expect(wire.result).toMatchObject({ isError: true, structuredContent: { status: "not-run" } })
          expect(yield* Approval.pending).toEqual([])

          // The client goes away: the session's saga ends, and compensates the failure it recorded.
          yield* Queue.shutdown(client.requests)
          const result = yield* Fiber.join(session)
          assert(result._tag === "Compensated")
          expect(Cause.squash(result.cause)).toMatchObject({ _tag: "StepFailed", toolName: "Charge" })
          expect(world.log).toEqual(["reserve A-1 x1", "charge 10: declined", "release res-1"])
        }).pipe(Effect.provide(live))
      })
  )

  it.live(
    "an irreversible call over MCP is told it awaits approval and the session goes on; at its end AwaitingApproval; approve; resume runs it once, serving nothing again",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const { live } = shop(world, bookingScript)
        const client = yield* makeClient
        let served = 0
        const transport = McpServer.layerStdio({
          name: "shop",
          version: "1.0.0",
          stdin: Stream.suspend(() => {
            served++
            return Stream.fromQueue(client.requests)
          }),
          stdout: client.stdout
        })
        const session = Agent.mcpSession(Shop, transport)
        yield* Effect.gen(function* () {
          const running = yield* Effect.fork(Saga.run("mcp-stdio-2", session))
          yield* client.initialize
          const wire = yield* client.ask(2, "tools/call", { name: "Wire", arguments: { amount: 4200, to: "DE89" } })
          const reserved = yield* client.ask(3, "tools/call", {
            name: "Reserve",
            arguments: { sku: "A-1", quantity: 1 }
          })
          expect(wire.result).toMatchObject({ isError: false, structuredContent: { status: "awaiting-approval" } })
          expect(reserved.result).toMatchObject({ isError: false, structuredContent: { reservationId: "res-1" } })
          expect(world.log).toEqual(["reserve A-1 x1"])

          yield* Queue.shutdown(client.requests)
          const waiting = yield* Fiber.join(running)
          assert(waiting._tag === "AwaitingApproval")
          expect(waiting.request).toMatchObject({ toolName: "Wire" })

          yield* Saga.approve("mcp-stdio-2", waiting.request.stepId, { by: "alice" })
          const done = yield* Saga.resume("mcp-stdio-2", session)
          assert(done._tag === "Completed")
          expect(world.log).toEqual(["reserve A-1 x1", "wire 4200 to DE89"])
          expect(served).toBe(1)
          expect((yield* Saga.resume("mcp-stdio-2", session))._tag).toBe("Completed")
          expect(world.log).toEqual(["reserve A-1 x1", "wire 4200 to DE89"])
          expect(served).toBe(1)
        }).pipe(Effect.provide(live))
      })
  )

  it.live(
    "the handlers' layer provided to each run, the Saga service built once: the approved call runs on resume, no tool taken for two",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const handlers = Agent.make(ShopToolkit, { undo: undosOf(world) }).toLayer(handlersOf(world))
        const client = yield* makeClient
        const transport = client.transport
        const session = Agent.mcpSession(Shop, transport)
        const warnings: Array<string> = []
        const logger = Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") warnings.push(String(message))
        })
        yield* Effect.gen(function* () {
          const running = yield* Effect.fork(Saga.run("mcp-stdio-3", session.pipe(Effect.provide(handlers))))
          yield* client.initialize
          yield* client.ask(2, "tools/call", { name: "Wire", arguments: { amount: 4200, to: "DE89" } })
          yield* Queue.shutdown(client.requests)
          const waiting = yield* Fiber.join(running)
          assert(waiting._tag === "AwaitingApproval")
          yield* Saga.approve("mcp-stdio-3", waiting.request.stepId, { by: "alice" })
          const done = yield* Saga.resume("mcp-stdio-3", session.pipe(Effect.provide(handlers)))
          expect(done).toMatchObject({ _tag: "Completed" })
          expect(world.log).toEqual(["wire 4200 to DE89"])
          expect(warnings.filter((warning) => warning.includes("two different tools"))).toEqual([])
        }).pipe(Effect.provide(Testing.layer), Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      })
  )

  it.live(
    "an approved call whose agent was made again, apart, in the same process: NeedsAttention naming both tools, nothing run",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const made = () => Agent.make(ShopToolkit, { undo: undosOf(world) })
        const first = made()
        const client = yield* makeClient
        const running = yield* Effect.fork(
          Saga.run(
            "mcp-stdio-twice",
            Agent.mcpSession(Shop, client.transport).pipe(Effect.provide(first.toLayer(handlersOf(world))))
          )
        )
        yield* client.initialize
        yield* client.ask(2, "tools/call", { name: "Wire", arguments: { amount: 4200, to: "DE89" } })
        yield* Queue.shutdown(client.requests)
        const waiting = yield* Fiber.join(running)
        assert(waiting._tag === "AwaitingApproval")
        yield* Saga.approve("mcp-stdio-twice", waiting.request.stepId, { by: "alice" })
        const again = made()
        const resumed = yield* Saga.resume(
          "mcp-stdio-twice",
          Agent.mcpSession(again, client.transport).pipe(Effect.provide(again.toLayer(handlersOf(world))))
        )
        assert(resumed._tag === "NeedsAttention")
        expect(resumed.unknown[0]!.reason).toBe(
          "it awaits approval, but two different tools named Wire are known in this process (two manifests, toolkits or agents bind that name): the journal cannot tell which one it is, so it cannot run here"
        )
        expect(world.log).toEqual([])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.live(
    "a call that dies over MCP (an input over maxPayloadBytes) is told it failed; the session goes on, and its saga compensates at its end",
    () =>
      Effect.gen(function* () {
        const world = makeWorld()
        const agent = Agent.make(ShopToolkit, { undo: undosOf(world), policy: { Reserve: { maxPayloadBytes: 64 } } })
        const client = yield* makeClient
        const transport = client.transport
        const session = yield* Effect.fork(
          Saga.run(
            "mcp-stdio-died",
            Agent.mcpSession(agent, transport).pipe(Effect.provide(agent.toLayer(handlersOf(world))))
          )
        )
        yield* client.initialize
        const held = yield* client.ask(2, "tools/call", { name: "Reserve", arguments: { sku: "A-1", quantity: 1 } })
        const tooLarge = yield* client.ask(3, "tools/call", {
          name: "Reserve",
          arguments: { sku: "B".repeat(200), quantity: 1 }
        })
        const stock = yield* client.ask(4, "tools/call", { name: "Lookup", arguments: { sku: "A-1" } })
        expect(held.result).toMatchObject({ isError: false, structuredContent: { reservationId: "res-1" } })
        expect(tooLarge.result).toMatchObject({
          isError: true,
          structuredContent: { status: "failed", reason: expect.stringContaining("over its limit of 64") }
        })
        expect(stock.result).toMatchObject({ isError: false })
        // A tool the server does not have: a JSON-RPC error, not a result; nothing journaled, the session goes on.
        const unknownTool = yield* client.ask(5, "tools/call", { name: "ApproveEverything", arguments: {} })
        expect(unknownTool.result).toBeUndefined()
        expect(unknownTool.error).toMatchObject({ code: -32602, message: "Tool 'ApproveEverything' not found" })
        expect(
          (yield* client.ask(6, "tools/call", { name: "Lookup", arguments: { sku: "A-1" } })).result
        ).toMatchObject({
          isError: false
        })
        yield* Queue.shutdown(client.requests)
        const result = yield* Fiber.join(session)
        expect(result._tag).toBe("Compensated")
        expect(
          (yield* journalOf("mcp-stdio-died"))
            .filter((entry) => entry.phase === "INTENT")
            .map((entry) => entry.toolName)
        ).toEqual(["McpSession", "Reserve", "Lookup", "Lookup"])
        expect(world.log).toEqual(["reserve A-1 x1", "release res-1"])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.live(
    "a client that goes away while its call runs leaves the call unknown: NeedsAttention, named as such, not run again on resume",
    () =>
      Effect.gen(function* () {
        const Hold = Tool.make("Hold", { parameters: { seat: Schema.String }, success: Schema.String }).annotate(
          Tool.Idempotent,
          true
        )
        const agent = Agent.make(AiToolkit.make(Hold), { undo: { Hold: () => Effect.void } })
        const started = yield* Deferred.make<void>()
        let calls = 0
        const handlers = agent.toLayer({
          Hold: () =>
            Effect.zipRight(
              Deferred.succeed(started, undefined),
              Effect.sync(() => calls++)
            ).pipe(Effect.zipRight(Effect.never))
        })
        const client = yield* makeClient
        const session = Agent.mcpSession(agent, client.transport).pipe(Effect.provide(handlers))
        const running = yield* Effect.fork(Saga.run("mcp-stdio-gone", session))
        yield* client.initialize
        yield* client.send({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "Hold", arguments: { seat: "1A" } }
        })
        yield* Deferred.await(started)
        yield* Queue.shutdown(client.requests)
        const result = yield* Fiber.join(running)
        assert(result._tag === "NeedsAttention")
        expect(result.unknown[0]!.reason).toContain("an MCP client that went away")
        expect((yield* Saga.resume("mcp-stdio-gone", session))._tag).toBe("NeedsAttention")
        expect(calls).toBe(1)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.live(
    "a call whose outcome is unknown halts the session: its client gets the server's JSON-RPC error for an interrupted request, the journal says why",
    () =>
      Effect.gen(function* () {
        const Hold = Tool.make("Hold", { parameters: { seat: Schema.String }, success: Schema.String })
        const agent = Agent.make(AiToolkit.make(Hold), { undo: { Hold: () => Effect.void } })
        const handlers = agent.toLayer({ Hold: () => Effect.fail(Outcome.unknown("the seat service timed out")) })
        const client = yield* makeClient
        const session = Agent.mcpSession(agent, client.transport).pipe(Effect.provide(handlers))
        const running = yield* Effect.fork(Saga.run("mcp-stdio-unknown", session))
        yield* client.initialize
        const answer = yield* client.ask(2, "tools/call", { name: "Hold", arguments: { seat: "1A" } })
        // Not a result: an error, whose message is the interruption as JSON (agents.md).
        expect(answer.result).toBeUndefined()
        expect(answer.error).toMatchObject({ code: 0, message: expect.stringContaining('"Interrupt"') })
        const result = yield* Fiber.join(running)
        assert(result._tag === "NeedsAttention")
        expect(result.unknown.map((step) => [step.toolName, step.reason])).toEqual([
          ["Hold", "outcome unknown: the seat service timed out"]
        ])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.live("an array result over MCP is the answer's text, not its structuredContent (an object in MCP)", () =>
    Effect.gen(function* () {
      const Flights = Tool.make("Flights", { parameters: {}, success: Schema.Array(Schema.String) }).annotate(
        Tool.Readonly,
        true
      )
      const agent = Agent.make(AiToolkit.make(Flights))
      const client = yield* makeClient
      const transport = client.transport
      const session = yield* Effect.fork(
        Saga.run(
          "mcp-stdio-array",
          Agent.mcpSession(agent, transport).pipe(
            Effect.provide(agent.toLayer({ Flights: () => Effect.succeed(["GVA-LIS 1", "GVA-LIS 2"]) }))
          )
        )
      )
      yield* client.initialize
      const found = yield* client.ask(2, "tools/call", { name: "Flights", arguments: {} })
      expect(found.result.isError).toBe(false)
      expect(found.result.structuredContent).toBeUndefined()
      expect(found.result.content).toEqual([{ type: "text", text: '["GVA-LIS 1","GVA-LIS 2"]' }])
      yield* Queue.shutdown(client.requests)
      expect((yield* Fiber.join(session))._tag).toBe("Completed")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("the MCP tool list: read-only, destructive and idempotent hints from the policy", () =>
    Effect.gen(function* () {
      const { live } = shop(makeWorld(), bookingScript)
      const tools = Effect.gen(function* () {
        const server = yield* McpServer.McpServer
        return server.tools.map((tool) => ({ name: tool.name, ...tool.annotations }))
      }).pipe(Effect.provide(Agent.layerMcp(Shop).pipe(Layer.provideMerge(McpServer.McpServer.layer))))
      const result = yield* Effect.provide(Saga.run("mcp-session-2", tools), live)
      assert(result._tag === "Completed")
      expect(result.value).toEqual([
        expect.objectContaining({ name: "Lookup", readOnlyHint: true, destructiveHint: false, idempotentHint: true }),
        expect.objectContaining({ name: "Reserve", readOnlyHint: false, destructiveHint: false, idempotentHint: true }),
        expect.objectContaining({ name: "Charge", readOnlyHint: false, destructiveHint: false, idempotentHint: false }),
        expect.objectContaining({ name: "Ship", readOnlyHint: false, destructiveHint: false, idempotentHint: false }),
        expect.objectContaining({ name: "Wire", readOnlyHint: false, destructiveHint: true, idempotentHint: false })
      ])
    })
  )
})

// --- fixtures --------------------------------------------------------------------------------

class CardDeclined extends Schema.TaggedError<CardDeclined>()("CardDeclined", { reason: Schema.String }) {}
class WarehouseDown extends Schema.TaggedError<WarehouseDown>()("WarehouseDown", { orderId: Schema.String }) {}

const Lookup = Tool.make("Lookup", {
  description: "How many of an item are in stock",
  parameters: { sku: Schema.String },
  success: Schema.Struct({ stock: Schema.Int })
}).annotate(Tool.Readonly, true)

const Reserve = Tool.make("Reserve", {
  description: "Reserve items",
  parameters: { sku: Schema.String, quantity: Schema.Int },
  success: Schema.Struct({ reservationId: Schema.String })
}).annotate(Tool.Idempotent, true)

const Charge = Tool.make("Charge", {
  description: "Charge the customer's card",
  parameters: { amount: Schema.Int },
  success: Schema.Struct({ chargeId: Schema.String }),
  failure: CardDeclined,
  failureMode: "return"
})

const Ship = Tool.make("Ship", {
  description: "Hand the order to the warehouse",
  parameters: { orderId: Schema.String },
  success: Schema.Struct({ parcel: Schema.String }),
  failure: WarehouseDown
}).annotate(Tool.Destructive, false)

const Wire = Tool.make("Wire", {
  description: "Send a wire transfer",
  parameters: { amount: Schema.Int, to: Schema.String },
  success: Schema.String
})

const ShopToolkit = AiToolkit.make(Lookup, Reserve, Charge, Ship, Wire)

/** The outside world: what the tools did, in order. */
const makeWorld = (
  options: { warehouseUp?: boolean; declineCards?: boolean; shipDefect?: boolean } = {}
): {
  stock: number
  wired: number
  log: Array<string>
  readonly warehouseUp: boolean
  readonly declineCards: boolean
  readonly shipDefect: boolean
} => ({
  stock: 10,
  wired: 0,
  log: [],
  warehouseUp: options.warehouseUp ?? true,
  declineCards: options.declineCards ?? false,
  shipDefect: options.shipDefect ?? false
})
type World = ReturnType<typeof makeWorld>

const handlersOf = (world: World) => ({
  Lookup: () => Effect.sync(() => ({ stock: world.stock })),
  Reserve: ({ quantity, sku }: { sku: string; quantity: number }) =>
    Effect.sync(() => {
      world.stock -= quantity
      world.log.push(`reserve ${sku} x${quantity}`)
      return { reservationId: `res-${world.log.filter((line) => line.startsWith("reserve")).length}` }
    }),
  Charge: ({ amount }: { amount: number }) =>
    Effect.suspend(() => {
      if (world.declineCards) {
        world.log.push(`charge ${amount}: declined`)
        return Effect.fail(new CardDeclined({ reason: "insufficient funds" }))
      }
      world.log.push(`charge ${amount}`)
      return Effect.succeed({ chargeId: `ch-${amount}` })
    }),
  Ship: ({ orderId }: { orderId: string }) =>
    Effect.suspend(() => {
      if (world.shipDefect) return Effect.die(new Error("the warehouse client crashed"))
      if (!world.warehouseUp) {
        world.log.push(`ship ${orderId}: refused`)
        return Effect.fail(new WarehouseDown({ orderId }))
      }
      world.log.push(`ship ${orderId}`)
      return Effect.succeed({ parcel: `parcel-${orderId}` })
    }),
  Wire: ({ amount, to }: { amount: number; to: string }) =>
    Effect.sync(() => {
      world.wired += amount
      world.log.push(`wire ${amount} to ${to}`)
      return `wire-${amount}`
    })
})

/** The undos; `Shop` is the agent's toolkit with placeholder undos, for policies and MCP. */
const undosOf = (world: World): Agent.Undos<AiToolkit.Tools<typeof ShopToolkit>> => ({
  Reserve: (ctx) =>
    Effect.sync(() => {
      world.stock += ctx.input.quantity
      world.log.push(`release ${ctx.result.reservationId}`)
    }),
  Charge: (ctx) => Effect.sync(() => world.log.push(`refund ${ctx.result.chargeId}`))
})

const Shop = Agent.make(ShopToolkit, { undo: undosOf(makeWorld()) })

/** The saga stack in memory, the scripted model journaled, and the shop's handlers over `world`. */
const shop = (
  world: World,
  script: Scripted.Script,
  options: { readonly onToolFailure?: "compensate" | "continue" } = {}
) => {
  const model = Scripted.layer(script)
  const agent = Agent.make(ShopToolkit, { undo: undosOf(world), ...options })
  const live = Layer.mergeAll(agent.toLayer(handlersOf(world)), Agent.layerModel.pipe(Layer.provide(model.layer))).pipe(
    Layer.provideMerge(Testing.layer)
  )
  return { model, agent, live }
}

const book = Agent.loop({ prompt: "Book two A-1 and ship them as order-1.", toolkit: Shop.toolkit })
const payout = Agent.loop({ prompt: "Pay the supplier 4200 to DE89.", toolkit: Shop.toolkit })

const bookingScript: Scripted.Script = ({ turn }) => {
  switch (turn) {
    case 1:
      return Scripted.calls(Scripted.call("call-1", "Reserve", { sku: "A-1", quantity: 2 }))
    case 2:
      return Scripted.calls(Scripted.call("call-2", "Charge", { amount: 4200 }))
    case 3:
      return Scripted.calls(Scripted.call("call-3", "Ship", { orderId: "order-1" }))
    default:
      return Scripted.says("Booked and shipped.")
  }
}

const declinedScript: Scripted.Script = (question) => {
  if (question.turn < 3) return bookingScript(question)
  const charge = question.results.get("call-2")
  return charge?.isFailure === true
    ? Scripted.says(`I am sorry: your card was declined (${charge.result.reason}). Your items stay reserved.`)
    : Scripted.says("Charged.")
}

/** Pays by wire: told that the call awaits approval, it says so; told it ran, it says what it sent. */
const payoutScript: Scripted.Script = ({ results, said, turn }) => {
  if (turn === 1) return Scripted.calls(Scripted.call("call-1", "Wire", { amount: 4200, to: "DE89" }))
  const wired = results.get("call-1")?.result
  if (!Agent.isAwaitingApproval(wired)) return Scripted.says(`Sent 4200 to DE89 (${wired}).`)
  return Scripted.says(
    said.includes('"wire-4200"') ? "Sent 4200 to DE89 (wire-4200)." : "The transfer awaits approval."
  )
}

/** An MCP client in memory: JSON-RPC lines in through a queue, answers out through a sink, by id. */
const makeClient = Effect.gen(function* () {
  const requests = yield* Queue.unbounded<Uint8Array>()
  const answers = new Map<number, Deferred.Deferred<any>>()
  const answer = (id: number) => {
    if (!answers.has(id)) answers.set(id, Deferred.unsafeMake<any>(FiberId.none))
    return answers.get(id)!
  }
  const linesOf = (chunk: Uint8Array | string) =>
    (typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk)).split("\n").filter((line) => line !== "")
  const stdout = Sink.forEachChunk((chunks: Chunk.Chunk<Uint8Array | string>) =>
    Effect.forEach(Chunk.toArray(chunks).flatMap(linesOf), (line) => {
      const message = JSON.parse(line)
      return typeof message.id === "number" ? Deferred.succeed(answer(message.id), message) : Effect.void
    })
  )
  const send = (message: object) => Queue.offer(requests, new TextEncoder().encode(`${JSON.stringify(message)}\n`))
  const ask = (id: number, method: string, params: object) =>
    Effect.zipRight(send({ jsonrpc: "2.0", id, method, params }), Deferred.await(answer(id)))
  /** The MCP handshake, as request 1. */
  const initialize = Effect.zipRight(
    ask(1, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "test-client", version: "1.0.0" }
    }),
    send({ jsonrpc: "2.0", method: "notifications/initialized" })
  )
  /** A stdio transport that reads this client's requests and writes its answers. */
  const transport = McpServer.layerStdio({
    name: "test-server",
    version: "1.0.0",
    stdin: Stream.fromQueue(requests),
    stdout
  })
  return { requests, stdout, send, ask, initialize, transport }
})

/** `1` inside `depth` arrays: JSON that parses, too deep for `JSON.stringify`'s stack. */
const nested = (depth: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

const journalOf = (sagaId: string) => Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))

/** The names of `span` and of every span above it, nearest first. */
const spanNames = (span: Tracer.AnySpan): ReadonlyArray<string> => {
  const names: Array<string> = []
  let current: Option.Option<Tracer.AnySpan> = Option.some(span)
  while (Option.isSome(current) && current.value._tag === "Span") {
    names.push(current.value.name)
    current = current.value.parent
  }
  return names
}
