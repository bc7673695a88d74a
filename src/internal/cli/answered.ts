/**
 * When a command has answered: its body ended on its own (succeeded, or failed with what it says),
 * and what is left is closing what it opened (a `--register` module's layer, the store). A signal
 * then no longer interrupts it: interrupted there, a command that printed its whole answer (an
 * export, `imported saga …`) would exit 130 and say it was interrupted.
 *
 * @since 0.5.0
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"

/**
 * What the process running the command line (`app.main`) is told once the command has answered;
 * nothing by default (a command line run in a program of your own).
 *
 * @since 0.5.0
 * @category answering
 */
export const onAnswered: FiberRef.FiberRef<() => void> = FiberRef.unsafeMake<() => void>(() => {})

/**
 * Runs a command's body, and says it answered once it ended, unless it was interrupted.
 *
 * @since 0.5.0
 * @category answering
 */
export const answering = <A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.onExit(body, (exit) =>
    Exit.isInterrupted(exit) ? Effect.void : Effect.flatMap(FiberRef.get(onAnswered), (told) => Effect.sync(told))
  )
