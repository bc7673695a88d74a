/**
 * The console's views, as HTML: the approval inbox, the sagas (what needs a person first), one
 * saga (its lease as it stands, steps with what came of an explicit undo asked of one, the timeline
 * drawn, the undos' report, resolve for an unknown step with why it is unknown, or that it is in
 * flight while a live lease drives the saga, a red banner when its journal does not verify; of an
 * explicit undo's run, to ask for the undo again once approved, and its answer once it failed, with
 * what is left to do with the effect), and the sign-in form.
 */
import type { SagaStatus } from "../../../Journal.js"
import * as Timeline from "../../../Timeline.js"
import * as ApprovalExpiry from "../../util/approvalExpiry.js"
import * as ExplicitUndoRuns from "../../util/explicitUndoRuns.js"
import { RUN_SUFFIX } from "../../util/identifier.js"
import * as Lease from "../../util/lease.js"
import { shellWord } from "../../util/shellWord.js"
import { onlyTheTable } from "../../util/tamperMark.js"
import * as ToResolve from "../../util/toResolve.js"
import * as UndoRunAdvice from "../../util/undoRunAdvice.js"
import { undoSaid } from "../../util/undoSaid.js"
import type { PendingApproval, SagaDetail, SagaPage, Step, Tamper } from "../models.js"
import * as CompensationNext from "./compensationNext.js"
import { svg } from "./diagram.js"
import { attribute, badge, escape, hidden, idToken } from "./html.js"
import { isPastEnd, type Position, pager } from "./pager.js"
import { undoRows } from "./report.js"
import * as ReturnTo from "./returnTo.js"
import { undoResolveCards, undoResolveForm } from "./undoResolveCard.js"

const sagaLink = (sagaId: string): string =>
  `<a href="/console/sagas/${encodeURIComponent(sagaId)}">${escape(sagaId)}</a>`

/** The input as a person reads it: pretty JSON, or the text as it is. */
const pretty = (input: string | null): string => {
  if (input === null) return "(not in the journal)"
  try {
    return JSON.stringify(JSON.parse(input), null, 2)
  } catch {
    return input
  }
}

const tamperLine = (sagaId: string, tampered: Tamper): string =>
  onlyTheTable(tampered)
    ? `Saga ${sagaId} is TAMPERED: ${tampered.reason}. Make no new decision on it; effect-saga show ${shellWord(sagaId)} says what to do.`
    : `Saga ${sagaId} is TAMPERED: its journal does not verify at seq ${tampered.seq} (${tampered.problem}): ${tampered.reason}. Nothing past it is a fact; effect-saga refuses to act on it.`

const position = (request: {
  readonly sagaId: string
  readonly stepId: string
  readonly revision: number
  readonly digest: string
}) => hidden({ sagaId: request.sagaId, stepId: request.stepId, revision: request.revision, digest: request.digest })

/** The field that makes a decision's form lead back to the saga's page, not the inbox. */
const backTo = (onSagaPage: boolean): string => (onSagaPage ? hidden({ back: "saga" }) : "")

/** A request waiting for a decision, with its forms; `onSagaPage`: its forms lead back to the saga's page. */
const pendingCard = (
  request: PendingApproval,
  onSagaPage = false
): string => `<article class="card" aria-labelledby="req-${idToken(request.requestId)}">
<h2 id="req-${idToken(request.requestId)}">${escape(request.toolName)} <span class="muted">in</span> ${sagaLink(request.sagaId)}</h2>
${request.tampered === null ? "" : `<div class="banner" role="alert">${escape(tamperLine(request.sagaId, request.tampered))}</div>`}
<dl class="meta">
<dt>step</dt><dd><code>${escape(request.stepId)}</code></dd>
<dt>asked</dt><dd><time datetime="${attribute(request.requestedAt)}">${escape(request.requestedAt)}</time></dd>
<dt>expires</dt><dd>the request waits until decided; an approval lasts until the expiry given below, else the tool's or the worker's approval TTL</dd>
<dt>input sha256</dt><dd><code>${escape(request.inputDigest ?? "(not in the journal)")}</code></dd>
</dl>
<div>Exact input, as the journal holds it:</div>
<pre>${escape(pretty(request.input))}</pre>
${
  request.tampered !== null
    ? ""
    : request.settled !== null
      ? settledLine(request, request.settled)
      : `<form class="actions" method="post" action="/console/approve">${position(request)}${backTo(onSagaPage)}
