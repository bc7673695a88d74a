/**
 * Settling an explicit undo whose answer is `unknown` (its run `needs_attention`): the operator asks
 * the provider, then resolves the run's step as undone (`applied`: the run answers `completed`) or
 * not undone (`not-applied`: it answers `failed`, and the effect is still in place: the saga's own
 * compensation undoes it, if it has not settled the step yet). Until then the run is never finished:
 * nothing else settles it, and neither it nor its saga is pruned.
 */
import * as Effect from "effect/Effect"
import type { Resolution } from "../../Saga.js"
import { CommandConflict, CommandRefused } from "../../SagaError.js"
import { sagaDraft, stepDraft } from "../journal/drafts.js"
import { isResolvedUndo, resolvedReason } from "../journal/resolvedUndo.js"
import type { Writer } from "../journal/writer.js"
import type { Prior } from "./replay.js"

/** The reason a resolved undo journals: which way, and who. */
const reasonOf = (resolution: Resolution): string => resolvedReason(resolution.outcome, resolution.by)

/** The reason journaled with the outcome of the run's step, if an operator resolved it. */
const journaledReason = (writer: Writer, stepId: string): string | undefined => {
  const outcome = writer.view.steps.get(stepId)?.compensation
  return outcome !== undefined && isResolvedUndo(outcome) ? outcome.payload?.reason : undefined
}

/** A resolution of the run's undo replays one made before the same way by the same person; another is a conflict. */
export const prior = (
  writer: Writer,
  stepId: string,
  resolution: Resolution
): Effect.Effect<Prior, CommandConflict> => {
  const reason = journaledReason(writer, stepId)
  if (reason === undefined) return Effect.succeed("new")
  return reason === reasonOf(resolution)
    ? Effect.succeed("replay")
    : Effect.fail(new CommandConflict({ sagaId: writer.sagaId, stepId, answer: reason }))
}

/**
 * Journals the operator's answer to the run's unknown undo: the step's outcome and the run's last
 * entry, in one append. Refused unless the run needs attention for that step's undo.
 */
export const resolve = (writer: Writer, stepId: string, resolution: Resolution, effectId: string) =>
  Effect.gen(function* () {
    const refused = (reason: string) => new CommandRefused({ sagaId: writer.sagaId, stepId, reason })
    const undo = writer.view.steps.get(stepId)
    if (undo === undefined) return yield* refused("the run has no such step")
    if (writer.view.status !== "needs_attention" || undo.compensation?.phase !== "COMPENSATION_UNKNOWN") {
      return yield* refused(`the outcome of the undo is not unknown (the run is ${writer.view.status})`)
    }
    if (resolution.outcome === "applied" && resolution.result !== undefined) {
      return yield* refused("the resolution of an undo takes no result: say whether the undo happened")
    }
    const reason = reasonOf(resolution)
    yield* writer.append(
      resolution.outcome === "applied"
        ? [
            stepDraft(undo, "COMPENSATED", { reason }),
            sagaDraft("SAGA_COMPLETED", { effectId, outcome: "completed", detail: reason })
          ]
        : [
            stepDraft(undo, "COMPENSATION_FAILED", { reason }),
            sagaDraft("SAGA_COMPENSATION_FAILED", { effectId, outcome: "failed", detail: reason })
          ]
    )
  })
