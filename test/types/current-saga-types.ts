/**
 * Type tests, checked by `tsc` (`npm run typecheck`): what a program reads from its saga is typed,
 * so that the program can still be run without a cast: `Saga.currentSagaId`, and the engine's own
 * members of `Saga.CurrentSaga` (internal) answer `unknown` and need nothing, never `any`.
 */
import { Effect, Layer } from "effect"
import { Approval, Journal, Saga } from "../../src/index.js"

type Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false
const assert = <T extends true>(..._: [] | [T]) => undefined

assert<Equals<typeof Saga.currentSagaId, Effect.Effect<string, never, Saga.CurrentSaga>>>()

const program = Effect.gen(function* () {
  const nestedId = `${yield* Saga.currentSagaId}/child`
  const current = yield* Saga.CurrentSaga
  const settled = yield* current.settle("some-step")
  return { nestedId, settled }
})
assert<Equals<Effect.Effect.Success<typeof program>, { nestedId: string; settled: unknown }>>()
assert<Equals<Effect.Effect.Error<typeof program>, unknown>>()
assert<Equals<Effect.Effect.Context<typeof program>, Saga.CurrentSaga>>()

const SagaLive = Saga.layer.pipe(Layer.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
const run = Saga.run("s", program).pipe(Effect.provide(SagaLive))
assert<Equals<Effect.Effect.Context<typeof run>, never>>()
export const runs = () => Effect.runPromise(run)
