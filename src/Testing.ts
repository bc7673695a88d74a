/**
 * Test helpers: the in-memory layers in one, and fault injection.
 *
 * @since 0.1.0
 */

import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Approval from "./Approval.js"
import type { FaultSite } from "./internal/engine/faults.js"
import { Faults } from "./internal/engine/faults.js"
import * as Journal from "./Journal.js"
import type { KeyError } from "./Keys.js"
import * as Outcome from "./Outcome.js"
import * as Saga from "./Saga.js"

/**
 * What an injected fault does:
 * `fail` fails the call before it runs (`Outcome.Failed`: proved not applied);
 * `unknown` runs the call, then loses its answer (`Outcome.Unknown`);
 * `interrupt` interrupts the call before it runs, as a crash would.
 *
 * @since 0.1.0
 * @category models
 */
export type Fault = "fail" | "unknown" | "interrupt"

/**
 * One fault: which tool, its forward call or its undo, at which call (1-based, counted per tool and
 * site), and what happens.
 *
 * @since 0.1.0
 * @category models
 */
export interface FaultPlan {
  readonly tool: string
  readonly on?: FaultSite | undefined
  readonly at?: number | undefined
  readonly fault: Fault
}

const inject = (fault: Fault, toolName: string, site: FaultSite, call: Effect.Effect<any, any, any>) => {
  switch (fault) {
    case "fail":
      return Effect.fail(Outcome.failed(`injected fault: ${toolName} ${site} failed`))
    case "unknown":
      return Effect.zipRight(call, Effect.fail(Outcome.unknown(`injected fault: ${toolName} ${site} lost its answer`)))
    case "interrupt":
      return Effect.interrupt
  }
}

/**
 * A layer that injects the planned faults into the tools and undos of sagas run where it is provided.
 *
 * @since 0.1.0
 * @category fault injection
 */
export const faults = (...plans: ReadonlyArray<FaultPlan>): Layer.Layer<Faults> =>
  Layer.sync(Faults, () => {
    const calls = new Map<string, number>()
    return Faults.of({
      around: (toolName, site, call) =>
        Effect.suspend(() => {
          const key = `${toolName}/${site}`
          const count = (calls.get(key) ?? 0) + 1
          calls.set(key, count)
          const plan = plans.find(
            (plan) => plan.tool === toolName && (plan.on ?? "execute") === site && (plan.at ?? 1) === count
          )
          return plan === undefined ? call : inject(plan.fault, toolName, site, call)
        })
    })
  })

/**
 * The service behind `faults`, for tests that build their own.
 *
 * @since 0.1.0
 * @category fault injection
 */
export { Faults }

/**
 * `Saga.layer` over `Journal.layerMemory` and `Approval.layerMemory`, with both services exposed so
 * tests can read the journal and decide approvals.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Saga.Saga | Journal.Journal | Approval.Approval, KeyError> = Saga.layer.pipe(
  Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory))
)

/**
 * The same as `layer` with a different approval layer (`Approval.layerAutoApprove`, `layerRejectAll`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (
  approval: Layer.Layer<Approval.Approval>
): Layer.Layer<Saga.Saga | Journal.Journal | Approval.Approval, KeyError> =>
  Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, approval)))
