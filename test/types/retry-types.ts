/**
 * Type tests, checked by `tsc` (`npm run typecheck`): a tool's `retry` schedule is typed with what it
 * is fed, the error of a failed attempt, so a schedule that reads another input does not type-check
 * (at run time it would throw on the error and the saga would need attention).
 */
import type * as AiError from "@effect/ai/AiError"
import * as Tool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import { Effect, Schedule, Schema } from "effect"
import * as Agent from "../../src/Agent.js"
import { Compensable, Outcome } from "../../src/index.js"

type Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false
const assert = <T extends true>(..._: [] | [T]) => undefined

class Declined extends Schema.TaggedError<Declined>()("Declined", { why: Schema.String }) {}
const onNumbers = Schedule.recurWhile((n: number) => n.toFixed(0) === "1")

// 1. make: the schedule is fed E | EX | Outcome.Outcome, and reading it does not change the tool's types.
const charge = Compensable.make({
  name: "charge",
  input: Schema.Number,
  success: Schema.String,
  failure: Declined,
  retry: Schedule.recurWhile((error: Declined | Outcome.Outcome) => error._tag !== "Declined"),
  execute: (n) => (n > 0 ? Effect.succeed(`ch-${n}`) : Effect.fail(new Declined({ why: "zero" })))
})
assert<Equals<typeof charge, Compensable.Tool<"charge", number, string, Declined, never, never>>>()
Compensable.make({
  name: "anySchedule",
  input: Schema.Null,
  success: Schema.String,
  retry: Schedule.exponential("10 millis").pipe(Schedule.compose(Schedule.recurs(3))),
  execute: () => Effect.succeed("ok")
})
Compensable.make({
  name: "onNumbers",
  input: Schema.Null,
  success: Schema.String,
  // @ts-expect-error the schedule is fed the attempt's error, not a number
  retry: onNumbers,
  execute: () => Effect.fail(Outcome.failed("nope"))
})

// 2. withCompensation: the options do not know the effect's error: the schedule is fed `unknown`.
Effect.succeed("a").pipe(
  Compensable.withCompensation({
    name: "unknownInput",
    success: Schema.String,
    retry: Schedule.recurWhile((error: unknown) => error instanceof Outcome.Failed),
    compensate: () => Effect.void
  })
)
Effect.succeed("a").pipe(
  Compensable.withCompensation({
    name: "onNumbers",
    success: Schema.String,
    // @ts-expect-error the schedule is fed the attempt's error, not a number
    retry: onNumbers,
    compensate: () => Effect.void
  })
)

// 3. Agent: a model turn's schedule is fed an AiError or an Outcome; a tool's policy, its failure or an Outcome.
Agent.layerModelWith({
  retry: Schedule.recurWhile(
    (error: AiError.AiError | Outcome.Failed | Outcome.Unknown) => error._tag !== "MalformedInput"
  )
})
// @ts-expect-error the schedule is fed the call's error, not a number
Agent.layerModelWith({ retry: onNumbers })
const Ship = Tool.make("Ship", { parameters: { sku: Schema.String }, success: Schema.String, failure: Declined })
const Shop = AiToolkit.make(Ship)
Agent.make(Shop, {
  policy: { Ship: { retry: Schedule.recurWhile((error: Declined | Outcome.Outcome) => error._tag !== "Declined") } }
})
// @ts-expect-error the schedule is fed the tool's failure or an Outcome, not a number
Agent.make(Shop, { policy: { Ship: { retry: onNumbers } } })