<label>Approval expires at (ISO-8601, optional) <input type="text" name="expiresAt" placeholder="2026-12-31T23:59:00Z"></label>
<button type="submit">Approve</button></form>
<form class="actions" method="post" action="/console/reject">${position(request)}${backTo(onSagaPage)}
<input type="text" name="reason" required aria-label="Reason for rejecting" placeholder="Why you reject it (required)">
<button type="submit" class="secondary">Reject</button></form>`
}
</article>`

/**
 * The approval inbox. A page past the end (`?offset=301` with 301 sagas waiting) says how many
 * wait, none shown, and links back to the last page; it never says that nothing waits. `query`:
 * what its page links keep (a `limit` given).
 *
 * @since 0.2.0
 * @category views
 */
export const inbox = (
  requests: ReadonlyArray<PendingApproval>,
  position?: Position,
  query: Readonly<Record<string, string>> = {}
): string =>
  position !== undefined && position.total > 0 && isPastEnd(position)
    ? pastTheInbox(position, query)
    : `<h1>Approval inbox <span class="muted">(${requests.length} waiting${shownOf(position)})</span></h1>
${requests.length === 0 ? '<p class="muted" id="empty">No approval is waiting.</p>' : requests.map((request) => pendingCard(request)).join("\n")}
${position === undefined ? "" : pager("/console", position, query)}`

/** A page of the inbox past its last, as `/console/sagas` says one: how many in all, none shown. */
const pastTheInbox = (position: Position, query: Readonly<Record<string, string>>): string =>
  `<h1>Approval inbox <span class="muted">(${position.total} saga(s) with something waiting, none shown)</span></h1>
<p class="muted" id="empty">This page is past the last: the ${position.total} saga(s) with something waiting are on the pages before it.</p>
${pager("/console", position, query)}`

/** Which of how many a page shows, when it does not show them all (nothing past the end). */
const shownOf = (position: Position | undefined): string =>
  position === undefined || isPastEnd(position) || (position.offset === 0 && position.total <= position.limit)
    ? ""
    : `; sagas ${position.offset + 1}–${Math.min(position.offset + position.limit, position.total)} of ${position.total}`

const statuses: ReadonlyArray<SagaStatus> = [
  "compensation_failed",
  "needs_attention",
  "awaiting_approval",
  "running",
  "suspended",
  "compensating",
  "completed",
  "compensated"
]

/**
 * The sagas, what needs a person first, with a status filter and a search by id; a `limit` given
 * is kept by the filter and the page links.
 *
 * @since 0.2.0
 * @category views
 */
export const sagas = (
  found: SagaPage,
  filter: { readonly status: string; readonly search: string; readonly limit?: string | undefined }
): string =>
  `<h1>Sagas</h1>
<form class="actions" method="get" action="/console/sagas" role="search">${filter.limit === undefined || filter.limit === "" ? "" : hidden({ limit: filter.limit })}
<label>Status <select name="status"><option value="">any</option>${statuses
    .map(
      (status) =>
        `<option value="${status}"${status === filter.status ? " selected" : ""}>${status.replaceAll("_", " ")}</option>`
    )
    .join("")}</select></label>
<label>Id contains <input type="search" name="search" value="${attribute(filter.search)}"></label>
<button type="submit">Filter</button></form>
<p class="muted">${found.total} saga(s)${found.total > found.sagas.length ? `, ${found.sagas.length === 0 ? "none" : `${found.offset + 1}–${found.offset + found.sagas.length}`} shown` : ""}; what needs a person first.</p>
<div class="table"><table><thead><tr><th>saga</th><th>status</th><th>chain</th><th>revision</th><th>updated</th></tr></thead><tbody>
${found.sagas
  .map(
    (saga) =>
      `<tr><td>${sagaLink(saga.sagaId)}</td><td>${badge(saga.status)}${saga.stuck === true ? ` ${badge("stuck")}` : ""}</td><td>${saga.tampered === null ? "intact" : badge("tampered")}</td><td>${saga.revision}</td><td>${escape(saga.updatedAt)}</td></tr>`
  )
  .join("\n")}
</tbody></table></div>
${pager("/console/sagas", found, { status: filter.status, search: filter.search, limit: filter.limit ?? "" })}`

