/**
 * A saga's journal as a table a person can read: seq, time, step, tool, phase, detail.
 *
 * @since 0.1.0
 */

import * as Either from "effect/Either"
import type { JournaledReceipt, Recorded } from "./internal/journal/payloads.js"
import { decodeEntry, encodePayload } from "./internal/journal/payloads.js"
import { table } from "./internal/util/table.js"
import type { Entry } from "./Journal.js"

/** What an entry whose payload decoded says, by phase. */
const detailOfRecorded = (entry: Recorded): string => {
  switch (entry.phase) {
    case "EXECUTED":
      return `result ${JSON.stringify(entry.payload.result)}`
    case "AWAITING_APPROVAL": {
      const digest = `input sha256 ${entry.payload.inputDigest.slice(0, 12)}…`
      return entry.payload.deferred === true ? `${digest} (deferred: the program went on)` : digest
    }
    case "INTENT":
      return entry.payload?.deferred === true ? "deferred call, run once approved" : ""
    case "APPROVED":
      return entry.payload.renewedBy === undefined ? `by ${entry.payload.by}` : `renewed by ${entry.payload.renewedBy}`
    case "REJECTED":
    case "EXPIRED":
      return entry.payload.reason
    case "FAILED":
      return entry.payload.description
    case "COMPENSATED":
    case "COMPENSATION_FAILED":
    case "COMPENSATION_UNKNOWN":
    case "SKIPPED":
      return entry.payload?.reason ?? ""
    case "COMPENSATION_PARTIAL":
      return entry.payload?.remaining ?? ""
    case "SAGA_COMPENSATING":
      return entry.payload.cause
    case "SAGA_AWAITING_APPROVAL":
      return entry.payload.requestId
    default:
      return ""
  }
}

/**
 * The short detail of an entry: why it failed, who approved or renewed, what remains. Never the
 * receipt. A payload that does not fit its phase says so. The text is as journaled, control
 * characters included: `format` escapes them, and so must any other terminal display of it.
 *
 * @since 0.1.0
 * @category formatting
 */
export const detailOf = (entry: Entry): string =>
  Either.match(decodeEntry(entry), { onLeft: () => "payload does not decode", onRight: detailOfRecorded })

const recorded = (entry: Entry): Recorded | undefined =>
  Either.getOrUndefined(Either.map(decodeEntry(entry), (decoded): Recorded => decoded))

/**
 * Why each step whose last `INTENT` has no outcome is unknown, by step id: the reason the last
 * `SAGA_NEEDS_ATTENTION` after that `INTENT` journaled (a timeout, a defect, `Outcome.unknown`'s
 * words), as journaled (escape it for a terminal or a page). A step the saga has not stopped on
 * yet (its worker died) has none.
 *
 * @since 0.4.0
 * @category reading
 */
export const unknownReasons = (entries: ReadonlyArray<Entry>): ReadonlyMap<string, string> => {
  const reasons = new Map<string, string>()
  for (const entry of entries) {
    if (entry.phase === "INTENT" && entry.stepId !== null) reasons.delete(entry.stepId)
    if (entry.phase !== "SAGA_NEEDS_ATTENTION") continue
    const decoded = recorded(entry)
    if (decoded?.phase !== "SAGA_NEEDS_ATTENTION" || !("unknown" in decoded.payload)) continue
    for (const step of decoded.payload.unknown) reasons.set(step.stepId, step.reason)
  }
  return reasons
}

/** Undo phases that mean an undo began or settled (`SKIPPED` undid nothing). */
const undoPhases: ReadonlySet<Entry["phase"]> = new Set([
  "COMPENSATING",
  "COMPENSATED",
  "COMPENSATION_PARTIAL",
  "COMPENSATION_FAILED",
  "COMPENSATION_UNKNOWN"
])

/**
 * The step that ran before `stepId` was last called and whose undo began, if any: resolving
 * `stepId` as applied is then refused (`Saga.resolve`, `CommandRefused`), since its undo would come
 * after that step's, out of reverse order; only not-applied is left. What `effect-saga show` and the
 * console read to offer only what is allowed.
 *
 * @since 0.4.0
 * @category reading
 */
export const undoneBefore = (entries: ReadonlyArray<Entry>, stepId: string): string | undefined => {
  const calledAt = Math.max(0, ...entries.filter((e) => e.stepId === stepId && e.phase === "INTENT").map((e) => e.seq))
  const ranBefore = new Set(entries.filter((e) => e.phase === "EXECUTED" && e.seq < calledAt).map((e) => e.stepId))
  return (
    entries.find((e) => e.stepId !== null && ranBefore.has(e.stepId) && undoPhases.has(e.phase))?.stepId ?? undefined
  )
}

/**
 * Formats entries as an aligned table, one line per entry. What a journaled value holds that a
 * terminal would act on (a newline, an escape sequence, a bidi override) is shown escaped (`\n`,
 * `\u001b`, `\u202e`), so no reason or name can break its line or forge another.
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

/** What is printed in place of a receipt: whether it is sealed and under which key, never its value. */
const placeholder = (receipt: JournaledReceipt): string =>
  typeof receipt === "string" ? "<redacted>" : `<sealed with ${receipt.kid}>`

/** What is printed in place of a payload that does not decode: it may hold anything, a receipt too. */
const undecodable = JSON.stringify("<the payload does not decode: not shown>")

/** The payload as its schema reads it (only the fields it knows), the receipt replaced. */
const printable = (entry: Recorded): string | null =>
  entry.phase === "EXECUTED" && entry.payload.receipt !== undefined
    ? encodePayload("EXECUTED", { ...entry.payload, receipt: placeholder(entry.payload.receipt) })
    : encodePayload(entry.phase, entry.payload)

/**
 * The entry with the receipt in its payload, if any, replaced by `<redacted>` or `<sealed with k1>`
 * (its hash is then no longer the payload's: verify and export work on the stored entry). A payload
 * is printed as its phase's schema reads it: a field it does not know is left out, and a payload
 * that does not decode is not printed at all.
 *
 * @since 0.2.0
 * @category redaction
 */
export const withoutReceipt = (entry: Entry): Entry =>
  Either.match(decodeEntry(entry), {
    onLeft: () => ({ ...entry, payload: undecodable }),
    onRight: (recorded) => ({ ...entry, payload: printable(recorded) })
  })
