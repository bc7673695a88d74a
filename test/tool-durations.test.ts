import * as Tool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import { assert, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Layer, Option, Schema } from "effect"
import * as Agent from "../src/Agent.js"
import { Compensable, Journal, Saga, Toolkit } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import * as Scripted from "./fixtures/agent-scripted.js"

describe("a tool's timeout and approvalTtl must be positive durations", () => {
  for (const option of ["timeout", "approvalTtl"] as const) {
    for (const [value, shown] of refused) {
      it.effect(`${option} ${shown}: Compensable.make does not throw, Toolkit.layer fails with DeclarationError`, () =>
        Effect.gen(function* () {
          const tool = toolWith(option, value)
          const error = yield* Effect.flip(Layer.build(Toolkit.layer(Toolkit.make({ tool }))))
          expect(error).toBeInstanceOf(Compensable.DeclarationError)
          expect(error.toolName).toBe("wire")
          expect(error.message).toBe(`tool wire: ${option} ${shown} ${why(option, value)}`)
        }).pipe(Effect.scoped, Effect.provide(Testing.layer))
      )
    }
  }

  it.effect("a direct call of a tool whose timeout is zero dies with the DeclarationError: the tool never runs", () =>
    Effect.gen(function* () {
      const result = yield* Saga.run("s", toolWith("timeout", 0)(null))
      assert(result._tag === "Compensated")
      const defect = Cause.dieOption(result.cause)
      assert(Option.isSome(defect))
      expect(defect.value).toBeInstanceOf(Compensable.DeclarationError)
      expect((defect.value as Compensable.DeclarationError).message).toBe(
        "tool wire: timeout 0 is not a positive duration: every call that had not answered at once would be abandoned, its outcome unknown"
      )
      const journal = yield* Journal.Journal
      expect((yield* journal.read("s")).map((entry) => entry.phase)).not.toContain("INTENT")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("positive durations, an infinite one too, are taken", () =>
    Effect.gen(function* () {
      const tools = Toolkit.make({ a: toolWith("timeout", "1 second", "a"), b: toolWith("approvalTtl", Infinity, "b") })
      yield* Layer.build(Toolkit.layer(tools))
      const result = yield* Saga.run("s", toolWith("timeout", 5000)(null))
      expect(result._tag).toBe("Completed")
    }).pipe(Effect.scoped, Effect.provide(Testing.layer))
  )

  it.effect("an agent's policy override with a timeout of -5 fails the handlers' Layer with DeclarationError", () =>
    Effect.gen(function* () {
      const agent = Agent.make(EchoToolkit, { policy: { Echo: { timeout: -5 } } })
      const error = yield* Effect.flip(Layer.build(agent.toLayer({ Echo: ({ text }) => Effect.succeed(text) })))
      expect(error).toBeInstanceOf(Compensable.DeclarationError)
      expect(error.message).toContain("tool Echo: timeout -5 is not a positive duration")
    }).pipe(Effect.scoped, Effect.provide(Testing.layer))
  )

  it.effect('Agent.layerModelWith({ timeout: "-1 minute" }) fails to build with DeclarationError', () =>
    Effect.gen(function* () {
      const model = Scripted.layer(() => Scripted.says("hi")).layer
      const error = yield* Effect.flip(
        Layer.build(Agent.layerModelWith({ timeout: "-1 minute" }).pipe(Layer.provide(model)))
      )
      expect(error).toBeInstanceOf(Compensable.DeclarationError)
      expect(error.message).toBe(
        'tool LanguageModel: timeout "-1 minute" is not a positive duration: every call that had not answered at once would be abandoned, its outcome unknown'
      )
      yield* Layer.build(Agent.layerModelWith({ timeout: "1 minute" }).pipe(Layer.provide(model)))
    }).pipe(Effect.scoped, Effect.provide(Testing.layer))
  )
})

const Echo = Tool.make("Echo", { parameters: { text: Schema.String }, success: Schema.String }).annotate(
  Tool.Idempotent,
  true
)
const EchoToolkit = AiToolkit.make(Echo)

/** Values that name no positive duration, and how the reason shows them. */
const refused: ReadonlyArray<readonly [unknown, string]> = [
  [-5, "-5"],
  [0, "0"],
  [Number.NaN, "NaN"],
  ["-1 minute", '"-1 minute"'],
  ["1 fortnight", '"1 fortnight"'],
  ["", '""']
]

const why = (option: "timeout" | "approvalTtl", value: unknown): string => {
  if (value === "1 fortnight" || value === "") return "is not a duration"
  return option === "timeout"
    ? "is not a positive duration: every call that had not answered at once would be abandoned, its outcome unknown"
    : "is not a positive duration: every approval would have expired"
}

/** An irreversible tool with the given approvalTtl, or a compensatable one with the given timeout. */
const toolWith = (option: "timeout" | "approvalTtl", value: unknown, name = "wire") =>
  option === "approvalTtl"
    ? Compensable.make({
        name,
        input: Schema.Null,
        success: Schema.String,
        reversibility: "irreversible",
        execute: () => Effect.succeed("w"),
        approvalTtl: value as never
      })
    : Compensable.make({
        name,
        input: Schema.Null,
        success: Schema.String,
        execute: () => Effect.succeed("w"),
        compensate: () => Effect.void,
        timeout: value as never
      })