/**
 * What the resolve card of a step a resume settles (its tool retries by key, and the program did
 * not cut it) says first: a resume runs it again, once the steps it does not settle are resolved.
 */
const retriesLine = (detail: SagaDetail, stepId: string, reasons: ReadonlyMap<string, string>): string => {
  const step = detail.steps.find((each) => each.stepId === stepId)
  if (!ToResolve.resumeSettles(step?.retriesByKey, reasons.get(stepId))) return ""
  const when = ToResolve.resumeWhen(ToResolve.unsettledBesides(stepId, ToResolve.toResolve(detail.steps), reasons))
  const said = `${capitalized(ToResolve.resumeRetries(stepId))}: instead of resolving it, you may ${when}, by a worker that has its program.`
  return `<p id="retries-by-key">${escape(said)}</p>\n`
}

/**
 * The resolve card of a step whose outcome is unknown: why, when the saga journaled it, and the
 * outcomes it may still be resolved as. Once compensation began the undo of a step that ran before
 * it, "applied" is refused (its undo would come out of reverse order): "applied, and undone by hand"
 * and "not applied" are offered.
 * The console takes no receipt: the API's resolve (`receipt`) and the CLI's `resolve --receipt` do.
 * A step whose tool retries by key says that a resume runs it again.
 */
const resolveForm = (detail: SagaDetail, stepId: string): string => {
  const { sagaId } = detail.saga
  const seen = position({ sagaId, stepId, revision: detail.saga.revision, digest: detail.saga.digest })
  const reasons = Timeline.unknownReasons(detail.entries)
  const reason = reasons.get(stepId)
  const earlier = Timeline.undoneBefore(detail.entries, stepId)
  const applied =
    earlier === undefined
      ? `<form class="actions" method="post" action="/console/resolve">${seen}<input type="hidden" name="outcome" value="applied">
<input type="text" name="result" aria-label="Result as JSON" placeholder='Its result, as JSON ("parcel-17")'>
<button type="submit">It was applied</button></form>
<p class="muted">The console takes no receipt: if its undo needs the provider's receipt, resolve it with <code>effect-saga resolve --receipt</code>, or the API's resolve with <code>receipt</code>.</p>`
      : `<p id="applied-refused">${escape(
          `Compensation already began the undo of step ${earlier}, which ran before this one: it cannot be resolved as applied (its undo would come out of reverse order). If the call happened, undo its effect by hand (idempotency key ${sagaId}/${stepId}), then say so here; say it was not applied only if it did not happen.`
        )}</p>
<form class="actions" method="post" action="/console/resolve">${seen}<input type="hidden" name="outcome" value="applied"><input type="hidden" name="undone" value="true">
<input type="text" name="result" aria-label="Result as JSON" placeholder='Its result, as JSON ("parcel-17")'>
<button type="submit">It was applied, and I undid it by hand</button></form>`
  return `<div class="card"><h2>Resolve <code>${escape(stepId)}</code></h2>
<p id="unknown-reason">${escape(`Its outcome is unknown${reason === undefined ? "" : ` (${reason})`}: find out whether it happened, then say so.`)}</p>
${retriesLine(detail, stepId, reasons)}${applied}
<form class="actions" method="post" action="/console/resolve">${seen}<input type="hidden" name="outcome" value="not-applied">
<button type="submit" class="secondary">It was not applied</button></form>
<p class="muted not-applied-caution">${escape(`Before "It was not applied", make sure the call cannot still happen: ${ToResolve.stillPossible(sagaId, stepId, reason)}.`)}</p></div>`
}

/**
 * The card of a step with no outcome journaled while a live lease holds the saga, in place of its
 * resolve card (resolving is refused while the lease holds): in flight, for a running saga, whose
 * worker journals the outcome when the call answers; wait, in every case.
 */
const waitCard = (detail: SagaDetail, stepId: string, lease: NonNullable<SagaDetail["saga"]["lease"]>): string => {
  const said =
    detail.saga.status === "running"
      ? `It is in flight: ${Lease.inFlight(lease)}. Its worker journals the outcome when the call answers: wait. Only if that lease lapses with no outcome journaled is its outcome unknown, to resolve here.`
      : `${lease.owner} holds the saga's lease until ${lease.expiresAt}: resolving it is refused while it does. Wait; once the lease is dropped or lapsed, resolve it here.`
  return `<div class="card"><h2>Step <code>${escape(stepId)}</code>: no outcome yet</h2>
<p id="in-flight">${escape(said)}</p></div>`
}

