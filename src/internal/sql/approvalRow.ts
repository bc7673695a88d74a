/**
 * A row of the approvals table, checked: the request and decision the store wrote, or how the row
 * was edited behind the library's back. The store writes `status` and `decision` together, so a
 * row whose status is no decision, or not its decision's, or a column that does not decode, was
 * edited: nothing can tell what was decided.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Approval from "../../Approval.js"

/** A row as the store wrote it: its request, its decision, and the decision's text as stored. */
export interface StoredRow {
  readonly request: Approval.ApprovalRequest
  readonly decision: Approval.Decision
  readonly text: string
}

/** A row that was edited: its request where its columns still decode, and what is wrong, in words. */
export interface EditedRow {
  readonly requestId: string
  readonly request: Approval.ApprovalRequest | undefined
  readonly reason: string
}

const decodeRequest = Schema.decodeUnknownEither(Approval.ApprovalRequest)
const decodeDecision = Schema.decodeUnknownEither(Schema.parseJson(Approval.Decision))

/** The column each field of a request is read from, as a reason names it. */
const columns: Record<string, string> = {
  requestId: "request_id",
  sagaId: "saga_id",
  stepId: "step_id",
  toolName: "tool_name",
  input: "input",
  inputDigest: "input_digest",
  requestedAt: "requested_at"
}

const statuses: ReadonlySet<unknown> = new Set(["pending", "approved", "rejected"])

/** The column the first issue of a request that does not decode is about. */
const columnOf = (error: ParseResult.ParseError): string => {
  const field = ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.path[0]
  return columns[String(field)] ?? "request"
}

const edited = (row: Record<string, unknown>, request: Approval.ApprovalRequest | undefined, wrong: string) =>
  Either.left<EditedRow>({
    requestId: String(row.requestId),
    request,
    reason: `the approvals table's row was edited: ${wrong}`
  })

/**
 * `row` (its request's columns under the request's field names, `status` and `decision`) as the
 * store wrote it, or how it was edited: a column that does not decode, a status that is no decision,
 * or one that is not its decision's.
 */
export const checkRow = (row: Record<string, unknown>): Either.Either<StoredRow, EditedRow> => {
  const request = decodeRequest(row)
  if (Either.isLeft(request)) return edited(row, undefined, `its ${columnOf(request.left)} column does not decode`)
  const { status, decision: text } = row
  const decision = decodeDecision(text)
  if (typeof text !== "string" || Either.isLeft(decision)) {
    return edited(row, request.right, "its decision column does not decode")
  }
  if (!statuses.has(status)) {
    return edited(
      row,
      request.right,
      `its status column says ${JSON.stringify(status)}, not pending, approved or rejected`
    )
  }
  const decided = decision.right._tag.toLowerCase()
  if (status !== decided) {
    return edited(row, request.right, `its status column says ${status}, its decision column ${decided}`)
  }
  return Either.right({ request: request.right, decision: decision.right, text })
}
