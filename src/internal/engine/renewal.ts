import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/**
 * Renews a worker's leases every `every` while something holds them. The renewing fiber is
 * started by the first holder and stops itself at the first tick that finds no holder (it never
 * renews then), so that sagas run one after another share one fiber instead of starting one each,
 * and an idle worker has no timer running after one tick (a test that moves its `TestClock` years
 * ahead is not woken every few seconds of them).
 */
export const makeRenewal = (renew: Effect.Effect<void>, every: Duration.Duration, scope: Scope.Scope) => {
  let holders = 0
  let running = false
  const tick: Effect.Effect<boolean> = Effect.zipRight(
    Effect.sleep(every),
    Effect.suspend(() => {
      if (holders > 0) return Effect.as(renew, true)
      running = false
      return Effect.succeed(false)
    })
  )
  const loop = Effect.repeat(tick, { while: (more) => more })

  /** Counts one more holder, starting the renewing fiber if none runs. Pair it with `release`. */
  const acquire = Effect.suspend(() => {
    holders++
    if (running) return Effect.void
    running = true
    return Effect.asVoid(Effect.forkIn(Effect.interruptible(loop), scope))
  })

  /** Counts one holder less. */
  const release = (): void => {
    holders--
  }

  /** Keeps the leases renewed while `effect` runs. */
  const renewing = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.acquireUseRelease(
      acquire,
      () => effect,
      () => Effect.sync(release)
    )

  return { acquire, release, renewing }
}
