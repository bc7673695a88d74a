import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Approval from "../../Approval.js"
import { JournalError } from "../../Journal.js"
import { journalKeys } from "../../Keys.js"
import { signDecision, withoutMac } from "../journal/decisions.js"
import { nowIso } from "../util/clock.js"
import { approvalsTable, migrate } from "./migrations.js"
import { journalError } from "./sqlite.js"

const Row = Schema.Struct({
  ...Approval.ApprovalRequest.fields,
  decision: Schema.parseJson(Approval.Decision)
})

const decodeRow = Schema.decodeUnknownEither(Row)
const encodeDecision = Schema.encodeSync(Schema.parseJson(Approval.Decision))

const pendingDecision: Approval.Decision = { _tag: "Pending" }

const decodeDecisionEither = Schema.decodeUnknownEither(Schema.parseJson(Approval.Decision))

/** A stored decision, or a `JournalError` that says which request does not decode. */
const decodeDecision = (requestId: string, text: string) =>
  Either.match(decodeDecisionEither(text), {
    onLeft: (error) =>
      Effect.fail(
        new JournalError({
          operation: "approval",
          reason: `the stored decision of ${requestId} does not decode: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
        })
      ),
    onRight: Effect.succeed
  })

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
input_digest AS "inputDigest", requested_at AS "requestedAt", decision`
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

  const toEntries = (rows: ReadonlyArray<unknown>) => {
    const decoded: Array<{ readonly request: Approval.ApprovalRequest; readonly decision: Approval.Decision }> = []
    for (const row of rows) {
      const result = decodeRow(row)
      if (Either.isLeft(result)) {
        const requestId = (row as { readonly requestId?: unknown }).requestId
        return Effect.fail(
          new JournalError({
            operation: "approval",
            reason: `the stored approval request ${String(requestId)} does not decode: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`
          })
        )
      }
      const { decision, ...request } = result.right
      decoded.push({ request, decision })
    }
    return Effect.succeed(decoded)
  }

  const select = (requestId: string) =>
    Effect.flatMap(sql`SELECT ${columns} FROM ${approvals} WHERE request_id = ${requestId}`, toEntries)

  const request = (request: Approval.ApprovalRequest) =>
    Effect.flatMap(nowIso, (at) =>
      sql.withTransaction(
        Effect.zipRight(
          sql`INSERT INTO ${approvals} (request_id, position, saga_id, step_id, tool_name, input, input_digest,
  requested_at, status, decision, registered_at)
VALUES (${request.requestId}, (SELECT COALESCE(MAX(position), 0) + 1 FROM ${approvals}), ${request.sagaId},
  ${request.stepId}, ${request.toolName}, ${request.input}, ${request.inputDigest}, ${request.requestedAt}, 'pending',
  ${encodeDecision(pendingDecision)}, ${at})
ON CONFLICT (request_id) DO NOTHING`,
          select(request.requestId)
        )
      )
    ).pipe(
      Effect.map((entries) => entries[0]?.decision ?? pendingDecision),
      storeFailure("approval.request")
    )

  /**
   * Decides a pending request once: the decision is made from the stored request and signed over
   * it (with a journal key), then stored only while the request is still pending.
   */
  const decideOnce = (operation: string, requestId: string, make: (at: string) => Approval.Decision) =>
    Effect.flatMap(nowIso, (at) =>
      sql.withTransaction(
        Effect.flatMap(
          select(requestId),
          (found): Effect.Effect<void, Approval.ApprovalNotFound | Approval.AlreadyDecided | SqlError> => {
            const stored = found[0]
            if (stored === undefined) return Effect.fail(new Approval.ApprovalNotFound({ requestId }))
            const decision = signDecision(keys, stored.request, make(at))
            return Effect.flatMap(
              sql`UPDATE ${approvals} SET status = ${decision._tag.toLowerCase()}, decision = ${encodeDecision(decision)},
  decided_at = ${at}
WHERE request_id = ${requestId} AND status = 'pending'
RETURNING request_id`,
              (updated) =>
                updated.length > 0
                  ? Effect.void
                  : Effect.fail(
                      new Approval.AlreadyDecided({ requestId, decision: stored.decision._tag.toLowerCase() })
                    )
            )
          }
        )
      )
    ).pipe(storeFailure(operation))

  /**
   * Renews within a transaction; the update names the decision it read, so a decision changed in
   * between (another process renewing) is read and checked again.
   */
  const renew = (
    requestId: string,
    options: Approval.RenewOptions
  ): Effect.Effect<void, Approval.RenewError | JournalError | SqlError> =>
    Effect.gen(function* () {
      const rows = yield* sql<{ readonly decision: string }>`SELECT decision FROM ${approvals}
WHERE request_id = ${requestId}`
      const stored = (yield* select(requestId))[0]
      if (rows[0] === undefined || stored === undefined) return yield* new Approval.ApprovalNotFound({ requestId })
      const current = yield* decodeDecision(requestId, rows[0].decision)
      const renewed = yield* Approval.renewal(requestId, withoutMac(current), options, yield* nowIso)
      const next = signDecision(keys, stored.request, renewed)
      const updated = yield* sql`UPDATE ${approvals} SET decision = ${encodeDecision(next)}
WHERE request_id = ${requestId} AND decision = ${rows[0].decision}
RETURNING request_id`
      if (updated.length === 0) return yield* renew(requestId, options)
    }).pipe(sql.withTransaction)

  return Approval.Approval.of({
    request,
    approve: (requestId, { by, expiresAt, inputDigest }) =>
      decideOnce("approval.approve", requestId, (at) => ({
        _tag: "Approved",
        by,
        at,
        inputDigest,
        ...(expiresAt === undefined ? {} : { expiresAt })
      })),
    reject: (requestId, { by, reason }) =>
      decideOnce("approval.reject", requestId, (at) => ({ _tag: "Rejected", by, at, reason })),
    renew: (requestId, options) => renew(requestId, options).pipe(storeFailure("approval.renew")),
    pending: sql`SELECT ${columns} FROM ${approvals} WHERE status = 'pending' ORDER BY position`.pipe(
      Effect.flatMap(toEntries),
      Effect.map((entries) => entries.map((entry) => entry.request)),
      storeFailure("approval.pending")
    ),
    get: (requestId) =>
      select(requestId).pipe(
        Effect.map((entries) => Option.fromNullable(entries[0])),
        storeFailure("approval.get")
      )
  })
})

/** The `Approval` service on the `SqlClient` in context; runs the store's migrations first. */
export const make = Effect.zipRight(migrate, makeUnmigrated)
