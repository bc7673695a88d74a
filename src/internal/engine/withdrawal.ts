/**
 * Approval requests a saga withdraws: those still undecided when it begins to compensate, or when
 * it completes without making their call. Each is journaled `REJECTED` by `effect-saga` (so that
 * nobody approves it), then dropped from the `Approval` service's pending list.
 */
import * as Effect from "effect/Effect"
import type { Approval } from "../../Approval.js"
import { stepDraft } from "../journal/drafts.js"
import { stepKey } from "../journal/ids.js"
import type { StepView } from "../journal/view.js"
import type { Writer } from "../journal/writer.js"

/** Who withdraws the approval requests a saga no longer needs. */
export const WITHDRAWN_BY = "effect-saga"

/** Why a request was withdrawn, as journaled and as `Saga.approve`'s `CommandConflict` says. */
export const withdrawnBecause = {
  compensating: "withdrawn: the saga began to compensate before this call was approved",
  completed: "withdrawn: the saga completed without making this call",
  settled: "withdrawn: the saga's own compensation settled this effect before its undo was approved"
} as const

/** Whether a step's approval request was withdrawn by its saga. */
export const isWithdrawn = (step: StepView): boolean =>
  step.refused?.phase === "REJECTED" && step.refused.payload.by === WITHDRAWN_BY

/** Whether a step waits for a decision: it awaits approval, undecided, and has not run. */
const isUndecided = (step: StepView): boolean =>
  step.awaiting !== undefined && step.approved === undefined && step.refused === undefined && step.intents === 0

/** The steps of `view` that wait for a decision, in journal order. */
export const undecided = (view: Writer["view"]): Array<StepView> => Array.from(view.steps.values()).filter(isUndecided)

/** The `REJECTED` entries that withdraw every request of `view` still undecided. */
export const withdrawals = (view: Writer["view"], reason: string) =>
  undecided(view).map((step) => stepDraft(step, "REJECTED", { by: WITHDRAWN_BY, reason }))

/**
 * Drops a request the saga withdrew from the approval service (one already decided there is left
 * as it is; one whose record was edited too, with a warning that says so).
 */
export const withdrawFrom =
  (approval: Approval["Type"]) =>
  (requestId: string, reason: string): Effect.Effect<void> =>
    Effect.catchAll(approval.reject(requestId, { by: WITHDRAWN_BY, reason }), (error) => {
      switch (error._tag) {
        case "JournalError":
          return Effect.logWarning(
            `effect-saga: the approval request ${requestId} could not be withdrawn: ${error.message}`
          )
        case "ApprovalTampered":
          return Effect.logWarning(`effect-saga: the approval request ${requestId} was not withdrawn: ${error.reason}`)
        default:
          return Effect.void
      }
    })

/**
 * Drops every request the journal says was withdrawn from the approval service's pending list:
 * again on every pass, should a crash have come between the journal and the service.
 */
export const dropWithdrawn = (
  writer: Writer,
  withdraw: (requestId: string, reason: string) => Effect.Effect<void>
): Effect.Effect<void> => Effect.suspend(() => dropWithdrawnOf(writer.sagaId, writer.view, withdraw))

/**
 * The same, from a journal as read (`sagaId`'s `view`): what asking a finished explicit undo's run
 * again does, should a crash have come between its withdrawal and the service.
 */
export const dropWithdrawnOf = (
  sagaId: string,
  view: Writer["view"],
  withdraw: (requestId: string, reason: string) => Effect.Effect<void>
): Effect.Effect<void> =>
  Effect.forEach(
    Array.from(view.steps.values()).filter(isWithdrawn),
    (step) => withdraw(stepKey(sagaId, step.stepId), step.refused!.payload.reason),
    { discard: true }
  )
