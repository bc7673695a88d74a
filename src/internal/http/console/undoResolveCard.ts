/**
 * The cards of a saga whose compensation failed for each undo that left its effect live (`failed`,
 * `partial`) or may have (`unknown`): once the operator has undone the effect by hand, or learned
 * from the provider that the undo happened, they say so here (`POST …/resolve` with the outcome
 * `applied`: journaled `COMPENSATED`, "resolved as undone by WHO"); an undo that answered `unknown`
 * may also be said not to have happened (`not-applied`: its effect is known live). A compensation
 * again then counts the step undone without running its undo, and the saga ends `compensated` once
 * nothing else is dirty. The same decision as `effect-saga show`'s `next:` lines (`CompensationLeft`).
 */
import * as CompensationLeft from "../../util/compensationLeft.js"
import { RUN_SUFFIX } from "../../util/identifier.js"
import { undoDetailSaid } from "../../util/undoSaid.js"
import type { SagaDetail } from "../models.js"
import { attribute, escape, hidden } from "./html.js"

/** How each undo left its effect, as the card says it. */
const said: Record<string, string> = {
  failed: "Its undo failed: the effect is still live.",
  partial: "Its undo was partial: what it left is still live.",
  unknown: "Its undo answered unknown: it may or may not have happened."
}

/**
 * A button that resolves the undo of `stepId` (`POST /console/resolve`) at the saga's position: the
 * undo cards' forms, and the ones that close an explicit undo's run.
 *
 * @since 0.5.0
 * @category views
 */
export const undoResolveForm = (
  detail: SagaDetail,
  stepId: string,
  outcome: "applied" | "not-applied",
  label: string,
  secondary = false
) => {
  const { sagaId, revision, digest } = detail.saga
  return `<form class="actions" method="post" action="/console/resolve">${hidden({ sagaId, stepId, revision, digest, outcome })}
<button type="submit"${secondary ? ' class="secondary"' : ""}>${label}</button></form>`
}

const card = (detail: SagaDetail, undo: CompensationLeft.ByHand): string => {
  const step = detail.steps.find((candidate) => candidate.stepId === undo.stepId)
  const why = step?.undoDetail === undefined ? "" : ` (${undoDetailSaid(undo.undo, step.undoDetail)})`
  const key = `${detail.saga.sagaId}/${undo.stepId}/undo`
  return `<div class="card undo-left" data-step="${attribute(undo.stepId)}"><h2>Undo of <code>${escape(undo.stepId)}</code></h2>
<p>${escape(`${said[undo.undo] ?? ""}${why} effect-saga does not run a settled undo again. ${undo.undo === "unknown" ? `Ask the provider (key ${key}); if it did not happen, undo the effect by hand.` : `Undo it by hand, at the provider (key ${key}).`} Once the effect is undone, say so; then compensate the saga again, which counts it undone without running its undo.`)}</p>
${undoResolveForm(detail, undo.stepId, "applied", "Its effect is undone now")}
${undo.undo === "unknown" ? undoResolveForm(detail, undo.stepId, "not-applied", "The undo did not happen", true) : ""}</div>`
}

/**
 * The cards for a saga `compensation_failed` that nobody drives at `now` (epoch milliseconds); none
 * for any other saga, a tampered one, or the run of an explicit undo.
 *
 * @since 0.5.0
 * @category views
 */
export const undoResolveCards = (detail: SagaDetail, now: number): string => {
  const row = detail.saga
  if (row.tampered !== null || row.sagaId.endsWith(RUN_SUFFIX)) return ""
  const left = CompensationLeft.of(row, detail.steps, now)
  return left === undefined ? "" : [...left.byHand, ...left.toAsk].map((undo) => card(detail, undo)).join("\n")
}
