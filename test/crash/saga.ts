/**
 * The saga the crash harness's children run: an order of five steps, each a call to a provider of
 * the `World`. The tools differ in what a crash can do to them:
 *
 * | tool    | forward call              | undo                      |
 * | ------- | ------------------------- | ------------------------- |
 * | reserve | idempotency key (retried) | idempotent                |
 * | charge  | at most once              | at most once              |
 * | book    | idempotency key (retried) | at most once              |
 * | notify  | at most once              | none (journaled SKIPPED)  |
 * | ship    | idempotency key (retried) | none: it is the last step |
 *
 * `ship` is declined (proved not applied) in the orders planned to fail, so that they compensate.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as Schema from "effect/Schema"
import * as Compensable from "../../src/Compensable.js"
import * as Outcome from "../../src/Outcome.js"
import * as SagaDefinition from "../../src/SagaDefinition.js"
import { World } from "./world.js"

/** How a tool's provider behaves, as the audit needs to know it. */
export interface ToolPlan {
  readonly name: "reserve" | "charge" | "book" | "notify" | "ship"
  /** `"idempotency-key"`: an unknown outcome is retried with the same key; `"once"`: it needs a human. */
  readonly forward: "idempotency-key" | "once"
  /** `"idempotent"`: the provider ignores a repeated undo key; `"once"`: every call applies. */
  readonly undo: "idempotent" | "once" | "none"
}

/** The five tools of an order, in the order the program calls them. */
export const toolPlans: ReadonlyArray<ToolPlan> = [
  { name: "reserve", forward: "idempotency-key", undo: "idempotent" },
  { name: "charge", forward: "once", undo: "once" },
  { name: "book", forward: "idempotency-key", undo: "once" },
  { name: "notify", forward: "once", undo: "none" },
  { name: "ship", forward: "idempotency-key", undo: "none" }
]

/** The plan of the tool called `name`. */
export const planOf = (name: string): ToolPlan | undefined => toolPlans.find((plan) => plan.name === name)

/** The id of the `n`-th order a child of this generation starts. */
export const orderId = (generation: number, n: number): string => `g${generation}-${n}`

/** The generation of the child that started an order. */
export const generationOf = (sagaId: string): number => Number(/^g(\d+)-/.exec(sagaId)?.[1] ?? Number.NaN)

/** Whether the order with this number is planned to fail at its last step: every third. */
export const plannedToFail = (n: number): boolean => n % 3 === 2

/** A few milliseconds of provider latency, so that the kills land at every point of a step. */
const latency = Effect.flatMap(Random.nextIntBetween(0, 4), (millis) => Effect.sleep(Duration.millis(millis)))

const StepInput = Schema.Struct({ order: Schema.String, decline: Schema.Boolean })

const toolOf = (plan: ToolPlan) =>
  Compensable.make({
    name: plan.name,
    input: StepInput,
    success: Schema.String,
    ...(plan.forward === "idempotency-key" ? { retryMode: "idempotency-key" as const } : {}),
    execute: ({ decline }, step) =>
      Effect.gen(function* () {
        yield* latency
        if (decline) return yield* Outcome.failed(`${plan.name} was declined`)
        const world = yield* World
        yield* world.call({
          direction: "forward",
          tool: plan.name,
          key: step.idempotencyKey,
          idempotent: plan.forward === "idempotency-key"
        })
        yield* latency
        return `${plan.name}:${step.idempotencyKey}`
      }),
    compensate:
      plan.undo === "none"
        ? undefined
        : (context) =>
            Effect.gen(function* () {
              yield* latency
              const world = yield* World
              yield* world.call({
                direction: "undo",
                tool: plan.name,
                key: context.idempotencyKey,
                idempotent: plan.undo === "idempotent"
              })
              yield* latency
            })
  })

const tools = toolPlans.map(toolOf)

/** An order's input: its number, from which the plan to fail is derived. */
export const OrderInput = Schema.Struct({ n: Schema.Int, fail: Schema.Boolean })

/** The order saga: the five tools one after the other, the last declined when the order is planned to fail. */
export const Order = SagaDefinition.make("crash-order", {
  input: OrderInput,
  program: ({ fail }, sagaId) =>
    Effect.forEach(tools, (tool, index) => tool({ order: sagaId, decline: fail && index === tools.length - 1 }), {
      discard: true
    })
})
