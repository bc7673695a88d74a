/**
 * How an explored run logs: as its caller does. A run inherits the caller's loggers and minimum
 * level, but its clock is the explorer's `TestClock` (it starts at 1970 and jumps ahead as the
 * explorer moves it), and Effect stamps a log line with the clock of the fiber that logs it.
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Logger from "effect/Logger"

/** A logger that stamps each line by `clock` instead of the clock of the fiber that logs it. */
const stampedBy =
  (clock: Clock.Clock) =>
  <M, O>(logger: Logger.Logger<M, O>): Logger.Logger<M, O> =>
    Logger.mapInputOptions(logger, (options) => ({ ...options, date: new Date(clock.unsafeCurrentTimeMillis()) }))

/**
 * Read in the caller's fiber: what makes an explored run log through the caller's loggers, each
 * line stamped by the caller's clock, while the run keeps its own `TestClock` for everything else.
 */
export const callersLogging: Effect.Effect<<A, E, R>(run: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>> =
  Effect.map(Effect.zip(FiberRef.get(FiberRef.currentLoggers), Effect.clock), ([loggers, clock]) => {
    const stamped = HashSet.map(loggers, stampedBy(clock))
    return (run) => Effect.locally(run, FiberRef.currentLoggers, stamped)
  })
