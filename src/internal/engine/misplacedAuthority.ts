/**
 * An `Authority` the `Saga` service would never ask. The service reads its `Authority` once, when
 * `Saga.layer` is built (none: `Authority.allowAll`); one provided to a call instead (with
 * `Effect.provide` on the call, or merged beside the layer with `Layer.merge` rather than provided
 * to it) is not seen, and the calls it was meant to guard would be allowed by another. So a call
 * whose context holds an `Authority` other than the layer's dies, before anything is read, run or
 * written, naming the fix. The same `Authority` in both (`Layer.provideMerge`) is no mistake, nor
 * `Authority.allowAll` (`Authority.layerAllowAll`) provided to a call of a layer built without one.
 */
import * as Context from "effect/Context"
import { Authority, allowAll } from "../../Authority.js"

/** What the call's context holds that the service would not ask, if anything: the defect's message. */
export const misplaced = (
  built: Authority["Type"] | undefined,
  context: Context.Context<never>
): string | undefined => {
  const provided = Context.getOption(context, Authority)
  if (provided._tag === "None" || provided.value === (built ?? allowAll)) return undefined
  const fix =
    "provide it to the layer instead: Saga.layer.pipe(Layer.provide(YourAuthority)), or Layer.provideMerge to keep it in the context too (docs/security.md, Who may do what)"
  return built === undefined
    ? `effect-saga: an Authority is provided to this call, but Saga.layer was built without one (so it allows everyone, Authority.allowAll): the Saga service reads its Authority once, when its layer is built, and would never ask this one; nothing was read, run or written: ${fix}`
    : `effect-saga: an Authority is provided to this call that is not the one Saga.layer was built with (the one it asks): the Saga service reads its Authority once, when its layer is built, and would never ask this one; nothing was read, run or written: ${fix}`
}
