/**
 * The time of one crash point: a `TestClock` nothing else moves, so the explorer moves it itself
 * whenever a process waits on it (a retry's delay, a tool's timeout), straight to the next instant
 * something sleeps until. Retries and timeouts fire in order, and no wall-clock time passes.
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as TestClock from "effect/TestClock"
import { DriveProblem } from "./drive.js"

/** How far the explorer moves one process's clock at most. */
export const horizon = Duration.days(1)

/**
 * How long, in real time, the explorer waits for a process that waits on something its clock does
 * not bring within `horizon` (a tool's real request, or an answer that never comes) and writes
 * nothing and calls no tool meanwhile.
 */
const patience = Duration.seconds(10)

/** Waits until the life ended, or until it waits (moving the clock by nothing waits for that). */
const settled = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Effect.raceFirst(Effect.asSome(Fiber.await(fiber)), Effect.as(TestClock.adjust(0), Option.none()))

/**
 * Runs `life` to its end, moving the clock to the earliest pending sleep each time it waits, as far
 * as `horizon` from its start. A life that waits on nothing the clock brings within it, and makes
 * no `progress` (its journal writes and tool calls) for `patience`, is interrupted and fails.
 */
export const advancing = <A, E, R>(
  life: Effect.Effect<A, E, R>,
  progress: () => number
): Effect.Effect<A, E | DriveProblem, R> =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(life)
    const end = (yield* Clock.currentTimeMillis) + Duration.toMillis(horizon)
    let made = progress()
    let idleSince = Date.now()
    while (true) {
      const ended = yield* settled(fiber)
      if (Option.isSome(ended)) return yield* ended.value
      const next = Chunk.findFirst(Chunk.sort(yield* TestClock.sleeps(), Order.number), (at) => at <= end)
      if (Option.isSome(next) || progress() !== made) {
        made = progress()
        idleSince = Date.now()
        if (Option.isSome(next)) yield* TestClock.adjust(next.value - (yield* Clock.currentTimeMillis))
      } else if (Date.now() - idleSince > Duration.toMillis(patience)) {
        yield* Fiber.interrupt(fiber)
        return yield* Effect.fail(
          new DriveProblem(
            `it waited ${Duration.format(patience)} (real time) on something its clock does not bring within a day, writing nothing: a tool that never answers, with no timeout?`
          )
        )
      }
    }
  })
