/**
 * The approval requests of explicit undos' runs that nothing is left to decide on: the saga's own
 * compensation has reached the step since the run asked (`UndoRunAdvice.sagaUndoSince`), so asked
 * again the run answers what the saga's did and withdraws the request. The inboxes say so instead of
 * offering a decision (`effect-saga approvals`, `GET /api/approvals`' `settled`, the console).
 *
 * @since 0.5.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Saga from "../../Saga.js"
import * as UndoRunAdvice from "./undoRunAdvice.js"

/**
 * Why nothing is left to decide on each of `requests` that nothing is, by request id: each saga a
 * run undoes a step of read once, as it stands (a saga that cannot be read settles nothing).
 *
 * @since 0.5.0
 * @category reading
 */
export const settledRequests = (
  requests: ReadonlyArray<{ readonly requestId: string; readonly sagaId: string; readonly stepId: string }>
): Effect.Effect<ReadonlyMap<string, string>, never, Saga.Saga> => {
  const ofRuns = requests.flatMap((request) => {
    const step = UndoRunAdvice.runStepOf(request)
    return step === undefined ? [] : [{ requestId: request.requestId, step, sagaId: UndoRunAdvice.sagaIdOf(step) }]
  })
  const sagaIds = Array.from(new Set(ofRuns.map((run) => run.sagaId)))
  return Effect.map(
    Effect.forEach(sagaIds, (sagaId) => Effect.option(Saga.status(sagaId))),
    (read) => {
      const sagas = new Map(sagaIds.map((sagaId, index) => [sagaId, Option.getOrUndefined(read[index]!)]))
      const settled = new Map<string, string>()
      for (const { requestId, step, sagaId } of ofRuns) {
        const own = UndoRunAdvice.sagaUndoSince(step, sagas.get(sagaId))
        if (own !== undefined) settled.set(requestId, UndoRunAdvice.reachedBySaga(step, own, false))
      }
      return settled
    }
  )
}
