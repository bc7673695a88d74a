/**
 * Human approval for irreversible steps. The saga asks; a person (or a policy layer) decides.
 *
 * NOTE: a decision is bound to the SHA-256 of the step's encoded input. The saga runs the step only
 * when the approval names exactly the input it is about to send, and has not expired.
 *
 * @since 0.1.0
 */

import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import {
  answeredRequest,
  awaitedRequests,
  behindTheJournal,
  journalBroken,
  journaledRequest
} from "./internal/journal/approvalCopy.js"
import { distrust } from "./internal/journal/decisions.js"
import { pageProblem } from "./internal/journal/pagedRows.js"
import * as Signing from "./internal/journal/signing.js"
import { listRows } from "./internal/journal/storedRows.js"
import { type Inspected, inspect, tamperOf } from "./internal/journal/verified.js"
import { nowIso } from "./internal/util/clock.js"
import { liveLease } from "./internal/util/lease.js"
import type { Entry, JournalError } from "./Journal.js"
import * as Journal from "./Journal.js"
import type { KeyError, KeyRing } from "./Keys.js"

/**
 * What a saga asks a human to approve. `requestId` is `sagaId/stepId`: one request per step.
 *
 * @since 0.1.0
 * @category models
 */
export const ApprovalRequest = Schema.Struct({
  requestId: Schema.String,
  sagaId: Schema.String,
  stepId: Schema.String,
  toolName: Schema.String,
  input: Schema.String,
  inputDigest: Schema.String,
  requestedAt: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export type ApprovalRequest = typeof ApprovalRequest.Type

/**
 * A request as `pending` lists it. `tampered`, when present, says why its record in a persisted
 * store cannot be trusted (its status or decision was edited behind the library's back): it is
 * listed so that it is seen, and nothing can decide it.
 *
 * @since 0.3.0
 * @category models
 */
export const PendingRequest = Schema.Struct({
  ...ApprovalRequest.fields,
  tampered: Schema.optional(Schema.String)
})

/**
 * @since 0.3.0
 * @category models
 */
export type PendingRequest = typeof PendingRequest.Type

/**
 * A human's answer. `Approved` names the input digest that was approved and, optionally, when the
 * approval expires (ISO-8601 UTC); a renewed approval also names who renewed it and when. `mac`:
 * a persisted store's signature of the decision under the journal key (`EFFECT_SAGA_JOURNAL_KEYS`),
 * bound to its request, when one is configured.
 *
 * @since 0.1.0
 * @category models
 */
export const Decision = Schema.Union(
  Schema.TaggedStruct("Pending", {}),
  Schema.TaggedStruct("Approved", {
    by: Schema.String,
    at: Schema.String,
    inputDigest: Schema.String,
    expiresAt: Schema.optional(Schema.String),
    renewedBy: Schema.optional(Schema.String),
    renewedAt: Schema.optional(Schema.String),
    mac: Schema.optional(Schema.String)
  }),
  Schema.TaggedStruct("Rejected", {
    by: Schema.String,
    at: Schema.String,
    reason: Schema.String,
    mac: Schema.optional(Schema.String)
  })
)

/**
 * @since 0.1.0
 * @category models
 */
export type Decision = typeof Decision.Type

/**
 * The type id the approval service's errors carry: `isApprovalError` checks it, never a `_tag`
 * that a plain value could share.
 *
 * @since 0.2.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("effect-saga/Approval/Error")

/**
 * @since 0.2.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * No request with that id is known to the approval service.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApprovalNotFound extends Schema.TaggedError<ApprovalNotFound>("effect-saga/ApprovalNotFound")(
  "ApprovalNotFound",
  { requestId: Schema.String }
) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `no approval request ${this.requestId}`
  }
}

/**
 * The request was already decided; a decision is never overwritten. `detail`, from an operator's
 * command (`Saga.approve`, `Saga.reject`): who made the decision the store holds, that the journal
 * does not hold it, and whether a run will act on it; the message then reads `approval request …
 * holds a decision already: the approval store says …` (the store's word, which may be forged).
 *
 * @since 0.1.0
 * @category errors
 */
export class AlreadyDecided extends Schema.TaggedError<AlreadyDecided>("effect-saga/AlreadyDecided")("AlreadyDecided", {
  requestId: Schema.String,
  decision: Schema.String,
  /** @since 0.5.0 */
  detail: Schema.optional(Schema.String)
}) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    // The detail says whose the decision is and whether it can be trusted: not stated as fact before it.
    return this.detail === undefined
      ? `approval request ${this.requestId} was already ${this.decision}`
      : `approval request ${this.requestId} holds a decision already: ${this.detail}`
  }
}

