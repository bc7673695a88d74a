import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Approval, ApprovalRequest } from "../../Approval.js"
import * as Report from "../../CompensationReport.js"
import type { Draft, Holder } from "../../Journal.js"
import { isFinished, JournalTampered } from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"
import type { EffectCompensation } from "../../Saga.js"
import { CommandRefused, EffectNotFound } from "../../SagaError.js"
import { distrust, tamperedAt, withoutMac } from "../journal/decisions.js"
import { sagaDraft, stepDraft } from "../journal/drafts.js"
import { sha256 } from "../journal/hash.js"
import { addressesOf, runIdOf, stepKey } from "../journal/ids.js"
import type { ExplicitOutcome } from "../journal/payloads.js"
import type { VerifiedJournal } from "../journal/verified.js"
import type { JournalView, StepView } from "../journal/view.js"
import { isIrreversible, isUnknown, viewOf } from "../journal/view.js"
import type { Writer } from "../journal/writer.js"
import { claimAndLoad } from "../journal/writer.js"
import type { ExplicitUndo, Lookup } from "./compensation.js"
import { changedNothing, IRREVERSIBLE, outcomeOfPhase, runUndo, unavailability, undoToolOf } from "./compensation.js"
import type { Expiring } from "./expiry.js"
import { expiredAt, expiredReason } from "./expiry.js"
import * as Receipts from "./receipts.js"
import { undecided, withdrawals, withdrawFrom, withdrawnBecause } from "./withdrawal.js"

/** What an explicit undo of one effect came to. */
export type EffectOutcome = ExplicitOutcome

/** The saga, its journal and the step an effect id (a step's forward idempotency key) names. */
export interface Subject {
  readonly effectId: string
  readonly sagaId: string
  readonly view: JournalView
  readonly step: StepView
}

/**
 * Finds the step an effect id names: `stepKey(sagaId, stepId)`, read at the `/` that names a saga
 * and one of its steps (saga ids may hold a `/` themselves).
 */
export const findSubject = (journal: VerifiedJournal, effectId: string) =>
  Effect.gen(function* () {
    for (const { sagaId, stepId } of addressesOf(effectId)) {
      // Read verified, not looked up by its row: a saga whose row was deleted, or no longer decodes,
      // is `JournalTampered`, not an effect that does not exist.
      const entries = yield* journal.read(sagaId)
      if (entries.length === 0) continue
      const view = yield* viewOf(entries)
      const step = view.steps.get(stepId)
      if (step !== undefined) return { effectId, sagaId, view, step } satisfies Subject
    }
    return yield* new EffectNotFound({ effectId })
  })

/** The journaled answer of a finished run: what its last entry says. */
export const answerOf = (effectId: string, view: JournalView): EffectCompensation | undefined => {
  const last = view.last
  if (last === undefined || last.stepId !== null) return undefined
  switch (last.phase) {
    case "SAGA_COMPLETED":
    case "SAGA_NEEDS_ATTENTION":
    case "SAGA_COMPENSATION_FAILED": {
      const answer = last.payload
      return answer !== null && "outcome" in answer
        ? { _tag: "Settled", effectId, runId: runIdOf(effectId), outcome: answer.outcome, detail: answer.detail }
        : undefined
    }
    default:
      return undefined
  }
}

/** How an explicit undo of a step stands, for a saga's own compensation to take over. */
export const explicitUndoOf = (journal: VerifiedJournal) => (sagaId: string, step: StepView) =>
  Effect.map(
    Effect.flatMap(journal.read(runIdOf(stepKey(sagaId, step.stepId))), viewOf),
    (view): ExplicitUndo | undefined => {
      const answer = answerOf(stepKey(sagaId, step.stepId), view)
      if (answer?._tag === "Settled") return { outcome: answer.outcome, detail: answer.detail }
      const undo = view.steps.get(step.stepId)
      return undo?.compensating !== undefined ? { outcome: "pending", detail: undefined } : undefined
    }
  )

