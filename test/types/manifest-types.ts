/**
 * Type tests, checked by `tsc` (`npm run typecheck`): a manifest's toolkit says what its calls fail
 * with (`Manifest.ManifestToolError`, with `UnknownTool` and `InvalidInput`: `catchTag` works) and
 * what they need (`Manifest.ManifestProcesses`, which `Manifest.layer` provides: a program given
 * `NodeContext.layer` only through the layer compiles and runs, one without the layer does not
 * compile).
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import {
  Approval,
  type Compensable,
  Journal,
  Manifest,
  type Outcome,
  Recovery,
  Saga,
  SagaDefinition,
  type SagaError,
  Toolkit
} from "../../src/index.js"

type Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false
const assert = <T extends true>(..._: [] | [T]) => undefined
type Success<T> = T extends Effect.Effect<infer A, any, any> ? A : never
type Failure<T> = T extends Effect.Effect<any, infer E, any> ? E : never
type Needs<T> = T extends Effect.Effect<any, any, infer R> ? R : never
type LayerOut<T> = T extends Layer.Layer<infer ROut, infer _E, infer _R> ? ROut : never
type LayerNeeds<T> = T extends Layer.Layer<infer _ROut, infer _E, infer R> ? R : never

declare const manifest: Manifest.Manifest
const toolkit = Manifest.toolkit(manifest)

// 1. A call answers what the binding's output says (known at run time only), fails with the
//    outcomes and step errors a manifest's tool can fail with, and needs ManifestProcesses.
const called = Toolkit.call(toolkit, "createReservation", { room: "sea" })
assert<Equals<Success<typeof called>, unknown>>()
assert<Equals<Manifest.ManifestToolError, Outcome.Outcome | Compensable.StepError>>()
assert<
  Equals<
    Failure<typeof called>,
    | Toolkit.UnknownTool
    | Compensable.InvalidInput
    | Compensable.PayloadTooLarge
    | Compensable.StepError
    | Outcome.Failed
    | Outcome.Unknown
    | Outcome.Partial
  >
>()
assert<Equals<Needs<typeof called>, Saga.CurrentSaga | Manifest.ManifestProcesses>>()

// 2. Its errors are caught by tag (the documented UnknownTool and InvalidInput among them).
const caught = called.pipe(
  Effect.catchTag("UnknownTool", (error) => Effect.succeed(error.known)),
  Effect.catchTag("InvalidInput", (error) => Effect.succeed(error.reason)),
  Effect.catchTag("OutcomeFailed", (error) => Effect.succeed(error.reason))
)
assert<
  Equals<
    Failure<typeof caught>,
    Compensable.PayloadTooLarge | SagaError.InvalidIdentifier | Outcome.Unknown | Outcome.Partial
  >
>()

// 3. A tool called directly fails and needs as through the toolkit, without UnknownTool.
const direct = toolkit.tools.createReservation!({ room: "sea" })
assert<Equals<Failure<typeof direct>, Manifest.ManifestToolError>>()
assert<Equals<Needs<typeof direct>, Saga.CurrentSaga | Manifest.ManifestProcesses>>()

// 4. Manifest.layer provides ManifestProcesses: it needs the executor it gives the calls.
const layer = Manifest.layer(toolkit)
assert<Equals<LayerOut<typeof layer>, Manifest.ManifestProcesses>>()
assert<Equals<LayerNeeds<typeof layer>, Saga.Saga | CommandExecutor.CommandExecutor>>()

// 5. NodeContext.layer given to Manifest.layer alone: the program needs nothing more.
const services = Manifest.layer(toolkit).pipe(
  Layer.provide(NodeContext.layer),
  Layer.provideMerge(Saga.layer),
  Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory))
)
const run = Effect.provide(Saga.run("m-1", called), services)
assert<Equals<Needs<typeof run>, never>>()

// 6. Without Manifest.layer, the call's need is not met, whatever else the program is given.
const withoutLayer = Effect.provide(
  Saga.run("m-2", called),
  Saga.layer.pipe(Layer.provideMerge(Layer.mergeAll(Journal.layerMemory, Approval.layerMemory, NodeContext.layer)))
)
assert<Equals<Needs<typeof withoutLayer>, Manifest.ManifestProcesses>>()
// @ts-expect-error a manifest's call cannot run without Manifest.layer
Effect.runPromise(withoutLayer)

// 7. What registers the undos (Toolkit.layer) and resumes the sagas (Recovery) needs it too.
assert<
  Equals<LayerNeeds<ReturnType<typeof Toolkit.layer<typeof toolkit.tools>>>, Saga.Saga | Manifest.ManifestProcesses>
>()
const booking = SagaDefinition.make("booking", {
  input: Schema.Struct({ room: Schema.String }),
  program: ({ room }) => Toolkit.call(toolkit, "createReservation", { room })
})
const recovery = Recovery.layer({ definitions: [booking] })
assert<Equals<LayerNeeds<typeof recovery>, Saga.Saga | Journal.Journal | Manifest.ManifestProcesses>>()
