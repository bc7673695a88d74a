/**
 * The leases a worker failed to drop at the end of a run or command (the store refused the
 * release): dropped at the worker's next renewal instead, before it renews the others, and at every
 * tick after while refused, the worker idle or not.
 *
 * A worker renews every lease it holds in one statement (`Journal.renew` by owner). Without this, a
 * saga whose run ended while the store was failing (left running, for `Recovery`) kept its lease
 * renewed for as long as the worker stayed busy with other sagas: no worker could recover it, this
 * one's own `Recovery` neither.
 */
import * as Effect from "effect/Effect"
import type { Journal } from "../../Journal.js"
import type { makeKeyedLock } from "../util/keyedLock.js"

type Release = Journal["Type"]["release"]

/**
 * `journal` remembering the sagas whose lease it failed to release (forgetting one once released),
 * `anyUnreleased`, whether it remembers any, and `dropUnreleased`, which releases them again, each
 * only while no run or command of this worker holds the saga's lock (one that does holds its lease
 * anew, and releases it when it ends).
 */
export const rememberingUnreleased = <J extends { readonly release: Release }>(
  store: J,
  owner: string,
  locks: ReturnType<typeof makeKeyedLock>
) => {
  const sagas = new Set<string>()
  const journal: J = {
    ...store,
    release: (by, sagaId) =>
      sagaId === undefined
        ? store.release(by, sagaId)
        : Effect.tapBoth(store.release(by, sagaId), {
            onFailure: () => Effect.sync(() => sagas.add(sagaId)),
            onSuccess: () => Effect.sync(() => sagas.delete(sagaId))
          })
  }
  /** Releases again the leases `journal` failed to release; one refused again waits for the next call. */
  const dropUnreleased: Effect.Effect<void> = Effect.suspend(() =>
    Effect.forEach(Array.from(sagas), (sagaId) => locks.ifIdle(sagaId, Effect.ignore(journal.release(owner, sagaId))), {
      discard: true
    })
  )
  const anyUnreleased = (): boolean => sagas.size > 0
  return { journal, anyUnreleased, dropUnreleased }
}