const finalPhase = {
  completed: "SAGA_COMPLETED",
  unknown: "SAGA_NEEDS_ATTENTION",
  partial: "SAGA_COMPENSATION_FAILED",
  failed: "SAGA_COMPENSATION_FAILED",
  unavailable: "SAGA_COMPENSATION_FAILED"
} as const satisfies Record<EffectOutcome, string>

/** What one explicit undo needs. */
export interface Context {
  readonly journal: VerifiedJournal
  readonly approval: Approval["Type"]
  readonly lookup: Lookup
  /** Why `lookup` finds no tool of that name (`Registry.absence`). */
  readonly absence: (toolName: string) => string
  readonly holder: Holder
  readonly approvalTtl: Duration.Duration | undefined
  /** The journal key ring: what an approval store's decisions are signed with. */
  readonly journalKeys: KeyRing | undefined
  /** The keys sealed receipts are opened with (the `Saga` layer's `EFFECT_SAGA_RECEIPT_KEYS`). */
  readonly receiptKeys: KeyRing | undefined
  /** Whether interrupting the caller interrupts the undo (see `runUndo`). */
  readonly stopsWithCaller?: boolean | undefined
}

/**
 * Undoes one applied effect as a run of its own (journal id `runIdOf(effectId)`), whose writer the
 * caller loaded under its lease. Journals the answer as the run's last entry, so that asking again
 * is a pure read. The saga's own journal is only read: its step stays `EXECUTED`.
 */
export const compensateEffect = (ctx: Context, subject: Subject, run: Writer) =>
  Effect.gen(function* () {
    const { effectId, step } = subject
    const runId = runIdOf(effectId)
    // A run that answers without running its undo (the saga settled the step since) withdraws the
    // request its undo still waits on, as a saga does: nobody is left to approve an answered run.
    const settle = (outcome: EffectOutcome, detail: string | undefined, drafts: ReadonlyArray<Draft> = []) => {
      const waiting = undecided(run.view)
      const withdrawn = withdrawals(run.view, withdrawnBecause.settled)
      return run
        .append([...drafts, ...withdrawn, sagaDraft(finalPhase[outcome], { effectId, outcome, detail })])
        .pipe(
          Effect.zipRight(
            Effect.forEach(waiting, (undo) =>
              withdrawFrom(ctx.approval)(stepKey(runId, undo.stepId), withdrawnBecause.settled)
            )
          ),
          Effect.as({ _tag: "Settled" as const, effectId, runId, outcome, detail })
        )
    }
    // The marker travels with the call's first write, as a saga's resume does: a run awaiting its
    // approval is `running` again before its undo starts, so each append keeps the run's lease.
    if (!run.view.exists) run.prepend([sagaDraft("SAGA_STARTED", { effectId })])
    else if (run.view.status === "awaiting_approval") run.prepend([sagaDraft("SAGA_RESUMED", null)])

    const undo = run.view.steps.get(step.stepId)
    if (undo?.compensation !== undefined) {
      const { payload, phase } = undo.compensation
      const outcome = outcomeOfPhase[phase]
      // The detail taken over is the reason an outcome gives (a partial one's `remaining` is not).
      const reason = payload !== null && "reason" in payload ? payload.reason : undefined
      return yield* settle(outcome === "skipped" ? "unavailable" : outcome, reason)
    }
    if (undo?.compensating !== undefined) {
      // As the saga's own compensation settles a dead undo: COMPENSATION_UNKNOWN, then the answer.
      const reason = "the undo started but its outcome was never journaled"
      return yield* settle("unknown", reason, [stepDraft(undo, "COMPENSATION_UNKNOWN", { reason })])
    }
    // The saga's own compensation may have settled the step already: its answer stands.
    if (step.compensation !== undefined) {
      const outcome = outcomeOfPhase[step.compensation.phase]
      return yield* settle(outcome === "skipped" ? "unavailable" : outcome, "settled by the saga's compensation")
    }
    if (step.compensating !== undefined) {
      return yield* settle("unknown", "the saga's own undo of this step started but has no outcome")
    }
    const notHere = (detail: string) =>
      Effect.succeed({ _tag: "Settled" as const, effectId, runId, outcome: "unavailable" as const, detail })
    // A read leaves nothing to undo, whatever this process holds: nothing is journaled, as the
    // saga's own compensation passes over it.
    if (changedNothing(step)) return yield* notHere(NOTHING_TO_UNDO)
    const tool = undoToolOf(ctx, step)
    // Nothing is journaled for a tool not here (`undoToolOf`), or a receipt that does not open here
    // (asked before any approval): a process that has the tool and the key can still undo the effect.
    // An irreversible step has no undo in any process: answered as where its tool is.
    if (typeof tool === "string") {
      return yield* isIrreversible(subject.sagaId, step) ? settle("unavailable", IRREVERSIBLE) : notHere(tool)
    }
    const receipt = Receipts.forUndo(ctx.receiptKeys, subject.sagaId, step.stepId, step.executed!.payload.receipt)
    if (tool.spec.compensate !== undefined && Either.isLeft(receipt)) return yield* notHere(receipt.left)
    // An undo that cannot run here is answered before anyone is asked to approve it.
    const cannot = unavailability(tool, step)
    if (cannot !== undefined) return yield* settle("unavailable", cannot[1])
    if (tool.spec.approveExplicitUndo) {
      // The tool's `approvalTtl` is for its forward approvals: an undo's lasts the layer's.
      const gate = yield* approvalGate(ctx, subject, run, undo, ctx.approvalTtl)
      if (gate._tag === "Waiting") {
        if (run.view.status !== "awaiting_approval") {
          yield* run.append([
            sagaDraft("SAGA_AWAITING_APPROVAL", { stepId: step.stepId, requestId: gate.request.requestId })
          ])
        }
        return { _tag: "AwaitingApproval" as const, effectId, runId, request: gate.request }
      }
      if (gate._tag === "Refused") return yield* settle("failed", gate.reason)
    }
    const report = yield* runUndo(run, tool, step, {
      sagaId: subject.sagaId,
      idempotencyKey: runId,
      receiptKeys: ctx.receiptKeys,
      stopsWithCaller: ctx.stopsWithCaller
    })
    const outcome = report.outcome === "skipped" ? "unavailable" : report.outcome
    return yield* settle(outcome, report.detail)
  })

