import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"

/**
 * Runs `effect` with the FiberRef values of `refs` (read from another fiber), as a fiber forked
 * there would see them (`FiberRefs.forkAs`: a fork scope or an interruption cause is not carried
 * over), and restores the caller's values after it. The context is the exception: it stays the
 * caller's own (a caller that wants another provides it); so are the runtime flags, which are the
 * running fiber's own (interruptibility), not values to carry.
 */
export const withFiberRefsOf = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  refs: FiberRefs.FiberRefs
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) => {
    const forked = FiberRefs.forkAs(refs, fiber.id())
    let wrapped = effect
    for (const ref of FiberRefs.fiberRefs(forked)) {
      if (ref === FiberRef.currentContext || ref === FiberRef.currentRuntimeFlags) continue
      const value = FiberRefs.getOrDefault(forked, ref)
      if (value !== fiber.getFiberRef(ref)) wrapped = Effect.locally(wrapped, ref, value)
    }
    return wrapped
  })

/**
 * The FiberRef values `fiber` holds now, kept as a reference: they are immutable, so the reference
 * is a snapshot, and the calls a fiber makes under the same values share it. `getFiberRefs()` would
 * first store the fiber's runtime flags in them, which copies every value each time (≈ 1.2 KB a step
 * kept until a long run ends); `withFiberRefsOf` does not carry those flags. The fiber's own field is
 * read where this version of Effect has it, `getFiberRefs()` otherwise.
 */
export const fiberRefsNow = (fiber: Fiber.RuntimeFiber<unknown, unknown>): FiberRefs.FiberRefs =>
  (fiber as unknown as { readonly _fiberRefs?: FiberRefs.FiberRefs })._fiberRefs ?? fiber.getFiberRefs()

/** The values of a `FiberRefs`, by ref, where this version of Effect keeps them so (`locals`). */
const localsOf = (refs: FiberRefs.FiberRefs): ReadonlyMap<FiberRef.FiberRef<unknown>, unknown> | undefined =>
  (refs as unknown as { readonly locals?: ReadonlyMap<FiberRef.FiberRef<unknown>, unknown> }).locals

/**
 * `previous` where it holds the same values as `refs` but for the context and the runtime flags
 * (which `withFiberRefsOf` does not carry over), else `refs`: a run's steps keep one set of values
 * between them instead of one each. Setting one ref copies the fiber's refs and shares every other
 * ref's values, so "the same" is each value's identity; a step's span enters and leaves the fiber's
 * context, and each step's refs would otherwise be a copy of their own (≈ 0.5 KB, kept for as long
 * as the run is in flight: docs/performance.md, the working set). Where Effect keeps its refs
 * otherwise, `refs`.
 */
export const sharedFiberRefs = (
  refs: FiberRefs.FiberRefs,
  previous: FiberRefs.FiberRefs | undefined
): FiberRefs.FiberRefs => {
  if (previous === undefined || previous === refs) return refs
  const now = localsOf(refs)
  const before = localsOf(previous)
  if (now === undefined || before === undefined || now.size !== before.size) return refs
  for (const [ref, values] of now) {
    if (ref === FiberRef.currentContext || ref === FiberRef.currentRuntimeFlags) continue
    if (before.get(ref) !== values) return refs
  }
  return previous
}