/**
 * What an approved step of a saga awaiting approval waits for: a resume, before its approval's
 * journaled expiry if it names one; once that passed (`now`, epoch milliseconds), a resume journals
 * `EXPIRED` and compensates unless the approval is renewed first.
 */
const approvedLine = (detail: SagaDetail, stepId: string, now: number): string => {
  const standing = ApprovalExpiry.standing(Timeline.approvedUntil(detail.entries, stepId), now)
  const resumed = "by a worker that has its program (a Recovery pass does not take a saga awaiting approval)"
  const path = `/api/sagas/${encodeURIComponent(detail.saga.sagaId)}/steps/${encodeURIComponent(stepId)}/renew`
  const said =
    standing._tag === "Open"
      ? `Step ${stepId} is approved: it runs when the saga is resumed, ${resumed}.`
      : standing._tag === "Holds"
        ? `Step ${stepId} is approved until ${standing.until}: it runs when the saga is resumed before then, ${resumed}.`
        : `The approval of step ${stepId} ${ApprovalExpiry.lapsedText(standing)}: ${ApprovalExpiry.sagaResumedLapsed}. To run the step still, renew the approval first (effect-saga renew-approval, or POST ${path}), then resume the saga.`
  return `<p class="approved">${escape(said)}</p>`
}

/**
 * What an approved step of an explicit undo's run awaiting approval waits for: nothing resumes a
 * run, its undo runs when it is asked for again (`compensate-effect`), before its approval's
 * journaled expiry if it names one.
 */
const runApprovedLine = (detail: SagaDetail, step: SagaDetail["steps"][number], now: number): string => {
  const standing = ApprovalExpiry.standing(Timeline.approvedUntil(detail.entries, step.stepId), now)
  const { sagaId, revision, digest } = detail.saga
  const said = UndoRunAdvice.approved(sagaId, step, standing, `--revision ${revision} --digest ${digest}`)
  const sentence = standing._tag === "Lapsed" ? capitalized(said) : `Step ${said}`
  return `<p class="approved" id="ask-again">${escape(`${sentence}${askedHere(step)}`)}</p>`
}

/** The other ways to ask an explicit undo again than the CLI's, ending a sentence that gives the CLI's. */
const askedHere = (step: { readonly stepId: string; readonly effectId: string }): string => {
  const path = `/api/sagas/${encodeURIComponent(UndoRunAdvice.sagaIdOf(step))}/steps/${encodeURIComponent(step.stepId)}/compensate-effect`
  return `, or POST ${path} (with the saga's revision and digest), or Saga.compensateEffect("${step.effectId}").`
}

/**
 * A step of an explicit undo's run awaiting approval (`said`: `UndoRunAdvice.reachedBySaga`), or a
 * request of it in the inbox, that the saga's own compensation has reached since: nothing is left to
 * decide, so no decision is offered.
 */
const settledLine = (request: { readonly sagaId: string; readonly stepId: string }, said: string): string => {
  const step = UndoRunAdvice.runStepOf(request)
  return `<p class="approved settled" id="settled-${idToken(request.stepId)}">${escape(`${capitalized(said)}${step === undefined ? "." : askedHere(step)}`)}</p>`
}

const capitalized = (said: string): string => `${said.charAt(0).toUpperCase()}${said.slice(1)}`

/**
 * What an explicit undo's run that ended `compensation_failed` answered, and what is left to do with
 * the effect (`left`, as `effect-saga show` says it): its answer is final, the effect may be live.
 */
const runAnswerCard = (detail: SagaDetail, left: ReadonlyArray<UndoRunAdvice.RunLeft>): string => {
  const answered = detail.steps
    .filter((step) => step.undo !== null)
    .map((step) => undoSaid(step.undo!, step.undoDetail))
  return `<div class="card" id="run-answer"><h2>The run's answer</h2>
<p>${escape(answered.length === 0 ? "The run answered with no undo." : `The run answered: ${answered.join(", ")}.`)}</p>
${left.map(({ said }) => `<p class="still-live">${escape(`${capitalized(said)}.`)}</p>`).join("\n")}
${detail.steps[0] === undefined ? "" : `<p>Its saga: ${sagaLink(UndoRunAdvice.sagaIdOf(detail.steps[0]))}.</p>`}
${left.map((step) => closeForms(detail, step)).join("\n")}</div>`
}

