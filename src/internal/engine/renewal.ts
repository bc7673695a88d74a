import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"

/**
 * Renews a worker's leases every `every` while something holds them. The renewing fiber is
 * started by the first holder and stops itself at the first tick that finds no holder and nothing
 * `left` to do (it never renews then), so that sagas run one after another share one fiber instead
 * of starting one each, and an idle worker has no timer running after one tick (a test that moves
 * its `TestClock` years ahead is not woken every few seconds of them). A fiber that died (`renew`
 * should catch everything) is not taken for a running one: another starts at once while holders,
 * or something left, remain.
 *
 * NOTE: call it from the fiber that builds the worker (its layer). The renewing fiber is forked
 * from that fiber's runtime, not from the saga that happens to start it: a fiber forked from a
 * saga's fiber keeps that fiber, its context and its span (and so its result) reachable for as long
 * as it runs, which for a busy worker is the life of the process.
 */
export const makeRenewal = (
  renew: Effect.Effect<void>,
  every: Duration.Duration,
  scope: Scope.Scope,
  left: Left = nothingLeft
) => {
  const fork = Runtime.runFork(workerRuntime())
  let holders = 0
  /** The renewing fiber's loop now, if one runs: a loop that ends, however, clears it if it is still its own. */
  let current: object | undefined
  /** Whether an idle loop goes on: it does while something is left; otherwise it is no longer current. */
  const goesOn = (): boolean => {
    if (left.pending()) return true
    current = undefined
    return false
  }
  // What is left is done first, busy or idle: then the others are renewed, if anything holds them.
  const tick: Effect.Effect<boolean> = Effect.sleep(every).pipe(
    Effect.zipRight(left.drop),
    Effect.zipRight(Effect.suspend(() => (holders > 0 ? Effect.as(renew, true) : Effect.sync(goesOn))))
  )
  const start = (): void => {
    const loop = {}
    current = loop
    fork(run(loop), { scope })
  }
  // A loop that died (`renew` should not) is no longer current, and one starts again while holders
  // or something left remain; one interrupted (the worker's scope closing) is not started again.
  const run = (loop: object): Effect.Effect<boolean> =>
    Effect.onExit(Effect.interruptible(Effect.repeat(tick, { while: (more) => more })), (exit) =>
      Effect.sync(() => {
        if (current !== loop) return
        current = undefined
        if ((holders > 0 || left.pending()) && !Exit.isInterrupted(exit)) start()
      })
    )

  /** Counts one more holder, starting the renewing fiber if none runs. Pair it with `release`. */
  const acquire = Effect.sync(() => {
    holders++
    if (current === undefined) start()
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

/**
 * What a worker still has to do at its ticks, busy or idle: the leases it failed to drop
 * (unreleased.ts). Something becomes left only while a holder is counted (a run or command fails to
 * release its lease before it ends), so a loop is running then: nothing else needs to start one.
 */
export interface Left {
  /** Whether anything is left. */
  readonly pending: () => boolean
  /** Does it, or some of it (what it could not do stays pending). */
  readonly drop: Effect.Effect<void>
}

const nothingLeft: Left = { pending: () => false, drop: Effect.void }

/** The runtime of the fiber calling this: its services, clock and tracer, without a saga's. */
const workerRuntime = (): Runtime.Runtime<never> => {
  const fiber = Option.getOrThrowWith(
    Fiber.getCurrentFiber(),
    () => new Error("effect-saga: a worker's lease renewal is made by the fiber building the worker")
  )
  return Runtime.make({
    context: fiber.currentContext,
    fiberRefs: fiber.getFiberRefs(),
    runtimeFlags: Runtime.defaultRuntimeFlags
  })
}
