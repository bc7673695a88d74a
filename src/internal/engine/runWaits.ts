import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import { heldBy } from "./context.js"

/**
 * Which sagas' locks the nested runs of one worker wait for, by the sagas their enclosing runs hold:
 * so that a wait that would close a cycle (run `a` runs `b` inside it while run `b` runs `a` inside
 * it: each waits for the other's lock, for good) is refused instead of hanging both sagas under
 * leases their worker keeps renewing. A top-level run holds nothing while it waits: it is never
 * part of such a cycle, and costs nothing here.
 */
export class RunWaits {
  /** For each saga a run in progress holds, the sagas runs inside it wait for, and how many of them. */
  private readonly waits = new Map<string, Map<string, number>>()

  /**
   * The sagas a wait for `wanted` would lead through, from `wanted` back to a saga among `held`
   * (so that it would wait for good), by the waits of other runs; `undefined` if none.
   */
  cycle(held: ReadonlyArray<string>, wanted: string): ReadonlyArray<string> | undefined {
    const via = new Map<string, string>()
    const stack = [wanted]
    while (stack.length > 0) {
      const saga = stack.pop()!
      if (held.includes(saga)) return pathTo(saga, wanted, via)
      for (const next of this.waits.get(saga)?.keys() ?? []) {
        if (next !== wanted && !via.has(next)) {
          via.set(next, saga)
          stack.push(next)
        }
      }
    }
    return undefined
  }

  /**
   * `wait` (which waits for `sagaId`'s lock and calls `acquired` once it holds it) as a wait of the
   * runs `fiber` belongs to: one that would close a cycle with other runs' waits, so that it would
   * wait for good, is `refused` instead. Outside any run it is `wait` alone.
   */
  around<A, E, R, E2>(
    fiber: Fiber.RuntimeFiber<any, any>,
    sagaId: string,
    refused: (cycle: ReadonlyArray<string>) => Effect.Effect<never, E2>,
    wait: (acquired?: () => void) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | E2, R> {
    const held = heldBy(fiber)
    if (held.length === 0) return wait()
    const cycle = this.cycle(held, sagaId)
    if (cycle !== undefined) return refused(cycle)
    const acquired = this.waiting(held, sagaId)
    return Effect.ensuring(wait(acquired), Effect.sync(acquired))
  }

  /** `around` the fiber that runs it. */
  here<A, E, R, E2>(
    sagaId: string,
    refused: (cycle: ReadonlyArray<string>) => Effect.Effect<never, E2>,
    wait: (acquired?: () => void) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | E2, R> {
    return Effect.withFiberRuntime<A, E | E2, R>((fiber) => this.around(fiber, sagaId, refused, wait))
  }

  /** Records that a run inside the runs of `held` waits for `wanted`; the function returned ends the wait (once). */
  waiting(held: ReadonlyArray<string>, wanted: string): () => void {
    for (const saga of held) {
      const waited = this.waits.get(saga) ?? new Map<string, number>()
      waited.set(wanted, (waited.get(wanted) ?? 0) + 1)
      this.waits.set(saga, waited)
    }
    let ended = false
    return () => {
      if (ended) return
      ended = true
      for (const saga of held) this.stopWaiting(saga, wanted)
    }
  }

  private stopWaiting(saga: string, wanted: string): void {
    const waited = this.waits.get(saga)
    const count = waited?.get(wanted) ?? 0
    if (count > 1) waited!.set(wanted, count - 1)
    else waited?.delete(wanted)
    if (waited?.size === 0) this.waits.delete(saga)
  }
}

/** The sagas from `wanted` to `found`, in the order the waits lead. */
const pathTo = (found: string, wanted: string, via: ReadonlyMap<string, string>): ReadonlyArray<string> => {
  const path = [found]
  for (let saga = found; saga !== wanted; saga = via.get(saga)!) path.unshift(via.get(saga)!)
  return path
}

/** What waits for what in a cycle of runs' waits (`RunWaits.cycle`), in words. */
export const cycleInWords = (cycle: ReadonlyArray<string>): string =>
  cycle
    .slice(1)
    .map((saga, index) => `a run inside saga ${cycle[index]}'s run waits for saga ${saga}`)
    .join(", and ")
