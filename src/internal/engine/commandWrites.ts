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
  written: number
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
  Effect.suspend(() => {
    const tally: Tally = { written: 0 }
    return Effect.map(Effect.locally(commands, currentTally, tally), (value) => ({ value, written: tally.written }))
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
        tally.written += writer.view.position.revision - from
      })
    )
  })