/**
 * The buttons that close an explicit undo's run (`resolve`, as `show`'s `next:` line says): its
 * effect undone now, or kept as it is (`keep`: not for a partial undo, nor once the saga's own
 * compensation has undone the effect).
 */
const closeForms = (detail: SagaDetail, { keep, stepId }: UndoRunAdvice.RunLeft): string =>
  `${undoResolveForm(detail, stepId, "applied", "Its effect is undone now: close the run")}
${keep ? undoResolveForm(detail, stepId, "not-applied", "Keep the effect as it is: close the run", true) : ""}`

/**
 * What a stuck saga (`stuck`: started with `Saga.run`, left behind) waits for: no Recovery takes
 * it, as `effect-saga list` and `show` say. A step whose outcome is unknown (`unresolved`) is
 * resolved before it is compensated: a compensation cannot undo it and ends `compensation_failed`.
 */
const stuckLine = (detail: SagaDetail, unresolved: ReadonlyArray<SagaDetail["steps"][number]>): string => {
  const { sagaId } = detail.saga
  const path = `/api/sagas/${encodeURIComponent(sagaId)}`
  return [
    `Stuck: no worker is driving it, and no Recovery can take it (it was started with Saga.run): run its program again, or compensate it (effect-saga compensate ${shellWord(sagaId)} --register MODULE --as WHO, or POST ${path}/compensate).`,
    ...unresolved.map((step) => resolveFirst(detail, step))
  ].join(" ")
}

/**
 * Resolve a step whose outcome is unknown before compensating, and how, as `effect-saga show`'s
 * `next:` line says it: a compensation now cannot undo it and ends the saga `compensation_failed`.
 */
const resolveFirst = (detail: SagaDetail, { receiptRequired, stepId }: SagaDetail["steps"][number]): string => {
  const { sagaId, revision, digest } = detail.saga
  const earlier = Timeline.undoneBefore(detail.entries, stepId)
  const here =
    earlier === undefined
      ? '"It was applied" or "It was not applied"'
      : '"It was applied, and I undid it by hand" or "It was not applied"'
  const command = ToResolve.resolveCommand(sagaId, stepId, `--revision ${revision} --digest ${digest}`, earlier)
  const receipt =
    receiptRequired === true
      ? ` ${capitalized(ToResolve.receiptNeeded("the form below takes none: use effect-saga resolve with --receipt, or the API with receipt"))}.`
      : ""
  return `Resolve ${stepId} first: its outcome is unknown, and a compensation now cannot undo it and ends the saga compensation failed. Resolve it below (${here}), or ${command}, or POST /api/sagas/${encodeURIComponent(sagaId)}/steps/${encodeURIComponent(stepId)}/resolve.${receipt}`
}

/**
 * What a saga that needs attention with nothing left to resolve waits for: a resume, which goes on,
 * or compensates when a journaled failure binds it to (`Timeline.failureToUndo`); or a compensation,
 * when its program cannot replay a step (`Timeline.notReplayable`).
 */
const resumeLine = (detail: SagaDetail): string => {
  const failed = Timeline.failureToUndo(detail.entries)
  const notReplayable = Timeline.notReplayable(detail.entries)
  if (ToResolve.cannotResume(failed, notReplayable)) {
    const sagaId = detail.saga.sagaId
    return `Nothing is left to resolve, but ${ToResolve.compensateNotResume(notReplayable)} (effect-saga compensate ${shellWord(sagaId)} --register MODULE --as WHO, or POST /api/sagas/${encodeURIComponent(sagaId)}/compensate).`
  }
  const does = ToResolve.resumeDoes(failed)
  return `Nothing is left to resolve: the saga ${does} when it is resumed, by a worker that has its program (a Recovery pass does not take a saga that needs attention).`
}

/**
 * A saga that needs attention with nothing left to resolve (every step it stopped on resolved, or
 * only a read unknown, which a resume runs again; no undo unknown) and nobody driving it.
 */
