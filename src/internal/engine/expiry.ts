import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { millisOf } from "../util/isoTime.js"

/** The fields of an approval that decide when it expires, and who gave and renewed it. */
export interface Expiring {
  readonly by?: unknown
  readonly at?: unknown
  readonly expiresAt?: unknown
  readonly renewedBy?: unknown
  readonly renewedAt?: unknown
}

/**
 * When an approval expires: the instant as written, in epoch milliseconds (`NaN` if unreadable), and
 * the rule that set it (its `expiresAt`, or the TTL counted from its approval or renewal).
 */
export interface Expiry {
  readonly text: string
  readonly millis: number
  readonly rule: string
}

/** The last instant JavaScript's `Date` can name (ECMA-262: 8.64e15 ms after the epoch). */
const LAST_DATE_MILLIS = 8.64e15

const fromMillis = (millis: number, rule: string): Expiry => ({
  text: Number.isFinite(millis) ? new Date(millis).toISOString() : "an unreadable time",
  millis,
  rule
})

/**
 * When an approval expires: its own `expiresAt` if it names one; else the time it was given (or last
 * renewed) plus `ttl`; else never (`undefined`).
 */
export const expiryOf = (approval: Expiring, ttl: Duration.Duration | undefined): Expiry | undefined => {
  if (approval.expiresAt !== undefined) {
    // Read as an ISO-8601 time with its zone, never in this worker's local time: else unreadable.
    const text = String(approval.expiresAt)
    return { text, millis: millisOf(text) ?? Number.NaN, rule: "its expiresAt" }
  }
  if (ttl === undefined || !Duration.isFinite(ttl)) return undefined
  const from = approval.renewedAt ?? approval.at
  const millis = Date.parse(String(from)) + Duration.toMillis(ttl)
  // A TTL that ends past the last instant a date can name (≈ 275,000 years on) never ends.
  const counted = `approvalTtl ${Duration.format(ttl)} from its ${approval.renewedAt === undefined ? "approval" : "renewal"}`
  return millis > LAST_DATE_MILLIS ? undefined : fromMillis(millis, counted)
}

/**
 * The expiry of an approval that has expired by Effect's `Clock` (at or before now; an unreadable
 * expiry counts as expired), or `undefined` while it holds.
 */
export const expiredAt = (approval: Expiring, ttl: Duration.Duration | undefined) =>
  Effect.map(Clock.currentTimeMillis, (now): Expiry | undefined => {
    const expiry = expiryOf(approval, ttl)
    return expiry !== undefined && !(expiry.millis > now) ? expiry : undefined
  })

/** The approval as the journal's reader knows it: who gave it and when, who renewed it and when. */
const givenBy = (approval: Expiring): string => {
  const given = `the approval by ${String(approval.by)} at ${String(approval.at)}`
  return approval.renewedAt === undefined
    ? given
    : `${given}, renewed by ${String(approval.renewedBy)} at ${String(approval.renewedAt)},`
}

/**
 * Why an approval is refused as expired: which approval, when it expired and by which rule, or that
 * its expiry names no time. An operator reads it in the journal's `EXPIRED`, which is all the
 * journal holds of an approval the service gave and the run found expired.
 */
export const expiredReason = (approval: Expiring, expiry: Expiry): string =>
  Number.isNaN(expiry.millis)
    ? `the approval's expiry ${JSON.stringify(expiry.text)} names no time a worker can read (ISO-8601 with its zone): taken as expired`
    : `${givenBy(approval)} expired at ${expiry.text} (${expiry.rule})`
