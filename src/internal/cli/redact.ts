/**
 * Receipts (what a tool handed its undo: a refund token, a cancellation key) are control data: the
 * CLI prints none of them. `show --json` prints a receipt as `<redacted>`, or, sealed at rest, as
 * `<sealed with KEY-ID>`; `export` is the one command that prints entries byte for byte.
 *
 * @since 0.2.0
 */
import * as Predicate from "effect/Predicate"
import type { Entry } from "../../Journal.js"
import { parsePayload } from "../util/codec.js"

/** What is printed in place of a receipt: whether it is sealed and under which key, never its value. */
const placeholder = (receipt: unknown): string =>
  Predicate.isRecord(receipt) && typeof receipt.sealed === "string"
    ? `<sealed with ${typeof receipt.kid === "string" ? receipt.kid : "an unnamed key"}>`
    : "<redacted>"

/**
 * The entry with the receipt in its payload, if any, replaced by `<redacted>` or `<sealed with k1>`
 * (its hash is then no longer the payload's: verify and export work on the stored entry).
 *
 * @since 0.2.0
 * @category redaction
 */
export const withoutReceipt = (entry: Entry): Entry => {
  const payload = parsePayload(entry.payload)
  if (payload === undefined || !("receipt" in payload)) return entry
  return { ...entry, payload: JSON.stringify({ ...payload, receipt: placeholder(payload.receipt) }) }
}
