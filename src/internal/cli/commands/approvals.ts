/**
 * `effect-saga approvals [--json]`: the approval requests still waiting for a decision.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import type { ApprovalRequest } from "../../../Approval.js"
import * as Approval from "../../../Approval.js"
import { table } from "../../table.js"
import { print, printJson } from "../output.js"
import { db, json, withStore } from "../root.js"

const render = (requests: ReadonlyArray<ApprovalRequest>): string =>
  requests.length === 0
    ? "no approvals pending"
    : table(
        ["saga", "step", "tool", "requested", "input sha256", "input"],
        requests.map((request) => [
          request.sagaId,
          request.stepId,
          request.toolName,
          request.requestedAt,
          `${request.inputDigest.slice(0, 12)}…`,
          request.input
        ])
      )

/**
 * The `approvals` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const approvals = Command.make("approvals", { db, json }, (options) =>
  withStore(
    options.db,
    Effect.flatMap(Approval.pending, (requests) => (options.json ? printJson(requests) : print(render(requests)))),
    { access: "read" }
  )
).pipe(
  Command.withDescription(
    "List the approval requests waiting for a decision, oldest first, with the exact input each step will send."
  )
)