/**
 * Only an approved request can be renewed; this one is still pending.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotApproved extends Schema.TaggedError<NotApproved>("effect-saga/NotApproved")("NotApproved", {
  requestId: Schema.String
}) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `approval request ${this.requestId} is not approved yet: approve it, there is nothing to renew`
  }
}

/**
 * A renewal named another input digest than the approval it renews: an approval never moves to an
 * input nobody approved.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApprovalMismatch extends Schema.TaggedError<ApprovalMismatch>("effect-saga/ApprovalMismatch")(
  "ApprovalMismatch",
  { requestId: Schema.String, approvedDigest: Schema.String, inputDigest: Schema.String }
) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `approval request ${this.requestId} approved input ${this.approvedDigest}, not ${this.inputDigest}`
  }
}

/**
 * A persisted store's record of the request was edited behind the library's back: its status or its
 * decision is not one the store wrote (a status that is no decision, or not its decision's; a
 * column that does not decode), so nothing can tell what was decided. Nothing is decided or changed;
 * the saga's commands and runs report it as `JournalTampered` (`problem: "approval"`).
 *
 * @since 0.3.0
 * @category errors
 */
export class ApprovalTampered extends Schema.TaggedError<ApprovalTampered>("effect-saga/ApprovalTampered")(
  "ApprovalTampered",
  { requestId: Schema.String, reason: Schema.String }
) {
  /** @since 0.3.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `approval request ${this.requestId} cannot be trusted: ${this.reason}`
  }
}

/**
 * Whether a value is one of the approval service's errors (`ApprovalNotFound`, `AlreadyDecided`,
 * `NotApproved`, `ApprovalMismatch`, `ApprovalTampered`), by its `ErrorTypeId`.
 *
 * @since 0.2.0
 * @category guards
 */
export const isApprovalError = (
  u: unknown
): u is ApprovalNotFound | AlreadyDecided | NotApproved | ApprovalMismatch | ApprovalTampered =>
  Predicate.hasProperty(u, ErrorTypeId)

/**
 * What `renew` is told: who renews, the input digest they saw (it must be the approved one), and the
 * new expiry (ISO-8601 UTC; absent: the approval lasts its TTL from the renewal, or has no expiry).
 *
 * @since 0.1.0
 * @category models
 */
export interface RenewOptions {
  readonly by: string
  readonly inputDigest: string
  readonly expiresAt?: string | undefined
}

/**
 * Why a renewal fails: unknown request, rejected (`AlreadyDecided`), still pending, or another digest.
 *
 * @since 0.1.0
 * @category errors
 */
export type RenewError = ApprovalNotFound | AlreadyDecided | NotApproved | ApprovalMismatch

/**
 * The decision renewing `decision` makes (same approver, time and digest; the new expiry; who renewed
 * it and when), or why it cannot be renewed. Every `Approval` backend renews through it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const renewal = (
  requestId: string,
  decision: Decision,
  options: RenewOptions,
  at: string
): Effect.Effect<Decision, RenewError> => {
  switch (decision._tag) {
    case "Pending":
      return Effect.fail(new NotApproved({ requestId }))
    case "Rejected":
      return Effect.fail(new AlreadyDecided({ requestId, decision: "rejected" }))
    case "Approved":
      if (decision.inputDigest !== options.inputDigest) {
        return Effect.fail(
          new ApprovalMismatch({ requestId, approvedDigest: decision.inputDigest, inputDigest: options.inputDigest })
        )
      }
      return Effect.succeed({
        _tag: "Approved",
        by: decision.by,
        at: decision.at,
        inputDigest: decision.inputDigest,
        ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
        renewedBy: options.by,
        renewedAt: at
      })
  }
}

/**
 * How a run registers a request. `fresh`: the run has just journaled the request's
 * `AWAITING_APPROVAL`, so no record of this saga's can exist yet under its id: whatever the store
 * holds there is an earlier saga's of the same id, and is replaced.
 *
 * @since 0.4.0
 * @category models
 */
export interface RequestOptions {
  readonly fresh?: boolean | undefined
}

/**
 * Whether a store's record `held` is `request`'s own, so that its decision answers it: not when the
 * run registers it `fresh`, nor when the record was requested at another time (an earlier saga of
 * the same id). A store's `request` replaces a record that is not.
 *
 * @since 0.4.0
 * @category models
 */
export const holdsRequest = (
  held: { readonly requestedAt: unknown },
  request: ApprovalRequest,
  options?: RequestOptions
): boolean => options?.fresh !== true && held.requestedAt === request.requestedAt

/**
 * The approval service. A store beside the journal that cannot be read or written fails with the
 * journal's `JournalError`; a persisted store whose record of a request was edited behind the
 * library's back fails with `ApprovalTampered`.
 *
 * @since 0.1.0
 * @category services
 */
export class Approval extends Context.Tag("effect-saga/Approval")<
  Approval,
  {
    /**
     * Whether its decisions live in this process's memory, where nothing edits them behind the
     * library's back (the memory layers). A run acts on a decision the journal does not hold yet
     * only if it does, or if the decision carries a valid MAC under the journal key; a persisted
     * store (absent or `false`) without a key must be decided through `Saga.approve` / `reject`.
     */
    readonly inProcess?: boolean | undefined
    /**
     * Registers a request (once) and returns its current decision. A record under the same id that
     * was requested at another time, or any record when `options.fresh` is set, is an earlier saga's
     * of the same id (that saga was pruned, its approvals kept): the request replaces it, pending
     * (or as the store's policy decides), and its decision is never this saga's.
     */
    readonly request: (
      request: ApprovalRequest,
      options?: RequestOptions
    ) => Effect.Effect<Decision, ApprovalTampered | JournalError>
    /** Approves a pending request for exactly `inputDigest`. */
    readonly approve: (
      requestId: string,
      options: { readonly by: string; readonly inputDigest: string; readonly expiresAt?: string | undefined }
    ) => Effect.Effect<void, ApprovalNotFound | AlreadyDecided | ApprovalTampered | JournalError>
    /** Rejects a pending request. */
    readonly reject: (
      requestId: string,
      options: { readonly by: string; readonly reason: string }
    ) => Effect.Effect<void, ApprovalNotFound | AlreadyDecided | ApprovalTampered | JournalError>
    /** Gives an approved request a new expiry, for exactly the approved digest; records who and when. */
    readonly renew: (
      requestId: string,
      options: RenewOptions
    ) => Effect.Effect<void, RenewError | ApprovalTampered | JournalError>
    /**
     * Requests still waiting for a decision, oldest first; in a persisted store, also those whose
     * record was edited so that it names no decision it can be trusted with (marked `tampered`).
     */
    readonly pending: Effect.Effect<ReadonlyArray<PendingRequest>, JournalError>
    /** A request and its decision, if the request is known. */
    readonly get: (
      requestId: string
    ) => Effect.Effect<
      Option.Option<{ readonly request: ApprovalRequest; readonly decision: Decision }>,
      ApprovalTampered | JournalError
    >
  }
>() {}

const pendingDecision: Decision = { _tag: "Pending" }

/**
 * Builds an in-memory approval service whose `request` answers with `decide` (pending by default).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (
  decide: (request: ApprovalRequest, at: string) => Decision = () => pendingDecision
): Context.Tag.Service<Approval> => {
  const entries = new Map<string, { request: ApprovalRequest; decision: Decision }>()

  const decideOnce = (
    requestId: string,
    make: (at: string) => Decision
  ): Effect.Effect<void, ApprovalNotFound | AlreadyDecided> =>
    Effect.flatMap(nowIso, (at): Effect.Effect<void, ApprovalNotFound | AlreadyDecided> => {
      const entry = entries.get(requestId)
      if (entry === undefined) return Effect.fail(new ApprovalNotFound({ requestId }))
      if (entry.decision._tag !== "Pending") {
        return Effect.fail(new AlreadyDecided({ requestId, decision: entry.decision._tag.toLowerCase() }))
      }
      entry.decision = make(at)
      return Effect.void
    })

  return Approval.of({
    inProcess: true,
    request: (request, options) =>
      Effect.map(nowIso, (at) => {
        const known = entries.get(request.requestId)
        if (known !== undefined && holdsRequest(known.request, request, options)) return known.decision
        const decision = decide(request, at)
        entries.set(request.requestId, { request, decision })
        return decision
      }),
    approve: (requestId, { by, expiresAt, inputDigest }) =>
      decideOnce(requestId, (at) => ({
        _tag: "Approved",
        by,
        at,
        inputDigest,
        ...(expiresAt === undefined ? {} : { expiresAt })
      })),
    reject: (requestId, { by, reason }) => decideOnce(requestId, (at) => ({ _tag: "Rejected", by, at, reason })),
    renew: (requestId, options) =>
      Effect.gen(function* () {
        const entry = entries.get(requestId)
        if (entry === undefined) return yield* new ApprovalNotFound({ requestId })
        entry.decision = yield* renewal(requestId, entry.decision, options, yield* nowIso)
      }),
    pending: Effect.sync(() =>
      Array.from(entries.values())
        .filter((entry) => entry.decision._tag === "Pending")
        .map((entry) => entry.request)
    ),
    get: (requestId) => Effect.sync(() => Option.fromNullable(entries.get(requestId)))
  })
}

/**
 * Requests wait in memory until `approve` or `reject` is called (by a test or an in-process UI).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<Approval> = Layer.sync(Approval, () => makeMemory())

/**
 * Every request is approved at once, by `"auto-approve"`, for exactly the input requested.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerAutoApprove: Layer.Layer<Approval> = Layer.sync(Approval, () =>
  makeMemory((request, at) => ({ _tag: "Approved", by: "auto-approve", at, inputDigest: request.inputDigest }))
)

/**
 * Every request is rejected at once, by `"reject-all"`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRejectAll: Layer.Layer<Approval> = Layer.sync(Approval, () =>
  makeMemory((_, at) => ({ _tag: "Rejected", by: "reject-all", at, reason: "every request is rejected" }))
)

/**
 * Approves a pending request.
 *
 * @since 0.1.0
 * @category accessors
 */
export const approve = (
  requestId: string,
  options: { readonly by: string; readonly inputDigest: string; readonly expiresAt?: string | undefined }
): Effect.Effect<void, ApprovalNotFound | AlreadyDecided | ApprovalTampered | JournalError, Approval> =>
  Effect.flatMap(Approval, (approval) => approval.approve(requestId, options))

/**
 * Rejects a pending request.
 *
 * @since 0.1.0
 * @category accessors
 */
export const reject = (
  requestId: string,
  options: { readonly by: string; readonly reason: string }
): Effect.Effect<void, ApprovalNotFound | AlreadyDecided | ApprovalTampered | JournalError, Approval> =>
  Effect.flatMap(Approval, (approval) => approval.reject(requestId, options))

/**
 * Renews an approved request: a new expiry for the same input digest.
 *
 * @since 0.1.0
 * @category accessors
 */
export const renew = (
  requestId: string,
  options: RenewOptions
): Effect.Effect<void, RenewError | ApprovalTampered | JournalError, Approval> =>
  Effect.flatMap(Approval, (approval) => approval.renew(requestId, options))

/**
 * Requests still waiting for a decision, oldest first; a request whose record in a persisted store
 * was edited so that it cannot be trusted is listed with `tampered` saying why.
 *
 * @since 0.1.0
 * @category accessors
 */
export const pending: Effect.Effect<ReadonlyArray<PendingRequest>, JournalError, Approval> = Effect.flatMap(
  Approval,
  (approval) => approval.pending
)

/**
 * The requests a person should see, oldest first: every request the store lists as pending, and
 * every request the journal of a saga awaiting approval waits on that the store does not list.
 *
 * - A request the journal waits on and the store does not hold (a saga imported from another
 *   journal, whose approvals stayed behind; a row deleted) is listed as the journal made it:
 *   deciding it registers it again.
 * - One the store holds a decision for that the journal lacks is listed with `tampered` saying why
 *   a run would not act on it (forged, made through the service alone, a command that stopped
 *   before journaling it, or signed under a key the journal store lacks); one a run would act on
 *   (the memory layers', or one a journal key signs) is not listed: the next run journals it.
 * - One the store lists as pending that the journal already answered is listed with `tampered`
 *   (the table is behind the journal).
 * - One the store lists as pending whose copy of the request (input, digest, tool, time of request)
 *   is not the one the step's last `AWAITING_APPROVAL` entry holds is listed with `tampered` giving
 *   `journaledRequest`'s reason, and with the journal's `input` and `inputDigest` in place of the
 *   table's (what a run would send; the reason says the journal's is shown), its tool and time as the
 *   table holds them. One no entry asks for (a row inserted for a saga that never asked, or for
 *   none the journal has), or whose entry does not decode, is listed as the store holds it, with
 *   `tampered` giving that reason. A run journals its request before it registers it, and the
 *   store's pending requests are read before the journals, so a run's request is never marked for
 *   want of its entry; a copy
 *   requested at another time while someone holds the saga's lease is an earlier saga's record a
 *   run is about to replace, and the journal's request is listed, unmarked.
 * - Every request of a saga whose journal does not verify against its row (chain, MACs under the
 *   journal keys its store was built with, revision and digest) is listed with `tampered` naming
 *   the break, one the journal answers only at or past the break too (a decision there answers
 *   nothing): no request is judged on entries that do not verify. (A journal of your own, whose
 *   keys the library does not know: those `Keys.journalKeys` reads at the call.)
 *
 * Each saga's journal is read before the store's record of its requests, and a decision found
 * without the journal's is read again, so that a command deciding meanwhile (it writes the store,
 * then the journal) is not taken for either; one still missing from the journal while someone holds
 * the saga's lease (that command, between its two writes) is listed as the journal made it, unmarked.
 *
 * @since 0.4.0
 * @category accessors
 */
export const inbox: Effect.Effect<
  ReadonlyArray<PendingRequest>,
  JournalError | KeyError,
  Approval | Journal.Journal
> = Effect.suspend(() => Effect.map(inboxPage({ offset: 0, limit: Number.MAX_SAFE_INTEGER }), (page) => page.requests))

/**
 * Which page of the inbox `inboxPage` reads: `offset` and `limit` count sagas with something
 * waiting, not requests, so that a saga's requests are never split between pages.
 *
 * @since 0.5.0
 * @category models
 */
export interface InboxPageQuery {
  /** How many sagas to step over: a whole number from 0 (anything else fails with `JournalError`). */
  readonly offset: number
  /** How many sagas at most: a whole number from 1 (anything else fails with `JournalError`). */
  readonly limit: number
}

/**
 * A page of the inbox, oldest first, and how many sagas have something waiting in all.
 *
 * @since 0.5.0
 * @category models
 */
export interface InboxPage {
  readonly requests: ReadonlyArray<PendingRequest>
  /** The sagas with a request waiting: each awaiting approval by its row, or named by the store's pending requests. */
  readonly sagas: number
}

/**
 * One page of `inbox`: the sagas with something waiting (those whose row's status is
 * `awaiting_approval`, selected by the store's query, and those the store's pending requests name),
 * ordered by their oldest request the store lists (a saga the store lists none for: by its row's
 * last update), then by saga id; `limit` of them from `offset`. Only the page's sagas' journals are
 * read and judged, as `inbox` judges them; their requests come oldest first. A saga on the page may
 * list none (a request the store lists as pending that a trusted decision answers), so a page can
 * hold fewer requests than `limit`, or more (a saga waiting on two at once).
 *
 * @since 0.5.0
 * @category accessors
 */
export const inboxPage = (
  query: InboxPageQuery
): Effect.Effect<InboxPage, JournalError | KeyError, Approval | Journal.Journal> =>
  Effect.gen(function* () {
    const problem = pageProblem(query)
    if (problem !== undefined) return yield* new Journal.JournalError({ operation: "inbox", reason: problem })
    const approval = yield* Approval
    const journal = yield* Journal.Journal
    const keys = yield* Signing.keysOf(journal)
    const listed = yield* approval.pending
    // A row that does not decode is listed too (its saga's journal then reads as broken), not a failure of the inbox.
    const awaiting = yield* listRows(journal, { status: ["awaiting_approval"] })
    const waiting = waitingSagas(listed, awaiting)
    const sagaIds = waiting.slice(query.offset, query.offset + query.limit)
    const listedOf = groupBySaga(listed)
    const judged = { approval, journal, keys }
    const ofSaga = (sagaId: string) => judgeSaga(judged, sagaId, listedOf.get(sagaId) ?? [])
    const found = (yield* Effect.forEach(sagaIds, ofSaga)).flat()
    const requests = found
      .filter((request): request is PendingRequest => request !== undefined)
      .sort((a, b) => byCodePoints(a.requestedAt, b.requestedAt))
    return { requests, sagas: waiting.length }
  })

/**
 * The requests one saga waits on for a person, as `inbox` lists and judges them (the store's
 * pending ones for the saga and those its journal waits on, each checked against a journal that
 * verifies; `tampered` set on any the approvals table holds otherwise than the journal), oldest
 * first. Reads only this saga's journal: what a saga's page (`effect-saga show`, the console) needs
 * before it offers to decide.
 *
 * @since 0.5.0
 * @category accessors
 */
export const inboxOf = (
  sagaId: string
): Effect.Effect<ReadonlyArray<PendingRequest>, JournalError | KeyError, Approval | Journal.Journal> =>
  Effect.gen(function* () {
    const approval = yield* Approval
    const journal = yield* Journal.Journal
    const keys = yield* Signing.keysOf(journal)
    const listed = (yield* approval.pending).filter((request) => request.sagaId === sagaId)
    const found = yield* judgeSaga({ approval, journal, keys }, sagaId, listed)
    return found
      .filter((request): request is PendingRequest => request !== undefined)
      .sort((a, b) => byCodePoints(a.requestedAt, b.requestedAt))
  })

/** What judging a saga's requests reads: the approval store, the journal, and the journal keys it was built with. */
interface Judging {
  readonly approval: Approval["Type"]
  readonly journal: Journal.Journal["Type"]
  readonly keys: KeyRing | undefined
}

/**
 * The requests one saga waits on, as `inbox` judges them: those the store lists as pending for it
 * (`listedHere`) and those its journal waits on, each checked against the journal (`undefined`:
 * one a trusted decision answers, not waiting).
 */
const judgeSaga = (
  { approval, journal, keys }: Judging,
  sagaId: string,
  listedHere: ReadonlyArray<PendingRequest>
): Effect.Effect<ReadonlyArray<PendingRequest | undefined>, JournalError> => {
  // Each journal is verified against its row: a forged entry is no answer, nor a request.
  const read = (id: string) => inspect(journal, id, keys)
  // Leases as the store judges them (PostgreSQL's clock), not this host's.
  const leaseNow = journal.leaseNow ?? Clock.currentTimeMillis
  const judge = (request: PendingRequest, inspected: Inspected) =>
    Effect.flatMap(
      approval.get(request.requestId),
      (held): Effect.Effect<PendingRequest | undefined, JournalError | ApprovalTampered> => {
        const { entries } = inspected
        const answer = answeredRequest(entries, request.stepId)
        const waits = answer === undefined
        // The store no longer holds the record listed (deleted, or replaced since): the journal's request is the one waiting.
        if (Option.isNone(held) || !holdsRequest(held.value.request, request))
          return Effect.succeed(waits ? asJournaled(entries, request) : undefined)
        const { decision } = held.value
        if (decision._tag === "Pending") {
          if (!waits) return Effect.succeed({ ...held.value.request, tampered: behindTheJournal(answer) })
          return copyOf(held.value.request, inspected, leaseNow)
        }
        const reason = waits ? distrust(approval, keys, request, decision) : undefined
        if (reason === undefined) return Effect.succeed(undefined)
        // Decided without the journal: a command may be between its two writes. Read the journal again.
        return Effect.flatMap(read(request.sagaId), (again) =>
          Effect.map(leaseNow, (now) => {
            const broken = tamperOf(again.verification)
            if (broken !== undefined) return { ...request, tampered: journalBroken(broken) }
            if (answeredRequest(again.entries, request.stepId) !== undefined) return undefined
            // Still unanswered while the saga's lease is held: the command holds it between its writes.
            return leased(again, now) ? request : { ...request, tampered: reason }
          })
        )
      }
    ).pipe(Effect.catchTag("ApprovalTampered", (error) => Effect.succeed({ ...request, tampered: error.message })))
  return Effect.flatMap(read(sagaId), (inspected) => {
    const broken = tamperOf(inspected.verification)
    const { entries } = inspected
    const listedIds = new Set(listedHere.map((request) => request.requestId))
    // A decision past a break answers nothing: its request is listed, marked with the break.
    const candidates: ReadonlyArray<PendingRequest> = [
      ...listedHere,
      ...awaitedRequests(entries, broken?.seq).filter((request) => !listedIds.has(request.requestId))
    ]
    // Past a break, entries are no evidence either way: each request they or the store name is listed, marked.
    if (broken !== undefined) {
      return Effect.succeed(candidates.map((request) => ({ ...request, tampered: journalBroken(broken) })))
    }
    return Effect.forEach(candidates, (request) => {
      // A request the store marked is listed as it holds it (readers show the mark).
      if (request.tampered !== undefined) return Effect.succeed(request)
      // No entry asked for it, or its entry does not decode: nothing to judge it on. (A run journals
      // its AWAITING_APPROVAL before it registers the request, and the store is read first: a run's
      // request is never found without its entry.)
      const unbacked = unbackedBy(request, entries)
      return unbacked === undefined ? judge(request, inspected) : Effect.succeed({ ...request, tampered: unbacked })
    })
  })
}

const byCodePoints = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Whether someone holds the saga's lease at `now` (a run, or a command between its writes). */
const leased = (inspected: Inspected, now: number): boolean =>
  Option.isSome(inspected.record) && liveLease(inspected.record.value, now) !== undefined

/** Why `request` cannot be judged on `entries`, if it cannot: no entry asked for it, or its entry does not decode. */
const unbackedBy = (request: PendingRequest, entries: ReadonlyArray<Entry>): string | undefined => {
  const { problem } = journaledRequest(request, entries)
  return problem !== null && (problem.seq === null || problem.problem === "undecodable") ? problem.reason : undefined
}

/** The request the journal waits on for `request`'s step, as it made it (`request` when its entry does not decode). */
const asJournaled = (entries: ReadonlyArray<Entry>, request: PendingRequest): PendingRequest =>
  awaitedRequests(entries).find((waiting) => waiting.stepId === request.stepId) ?? request

/**
 * The store's pending copy of a request the journal waits on, checked against the journal's: as
 * held when it agrees; when it does not, marked (`Approval.journaledRequest`'s reason) and carrying
 * the journal's input and digest, the ones a run would act on. A copy requested at another time
 * while someone holds the saga's lease is a run's, about to replace an earlier saga's record (a run
 * journals its request, then registers it): the journal's request is listed, unmarked. `leaseNow`
 * is read only then (on PostgreSQL, a round trip).
 */
const copyOf = (
  copy: ApprovalRequest,
  inspected: Inspected,
  leaseNow: Effect.Effect<number, JournalError>
): Effect.Effect<PendingRequest, JournalError> => {
  const journaled = journaledRequest(copy, inspected.entries)
  if (journaled.problem === null) return Effect.succeed(copy)
  const made = asJournaled(inspected.entries, copy)
  const marked: PendingRequest = {
    ...copy,
    input: journaled.input ?? copy.input,
    inputDigest: journaled.inputDigest ?? copy.inputDigest,
    tampered: journaled.problem.reason
  }
  if (made.requestedAt === copy.requestedAt) return Effect.succeed(marked)
  return Effect.map(leaseNow, (now) => (leased(inspected, now) ? made : marked))
}

const groupBySaga = (requests: ReadonlyArray<PendingRequest>): ReadonlyMap<string, ReadonlyArray<PendingRequest>> => {
  const groups = new Map<string, Array<PendingRequest>>()
  for (const request of requests) {
    const group = groups.get(request.sagaId)
    if (group === undefined) groups.set(request.sagaId, [request])
    else group.push(request)
  }
  return groups
}

/**
 * The sagas with something waiting, by their oldest request the store lists, else by their row's
 * last update (an undecodable row first: its saga reads as broken), then by saga id.
 */
const waitingSagas = (
  listed: ReadonlyArray<PendingRequest>,
  awaiting: ReadonlyArray<Either.Either<Journal.SagaRecord, { readonly sagaId: string }>>
): ReadonlyArray<string> => {
  const since = new Map<string, string>()
  for (const request of listed) {
    const known = since.get(request.sagaId)
    if (known === undefined || request.requestedAt < known) since.set(request.sagaId, request.requestedAt)
  }
  for (const row of awaiting) {
    const sagaId = Either.isRight(row) ? row.right.sagaId : row.left.sagaId
    if (!since.has(sagaId)) since.set(sagaId, Either.isRight(row) ? row.right.updatedAt : "")
  }
  return Array.from(since)
    .sort(([idA, a], [idB, b]) => byCodePoints(a, b) || byCodePoints(idA, idB))
    .map(([sagaId]) => sagaId)
}

export {
  answeredRequest,
  awaitedRequests,
  type CopyProblem,
  type JournaledRequest,
  journaledRequest
} from "./internal/journal/approvalCopy.js"
