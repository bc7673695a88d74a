/**
 * Type tests, checked by `tsc` (`npm run typecheck`): what `Toolkit.call`, `Toolkit.layer`,
 * `Compensable.make`, `Compensable.withCompensation`, `Saga.register` and `Testing.exploreCrashes`
 * are typed with says what they answer, fail with and need.
 */
import { Context, Data, Effect, type Layer, Schema } from "effect"
import { Compensable, Outcome, type Saga, type SagaError, Toolkit } from "../../src/index.js"

type Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false
const assert = <T extends true>(..._: [] | [T]) => undefined
type Success<T> = T extends Effect.Effect<infer A, any, any> ? A : never
type Failure<T> = T extends Effect.Effect<any, infer E, any> ? E : never
type Needs<T> = T extends Effect.Effect<any, any, infer R> ? R : never
type LayerNeeds<T> = T extends Layer.Layer<infer _ROut, infer _E, infer R> ? R : never

class Shop extends Context.Tag("Shop")<Shop, { readonly price: number }>() {}
class Payments extends Context.Tag("Payments")<Payments, { readonly refund: (id: string) => Effect.Effect<void> }>() {}
class Declined extends Schema.TaggedError<Declined>()("Declined", { why: Schema.String }) {}
class Foo extends Data.TaggedError("Foo")<{ readonly why: string }> {}

const price = Compensable.make({
  name: "price",
  input: Schema.Number,
  success: Schema.Number,
  execute: (n) => Effect.map(Shop, (shop) => shop.price * n),
  compensate: () => Effect.void
})

const charge = Compensable.make({
  name: "charge",
  input: Schema.Number,
  success: Schema.String,
  failure: Declined,
  execute: (n) => (n > 0 ? Effect.succeed(`ch-${n}`) : Effect.fail(new Declined({ why: "zero" }))),
  compensate: (ctx) => Effect.flatMap(Payments, (payments) => payments.refund(ctx.result))
})

const toolkit = Toolkit.make({ price, charge })

// 1. Toolkit.call: the tools' results, their errors with UnknownTool and InvalidInput, their services.
const called = Toolkit.call(toolkit, "price", 2)
assert<Equals<Success<typeof called>, number | string>>()
assert<
  Equals<
    Failure<typeof called>,
    Toolkit.UnknownTool | Compensable.InvalidInput | Declined | Outcome.Failed | Compensable.StepError
  >
>()
assert<Equals<Needs<typeof called>, Shop | Payments | Saga.CurrentSaga>>()
const caught = Effect.catchTag(called, "UnknownTool", (error) => Effect.succeed(error.known.length))
assert<Equals<Failure<typeof caught>, Compensable.InvalidInput | Declined | Outcome.Failed | Compensable.StepError>>()

// 2. Toolkit.layer needs what the undos need (Payments), not what the calls need (Shop).
const registered = Toolkit.layer(toolkit)
assert<Equals<LayerNeeds<typeof registered>, Saga.Saga | Payments>>()
assert<Equals<LayerNeeds<ReturnType<typeof Toolkit.layer<{ price: typeof price }>>>, Saga.Saga>>()

// 3. make: E comes from `failure` only; an error `execute` fails with besides it is typed apart (EX).
const undeclared = Compensable.make({
  name: "undeclared",
  input: Schema.Null,
  success: Schema.String,
  execute: () => Effect.fail(new Foo({ why: "x" }))
})
assert<Equals<typeof undeclared, Compensable.Tool<"undeclared", null, string, Foo, never, never>>>()
const wrong = Compensable.make({
  name: "wrong",
  input: Schema.Null,
  success: Schema.String,
  failure: Declined,
  execute: () => Effect.fail(new Foo({ why: "x" }))
})
assert<Equals<Failure<ReturnType<typeof wrong>>, Declined | Foo | Outcome.Failed | Compensable.StepError>>()

// 4. withCompensation: the effect's error on the run that made the call, Outcome.Failed on a replay.
const attached = Effect.fail(new Foo({ why: "x" })).pipe(
  Compensable.withCompensation({ name: "attached", success: Schema.String, compensate: () => Effect.void })
)
assert<Equals<Failure<typeof attached>, Foo | Outcome.Failed | SagaError.InvalidIdentifier>>()

// 5. A tool is a tool of a wider name: helpers over any tool, and lists of tools of one shape.
const nameOf = <I, A, E, R>(tool: Compensable.Tool<string, I, A, E, R>): string => tool.name
nameOf(price)
const priced: ReadonlyArray<Compensable.Tool<string, number, number, never, Shop>> = [price]
assert<Equals<(typeof priced)[number]["name"], string>>()

// 6. An `Outcome` `execute` fails with is never part of `EX`: a write's unknown or partial outcome
// halts the saga, and the program never sees it.
const outcomesOnly = Compensable.make({
  name: "outcomesOnly",
  input: Schema.Null,
  success: Schema.String,
  execute: () => Effect.fail(Outcome.unknown("lost")) as Effect.Effect<string, Outcome.Unknown | Outcome.Partial>
})
assert<Equals<typeof outcomesOnly, Compensable.Tool<"outcomesOnly", null, string, never, never, never>>>()
const outcomeBeside = Compensable.make({
  name: "outcomeBeside",
  input: Schema.Null,
  success: Schema.String,
  failure: Declined,
  execute: () => Effect.fail(Outcome.partial("half")) as Effect.Effect<string, Declined | Foo | Outcome.Partial>
})
assert<Equals<Failure<ReturnType<typeof outcomeBeside>>, Declined | Foo | Outcome.Failed | Compensable.StepError>>()

// 7. A read's call (`changesNothing: true`) also fails with the outcome it could not know
// (`ReadOutcome`), which reaches the program; a write's, or one that may be either, as said.
const lookup = Compensable.make({
  name: "lookup",
  input: Schema.Null,
  success: Schema.String,
  changesNothing: true,
  timeout: "1 second",
  execute: () => Effect.succeed("x")
})
assert<
  Equals<Failure<ReturnType<typeof lookup>>, Outcome.Unknown | Outcome.Partial | Outcome.Failed | Compensable.StepError>
>()
const written = Compensable.make({
  name: "written",
  input: Schema.Null,
  success: Schema.String,
  changesNothing: false,
  execute: () => Effect.succeed("x")
})
assert<Equals<Failure<ReturnType<typeof written>>, Outcome.Failed | Compensable.StepError>>()
assert<Equals<Compensable.ReadOutcome<undefined>, never>>()
assert<Equals<Compensable.ReadOutcome<boolean>, Outcome.Unknown | Outcome.Partial>>()
const readStep = Effect.succeed("x").pipe(
  Compensable.withCompensation({
    name: "readStep",
    success: Schema.String,
    changesNothing: true,
    compensate: () => Effect.void
  })
)
assert<
  Equals<Failure<typeof readStep>, Outcome.Unknown | Outcome.Partial | Outcome.Failed | SagaError.InvalidIdentifier>
>()

// 8. `Saga.register` needs what the undos need (each runs in the context it ran in), as
// `Toolkit.layer` does; a tool widened to `Compensable.Any` says nothing of its undo.
declare const sagaService: Saga.Saga["Type"]
const registering = sagaService.register([price, charge])
assert<Equals<Needs<typeof registering>, Payments>>()
const widened: ReadonlyArray<Compensable.Any> = [price, charge]
const registeringWidened = sagaService.register(widened)
assert<Equals<Needs<typeof registeringWidened>, never>>()
