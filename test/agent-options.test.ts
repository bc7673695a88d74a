import * as LanguageModel from "@effect/ai/LanguageModel"
import { assert, describe, expect, it } from "@effect/vitest"
import { Cause, type Duration, Effect, Fiber, Layer, Option, Stream, TestClock } from "effect"
import * as Agent from "../src/Agent.js"
import { Journal, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import * as Scripted from "./fixtures/agent-scripted.js"

describe("a turn fails with an AiError, whatever the model options made of it", () => {
  it.effect(
    "a model call over the timeout fails the turn with UnknownError, which the program catches; a replay answers it again without asking",
    () =>
      Effect.gen(function* () {
        const slow = slowModel("2 seconds")
        const live = Agent.layerModelWith({ timeout: "200 millis" }).pipe(
          Layer.provide(slow.layer),
          Layer.provideMerge(Testing.layer)
        )
        yield* Effect.gen(function* () {
          const ask = Agent.loop({ prompt: "hi" }).pipe(
            Effect.map((conversation) => conversation.text),
            Effect.catchTag("UnknownError", (error) => Effect.succeed(`no answer: ${error.description}`))
          )
          const running = yield* Effect.fork(Saga.run("slow-model", ask))
          yield* TestClock.adjust("1 second")
          const result = yield* Fiber.join(running)
          assert(result._tag === "Completed")
          expect(result.value).toBe(
            "no answer: the model call did not answer: outcome unknown: the call started but timed out before it answered"
          )
          expect(yield* phasesOf("slow-model")).toEqual(["SAGA_STARTED", "INTENT", "FAILED", "SAGA_COMPLETED"])
          // The failed turn is journaled: a replay answers the same failure and asks the model nothing.
          const again = yield* Saga.run("slow-model", ask)
          assert(again._tag === "Completed")
          expect(again.value).toBe(result.value)
          expect(slow.asked()).toBe(1)
        }).pipe(Effect.provide(live))
      })
  )

  it.effect(
    "a prompt over the turn's maxPayloadBytes fails the turn with MalformedInput before the model is asked",
    () =>
      Effect.gen(function* () {
        const model = Scripted.layer(() => Scripted.says("ok"))
        const live = Agent.layerModelWith({ maxPayloadBytes: 200 }).pipe(
          Layer.provide(model.layer),
          Layer.provideMerge(Testing.layer)
        )
        yield* Effect.gen(function* () {
          const ask = Agent.loop({ prompt: "x".repeat(500) }).pipe(
            Effect.map((conversation) => conversation.text),
            Effect.catchTag("MalformedInput", (error) => Effect.succeed(`refused: ${error.description}`))
          )
          const result = yield* Saga.run("long-prompt", ask)
          assert(result._tag === "Completed")
          expect(result.value).toMatch(
            /^refused: the turn's prompt is \d+ bytes encoded, over the turn's maxPayloadBytes of 200: it cannot be journaled, and the model was not asked$/
          )
          expect(model.questions).toEqual([])
        }).pipe(Effect.provide(live))
      })
  )
})

describe("Agent.loop's options", () => {
  for (const maxTurns of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    it.effect(`maxTurns ${maxTurns} fails the loop with InvalidLoopOptions before the model is asked`, () =>
      Effect.gen(function* () {
        const model = Scripted.layer(() => Scripted.says("ok"))
        const live = Agent.layerModel.pipe(Layer.provide(model.layer), Layer.provideMerge(Testing.layer))
        const result = yield* Saga.run("turns", Agent.loop({ prompt: "hi", maxTurns })).pipe(Effect.provide(live))
        assert(result._tag === "Compensated")
        const failure = Option.getOrThrow(Cause.failureOption(result.cause))
        assert(Agent.isInvalidLoopOptions(failure))
        expect(Agent.isMaxTurnsExceeded(failure)).toBe(false)
        expect(failure.option).toBe("maxTurns")
        expect(failure.message).toBe(
          `Agent.loop: maxTurns is ${maxTurns}, not a positive integer: how many times the model may be asked`
        )
        expect(model.questions).toEqual([])
      })
    )
  }
})

// --- fixtures --------------------------------------------------------------------------------

/** A model that answers after `delay` of the test clock, and counts how often it was asked. */
const slowModel = (delay: Duration.DurationInput) => {
  let asked = 0
  const layer = Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () =>
        Effect.as(
          Effect.zipRight(
            Effect.sync(() => asked++),
            Effect.sleep(delay)
          ),
          [...Scripted.says("too late")]
        ),
      streamText: () => Stream.dieMessage("not streamed")
    })
  )
  return { layer, asked: () => asked }
}

const phasesOf = (sagaId: string) =>
  Effect.map(
    Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId)),
    (entries) => entries.map((entry) => entry.phase)
  )
