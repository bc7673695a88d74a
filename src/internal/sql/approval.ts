import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Approval from "../../Approval.js"
import type { JournalError } from "../../Journal.js"
import { journalKeys } from "../../Keys.js"
import { signDecision, withoutMac } from "../journal/decisions.js"
import { nowIso } from "../util/clock.js"
import type { EditedRow, StoredRow } from "./approvalRow.js"
import { checkRow } from "./approvalRow.js"
import { approvalsTable, migrate } from "./migrations.js"
import { journalError } from "./sqlite.js"

const encodeDecision = Schema.encodeSync(Schema.parseJson(Approval.Decision))

const pendingDecision: Approval.Decision = { _tag: "Pending" }

/** An edited row as the service's error. */
const tampered = (row: EditedRow) => new Approval.ApprovalTampered({ requestId: row.requestId, reason: row.reason })

/**
 * The `Approval` service on the `SqlClient` in context, on tables already migrated (the CLI's read
 * commands, which never migrate, check the version first).
 */
export const makeUnmigrated = Effect.gen(function* () {
  const keys = Option.getOrUndefined(yield* journalKeys)
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const approvals = sql(approvalsTable)
  const columns = sql.literal(
    `request_id AS "requestId", saga_id AS "sagaId", step_id AS "stepId", tool_name AS "toolName", input,
input_digest AS "inputDigest", requested_at AS "requestedAt", status, decision`
  )

  const isSqlError = (error: unknown): error is SqlError => Predicate.isTagged(error, "SqlError")

  /** A store that fails is a `JournalError` that says which operation and why. */
  const storeFailure =
    (operation: string) =>
    <A, E, R>(effect: Effect.Effect<A, E | SqlError, R>): Effect.Effect<A, Exclude<E, SqlError> | JournalError, R> =>
      Effect.catchIf(effect, isSqlError, (error) => Effect.fail(journalError(operation)(error))) as Effect.Effect<
        A,
        Exclude<E, SqlError> | JournalError,
        R
      >

  /** The request's row, checked (`undefined` when there is none). */
  const select = (requestId: string) =>
    Effect.map(
      sql<Record<string, unknown>>`SELECT ${columns} FROM ${approvals} WHERE request_id = ${requestId}`,
      (rows) => (rows[0] === undefined ? undefined : checkRow(rows[0]))
    )

  /** The request's row as the store wrote it; an edited one fails with `ApprovalTampered`. */
  const trusted = (requestId: string) =>
    Effect.flatMap(select(requestId), (row) =>
      row === undefined
        ? Effect.succeed(undefined)
        : Either.match(row, { onLeft: (edited) => Effect.fail(tampered(edited)), onRight: Effect.succeed })
    )

  /** A pending row's request; an edited one's marked, or, when its request does not decode, logged and left out. */
  const listed = (row: Either.Either<StoredRow, EditedRow>): Effect.Effect<ReadonlyArray<Approval.PendingRequest>> => {
    if (Either.isRight(row)) return Effect.succeed([row.right.request])
    const { reason, request, requestId } = row.left
    return request === undefined
      ? Effect.as(
          Effect.logWarning(`effect-saga: approval request ${requestId} is not listed as pending: ${reason}`),
          []
        )
      : Effect.succeed([{ ...request, tampered: reason }])
  }

  /**
   * Deletes the row under the request's id unless it is this request's: another saga's of the same
   * id (read as stored: an edited row of an earlier saga is replaced too).
   */
  const dropOthers = (request: Approval.ApprovalRequest, options: Approval.RequestOptions | undefined) =>
    Effect.flatMap(
      sql<{ readonly requestedAt: unknown }>`SELECT requested_at AS "requestedAt" FROM ${approvals}
WHERE request_id = ${request.requestId}`,
      (rows) => {
        const held = rows[0]
        if (held === undefined) return Effect.void
        if (Approval.holdsRequest(held, request, options)) return Effect.void
        return sql`DELETE FROM ${approvals} WHERE request_id = ${request.requestId}`
      }
    )

  const request = (request: Approval.ApprovalRequest, options?: Approval.RequestOptions) =>
    Effect.flatMap(nowIso, (at) =>
      sql.withTransaction(
        Effect.zipRight(
          dropOthers(request, options),
          sql`INSERT INTO ${approvals} (request_id, position, saga_id, step_id, tool_name, input, input_digest,
  requested_at, status, decision, registered_at)
VALUES (${request.requestId}, (SELECT COALESCE(MAX(position), 0) + 1 FROM ${approvals}), ${request.sagaId},
  ${request.stepId}, ${request.toolName}, ${request.input}, ${request.inputDigest}, ${request.requestedAt}, 'pending',
  ${encodeDecision(pendingDecision)}, ${at})
ON CONFLICT (request_id) DO NOTHING`
        ).pipe(Effect.zipRight(trusted(request.requestId)))
      )
    ).pipe(
      Effect.map((stored) => stored?.decision ?? pendingDecision),
      storeFailure("approval.request")
    )

  /**
   * Decides a pending request once: the decision is made from the stored request and signed over
   * it (with a journal key), then stored only while the request is still pending. A row decided in
   * between (another process) is read again, and answered as it then is.
   */
  const decideOnce = (
    requestId: string,
    make: (at: string) => Approval.Decision
  ): Effect.Effect<
    void,
    Approval.ApprovalNotFound | Approval.AlreadyDecided | Approval.ApprovalTampered | JournalError | SqlError
  > =>
    Effect.gen(function* () {
      const stored = yield* trusted(requestId)
      if (stored === undefined) return yield* new Approval.ApprovalNotFound({ requestId })
      if (stored.decision._tag !== "Pending") {
        return yield* new Approval.AlreadyDecided({ requestId, decision: stored.decision._tag.toLowerCase() })
      }
      const at = yield* nowIso
      const decision = signDecision(keys, stored.request, make(at))
      const updated = yield* sql`UPDATE ${approvals} SET status = ${decision._tag.toLowerCase()},
  decision = ${encodeDecision(decision)}, decided_at = ${at}
WHERE request_id = ${requestId} AND status = 'pending'
RETURNING request_id`
      if (updated.length === 0) return yield* decideOnce(requestId, make)
    }).pipe(sql.withTransaction)

  /**
   * Renews within a transaction; the update names the decision it read, so a decision changed in
   * between (another process renewing) is read and checked again.
   */
  const renew = (
    requestId: string,
    options: Approval.RenewOptions
  ): Effect.Effect<void, Approval.RenewError | Approval.ApprovalTampered | JournalError | SqlError> =>
    Effect.gen(function* () {
      const stored = yield* trusted(requestId)
      if (stored === undefined) return yield* new Approval.ApprovalNotFound({ requestId })
      const renewed = yield* Approval.renewal(requestId, withoutMac(stored.decision), options, yield* nowIso)
      const next = signDecision(keys, stored.request, renewed)
      const updated = yield* sql`UPDATE ${approvals} SET decision = ${encodeDecision(next)}
WHERE request_id = ${requestId} AND decision = ${stored.text}
RETURNING request_id`
      if (updated.length === 0) return yield* renew(requestId, options)
    }).pipe(sql.withTransaction)

  return Approval.Approval.of({
    request,
    approve: (requestId, { by, expiresAt, inputDigest }) =>
      decideOnce(requestId, (at) => ({
        _tag: "Approved",
        by,
        at,
        inputDigest,
        ...(expiresAt === undefined ? {} : { expiresAt })
      })).pipe(storeFailure("approval.approve")),
    reject: (requestId, { by, reason }) =>
      decideOnce(requestId, (at) => ({ _tag: "Rejected", by, at, reason })).pipe(storeFailure("approval.reject")),
    renew: (requestId, options) => renew(requestId, options).pipe(storeFailure("approval.renew")),
    // Every status but the two decided ones (a status edited to another is listed, marked), in
    // ranges the (status, position) index serves: a NOT IN would read the whole table.
    pending: sql<Record<string, unknown>>`SELECT ${columns} FROM ${approvals}
WHERE status < 'approved' OR (status > 'approved' AND status < 'rejected') OR status > 'rejected'
ORDER BY position`.pipe(
      Effect.flatMap((rows) => Effect.forEach(rows, (row) => listed(checkRow(row)))),
      Effect.map((lists) => lists.flat()),
      storeFailure("approval.pending")
    ),
    get: (requestId) =>
      trusted(requestId).pipe(
        Effect.map((stored) =>
          Option.map(Option.fromNullable(stored), ({ decision, request }) => ({ request, decision }))
        ),
        storeFailure("approval.get")
      )
  })
})

/** The `Approval` service on the `SqlClient` in context; runs the store's migrations first. */
export const make = Effect.zipRight(migrate, makeUnmigrated)
