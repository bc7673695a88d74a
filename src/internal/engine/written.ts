/**
 * What a run or an operator's command wrote itself. A write refused after some of its own names
 * them (a `ConcurrencyConflict` or `LeaseHeld` otherwise says nothing was written): a run's
 * (`namingWrites`, once around the whole run in saga.ts) as a command's. A caller that must tell
 * its commands' writes from another's counts them (`Saga.withWrites`), or is told them however the
 * commands end (`Saga.onWritten`: an interrupted one too): the saga's revision after the command
 * cannot, when the same command was sent twice at once (the second finds the first's write, and
 * writes nothing).
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { dual } from "effect/Function"
import { ConcurrencyConflict, LeaseHeld } from "../../Journal.js"
import type { WrittenEntry } from "../../Saga.js"
import type { Writer } from "../journal/writer.js"

/**
 * `error`, naming the `written` entries the run or command had journaled before the write it
 * refuses: a `ConcurrencyConflict` or `LeaseHeld` otherwise says that nothing was written.
 */
const naming = <E>(error: E, written: number): E => {
  if (written <= 0) return error
  if (error instanceof ConcurrencyConflict) {
    const { actualRevision, expectedRevision, sagaId } = error
    return new ConcurrencyConflict({ sagaId, expectedRevision, actualRevision, written }) as E
  }
  if (error instanceof LeaseHeld) {
    const { expiresAt, owner, sagaId } = error
    return new LeaseHeld({ sagaId, owner, expiresAt, written }) as E
  }
  return error
}

/** The entries written by the commands a caller counts (see `withWrites`, `onWritten`). */
interface Tally {
  /** The entries written, in the order they were (each command's in a row). */
  readonly written: Array<WrittenEntry>
}

/** The tallies of the callers counting the commands they run, innermost last: each counts every write. */
const currentTallies: FiberRef.FiberRef<ReadonlyArray<Tally>> = FiberRef.unsafeMake<ReadonlyArray<Tally>>([])

/** Runs `commands` with `tally` counting their writes, beside any caller's around it. */
const counting = <A, E, R>(commands: Effect.Effect<A, E, R>, tally: Tally): Effect.Effect<A, E, R> =>
  Effect.locallyWith(commands, currentTallies, (outer) => [...outer, tally])

/**
 * Runs `commands` and answers their value with how many journal entries the operator's commands
 * among them wrote themselves (see `Saga.withWrites`).
 */
export const withWrites = <A, E, R>(
  commands: Effect.Effect<A, E, R>
): Effect.Effect<{ readonly value: A; readonly written: number }, E, R> =>
  Effect.map(withWrittenRevisions(commands), ({ revisions, value }) => ({ value, written: revisions.length }))

/**
 * Runs `commands` and answers their value with the revisions of the journal entries the operator's
 * commands among them wrote themselves (none when each found its work done), for a caller that
 * must say which of the entries after it are its own.
 */
export const withWrittenRevisions = <A, E, R>(
  commands: Effect.Effect<A, E, R>
): Effect.Effect<{ readonly value: A; readonly revisions: ReadonlyArray<number> }, E, R> =>
  Effect.suspend(() => {
    const tally: Tally = { written: [] }
    return Effect.map(counting(commands, tally), (value) => ({
      value,
      revisions: tally.written.map((entry) => entry.revision)
    }))
  })

/**
 * Runs `commands`, then `written` with the journal entries the operator's commands among them wrote
 * themselves, however they ended: done, failed or interrupted (see `Saga.onWritten`).
 */
export const onWritten: {
  <X, R2>(
    written: (entries: ReadonlyArray<WrittenEntry>) => Effect.Effect<X, never, R2>
  ): <A, E, R>(commands: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R | R2>
  <A, E, R, X, R2>(
    commands: Effect.Effect<A, E, R>,
    written: (entries: ReadonlyArray<WrittenEntry>) => Effect.Effect<X, never, R2>
  ): Effect.Effect<A, E, R | R2>
} = dual(
  2,
  <A, E, R, X, R2>(
    commands: Effect.Effect<A, E, R>,
    written: (entries: ReadonlyArray<WrittenEntry>) => Effect.Effect<X, never, R2>
  ): Effect.Effect<A, E, R | R2> =>
    Effect.suspend(() => {
      const tally: Tally = { written: [] }
      return Effect.ensuring(
        counting(commands, tally),
        Effect.suspend(() => written(tally.written))
      )
    })
)

/**
 * Runs an operator's command on `writer`, which holds the saga's (or an explicit undo's run's) lock
 * and lease: what the writer's position moved by meanwhile, this command appended. A write refused
 * after some of them names them, and they are added to the tally of whoever counts.
 */
export const ownWrites = <A, E, R>(writer: Writer, command: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(FiberRef.get(currentTallies), (tallies) => {
    const from = writer.view.position.revision
    const named = Effect.mapError(command, (error) => naming(error, writer.view.position.revision - from))
    if (tallies.length === 0) return named
    return Effect.ensuring(
      named,
      Effect.sync(() => {
        for (let revision = from + 1; revision <= writer.view.position.revision; revision++) {
          for (const tally of tallies) tally.written.push({ sagaId: writer.sagaId, revision })
        }
      })
    )
  })

/**
 * Runs `effect`, a run that writes with `writer`: a write refused after some of its own names
 * them. Not counted for `withWrites`, which counts `ownWrites` only.
 */
export const namingWrites = <A, E, R>(writer: Writer, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const before = writer.view.position.revision
    return Effect.mapError(effect, (error) => naming(error, writer.view.position.revision - before))
  })

/** Whether a refused write's error says its caller had written entries before it. */
export const wroteBefore = (error: { readonly written?: number | undefined }): boolean =>
  error.written !== undefined && error.written > 0
