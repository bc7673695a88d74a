/**
 * A pending approval request as its saga's journal holds it: the approvals table keeps a copy of
 * each request (its input and digest), and whoever shows the request to a person shows the
 * journal's, marking a copy that departs from it. `Approval.inbox` marks its requests by it, and
 * the HTTP API and the CLI read it here for the input and mark they print.
 */
import * as Either from "effect/Either"
import type { ApprovalRequest, PendingRequest } from "../../Approval.js"
import type { Entry, TamperProblem } from "../../Journal.js"
import { decodePayload } from "../../Journal.js"
import { stepKey } from "./ids.js"

/**
 * Where and how a request's copy departs from the journal (`seq` is `null` when no entry backs it).
 *
 * @since 0.3.0
 * @category models
 */
export interface CopyProblem {
  readonly seq: number | null
  readonly problem: TamperProblem
  readonly reason: string
}

/**
 * A request as the journal holds it: its input and digest (`null` where it holds none), and any
 * problem with the approvals table's copy.
 *
 * @since 0.3.0
 * @category models
 */
export interface JournaledRequest {
  readonly input: string | null
  readonly inputDigest: string | null
  readonly problem: CopyProblem | null
}

/** The entry that asked for the approval: the step's last `AWAITING_APPROVAL`. */
const askedIn = (entries: ReadonlyArray<Entry>, stepId: string): Entry | undefined =>
  entries.filter((entry) => entry.phase === "AWAITING_APPROVAL" && entry.stepId === stepId).at(-1)

/**
 * `request` (from `Approval.pending`) as its saga's `entries` hold it: the input and digest of the
 * step's last `AWAITING_APPROVAL`, which is what a person deciding should see. `problem` marks a
 * request no entry backs, an entry whose payload does not decode, a request the store marked
 * `tampered` (its status or decision was edited), or a copy whose input, digest, tool or time of
 * request is not the journal's (the approvals table was edited). Read the entries through a check of the chain
 * (`Saga.status(sagaId).tampered`): a tampered saga's entries are not evidence either.
 *
 * @since 0.3.0
 * @category reading
 */
export const journaledRequest = (request: PendingRequest, entries: ReadonlyArray<Entry>): JournaledRequest => {
  const asked = askedIn(entries, request.stepId)
  if (asked === undefined) {
    const reason = "the approvals table holds a request its saga's journal never made"
    return { input: null, inputDigest: null, problem: { seq: null, problem: "approval", reason } }
  }
  const payload = decodePayload("AWAITING_APPROVAL", asked.payload)
  if (Either.isLeft(payload)) {
    const reason = "its AWAITING_APPROVAL payload does not decode"
    return { input: asked.input, inputDigest: null, problem: { seq: asked.seq, problem: "undecodable", reason } }
  }
  const { inputDigest } = payload.right
  if (request.tampered !== undefined) {
    return {
      input: asked.input,
      inputDigest,
      problem: { seq: asked.seq, problem: "approval", reason: request.tampered }
    }
  }
  const journaled = { input: asked.input, inputDigest, toolName: asked.toolName, requestedAt: asked.at }
  const reason = copyDeparture(asked.seq, journaled, request)
  return {
    input: asked.input,
    inputDigest,
    problem: reason === undefined ? null : { seq: asked.seq, problem: "approval", reason }
  }
}

/** The phases that answer a step's request for approval, or make it moot. */
const answering = new Set<string>(["APPROVED", "REJECTED", "EXPIRED", "INTENT", "FAILED", "SKIPPED"])

/**
 * The approval requests a saga's `entries` still wait on, as the journal made them: each step
 * whose last `AWAITING_APPROVAL` has no decision (nor a run) after it. A step whose payload does
 * not decode is left out: the saga's reader marks the entry. `trustedBefore`: the `seq` of a
 * journal's first entry that does not verify, from which on a decision is no answer (it may be
 * forged), though a request is still one the journal names.
 *
 * @since 0.4.0
 * @category reading
 */
export const awaitedRequests = (
  entries: ReadonlyArray<Entry>,
  trustedBefore = Number.POSITIVE_INFINITY
): Array<ApprovalRequest> => {
  const open = new Map<string, ApprovalRequest>()
  for (const entry of entries) {
    if (entry.stepId === null) continue
    if (answering.has(entry.phase) && entry.seq < trustedBefore) open.delete(entry.stepId)
    if (entry.phase !== "AWAITING_APPROVAL") continue
    const payload = decodePayload("AWAITING_APPROVAL", entry.payload)
    if (Either.isLeft(payload)) continue
    open.set(entry.stepId, {
      requestId: stepKey(entry.sagaId, entry.stepId),
      sagaId: entry.sagaId,
      stepId: entry.stepId,
      toolName: entry.toolName ?? "",
      input: entry.input ?? "null",
      inputDigest: payload.right.inputDigest,
      requestedAt: entry.at
    })
  }
  return Array.from(open.values())
}

/**
 * The entry that answered step `stepId`'s last request for approval (or made it moot), if one did.
 *
 * @since 0.4.0
 * @category reading
 */
export const answeredRequest = (entries: ReadonlyArray<Entry>, stepId: string): Entry | undefined => {
  const asked = askedIn(entries, stepId)
  return asked === undefined
    ? undefined
    : entries.find((entry) => entry.seq > asked.seq && entry.stepId === stepId && answering.has(entry.phase))
}

/** Why a request the store still lists as waiting is not to be decided: the journal answered it at `answer`. */
export const behindTheJournal = (answer: Entry): string =>
  `the approvals table lists the request as waiting, but the journal answered it at seq ${answer.seq} (${answer.phase}): the table is behind the journal (edited, restored from an older copy, or a withdrawal never reached it)`

/**
 * Why a request of a saga whose journal does not verify is not to be decided: nothing past the
 * break (`seq`, `problem`, `reason`, as `Saga.status(sagaId).tampered` names it) says whether it waits.
 */
export const journalBroken = (broken: {
  readonly seq: number
  readonly problem: TamperProblem
  readonly reason: string
}): string =>
  `its saga's journal does not verify at seq ${broken.seq} (${broken.problem}): ${broken.reason}; what the journal says of the request is not evidence`

/** What a request's copy is checked on against the entry that asked for it. */
interface Copied {
  readonly input: string | null
  readonly inputDigest: string
  readonly toolName: string | null
  readonly requestedAt: string
}

/**
 * How the approvals table's `copy` of a request departs from the request the journal holds at
 * `seq`, `undefined` if it does not: the table was edited.
 */
export const copyDeparture = (seq: number, journaled: Copied, copy: Copied): string | undefined => {
  if (journaled.input !== copy.input) return copyEdited(seq, "the input")
  if (journaled.inputDigest !== copy.inputDigest) return copyEdited(seq, "the input's digest")
  if (journaled.toolName !== copy.toolName || journaled.requestedAt !== copy.requestedAt) {
    return `the approvals table's copy of the request names another tool or time than the journal holds at seq ${seq} (tool ${journaled.toolName}, requested ${journaled.requestedAt}): the table was edited`
  }
  return undefined
}

/** Why a request's copy in the approvals table is not evidence: its `what` departs from the journal's entry at `seq`. */
const copyEdited = (seq: number, what: string): string =>
  `the approvals table's copy of ${what} is not the one the journal holds at seq ${seq} (shown): the table was edited`
