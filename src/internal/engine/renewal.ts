import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"

/**
 * Renews a worker's leases every `every`, but only while something holds them: an idle worker
 * has no timer running (a test that moves its `TestClock` years ahead is not woken every few
 * seconds of them).
 */
export const makeRenewal = (renew: Effect.Effect<void>, every: Duration.Duration, scope: Scope.Scope) => {
  let holders = 0
  let fiber: Fiber.RuntimeFiber<never> | undefined
  const loop = Effect.forever(
    Effect.zipRight(
      Effect.sleep(every),
      Effect.suspend(() => renew)
    )
  )

  const acquire = Effect.suspend(() =>
    ++holders === 1 && fiber === undefined
      ? Effect.asVoid(
          Effect.tap(Effect.forkIn(Effect.interruptible(loop), scope), (forked) => {
            fiber = forked
          })
        )
      : Effect.void
  )

  const release = Effect.suspend(() => {
    if (--holders > 0 || fiber === undefined) return Effect.void
    const stopped = fiber
    fiber = undefined
    return Fiber.interruptFork(stopped)
  })

  /** Keeps the leases renewed while `effect` runs. */
  return <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.acquireUseRelease(
      acquire,
      () => effect,
      () => release
    )
}
