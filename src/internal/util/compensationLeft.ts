/**
 * What is left of a saga whose compensation failed, once nobody drives it: one decision for
 * `effect-saga show`'s `next:` lines and the console's saga page, each saying it in its own words.
 * Its compensation already ran, so a resume does not go on: a compensation again runs the undos it
 * could not (an undo `unavailable`, a step resolved applied since; never a read, which has nothing to
 * undo) and journals a new report; what an undo left live (`failed`, `partial`) is undone by hand
 * (effect-saga never runs a settled undo again), and an undo that answered `unknown` is asked of the
 * provider first (it may have happened: undone again by hand, the effect would be undone twice);
 * either, once undone, is resolved as undone (`Saga.resolve` applied) so that the saga can end;
 * with none of these, and no step whose outcome is unknown that may have changed something (a step
 * resolved not applied since the report), nothing is left dirty: a compensation again journals a
 * new report and the saga ends `compensated`.
 *
 * @since 0.5.0
 */
import type { SagaRecord } from "../../Journal.js"
import { RUN_SUFFIX } from "./identifier.js"
import * as Lease from "./lease.js"
import { shellWord } from "./shellWord.js"
import { isTakenOver } from "./takenOver.js"
import { toResolve } from "./toResolve.js"

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
  /** What its undo came to, in words: says whether the outcome was taken over from an explicit undo. */
  readonly undoDetail?: string | null | undefined
  /** A read: it has no undo to run, and its `unknown` outcome is nothing to resolve. */
  readonly changesNothing?: boolean | undefined
}

/**
 * A step whose undo settled with something left live (`failed`, `partial`) or that may have left it
 * (`unknown`).
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
 * them (reverse order of execution); `byHand`, what an undo left live (`failed`, `partial`);
 * `toAsk`, the undos that answered `unknown`, to ask the provider about before anything is done by
 * hand; `ofRuns`, the steps whose `unknown` or `partial` is an explicit undo's answer the compensation took over
 * (its run says how it ended, and a compensation again follows it); `clean`, none of these and no
 * step whose outcome is unknown that may have changed something, so a compensation again ends the
 * saga `compensated`.
 *
 * @since 0.5.0
 * @category models
 */
export interface Left {
  readonly undoable: ReadonlyArray<string>
  readonly byHand: ReadonlyArray<ByHand>
  readonly toAsk: ReadonlyArray<ByHand>
  readonly ofRuns: ReadonlyArray<string>
  readonly clean: boolean
}

/** Undos that settled with something left live: effect-saga never runs a settled undo again. */
const settledLive: ReadonlySet<string> = new Set(["failed", "partial"])

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
    .filter(
      (step) =>
        step.state === "executed" &&
        step.changesNothing !== true &&
        (notAsked(step.undo) || step.undo === "unavailable")
    )
    .map((step) => step.stepId)
    .reverse()
  const undosThat = (settled: (undo: string) => boolean) =>
    steps.flatMap((step) =>
      step.undo !== undefined && step.undo !== null && settled(step.undo)
        ? [{ stepId: step.stepId, undo: step.undo }]
        : []
    )
  const ofRun = (step: Step) =>
    (step.undo === "unknown" || step.undo === "partial") && isTakenOver(step.undoDetail ?? undefined)
  const byHand = undosThat((undo) => settledLive.has(undo)).filter(
    ({ stepId }) => !steps.some((step) => step.stepId === stepId && ofRun(step))
  )
  const unknown = steps.filter((step) => step.undo === "unknown")
  const toAsk = unknown.filter((step) => !ofRun(step)).map(({ stepId }) => ({ stepId, undo: "unknown" }))
  const ofRuns = steps.filter(ofRun).map((step) => step.stepId)
  const clean =
    undoable.length === 0 &&
    byHand.length === 0 &&
    unknown.length === 0 &&
    ofRuns.length === 0 &&
    toResolve(steps).length === 0
  return { undoable, byHand, toAsk, ofRuns, clean }
}

