/**
 * What a run or an operator's command wrote itself. A write refused after some of its own names
 * them (a `ConcurrencyConflict` or `LeaseHeld` otherwise says nothing was written): a run's
 * (`namingWrites`, once around the whole run in saga.ts) as a command's. A caller that must tell
 * its commands' writes from another's counts them (`Saga.withWrites`): the saga's revision after
 * the command cannot, when the same command was sent twice at once (the second finds the first's
 * write, and writes nothing).
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { ConcurrencyConflict, LeaseHeld } from "../../Journal.js"
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

/** The entries written by the commands a caller counts (see `withWrites`). */
interface Tally {
  /** The revisions written, in the order they were (each command's in a row). */
  readonly revisions: Array<number>
}

/** The tally of the caller counting the commands it runs, if one is. */
const currentTally: FiberRef.FiberRef<Tally | undefined> = FiberRef.unsafeMake<Tally | undefined>(undefined)

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
  Effect.flatMap(FiberRef.get(currentTally), (outer) => {
    const tally: Tally = { revisions: [] }
    // A caller counting around this one counts these writes too.
    const counted = Effect.ensuring(
      Effect.locally(commands, currentTally, tally),
      Effect.sync(() => outer?.revisions.push(...tally.revisions))
    )
    return Effect.map(counted, (value) => ({ value, revisions: tally.revisions }))
  })

/**
 * Runs an operator's command on `writer`, which holds the saga's lock and lease: what the writer's
 * position moved by meanwhile, this command appended. A write refused after some of them names
 * them, and they are added to the tally of whoever counts.
 */
export const ownWrites = <A, E, R>(writer: Writer, command: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(FiberRef.get(currentTally), (tally) => {
    const from = writer.view.position.revision
    const named = Effect.mapError(command, (error) => naming(error, writer.view.position.revision - from))
    if (tally === undefined) return named
    return Effect.ensuring(
      named,
      Effect.sync(() => {
        for (let revision = from + 1; revision <= writer.view.position.revision; revision++) {
          tally.revisions.push(revision)
        }
      })
    )
  })

/**
 * Runs `effect`, which writes with `writer` (a run, or an explicit undo's run): a write refused
 * after some of its own names them. Not counted for `withWrites`, which counts `ownWrites` only.
 */
export const namingWrites = <A, E, R>(writer: Writer, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const before = writer.view.position.revision
    return Effect.mapError(effect, (error) => naming(error, writer.view.position.revision - before))
  })

/** Whether a refused write's error says its caller had written entries before it. */
export const wroteBefore = (error: { readonly written?: number | undefined }): boolean =>
  error.written !== undefined && error.written > 0
