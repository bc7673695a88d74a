/**
 * How many journal entries an operator's command wrote itself, for a caller that must tell its own
 * write from another's: the saga's revision after the command cannot, when the same command was
 * sent twice at once (the second finds the first's write, and writes nothing).
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import type { Writer } from "../journal/writer.js"

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
  Effect.suspend(() => {
    const tally: Tally = { revisions: [] }
    return Effect.map(Effect.locally(commands, currentTally, tally), (value) => ({
      value,
      revisions: tally.revisions
    }))
  })

/**
 * Runs an operator's command on `writer`, which holds the saga's lock and lease: what the writer's
 * position moved by meanwhile, this command appended. It is added to the tally of whoever counts.
 */
export const tallied = <A, E, R>(writer: Writer, command: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(FiberRef.get(currentTally), (tally) => {
    if (tally === undefined) return command
    const from = writer.view.position.revision
    return Effect.ensuring(
      command,
      Effect.sync(() => {
        for (let revision = from + 1; revision <= writer.view.position.revision; revision++) {
          tally.revisions.push(revision)
        }
      })
    )
  })
