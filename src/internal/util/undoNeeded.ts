/**
 * Which steps undoing a saga would still have to undo, as `Saga.status` lists them: what the
 * operator's tools (the CLI's `--register`, the HTTP server's `tools`) must hold before an undo
 * command starts.
 */
import * as Effect from "effect/Effect"
import type { SagaStatus, StepStatus } from "../../Saga.js"
import { type ExplicitUndoRun, explicitUndoRuns } from "./explicitUndoRuns.js"

/**
 * Whether undoing the saga would still run this step's undo: it executed, its undo has not run (none
 * was asked for yet, or it was `unavailable` where it was asked: it journaled nothing, and the next
 * compensation runs it), it changed something, and it may have an undo. A step journaled as
 * changing nothing (a model turn, a read) or as irreversible is passed over by compensation in any
 * process, with or without its tool.
 */
export const undoNeeded = (step: StepStatus): boolean =>
  step.state === "executed" &&
  (step.undo === undefined || step.undo === "unavailable") &&
  step.changesNothing !== true &&
  step.irreversible !== true

/**
 * Whether the saga's compensation takes the answer of the explicit undo asked of a step over, and
 * runs no undo of its own: unless it left the effect live (`failed`, `unavailable`), or its run's
 * journal does not verify (the compensation is refused then).
 */
const takenOver = (run: ExplicitUndoRun | undefined): boolean =>
  run !== undefined && run.tampered === undefined && run.undo !== "failed" && run.undo !== "unavailable"

/**
 * The steps of `saga` whose undo compensating it would run (`undoNeeded`), but for those an explicit
 * undo's run answers for: what an undo command needs the tools of.
 */
export const owingUndo = (saga: SagaStatus) =>
  Effect.map(explicitUndoRuns(saga), (runs) => {
    const byStep = new Map(runs.map((run) => [run.stepId, run]))
    return saga.steps.filter((step) => undoNeeded(step) && !takenOver(byStep.get(step.stepId)))
  })

/**
 * Whether a `reject` of this step may undo its saga: the step awaits approval (a new rejection), or
 * it was refused (the same rejection again finishes the compensation it started). On a step in any
 * other state (approved, run, unknown) a `reject` is refused whatever tools are at hand: a missing
 * tool is not what an operator must be told first.
 */
export const rejectMayUndo = (step: StepStatus): boolean =>
  step.state === "awaiting_approval" || step.state === "refused"
