/**
 * A saga's journal as a table a person can read: seq, time, step, tool, phase, detail.
 *
 * @since 0.1.0
 */

import { parsePayload } from "./internal/util/codec.js"
import { table } from "./internal/util/table.js"
import type { Entry } from "./Journal.js"

const detailKeys = ["reason", "remaining", "description", "by", "cause", "requestId"] as const

/**
 * The short detail of an entry: why it failed, who approved or renewed, what remains. Never the receipt.
 *
 * @since 0.1.0
 * @category formatting
 */
export const detailOf = (entry: Entry): string => {
  const payload = parsePayload(entry.payload)
  if (payload === undefined) return ""
  if (entry.phase === "EXECUTED") return `result ${JSON.stringify(payload.result)}`
  if (entry.phase === "SAGA_COMPENSATED" || entry.phase === "SAGA_COMPENSATION_FAILED") return ""
  if (entry.phase === "AWAITING_APPROVAL") {
    const digest = `input sha256 ${String(payload.inputDigest).slice(0, 12)}…`
    return payload.deferred === true ? `${digest} (deferred: the program went on)` : digest
  }
  if (entry.phase === "INTENT" && payload.deferred === true) return "deferred call, run once approved"
  if (entry.phase === "APPROVED" && typeof payload.renewedBy === "string") return `renewed by ${payload.renewedBy}`
  for (const key of detailKeys) {
    if (typeof payload[key] === "string") return key === "by" ? `by ${payload[key]}` : String(payload[key])
  }
  return ""
}

/**
 * Formats entries as an aligned table, one line per entry.
 *
 * @since 0.1.0
 * @category formatting
 */
export const format = (entries: ReadonlyArray<Entry>): string => {
  const rows = entries.map((entry) => [
    String(entry.seq),
    entry.at.slice(11, 23),
    entry.stepId ?? "",
    entry.toolName ?? "",
    entry.phase,
    detailOf(entry)
  ])
  return table(["seq", "time", "step", "tool", "phase", "detail"], rows)
}
