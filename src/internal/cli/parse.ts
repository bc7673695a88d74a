/**
 * Reading the values an operator types: durations, dates, JSON. Each fails with a `UsageError`
 * that names the flag and shows what it expects.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { InvalidIdentifier } from "../../SagaError.js"
import { principalRefusal } from "../util/identifier.js"
import { cutoff } from "../util/isoTime.js"
import { UsageError } from "./failure.js"

const shortUnits: Record<string, Duration.DurationInput> = {
  ms: "1 millis",
  s: "1 second",
  m: "1 minute",
  h: "1 hour",
  d: "1 day",
  w: "7 days"
}

/** The longest duration read: 10,000 years, which no saga is older than (and a time that far back is a date). */
const MAX_DURATION = Duration.days(3_652_425)

/**
 * A duration: `90s`, `30m`, `2h`, `7d`, `2w`, or Effect's own form (`"2 hours"`). Not negative
 * (`-5m`, `"-5 minutes"`: Effect's form would read it as zero), nor over 10,000 years.
 *
 * @since 0.1.0
 * @category parsing
 */
export const duration = (flag: string, text: string): Effect.Effect<Duration.Duration, UsageError> => {
  const trimmed = text.trim()
  const short = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/.exec(trimmed)
  const decoded = short
    ? Option.some(Duration.times(Duration.decode(shortUnits[short[2]!]!), Number(short[1])))
    : trimmed.startsWith("-")
      ? Option.none()
      : Duration.decodeUnknown(trimmed)
  return Option.match(decoded, {
    onNone: () =>
      Effect.fail(new UsageError({ message: `${flag}: "${text}" is not a duration (e.g. 90s, 30m, 2h, 7d)` })),
    onSome: (read) =>
      Duration.greaterThan(read, MAX_DURATION)
        ? Effect.fail(new UsageError({ message: `${flag}: "${text}" is longer than 10000 years` }))
        : Effect.succeed(read)
  })
}

/**
 * A point in time as ISO-8601, read as the library reads one wherever it comes from (`prune`,
 * `list({ updatedBefore })`, the HTTP API: `util/isoTime.ts`): a date (`2025-01-31`, midnight UTC)
 * or a date and time with its zone (`2025-01-31T12:00:00Z`, `2025-01-31T13:00+01:00`), an expanded
 * year (`+002025-01-31`) included; returned as the journal writes times (UTC, milliseconds, `Z`; a
 * fraction finer than a millisecond rounded up; past year 9999, the end of that year). The text is
 * trimmed first.
 *
 * @since 0.1.0
 * @category parsing
 */
export const instant = (flag: string, text: string): Effect.Effect<string, UsageError> =>
  Either.match(cutoff(text.trim()), {
    onLeft: (reason) => Effect.fail(new UsageError({ message: `${flag}: ${reason}` })),
    onRight: Effect.succeed
  })

/**
 * JSON text, parsed.
 *
 * @since 0.1.0
 * @category parsing
 */
export const json = (flag: string, text: string): Effect.Effect<unknown, UsageError> =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) =>
      new UsageError({ message: `${flag}: not JSON (${error instanceof Error ? error.message : String(error)})` })
  })

/**
 * A name that is not blank (who an operator is, a reason).
 *
 * @since 0.1.0
 * @category parsing
 */
export const nonBlank = (flag: string, text: string): Effect.Effect<string, UsageError> =>
  text.trim() === "" ? Effect.fail(new UsageError({ message: `${flag}: must not be blank` })) : Effect.succeed(text)

/**
 * Who an operator is (`--as`), as the journal could record them deciding: not blank, and no control
 * character or more than 256 UTF-8 bytes (`InvalidIdentifier`, as the saga service refuses such a
 * `by`). Checked before the store is opened, by the commands that take it but journal no `by` too.
 *
 * @since 0.3.0
 * @category parsing
 */
export const principal = (flag: string, text: string): Effect.Effect<string, UsageError | InvalidIdentifier> =>
  Effect.flatMap(nonBlank(flag, text), (by) => {
    const refusal = principalRefusal(by)
    return refusal === undefined ? Effect.succeed(by) : Effect.fail(refusal)
  })

/**
 * An optional `principal`.
 *
 * @since 0.3.0
 * @category parsing
 */
export const optionalPrincipal = (
  flag: string,
  text: Option.Option<string>
): Effect.Effect<string | undefined, UsageError | InvalidIdentifier> =>
  Option.match(text, { onNone: () => Effect.succeed(undefined), onSome: (given) => principal(flag, given) })

/**
 * An optional `instant`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const optionalInstant = (
  flag: string,
  text: Option.Option<string>
): Effect.Effect<string | undefined, UsageError> =>
  Option.match(text, { onNone: () => Effect.succeed(undefined), onSome: (given) => instant(flag, given) })
