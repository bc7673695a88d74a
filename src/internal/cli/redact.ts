/**
 * Receipts (what a tool handed its undo: a refund token, a cancellation key) are control data: the
 * CLI prints none of them. `show --json` prints a receipt as `<redacted>`, or, sealed at rest, as
 * `<sealed with KEY-ID>`; `export` is the one command that prints entries byte for byte.
 *
 * @since 0.2.0
 */
import * as Either from "effect/Either"
import type { Entry, JournaledReceipt, Recorded } from "../../Journal.js"
import { decodeEntry, encodePayload } from "../../Journal.js"

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
