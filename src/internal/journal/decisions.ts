/** Signing an approval decision with the journal key, bound to the request it decides. */
import * as Predicate from "effect/Predicate"
import type { Approval, ApprovalRequest, ApprovalTampered, Decision } from "../../Approval.js"
import type { KeyRing } from "../../Keys.js"
import type { Check } from "../util/crypto.js"
import { DECISION_DOMAIN, sign, unknownKeyReason, verifyMac } from "../util/crypto.js"
import { millisOf } from "../util/isoTime.js"
import { JournalTampered } from "./errors.js"
import { stepKey } from "./ids.js"
import type { StepView } from "./view.js"

/**
 * The approval request a step's `AWAITING_APPROVAL` entry makes: what a run asks the `Approval`
 * service, and what an operator's command registers again when the store lost it. Requested when
 * journaled: every run, and the service, name the same time.
 */
export const requestOf = (sagaId: string, step: StepView): ApprovalRequest => {
  const asked = step.awaiting!
  return {
    requestId: stepKey(sagaId, step.stepId),
    sagaId,
    stepId: step.stepId,
    toolName: step.toolName,
    input: asked.input ?? "null",
    inputDigest: asked.payload.inputDigest,
    requestedAt: asked.at
  }
}

/**
 * What a decision's MAC binds: the request (its saga, step, tool, input digest and when it was
 * requested: a decision of an earlier saga of the same id does not verify) and every field of the
 * decision.
 */
type Subject = Pick<ApprovalRequest, "requestId" | "sagaId" | "stepId" | "toolName" | "inputDigest" | "requestedAt">

/** The decision's fields in a fixed order, whatever order its object has. */
const fieldsOf = (decision: Decision): ReadonlyArray<unknown> => {
  switch (decision._tag) {
    case "Pending":
      return ["Pending"]
    case "Rejected":
      return ["Rejected", decision.by, decision.at, decision.reason]
    case "Approved":
      return [
        ...["Approved", decision.by, decision.at, decision.inputDigest],
        ...[decision.expiresAt ?? null, decision.renewedBy ?? null, decision.renewedAt ?? null]
      ]
  }
}

const textOf = (request: Subject, decision: Decision): string =>
  JSON.stringify([
    request.requestId,
    request.sagaId,
    request.stepId,
    request.toolName,
    request.inputDigest,
    request.requestedAt,
    fieldsOf(decision)
  ])

/** `decision` with its MAC under `keys` (unchanged without keys, or for a pending one). */
export const signDecision = (keys: KeyRing | undefined, request: Subject, decision: Decision): Decision =>
  keys === undefined || decision._tag === "Pending"
    ? decision
    : { ...decision, mac: sign(keys, DECISION_DOMAIN, textOf(request, decision)) }

/** Whether `decision` carries a MAC under `keys` over exactly `request` and its own fields. */
export const checkDecision = (keys: KeyRing, request: Subject, decision: Decision): Check | "unsigned" =>
  decision._tag === "Pending" || decision.mac === undefined
    ? "unsigned"
    : verifyMac(keys, DECISION_DOMAIN, textOf(request, decision), decision.mac)

/** A decision without its MAC. */
export type Unsigned<D extends Decision> = D extends Decision ? Omit<D, "mac"> : never

/** `decision` without its MAC: what is journaled. */
export const withoutMac = <D extends Decision>(decision: D): Unsigned<D> => {
  if (decision._tag === "Pending" || decision.mac === undefined) return decision as Unsigned<D>
  const { mac: _mac, ...rest } = decision
  return rest as Unsigned<D>
}

/** Who the approval store says decided the request, and which way. */
export const heldBy = (request: Pick<ApprovalRequest, "stepId">, decision: Exclude<Decision, { _tag: "Pending" }>) =>
  `the approval store says step ${request.stepId} was ${decision._tag.toLowerCase()} by ${decision.by}`

/**
 * Why a decision the journal does not hold yet must not be acted on, or `undefined` when it may:
 * it lives in this process (the memory layers), or it carries a valid MAC under the journal key
 * over exactly this request.
 */
export const distrust = (
  approval: Approval["Type"],
  keys: KeyRing | undefined,
  request: ApprovalRequest,
  decision: Decision
): string | undefined => {
  if (decision._tag === "Pending" || approval.inProcess === true) return undefined
  const said = heldBy(request, decision)
  const check = keys === undefined ? "no-key" : checkDecision(keys, request, decision)
  switch (check) {
    case "ok":
      return undefined
    case "no-key":
      if (decision.mac !== undefined) {
        return `${said}, but the journal holds no such decision, and its MAC cannot be checked here: this process has no journal key (EFFECT_SAGA_JOURNAL_KEYS)`
      }
      // A command approves the input the journal asked about, and renews only what the journal holds.
      return decision._tag === "Approved" && decision.inputDigest !== request.inputDigest
        ? `${said}, of another input than the one the journal asked about (its digest ${String(decision.inputDigest).slice(0, 12)}…, not ${request.inputDigest.slice(0, 12)}…), and no journal key signs it: no command made it, it was forged or made through the Approval service alone`
        : `${said}, but the journal holds no such decision and no journal key signs it: it was forged, made through the Approval service alone, or by a Saga.approve or Saga.reject that stopped before journaling it (that command, asked again, finishes it)`
    case "unsigned":
      return `${said}, but the decision carries no MAC under the journal key: it was forged, or made before the key was configured`
    case "unknown-key":
      return `${said}, but ${unknownKeyReason(decision.mac!, "decisions")}`
    default:
      return `${said}, but its MAC does not verify (${check}): the decision, its digest, its expiry or its request was edited`
  }
}

/**
 * A store's `ApprovalTampered` (its record of the request was edited) as the saga reports it:
 * `JournalTampered` (`approval`) at `seq`, the entry that asked for the approval. Other errors pass.
 */
export const tamperedAt =
  (sagaId: string, seq: number) =>
  <E>(error: E | ApprovalTampered): Exclude<E, ApprovalTampered> | JournalTampered =>
    // By tag: this module imports no value of `Approval`, which builds its inbox on `distrust`.
    Predicate.isTagged(error, "ApprovalTampered")
      ? new JournalTampered({ sagaId, seq, problem: "approval", reason: error.message })
      : (error as Exclude<E, ApprovalTampered>)

/**
 * Why a decision the store holds cannot be this command's, stopped between its writes: it is
 * dated before the request or after now, or in a form no command writes (a time an edit of the
 * table chose).
 */
export const outOfTime = (
  request: ApprovalRequest,
  decision: Exclude<Decision, { _tag: "Pending" }>,
  now: number
): string | undefined => {
  const at = millisOf(decision.at)
  const held = `${heldBy(request, decision)} at ${JSON.stringify(decision.at)}`
  // A command writes its time as `toISOString` does: UTC, to the millisecond.
  if (at === undefined || new Date(at).toISOString() !== decision.at) {
    return `${held}, which is no time a command writes (ISO-8601 in UTC, to the millisecond): no command made it, the approvals table was edited`
  }
  const requested = millisOf(request.requestedAt)
  if (at <= now && (requested === undefined || at >= requested)) return undefined
  return `${held}, which is not between the request (${request.requestedAt}) and now: no command made it, the approvals table was edited`
}
