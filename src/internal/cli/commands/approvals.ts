/**
 * `effect-saga approvals [--limit N] [--offset N] [--json]`: the approval requests still waiting for a decision, with the
 * input each step will send as its saga's journal holds it.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import type { ApprovalRequest } from "../../../Approval.js"
import * as Approval from "../../../Approval.js"
import { printable } from "../../util/printable.js"
import { settledRequests } from "../../util/settledRequests.js"
import { shellWord } from "../../util/shellWord.js"
import { table } from "../../util/table.js"
import { onlyTheTable } from "../../util/tamperMark.js"
import { print, printJson } from "../output.js"
import { db, json, limit, offset, pageLine, pageOf, withStore } from "../root.js"
import * as Trust from "../trust.js"

/**
 * A pending request as `approvals` prints it: the approvals table's row, with the input and its
 * digest taken from the saga's `AWAITING_APPROVAL` entry (`null` when the journal has none), a
 * mark when the saga is tampered or the table's copy is not the journal's, and for a request of an
 * explicit undo's run that the saga's own compensation has overtaken, why nothing is left to decide
 * on it (`settled`, since 0.5.0; else `null`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Pending extends Omit<ApprovalRequest, "input" | "inputDigest"> {
  readonly input: string | null
  readonly inputDigest: string | null
  readonly tampered: Trust.Tampered | null
  readonly settled: string | null
}

const pendingOf = (
  request: Approval.PendingRequest,
  inspection: Trust.Inspection,
  settled: string | undefined
): Pending => {
  const journaled = Approval.journaledRequest(request, inspection.entries)
  return {
    ...request,
    input: journaled.input,
    inputDigest: journaled.inputDigest,
    tampered: Trust.tamperedOf(inspection.verification) ?? journaled.problem,
    settled: settled ?? null
  }
}

/**
 * Every request waiting for a person (`Approval.inbox`: the store's pending ones and those the
 * journals of awaiting sagas wait on), each saga read and verified once.
 */
const pendingRequests = (page: { readonly offset: number; readonly limit: number } | undefined) =>
  Effect.gen(function* () {
    const found = page === undefined ? undefined : yield* Approval.inboxPage(page)
    const requests = found === undefined ? yield* Approval.inbox : found.requests
    const sagaIds = Array.from(new Set(requests.map((request) => request.sagaId)))
    const inspections = new Map(
      (yield* Effect.forEach(sagaIds, Trust.inspect)).map((inspection) => [inspection.sagaId, inspection])
    )
    const settled = yield* settledRequests(requests)
    return {
      pending: requests.map((request) =>
        pendingOf(request, inspections.get(request.sagaId)!, settled.get(request.requestId))
      ),
      sagas: found?.sagas
    }
  })

/**
 * What to do about a marked request: nothing, where its journal does not verify; where only the
 * approvals table disagrees with it, no new decision, and `show` says what to do (the same command
 * again, where one stopped between its writes; a backup; the saga ended).
 */
const doNotDecide = (request: Pending, tampered: Trust.Tampered): string =>
  onlyTheTable(tampered)
    ? `make no new decision on step ${request.stepId}; next: effect-saga show ${shellWord(request.sagaId)} says what to do`
    : `do not decide on step ${request.stepId}`

const render = (requests: ReadonlyArray<Pending>): string =>
  requests.length === 0
    ? "no approvals pending"
    : [
        table(
          ["saga", "step", "tool", "requested", "chain", "input sha256", "input"],
          requests.map((request) => [
            request.sagaId,
            request.stepId,
            request.toolName,
            request.requestedAt,
            Trust.cell(request.tampered),
            request.inputDigest === null ? "" : `${request.inputDigest.slice(0, 12)}…`,
            request.input ?? "(not in the journal)"
          ])
        ),
        ...requests.flatMap((request) =>
          request.tampered !== null
            ? [printable(`${Trust.line(request.sagaId, request.tampered)}: ${doNotDecide(request, request.tampered)}`)]
            : request.settled !== null
              ? [printable(`${request.sagaId} ${request.stepId}: ${request.settled}`)]
              : []
        )
      ].join("\n")

/**
 * The `approvals` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const approvals = Command.make("approvals", { db, json, limit, offset }, (options) =>
  withStore(
    options.db,
    Effect.gen(function* () {
      const page = pageOf(options)
      const { pending: requests, sagas } = yield* pendingRequests(page)
      // The sagas on the page, whether or not each still lists a request.
      const shown =
        page === undefined || sagas === undefined ? 0 : Math.max(0, Math.min(page.limit, sagas - page.offset))
      const note =
        page === undefined || sagas === undefined ? [] : [pageLine("sagas with a request waiting", page, shown, sagas)]
      yield* options.json ? printJson(requests) : print([render(requests), ...note].join("\n"))
      yield* Trust.exitIfTampered(requests)
    }),
    { access: "read" }
  )
).pipe(
  Command.withDescription(
    "List the approval requests waiting for a decision, oldest first, with the exact input each step will send, as its saga's journal holds it; with --limit/--offset, those of one page of the sagas with a request waiting (only they are read). Exits 1 if a request's saga is tampered, or the approvals table disagrees with the journal."
  )
)