/** The answer for a read (`changesNothing`). */
export const NOTHING_TO_UNDO = "a read (changesNothing): it changed nothing, so there is nothing to undo"

type Gate =
  | { readonly _tag: "Approved" }
  | { readonly _tag: "Waiting"; readonly request: ApprovalRequest }
  | { readonly _tag: "Refused"; readonly reason: string }

/**
 * The explicit undo's own approval: requested for the step's journaled input, verified against its
 * digest and expiry. The forward step's approval is not inherited.
 */
const approvalGate = (
  ctx: Context,
  subject: Subject,
  run: Writer,
  undo: StepView | undefined,
  approvalTtl: Duration.Duration | undefined
) =>
  Effect.gen(function* () {
    const { step } = subject
    const input = step.input ?? "null"
    const inputDigest = sha256(input)
    if (undo?.refused !== undefined) return { _tag: "Refused", reason: undo.refused.payload.reason } satisfies Gate
    let decision: (Expiring & { readonly inputDigest: string }) | undefined = undo?.approved?.payload
    if (decision === undefined) {
      // A request this run journals is new: what the store holds under its id is an earlier run's.
      const fresh = undo?.awaiting === undefined
      if (fresh) yield* run.append([stepDraft(step, "AWAITING_APPROVAL", { inputDigest }, input)])
      const awaiting = run.view.steps.get(step.stepId)!.awaiting!
      const request: ApprovalRequest = {
        requestId: stepKey(run.sagaId, step.stepId),
        sagaId: run.sagaId,
        stepId: step.stepId,
        toolName: step.toolName,
        input,
        inputDigest,
        requestedAt: awaiting.at
      }
      const answer = yield* Effect.mapError(
        ctx.approval.request(request, { fresh }),
        tamperedAt(run.sagaId, awaiting.seq)
      )
      const distrusted = distrust(ctx.approval, ctx.journalKeys, request, answer)
      if (distrusted !== undefined) {
        // The run's view is what is wrong if the journal moved on since it was read (as in run.ts's `trust`).
        const stale = yield* run.staleness()
        const seq = awaiting.seq
        return yield* stale ?? new JournalTampered({ sagaId: run.sagaId, seq, problem: "approval", reason: distrusted })
      }
      if (answer._tag === "Pending") return { _tag: "Waiting", request } satisfies Gate
      if (answer._tag === "Rejected") {
        const reason = `rejected by ${answer.by}: ${answer.reason}`
        yield* run.append([stepDraft(step, "REJECTED", { ...answer, reason })])
        return { _tag: "Refused", reason } satisfies Gate
      }
      yield* run.append([stepDraft(step, "APPROVED", withoutMac(answer))])
      decision = answer
    }
    const refuse = (phase: "REJECTED" | "EXPIRED", reason: string) =>
      Effect.as(run.append([stepDraft(step, phase, { reason })]), { _tag: "Refused", reason } satisfies Gate)
    if (decision.inputDigest !== inputDigest) return yield* refuse("REJECTED", "the approval names a different input")
    const expired = yield* expiredAt(decision, approvalTtl)
    if (expired !== undefined) return yield* refuse("EXPIRED", expiredReason(decision, expired))
    return { _tag: "Approved" } satisfies Gate
  })

