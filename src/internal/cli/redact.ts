/**
 * Receipts (what a tool handed its undo: a refund token, a cancellation key) are control data: the
 * CLI prints none of them. `show --json` prints a receipt as `<redacted>`, or, sealed at rest, as
 * `<sealed with KEY-ID>`; `export` is the one command that prints entries byte for byte.
 *
 * @since 0.2.0
 */
export { withoutReceipt } from "../../Timeline.js"
