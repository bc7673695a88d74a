/**
 * Human approval for irreversible steps. The saga asks; a person (or a policy layer) decides.
 *
 * NOTE: a decision is bound to the SHA-256 of the step's encoded input. The saga runs the step only
 * when the approval names exactly the input it is about to send, and has not expired.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { nowIso } from "./internal/clock.js"
import type { JournalError } from "./Journal.js"

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
 * A human's answer. `Approved` names the input digest that was approved and, optionally, when the
 * approval expires (ISO-8601 UTC).
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
    expiresAt: Schema.optional(Schema.String)
  }),
  Schema.TaggedStruct("Rejected", { by: Schema.String, at: Schema.String, reason: Schema.String })
)

/**
 * @since 0.1.0
 * @category models
 */
export type Decision = typeof Decision.Type

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
  override get message(): string {
    return `no approval request ${this.requestId}`
  }
}

/**
 * The request was already decided; a decision is never overwritten.
 *
 * @since 0.1.0
 * @category errors
 */
export class AlreadyDecided extends Schema.TaggedError<AlreadyDecided>("effect-saga/AlreadyDecided")("AlreadyDecided", {
  requestId: Schema.String,
  decision: Schema.String
}) {
  override get message(): string {
    return `approval request ${this.requestId} was already ${this.decision}`
  }
}

/**
 * The approval service. A store beside the journal that cannot be read or written fails with the
 * journal's `JournalError`.
 *
 * @since 0.1.0
 * @category services
 */
export class Approval extends Context.Tag("effect-saga/Approval")<
  Approval,
  {
    /** Registers a request (once) and returns its current decision. */
    readonly request: (request: ApprovalRequest) => Effect.Effect<Decision, JournalError>
    /** Approves a pending request for exactly `inputDigest`. */
    readonly approve: (
      requestId: string,
      options: { readonly by: string; readonly inputDigest: string; readonly expiresAt?: string | undefined }
    ) => Effect.Effect<void, ApprovalNotFound | AlreadyDecided | JournalError>
    /** Rejects a pending request. */
    readonly reject: (
      requestId: string,
      options: { readonly by: string; readonly reason: string }
    ) => Effect.Effect<void, ApprovalNotFound | AlreadyDecided | JournalError>
    /** Requests still waiting for a decision, oldest first. */
    readonly pending: Effect.Effect<ReadonlyArray<ApprovalRequest>, JournalError>
    /** A request and its decision, if the request is known. */
    readonly get: (
      requestId: string
    ) => Effect.Effect<Option.Option<{ readonly request: ApprovalRequest; readonly decision: Decision }>, JournalError>
  }
>() {}

const pendingDecision: Decision = { _tag: "Pending" }

/**
 * Builds an in-memory approval service whose `request` answers with `decide` (pending by default).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (decide: (request: ApprovalRequest, at: string) => Decision = () => pendingDecision) => {
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
    request: (request) =>
      Effect.map(nowIso, (at) => {
        const known = entries.get(request.requestId)
        if (known !== undefined) return known.decision
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
) => Effect.flatMap(Approval, (approval) => approval.approve(requestId, options))

/**
 * Rejects a pending request.
 *
 * @since 0.1.0
 * @category accessors
 */
export const reject = (requestId: string, options: { readonly by: string; readonly reason: string }) =>
  Effect.flatMap(Approval, (approval) => approval.reject(requestId, options))

/**
 * Requests still waiting for a decision.
 *
 * @since 0.1.0
 * @category accessors
 */
export const pending: Effect.Effect<ReadonlyArray<ApprovalRequest>, JournalError, Approval> = Effect.flatMap(
  Approval,
  (approval) => approval.pending
)
