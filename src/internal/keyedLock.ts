import * as Effect from "effect/Effect"

/** One mutex per key, dropped when nobody holds or waits for it. */
export const makeKeyedLock = () => {
  const locks = new Map<string, { readonly semaphore: Effect.Semaphore; users: number }>()
  return <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      let lock = locks.get(key)
      if (lock === undefined) {
        lock = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 }
        locks.set(key, lock)
      }
      const held = lock
      held.users++
      return held.semaphore
        .withPermits(1)(effect)
        .pipe(
          Effect.ensuring(
            Effect.sync(() => {
              if (--held.users === 0) locks.delete(key)
            })
          )
        )
    })
}
