/**
 * Free text an error gives, as journaled: a failed step's description, a failed undo's detail. A
 * huge message (a tool that fails with a 5 MB body) is cut, marked, so that the journal, every
 * read of it and every report stay readable.
 */
import * as Cause from "effect/Cause"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Outcome from "../../Outcome.js"
import { jsonText } from "./codec.js"
import { cut } from "./printable.js"

/** The most characters of an error's text that are journaled. */
export const MAX_DETAIL = 1000

/** `text`, cut at `MAX_DETAIL` characters with a final `…` when it is longer. */
export const cutDetail = (text: string): string => cut(text, MAX_DETAIL)

/**
 * An error in words: its tag (a typed error's, which its message may not name), then its message;
 * a plain object's JSON (a tagged one's after its tag); an outcome's message as it is.
 */
export const errorDetail = (error: unknown): string => {
  // An outcome (`Outcome.failed("…")`) says it all in its message, as documented.
  const tag =
    !Outcome.isOutcome(error) && Predicate.hasProperty(error, "_tag") && typeof error._tag === "string"
      ? error._tag
      : undefined
  if (error instanceof Error && error.message !== "") {
    const message = error.message
    if (tag === undefined) return message
    return message.includes(tag) ? message : `${tag}: ${message}`
  }
  // An error with no message (`Data.TaggedError("Declined")<{ why }>`) is said by its fields, as a plain object is.
  if (typeof error !== "object" || error === null) return String(error)
  if (tag === undefined) return Either.getOrElse(jsonText(error), () => String(error))
  const { _tag, ...fields } = error as { readonly _tag: string }
  const json = Either.getOrElse(jsonText(fields), () => "")
  return json === "" || json === "{}" ? tag : `${tag}: ${json}`
}

/** A defect's first line, as `Cause.pretty` shows it (`Error: boom`). */
export const defectLine = (cause: Cause.Cause<unknown>): string => Cause.pretty(cause).split("\n")[0]!

/** How an effect failed, in words: its error's detail, a defect's first line, or `interrupted`. */
export const causeText = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return errorDetail(failure.value)
  return Cause.isInterruptedOnly(cause) ? "interrupted" : defectLine(cause)
}

/** `causeText`, cut at `MAX_DETAIL` characters. */
export const causeDetail = (cause: Cause.Cause<unknown>): string => cutDetail(causeText(cause))
