/**
 * Checking the options object a caller gave a layer: from JavaScript, or `as any`, an option
 * misspelled (`leaseTTL`, `maxBodyByte`) would otherwise be ignored and its default taken, silently.
 */
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import { given, preview } from "./printable.js"

/**
 * Why `options` names an option that is none of `known`, if it does: the first such key, and the
 * options there are. A key whose value is `undefined` counts too: it is still a misspelling.
 */
export const unknownOption = (options: object, known: ReadonlyArray<string>): string | undefined => {
  const unknown = Object.keys(options).find((key) => !known.includes(key))
  return unknown === undefined
    ? undefined
    : `name ${preview(unknown)}, which is no option: the options are ${known.join(", ")}`
}

/**
 * A duration as it was given, for a message: `Duration.decode` clamps a negative or `NaN` one to
 * zero, and a reason that said `0` of `-5` would show a value nobody wrote.
 */
export const givenDuration = (input: unknown): string => {
  if (typeof input === "bigint") return `${input}n`
  if (Array.isArray(input)) return `[${input.map(given).join(", ")}]`
  return Duration.isDuration(input) ? Duration.format(input) : given(input)
}

/** The duration `input` names, or why it names none (`Duration.decode` throws on text it cannot read). */
export const durationOf = (input: unknown): Either.Either<Duration.Duration, string> => {
  try {
    return Either.right(Duration.decode(input as Duration.DurationInput))
  } catch {
    return Either.left(`${givenDuration(input)} is not a duration`)
  }
}

/**
 * The positive duration `input` names, or why it names none: a duration `Duration.decode` reads as
 * zero (`0`, `-5`, `NaN`, `"-1 minute"`) is refused with `consequence` (what zero would do).
 */
export const positiveDurationOf = (input: unknown, consequence: string): Either.Either<Duration.Duration, string> =>
  Either.filterOrLeft(
    durationOf(input),
    (duration) => Duration.toMillis(duration) > 0,
    () => `${givenDuration(input)} is not a positive duration: ${consequence}`
  )

/** What an `approvalTtl` of zero would do, for the reason that refuses one. */
export const APPROVAL_TTL_ZERO = "every approval would have expired"
