/**
 * The times a store writes (an entry's `at`, a saga row's `createdAt` and `updatedAt`, a lease's
 * `expiresAt`) are ISO-8601 text with a four-digit year, and the stores compare them as text: they
 * name years 0000–9999 only (`+010000-…` would sort before `2…`). A clock past the last of them
 * writes nothing and takes no lease, so no saga can be pruned, listed or leased out of time order;
 * a lease that would end past it ends there.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { lastMillis } from "../util/isoTime.js"
import { JournalError } from "./errors.js"

/** The clock's reading, in words, even past the last date JavaScript can name. */
const shown = (millis: number): string =>
  Math.abs(millis) <= 8.64e15 ? new Date(millis).toISOString() : `${millis} ms after 1970`

/**
 * The `JournalError` that refuses `operation` at `millis`, if the clock is past
 * 9999-12-31T23:59:59.999Z: nothing is written, nothing is claimed.
 */
export const pastStoredTime = (operation: string, millis: number): JournalError | undefined =>
  millis <= lastMillis
    ? undefined
    : new JournalError({
        operation,
        reason: `the clock reads ${shown(millis)}, past 9999-12-31T23:59:59.999Z, the last time a journal can store (its times are compared as text): nothing was written; check the clock`
      })

/** When a lease taken at `millis` for `ttlMillis` ends: at the last time a store can hold, at the latest. */
export const leaseEnd = (millis: number, ttlMillis: number): number => Math.min(millis + ttlMillis, lastMillis)

/** `f` at the clock's time, or the refusal of `operation` when the clock is past the last time a store can hold. */
export const atStorableTime = <A, E, R>(
  operation: string,
  f: (millis: number) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | JournalError, R> =>
  Effect.flatMap(Clock.currentTimeMillis, (millis): Effect.Effect<A, E | JournalError, R> => {
    const refused = pastStoredTime(operation, millis)
    return refused === undefined ? f(millis) : Effect.fail(refused)
  })