const waitsForResume = (
  detail: SagaDetail,
  unknown: ReadonlyArray<SagaDetail["steps"][number]>,
  lease: SagaDetail["saga"]["lease"] | undefined
): boolean =>
  detail.saga.status === "needs_attention" &&
  detail.saga.tampered === null &&
  unknown.length === 0 &&
  lease === undefined &&
  detail.steps.every((step) => step.undo !== "unknown")

/**
 * What came of the explicit undo asked of a step, if one was, with a link to its run's page: the
 * saga's journal is only read by it (the step stays `executed`, with no undo of its own).
 */
const explicitUndoCell = (step: SagaDetail["steps"][number]): string =>
  step.explicitUndo === undefined
    ? ""
    : `<span class="explicit-undo" data-step="${attribute(step.stepId)}">${escape(ExplicitUndoRuns.describe(step.explicitUndo, step.undo))} (<a href="/console/sagas/${encodeURIComponent(step.explicitUndo.runId)}">its run</a>)</span>`

/**
 * Why a refused step was refused, under its state: its last `REJECTED` or `EXPIRED` entry's reason
 * (the diagram's label cuts it), so that nobody has to hover over the timeline to read it.
 */
const refusalCell = (detail: SagaDetail, step: SagaDetail["steps"][number]): string => {
  if (step.state !== "refused") return ""
  const entry = detail.entries
    .filter((entry) => entry.stepId === step.stepId && (entry.phase === "REJECTED" || entry.phase === "EXPIRED"))
    .at(-1)
  return entry === undefined ? "" : `<br><span class="refusal">${escape(Timeline.detailOf(entry))}</span>`
}

/**
 * A step's state, as its page shows it: for a tampered saga, a step with entries at or past the
 * break is not given a state (the journal's `unknown` there would read as one to resolve): what
 * follows the break is no fact.
 */
const stateCell = (detail: SagaDetail, step: Step): string => {
  const breaksAt = detail.saga.tampered?.seq
  const pastBreak =
    typeof breaksAt === "number" &&
    detail.entries.some((entry) => entry.stepId === step.stepId && entry.seq >= breaksAt)
  return pastBreak
    ? `${badge("tampered")} <span class="muted">its entries from seq ${breaksAt} on do not verify: no state is a fact</span>`
    : `${badge(step.state)}${refusalCell(detail, step)}`
}

/**
 * What a saga's page says of its steps awaiting approval, with the inbox's cards of their requests:
 * an operator sent to the saga decides there, without finding it among the inbox's pages.
 */
const decideHere = (steps: number, requests: ReadonlyArray<PendingApproval>): string => {
  if (requests.length === 0)
    return `<p>${steps} step(s) await approval: decide in the <a href="/console">inbox</a>.</p>`
  // A tampered or settled request offers no decision: the page says so, as its card does.
  const decidable = requests.some((request) => request.tampered === null && request.settled === null)
  const said = decidable
    ? `decide here (the <a href="/console">inbox</a> lists every saga's requests)`
    : "no decision is offered on them: each card below says why"
  return `<section id="decide"><p>${steps} step(s) await approval: ${said}.</p>
${requests.map((request) => pendingCard(request, true)).join("\n")}</section>`
}

/**
 * One saga, its lease as it stands at `now` (epoch milliseconds); for an explicit undo's run that
 * ended `compensation_failed`, its answer and what is left to do with the effect (`left`); for one
 * awaiting approval, its steps the saga's own compensation has reached since, with what is left
 * (`reached`, by step id): no decision is offered for those.
 *
 * @since 0.2.0
 * @category views
 */
