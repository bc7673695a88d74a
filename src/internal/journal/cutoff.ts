/**
 * The time `prune(before)` and `list({ updatedBefore })` cut at, in the form the stores keep times in (UTC, milliseconds, `Z`,
 * a four-digit year), so that comparing the stored text with it compares the times. The reading itself is
 * `util/isoTime.ts`, which the HTTP API's `Instant` shares (it may not import the journal's internals).
 */
export { cutoff, daysIn } from "../util/isoTime.js"
