import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"

/**
 * A mutual-exclusion lock that costs next to nothing when nobody else holds it. Waiters are
 * served in arrival order; a waiter interrupted before its turn leaves the queue.
 */
export class Mutex {
  private held = false
  /** Made for the first waiter: a mutex is made for every saga in flight, twice, and most never wait. */
  private waiters: Array<Deferred.Deferred<void>> | undefined

  get idle(): boolean {
    return !this.held && (this.waiters === undefined || this.waiters.length === 0)
  }

  /** Takes the lock if nobody holds it or waits for it; `unlock` gives it back. */
  tryLock(): boolean {
    if (!this.idle) return false
    this.held = true
    return true
  }

  /** Gives the lock to the next waiter, or frees it. */
  unlock(): void {
    const next = this.waiters?.shift()
    if (next === undefined) this.held = false
    else Deferred.unsafeDone(next, Effect.void)
  }

  /** `unlock`, as an Effect (made when asked for: a mutex is made for every saga in flight, twice). */
  private get release(): Effect.Effect<void> {
    return Effect.sync(() => this.unlock())
  }

  /**
   * Takes the lock, waiting in line if need be; `unlock` gives it back. A waiter interrupted before
   * its turn leaves the line (or, handed the lock just then, gives it on).
   */
  lock(): Effect.Effect<void> {
    return Effect.uninterruptibleMask((restore) => {
      if (!this.held) {
        this.held = true
        return Effect.void
      }
      const turn = Deferred.unsafeMake<void>(FiberId.none)
      this.waiters ??= []
      this.waiters.push(turn)
      return Effect.catchAllCause(restore(Deferred.await(turn)), (cause) =>
        Effect.zipRight(
          Effect.suspend(() => {
            const index = this.waiters!.indexOf(turn)
            if (index >= 0) {
              this.waiters!.splice(index, 1)
              return Effect.void
            }
            return this.release // the lock was handed over just as this waiter was interrupted
          }),
          Effect.failCause(cause)
        )
      )
    })
  }

  withLock<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.uninterruptibleMask((restore) => {
      if (!this.held) {
        this.held = true
        return Effect.ensuring(restore(effect), this.release)
      }
      return Effect.zipRight(restore(this.lock()), Effect.ensuring(restore(effect), this.release))
    })
  }

  /**
   * Runs `effect` holding the lock, uninterruptibly: for a short critical section that must not be
   * cut half-way, such as a journal append and the view that follows it. Waiting for the lock is as
   * interruptible as the caller was: a caller in an uninterruptible region (a run writing how it
   * ended, after an interruption) waits without being interrupted. Cheaper than `withLock` when
   * nobody holds it: no finalizer to install.
   */
  withLockUninterruptible<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        if (this.held) return restore(this.withLock(Effect.uninterruptible(effect)))
        this.held = true
        return Effect.matchCauseEffect(effect, {
          onFailure: (cause) => {
            this.unlock()
            return Effect.failCause(cause)
          },
          onSuccess: (value) => {
            this.unlock()
            return Effect.succeed(value)
          }
        })
      })
    )
  }
}
