import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { millisOf } from "../util/isoTime.js"

/** The fields of an approval that decide when it expires. */
export interface Expiring {
  readonly at?: unknown
  readonly expiresAt?: unknown
  readonly renewedAt?: unknown
}

/** When an approval expires: the instant as written, and in epoch milliseconds (`NaN` if unreadable). */
export interface Expiry {
  readonly text: string
  readonly millis: number
}

/** The last instant JavaScript's `Date` can name (ECMA-262: 8.64e15 ms after the epoch). */
const LAST_DATE_MILLIS = 8.64e15

const fromMillis = (millis: number): Expiry => ({
  text: Number.isFinite(millis) ? new Date(millis).toISOString() : "an unreadable time",
  millis
})

/**
 * When an approval expires: its own `expiresAt` if it names one; else the time it was given (or last
 * renewed) plus `ttl`; else never (`undefined`).
 */
export const expiryOf = (approval: Expiring, ttl: Duration.Duration | undefined): Expiry | undefined => {
  if (approval.expiresAt !== undefined) {
    // Read as an ISO-8601 time with its zone, never in this worker's local time: else unreadable.
    const text = String(approval.expiresAt)
    return { text, millis: millisOf(text) ?? Number.NaN }
  }
  if (ttl === undefined || !Duration.isFinite(ttl)) return undefined
  const from = approval.renewedAt ?? approval.at
  const millis = Date.parse(String(from)) + Duration.toMillis(ttl)
  // A TTL that ends past the last instant a date can name (≈ 275,000 years on) never ends.
  return millis > LAST_DATE_MILLIS ? undefined : fromMillis(millis)
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

/** Why an approval is refused as expired: when it expired, or that its expiry names no time. */
export const expiredReason = (expiry: Expiry): string =>
  Number.isNaN(expiry.millis)
    ? `the approval's expiry ${JSON.stringify(expiry.text)} names no time a worker can read (ISO-8601 with its zone): taken as expired`
    : `the approval expired at ${expiry.text}`
