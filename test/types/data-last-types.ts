/**
 * Type tests, checked by `tsc` (`npm run typecheck`): `Saga.run` and `Saga.resume` data-last
 * (`program.pipe(Saga.run(id))`) are typed as data-first, `SagaResult.match` data-last infers its
 * result's types from where it is used, and the guards narrow.
 */
import { Data, Effect } from "effect"
import { type Journal, Saga, SagaResult } from "../../src/index.js"

type Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false
const assert = <T extends true>(..._: [] | [T]) => undefined

class Declined extends Data.TaggedError("Declined")<{}> {}
declare const program: Effect.Effect<number, Declined, Saga.CurrentSaga>

const piped = program.pipe(Saga.run("order-1"))
assert<Equals<typeof piped, ReturnType<typeof Saga.run<number, Declined, Saga.CurrentSaga>>>>()
assert<Equals<typeof piped, Effect.Effect<SagaResult.SagaResult<number, Declined>, Saga.RunError, Saga.Saga>>>()
const withOptions = program.pipe(Saga.run("order-1", { onInterrupt: "compensate" }))
assert<Equals<typeof withOptions, typeof piped>>()
const resumed = program.pipe(Saga.resume("order-1"))
assert<
  Equals<
    typeof resumed,
    Effect.Effect<SagaResult.SagaResult<number, Declined>, Saga.RunError | Journal.SagaNotFound, Saga.Saga>
  >
>()

const said = piped.pipe(
  Effect.map(
    SagaResult.match({
      Completed: ({ value }) => value.toFixed(0),
      Compensated: ({ cause }) => String(cause),
      CompensationFailed: ({ report }) => report.sagaId,
      AwaitingApproval: ({ request }) => request.toolName,
      NeedsAttention: ({ unknown }) => unknown.map((step) => step.stepId).join(", "),
      Suspended: ({ sagaId }) => sagaId
    })
  )
)
assert<Equals<Effect.Effect.Success<typeof said>, string>>()

declare const result: SagaResult.SagaResult<number, Declined>
if (SagaResult.isCompleted(result)) assert<Equals<typeof result, SagaResult.Completed<number>>>()
if (SagaResult.isCompensated(result)) assert<Equals<typeof result, SagaResult.Compensated<Declined>>>()
if (SagaResult.isCompensationFailed(result)) {
  assert<Equals<typeof result, SagaResult.CompensationFailed<Declined>>>()
}
if (SagaResult.isAwaitingApproval(result)) assert<Equals<typeof result, SagaResult.AwaitingApproval>>()
if (SagaResult.isNeedsAttention(result)) assert<Equals<typeof result, SagaResult.NeedsAttention>>()
if (SagaResult.isSuspended(result)) assert<Equals<typeof result, SagaResult.Suspended>>()
