/**
 * Which steps undoing a saga would still have to undo, as `Saga.status` lists them: what the
 * operator's tools (the CLI's `--register`, the HTTP server's `tools`) must hold before an undo
 * command starts.
 */
import type { StepStatus } from "../../Saga.js"

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
 * Whether a `reject` of this step may undo its saga: the step awaits approval (a new rejection), or
 * it was refused (the same rejection again finishes the compensation it started). On a step in any
 * other state (approved, run, unknown) a `reject` is refused whatever tools are at hand: a missing
 * tool is not what an operator must be told first.
 */
export const rejectMayUndo = (step: StepStatus): boolean =>
  step.state === "awaiting_approval" || step.state === "refused"
