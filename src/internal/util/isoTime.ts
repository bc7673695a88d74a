/**
 * ISO-8601 times as effect-saga reads them wherever one comes from outside (`prune(before)`,
 * `list({ updatedBefore })`, the HTTP API's `Instant`): a date, or a date and time with its zone,
 * that the calendar has; written back as the stores keep times (UTC, milliseconds, `Z`, a four-digit
 * year), so that comparing stored text with it compares the times.
 */
import * as Either from "effect/Either"
import { preview, typeName } from "./printable.js"

/** `YYYY-MM-DD`, or `±YYYYYY-MM-DD`; then, optionally, `THH:MM[:SS[.fraction]]` and its zone. */
const isoTime =
  /^(\d{4}|[+-]\d{6})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2}))?$/

/** The first and last millisecond a store's text can hold: years 0000 and 9999. */
const firstMillis = new Date(0).setUTCFullYear(0, 0, 1)
export const lastMillis = new Date(0).setUTCFullYear(9999, 11, 31) + 86_400_000 - 1

const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

/** The days of `month` (1–12) in `year`, by the proleptic Gregorian calendar. */
export const daysIn = (year: number, month: number) =>
  month === 2 ? (isLeap(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

/** Minutes east of UTC that a zone names (`Z`, `+01:00`), if it is one. */
const zoneMinutes = (zone: string): number | undefined => {
  if (zone === "Z") return 0
  const hours = Number(zone.slice(1, 3))
  const minutes = Number(zone.slice(4, 6))
  if (hours > 23 || minutes > 59) return undefined
  return (zone[0] === "-" ? -1 : 1) * (hours * 60 + minutes)
}

/**
 * The milliseconds since the epoch `text` names, clamped to years 0000–9999, or `undefined` if it
 * names no time. A fraction finer than a millisecond is rounded up: a stored time (whole
 * milliseconds) is before `12:00:00.0005` exactly when it is before `12:00:00.001`.
 */
export const millisOf = (text: string): number | undefined => {
  const parts = isoTime.exec(text)
  if (parts === null) return undefined
  const [, yearText, monthText, dayText, hourText, minuteText, secondText, fraction, zone] = parts
  const year = Number(yearText)
  const month = Number(monthText)
  const day = Number(dayText)
  const [hour, minute, second] = [hourText, minuteText, secondText].map((part) => Number(part ?? 0)) as [
    number,
    number,
    number
  ]
  if (yearText === "-000000" || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined
  if (hour > 23 || minute > 59 || second > 59) return undefined
  const offset = zone === undefined ? 0 : zoneMinutes(zone)
  if (offset === undefined) return undefined
  // Past year 9999 (or before year 0) by more than a zone can move it: no arithmetic needed, or possible.
  if (year > 10_000) return lastMillis
  if (year < -1) return firstMillis
  const subMillis = fraction === undefined ? 0 : Math.ceil(Number(`0.${fraction}`) * 1000)
  const millis =
    new Date(0).setUTCFullYear(year, month - 1, day) + ((hour * 60 + minute - offset) * 60 + second) * 1000 + subMillis
  return Math.min(Math.max(millis, firstMillis), lastMillis)
}

/**
 * Whether `text` is a time exactly as the stores write one (`2025-01-31T12:00:00.000Z`): what a
 * stored row's times must be, since the stores compare them as text.
 */
export const isStoredTime = (text: string): boolean => {
  const millis = millisOf(text)
  return millis !== undefined && new Date(millis).toISOString() === text
}

/**
 * `before` as the stores write times (`2025-01-31T12:00:00.000Z`), or why it is not a time. It must
 * be ISO-8601: a date (midnight UTC), or a date and time with its zone; a time past year 9999 cuts
 * at that year's end, one before year 0 at its start (no stored time is outside them).
 */
export const cutoff = (before: unknown): Either.Either<string, string> => {
  const millis = typeof before === "string" ? millisOf(before) : undefined
  if (millis !== undefined) return Either.right(new Date(millis).toISOString())
  const shown = typeof before === "string" ? preview(before) : typeName(before)
  if (typeof before === "string" && namesNoZone(before)) {
    return Either.left(`${shown} ${NO_ZONE}`)
  }
  return Either.left(
    `${shown} is not an ISO-8601 time: a date (2025-01-31) or a date and time with its zone (2025-01-31T12:00:00Z, 2025-01-31T13:00+01:00)`
  )
}

/** Whether `text` is an ISO-8601 date and time that would be one with a zone after it. */
export const namesNoZone = (text: string): boolean => millisOf(`${text.trim()}Z`) !== undefined

/** What a time with no zone is told: to add one. */
export const NO_ZONE =
  "names no zone: add one (2025-01-31T12:00:00Z for UTC, 2025-01-31T13:00+01:00): without it, each host would read it in its own local time"
