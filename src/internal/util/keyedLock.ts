import * as Effect from "effect/Effect"
import { Mutex } from "./mutex.js"

/** One mutex per key, dropped when nobody holds or waits for it. */
export const makeKeyedLock = () => {
  const locks = new Map<string, Mutex>()
  const lockOf = (key: string) => {
    let lock = locks.get(key)
    if (lock === undefined) {
      lock = new Mutex()
      locks.set(key, lock)
    }
    return lock
  }
  const drop = (key: string, lock: Mutex) => {
    if (lock.idle && locks.get(key) === lock) locks.delete(key)
  }
  return {
    /** How many keys have a lock now: held, or waited for. */
    size: (): number => locks.size,
    /** Runs `effect` holding `key`'s lock if nobody holds it or waits for it now; otherwise nothing. */
    ifIdle: <E, R>(key: string, effect: Effect.Effect<void, E, R>): Effect.Effect<void, E, R> =>
      Effect.suspend(() => {
        const lock = lockOf(key)
        if (!lock.tryLock()) return Effect.void
        return Effect.ensuring(
          effect,
          Effect.sync(() => {
            lock.unlock()
            drop(key, lock)
          })
        )
      }),
    /** Runs `effect` holding `key`'s lock (see `Mutex.withLock`). */
    withLock: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.suspend(() => {
        const lock = lockOf(key)
        return Effect.ensuring(
          lock.withLock(effect),
          Effect.sync(() => drop(key, lock))
        )
      }),
    /**
     * Runs `effect` holding `key`'s lock, for a caller that masked interruption already: `effect`
     * runs as masked, while waiting for the lock is as interruptible as `restore` makes it (the
     * `restore` of the caller's mask: the caller's own interruptibility). A waiter interrupted leaves
     * the line; `effect` then does not run.
     */
    withLockMasked: <A, E, R>(
      key: string,
      effect: Effect.Effect<A, E, R>,
      restore: <X, Y, Z>(wait: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>
    ): Effect.Effect<A, E, R> =>
      Effect.suspend(() => {
        const lock = lockOf(key)
        const released = <X>(exit: X) => {
          drop(key, lock)
          return exit
        }
        if (!lock.tryLock()) {
          const held = Effect.ensuring(
            effect,
            Effect.sync(() => lock.unlock())
          )
          return Effect.flatMap(Effect.exit(Effect.zipRight(restore(lock.lock()), held)), released)
        }
        return Effect.matchCauseEffect(effect, {
          onFailure: (cause) => {
            lock.unlock()
            return released(Effect.failCause(cause))
          },
          onSuccess: (value) => {
            lock.unlock()
            return released(Effect.succeed(value))
          }
        })
      })
  }
}