/**
 * What ends a saga whose compensation took over the `unknown` or `partial` answer of explicit undos
 * (`ofRuns`): each run says how its undo ended (resolved there when it still needs attention, closed
 * there once what a partial undo left is undone by hand), and a compensation again follows it: an
 * undo completed it takes over, one that failed or was closed as not undone it runs itself, under
 * the saga's own key. Never the provider asked about the saga's key, which no undo used yet.
 *
 * @since 0.5.0
 * @category advice
 */
export const followRuns = (sagaId: string, ofRuns: ReadonlyArray<string>): string => {
  const runs = ofRuns.map((stepId) => `effect-saga show ${shellWord(`${sagaId}/${stepId}${RUN_SUFFIX}`)}`)
  const [its, them, key] =
    ofRuns.length === 1
      ? ["the undo of", "its run", `key ${sagaId}/${ofRuns[0]}/undo`]
      : ["the undos of", "their runs", `key ${sagaId}/STEP/undo for each`]
  return `${its} ${ofRuns.join(", ")} ran as an explicit undo, whose unknown or partial answer the saga's compensation took over: where the run still needs attention, or was partial (undo what it left live by hand), resolve it there first (${runs.join(", ")} says how); then compensate the saga again, which follows ${them}: an undo completed it takes over, one that failed or was closed as not undone it runs itself (${key})`
}

/**
 * `effect-saga resolve` saying that the effect of `steps` is undone now, at the position `at`
 * (`--revision N --digest HASH`) for one step (and no other named elsewhere: `several`); for
 * several, one at a time, each at the position the saga moved to (each resolution moves it).
 *
 * @since 0.5.0
 * @category advice
 */
export const resolveUndone = (sagaId: string, steps: ReadonlyArray<ByHand>, at: string, several = false): string => {
  const [only] = steps
  if (steps.length === 1 && !several)
    return `effect-saga resolve ${shellWord(sagaId)} ${shellWord(only!.stepId)} --applied --as WHO ${at}`
  const moved = `the position the saga moved to: effect-saga show ${shellWord(sagaId)} prints it`
  return steps.length === 1
    ? `effect-saga resolve ${shellWord(sagaId)} ${shellWord(only!.stepId)} --applied --as WHO (at ${moved})`
    : `effect-saga resolve ${shellWord(sagaId)} STEP --applied --as WHO for each of ${steps.map((step) => step.stepId).join(", ")} (each at ${moved})`
}

/** Undos named with their keys: `STEP (undo failed, key SAGA/STEP/undo), …`. */
const named = (sagaId: string, undos: ReadonlyArray<ByHand>): string =>
  undos.map((step) => `${step.stepId} (undo ${step.undo}, key ${sagaId}/${step.stepId}/undo)`).join(", ")

/**
 * What the undos left live, as both surfaces name them: `this undo left live: STEP (undo failed, key
 * SAGA/STEP/undo)`, or `these undos left live: …` for several (the key is the undo's idempotency key,
 * for the provider).
 *
 * @since 0.5.0
 * @category advice
 */
export const leftLive = (sagaId: string, byHand: ReadonlyArray<ByHand>): string =>
  `${byHand.length === 1 ? "this undo" : "these undos"} left live: ${named(sagaId, byHand)}`

/**
 * The undos that answered `unknown`, as both surfaces name them, and what to do once the provider
 * answered: `whether this undo happened: STEP (undo unknown, key SAGA/STEP/undo); if it did not,
 * undo its effect by hand (if it did, nothing is left live)`, or `whether these undos happened: …`
 * (the key is the one to ask the provider with).
 *
 * @since 0.5.0
 * @category advice
 */
export const mayBeLive = (sagaId: string, toAsk: ReadonlyArray<ByHand>): string =>
  toAsk.length === 1
    ? `whether this undo happened: ${named(sagaId, toAsk)}; if it did not, undo its effect by hand (if it did, nothing is left live)`
    : `whether these undos happened: ${named(sagaId, toAsk)}; undo by hand the effect of each that did not (one that did left nothing live)`
