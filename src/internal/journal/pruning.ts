/**
 * What `prune` deletes, the same on every store: the sagas finished before the cutoff, and an
 * explicit undo's run only with its saga. A run outliving its saga would answer for a new saga
 * that reuses the id; a run pruned before its saga would let the effect be undone again.
 */
import * as Effect from "effect/Effect"
import type { StepAddress } from "./ids.js"
import { addressesOf, effectIdOfRun, runIdOf, stepKey } from "./ids.js"

/** An explicit undo's run of one of a saga's journaled steps. */
export interface RunOfSaga {
  readonly sagaId: string
  readonly runId: string
  /** Finished by its row's status and by its journal's last saga-level entry alike. */
  readonly finished: boolean
}

/** What a store reads and deletes for `prune`, all within one transaction. */
export interface Pruning<E> {
  /** Sagas and runs alike that are finished (row and journal) and were last updated before the cutoff. */
  readonly finishedBefore: Effect.Effect<ReadonlyArray<string>, E>
  /** The runs that exist of the steps these sagas journaled. */
  readonly runsOf: (sagaIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<RunOfSaga>, E>
  /** Those of `addresses` whose saga exists and journaled that step. */
  readonly journaled: (addresses: ReadonlyArray<StepAddress>) => Effect.Effect<ReadonlyArray<StepAddress>, E>
  /** Deletes these sagas and runs with their entries. */
  readonly remove: (sagaIds: ReadonlyArray<string>) => Effect.Effect<void, E>
}

/**
 * Deletes the sagas finished before the cutoff with their runs (finished too, whatever their update
 * time), and returns every id deleted. A saga with a run still open stays, and its runs with it. A
 * run goes only when no saga left journaled the step it undoes: alone, only once its saga is gone
 * (pruned before runs went with their sagas) and it is finished before the cutoff itself.
 */
export const prune = <E>(store: Pruning<E>, options?: { readonly dryRun?: boolean }): Effect.Effect<Array<string>, E> =>
  Effect.gen(function* () {
    const candidates = yield* store.finishedBefore
    const sagas = candidates.filter((id) => effectIdOfRun(id) === undefined)
    const runs = yield* store.runsOf(sagas)
    const held = new Set(runs.filter((run) => !run.finished).map((run) => run.sagaId))
    const deleted = new Set(sagas.filter((sagaId) => !held.has(sagaId)))
    const runIds = new Set([
      ...runs.filter((run) => deleted.has(run.sagaId)).map((run) => run.runId),
      ...candidates.filter((id) => effectIdOfRun(id) !== undefined)
    ])
    // A saga id may hold a `/`: every saga a run's effect id may name is asked, but the ones going now.
    const asked = Array.from(runIds).flatMap((runId) =>
      addressesOf(effectIdOfRun(runId)!).filter((address) => !deleted.has(address.sagaId))
    )
    const owned = new Set(
      (yield* store.journaled(asked)).map((address) => runIdOf(stepKey(address.sagaId, address.stepId)))
    )
    const pruned = [...deleted, ...Array.from(runIds).filter((runId) => !owned.has(runId))]
    if (options?.dryRun !== true) yield* store.remove(pruned)
    return pruned
  })
