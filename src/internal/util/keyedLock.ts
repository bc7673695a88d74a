import * as Effect from "effect/Effect"
import { Mutex } from "./mutex.js"

/** One mutex per key, dropped when nobody holds or waits for it. */
export const makeKeyedLock = () => {
  const locks = new Map<string, Mutex>()
  return <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      let lock = locks.get(key)
      if (lock === undefined) {
        lock = new Mutex()
        locks.set(key, lock)
      }
      const held = lock
      return Effect.ensuring(
        held.withLock(effect),
        Effect.sync(() => {
          if (held.idle && locks.get(key) === held) locks.delete(key)
        })
      )
    })
}