export const saga = (
  detail: SagaDetail,
  now: number,
  left: ReadonlyArray<UndoRunAdvice.RunLeft> = [],
  reached: ReadonlyMap<string, string> = new Map(),
  pending: ReadonlyArray<PendingApproval> = []
): string => {
  const row = detail.saga
  const undone = undoRows(detail)
  // A read's unknown outcome changed nothing: there is nothing to resolve.
  const unknown = row.tampered === null ? ToResolve.toResolve(detail.steps) : []
  const inFlight = ToResolve.toWaitFor(detail.steps)
  const open = detail.steps.filter((step) => !reached.has(step.stepId))
  const waiting = open.filter((step) => step.state === "awaiting_approval")
  const lease = Lease.liveLease(row, now)
  const approved = row.status === "awaiting_approval" ? open.filter((step) => step.state === "approved") : []
  const isRun = row.sagaId.endsWith(RUN_SUFFIX)
  return `<h1>Saga ${escape(row.sagaId)} ${badge(row.tampered === null ? row.status : "tampered")}</h1>
${row.tampered === null ? "" : `<div class="banner" role="alert" id="tampered">${escape(tamperLine(row.sagaId, row.tampered))}</div>`}
<dl class="meta card">
<dt>revision</dt><dd>${row.revision}</dd><dt>digest</dt><dd><code>${escape(row.digest)}</code></dd>
<dt>created</dt><dd>${escape(row.createdAt)}</dd><dt>updated</dt><dd>${escape(row.updatedAt)}</dd>
<dt>lease</dt><dd id="lease">${escape(Lease.describe(row, now))}</dd>
</dl>
${row.stuck === true ? `<p class="banner" role="alert" id="stuck">${escape(stuckLine(detail, unknown))}</p>` : ""}
${
  waiting.length === 0
    ? ""
    : decideHere(
        waiting.length,
        pending.filter((request) => !reached.has(request.stepId))
      )
}
${approved.map((step) => (isRun ? runApprovedLine(detail, step, now) : approvedLine(detail, step.stepId, now))).join("\n")}
${Array.from(reached, ([stepId, said]) => settledLine({ sagaId: row.sagaId, stepId }, said)).join("\n")}
${isRun && row.status === "compensation_failed" && row.tampered === null ? runAnswerCard(detail, left) : ""}
${waitsForResume(detail, unknown, lease) ? `<p class="approved" id="resume">${escape(resumeLine(detail))}</p>` : ""}
${CompensationNext.lines(detail, now)
  .map((line) => `<p class="approved compensate">${escape(line)}</p>`)
  .join("\n")}
<h2>Steps</h2>
<div class="table"><table><thead><tr><th>step</th><th>tool</th><th>state</th><th>undo</th></tr></thead><tbody>
${detail.steps
  .map(
    (step) =>
      `<tr><td><code>${escape(step.stepId)}</code></td><td>${escape(step.toolName)}</td><td>${stateCell(detail, step)}</td><td>${[escape(step.undo ?? ""), explicitUndoCell(step)].filter((part) => part !== "").join("<br>")}</td></tr>`
  )
  .join("\n")}
</tbody></table></div>
${inFlight.map((step) => (lease === undefined ? "" : waitCard(detail, step.stepId, lease))).join("\n")}
${unknown
  .map((step) => (lease === undefined ? resolveForm(detail, step.stepId) : waitCard(detail, step.stepId, lease)))
  .join("\n")}
${undoResolveCards(detail, now)}
<h2>Timeline</h2>
<div class="diagram">${svg(row.sagaId, detail.entries, row.tampered?.seq)}</div>
<h2>Undos</h2>
${
  undone.length === 0
    ? `<p class="muted">${detail.steps.some((step) => step.explicitUndo !== undefined) ? "The saga's own compensation asked for no undo: an explicit undo asked of a step is shown beside it, under Steps." : "No undo was asked for."}</p>`
    : `<div class="table"><table><thead><tr><th>tool</th><th>step</th><th>undo</th><th>detail</th></tr></thead><tbody>${undone
        .map(
          (step) =>
            `<tr><td>${escape(step.toolName)}</td><td><code>${escape(step.stepId)}</code></td><td>${badge(step.undo)}</td><td>${escape(step.detail)}</td></tr>`
        )
        .join("")}</tbody></table></div>`
}`
}

/**
 * The sign-in form: the bearer token, kept in an HTTP-only, same-site cookie; `next`, the console
 * page sign-in leads to (checked by `ReturnTo.pageOf`), carried in the form unless it is the inbox.
 *
 * @since 0.2.0
 * @category views
 */
export const login = (next: string = ReturnTo.HOME): string => `<h1>Sign in</h1>
<form class="card actions" method="post" action="/console/login">${next === ReturnTo.HOME ? "" : hidden({ next })}
<label>API token <input type="password" name="token" autocomplete="off" required autofocus></label>
<button type="submit">Sign in</button></form>`