/** Why an effect cannot be undone on request at all: it was never applied, or may not have been. */
export const notApplied = (subject: Subject): CommandRefused | undefined => {
  const { effectId, step } = subject
  const refuse = (reason: string) => new CommandRefused({ sagaId: subject.sagaId, stepId: step.stepId, reason })
  if (step.executed !== undefined) return undefined
  if (isUnknown(step)) {
    return refuse(`the outcome of effect ${effectId} is unknown: resolve it (Saga.resolve) before undoing it`)
  }
  return refuse(`effect ${effectId} was never applied (${step.failed !== undefined ? "FAILED" : "not run"})`)
}

/** Whether a run's journal already holds its answer (then asking again is a pure read). */
export const finishedAnswer = (effectId: string, view: JournalView): EffectCompensation | undefined =>
  isFinished(view.status) || view.status === "needs_attention" ? answerOf(effectId, view) : undefined

/** Loads the run's journal under `holder`'s lease (a new run gets it with its first write). */
export const loadRun = (journal: VerifiedJournal, effectId: string, holder: Holder) =>
  claimAndLoad(journal, runIdOf(effectId), holder)

/** The effect id of an explicit undo's run, if the journal is one. */
export const effectIdOf = (view: JournalView): string | undefined => {
  const started = view.started?.payload
  return started != null && "effectId" in started ? started.effectId : undefined
}

/**
 * The answer to an operator who rejected an explicit undo's approval: the undo never runs, the
 * effect stays applied. Journals the run's answer (once) and reports the step as not undone.
 */
export const rejected = (run: Writer, stepId: string, reason: string) =>
  Effect.gen(function* () {
    const step = run.view.steps.get(stepId)
    if (answerOf(effectIdOf(run.view) ?? "", run.view) === undefined)
      yield* run.append([rejectedAnswer(run.view, reason)])
    return Report.make(run.sagaId, [{ stepId, toolName: step?.toolName ?? "", outcome: "failed", detail: reason }], [])
  })

/** The answer an undo run whose approval was rejected journals last. */
export const rejectedAnswer = (run: JournalView, reason: string) =>
  sagaDraft("SAGA_COMPENSATION_FAILED", { effectId: effectIdOf(run), outcome: "failed", detail: reason })
