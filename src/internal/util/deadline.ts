/**
 * A call with a deadline that its caller can still interrupt.
 *
 * NOTE: Effect 3's `Effect.timeout`, `timeoutFail` and `timeoutOption` race the effect against the
 * clock uninterruptibly: a caller interrupted meanwhile (a sibling's failure in `Effect.all`, a
 * shutdown) waits for the effect to end or time out. A tool's call with a `timeout` then ran to its
 * end, its answer thrown away, where the same call without one was interrupted at once.
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** `effect`, or `onTimeout()` as its failure once `duration` has passed (`effect` is interrupted then). */
export const failAfter = <A, E, R, E2>(
  effect: Effect.Effect<A, E, R>,
  duration: Duration.DurationInput,
  onTimeout: () => E2
): Effect.Effect<A, E | E2, R> =>
  Effect.raceFirst(
    effect,
    Effect.flatMap(Effect.sleep(duration), () => Effect.fail(onTimeout()))
  )

/** `effect`'s value, or `None` once `duration` has passed (`effect` is interrupted then). */
export const noneAfter = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  duration: Duration.DurationInput
): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.raceFirst(Effect.map(effect, Option.some), Effect.as(Effect.sleep(duration), Option.none<A>()))
