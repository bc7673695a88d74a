/**
 * What is left of a saga whose compensation failed, once nobody drives it: one decision for
 * `effect-saga show`'s `next:` lines and the console's saga page, each saying it in its own words.
 * Its compensation already ran, so a resume does not go on: a compensation again runs the undos it
 * could not (an undo `unavailable`, a step resolved applied since) and journals a new report; what
 * an undo left live is undone by hand (effect-saga never runs a settled undo again); with neither,
 * and no step whose outcome is unknown (a step resolved not applied since the report), nothing is
 * left dirty: a compensation again journals a new report and the saga ends `compensated`.
 *
 * @since 0.5.0
 */
import type { SagaRecord } from "../../Journal.js"
import * as Lease from "./lease.js"

/**
 * What the decision reads of a step: a `Saga.StepStatus` (its `undo` `undefined` when none was asked
 * for) or the HTTP API's copy of one (`null` then).
 *
 * @since 0.5.0
 * @category models
 */
export interface Step {
  readonly stepId: string
  readonly state: string
  readonly undo: string | null | undefined
}

/**
 * A step whose undo settled with something left live (`failed`, `partial` or `unknown`).
 *
 * @since 0.5.0
 * @category models
 */
export interface ByHand {
  readonly stepId: string
  readonly undo: string
}

/**
 * What is left: `undoable`, the steps whose undo a compensation again runs, in the order it runs
 * them (reverse order of execution); `byHand`, what an undo left live; `clean`, neither and no step
 * whose outcome is unknown, so a compensation again ends the saga `compensated`.
 *
 * @since 0.5.0
 * @category models
 */
export interface Left {
  readonly undoable: ReadonlyArray<string>
  readonly byHand: ReadonlyArray<ByHand>
  readonly clean: boolean
}

/** Undos that settled with something left live: effect-saga never runs a settled undo again. */
const settledLive: ReadonlySet<string> = new Set(["failed", "partial", "unknown"])

const notAsked = (undo: string | null | undefined): boolean => undo === undefined || undo === null

/**
 * What is left of a saga `compensation_failed` that no live lease holds at `now` (epoch
 * milliseconds); `undefined` for any other saga (a live lease's worker is still at it). The caller
 * leaves out what it must not advise on: a tampered saga, the run of an explicit undo.
 *
 * @since 0.5.0
 * @category advice
 */
export const of = (
  row: Pick<SagaRecord, "status" | "lease">,
  steps: ReadonlyArray<Step>,
  now: number
): Left | undefined => {
  if (row.status !== "compensation_failed" || Lease.liveLease(row, now) !== undefined) return undefined
  const undoable = steps
    .filter((step) => step.state === "executed" && (notAsked(step.undo) || step.undo === "unavailable"))
    .map((step) => step.stepId)
    .reverse()
  const byHand = steps.flatMap((step) =>
    step.undo !== undefined && step.undo !== null && settledLive.has(step.undo)
      ? [{ stepId: step.stepId, undo: step.undo }]
      : []
  )
  const clean = undoable.length === 0 && byHand.length === 0 && !steps.some((step) => step.state === "unknown")
  return { undoable, byHand, clean }
}

/**
 * What the undos left live, as both surfaces name them: `this undo left live: STEP (undo failed, key
 * SAGA/STEP/undo)`, or `these undos left live: …` for several (the key is the undo's idempotency key,
 * for the provider).
 *
 * @since 0.5.0
 * @category advice
 */
export const leftLive = (sagaId: string, byHand: ReadonlyArray<ByHand>): string =>
  `${byHand.length === 1 ? "this undo" : "these undos"} left live: ${byHand
    .map((step) => `${step.stepId} (undo ${step.undo}, key ${sagaId}/${step.stepId}/undo)`)
    .join(", ")}`
