/**
 * How a command ends when it does not end well, and the exit code each ending gets: 1 when the
 * answer is "something is wrong" (already printed, or a saga whose journal does not verify), 2 when
 * the command could not be carried out.
 *
 * @since 0.1.0
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import { JournalTampered } from "../../Journal.js"
import { printable } from "../util/printable.js"
import { shellWord } from "../util/shellWord.js"
import { WroteBefore } from "./interruption.js"

/**
 * The command could not be carried out as asked: a malformed value, a missing file, a store that is
 * not supported, a command refused before it reached a saga. Nothing was written. Exit code 2.
 *
 * @since 0.1.0
 * @category errors
 */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/**
 * The command ran and its answer is "something is wrong" (a broken hash chain, dirty state, a
 * compensation that left something live): the answer is already printed, and `line`, when given,
 * says on stderr what the answer is not (`export` of a journal that does not decode). Exit code 1.
 *
 * @since 0.1.0
 * @category errors
 */
export class SomethingWrong extends Data.TaggedError("SomethingWrong")<{
  readonly reason: string
  readonly line?: string | undefined
}> {
  /** What is wrong, for a CLI this one is embedded in (`Cause.pretty` shows it). */
  override get message(): string {
    return this.line ?? this.reason
  }
}

/**
 * What a command's run ended with: the exit code and, for a failure, the one line to print.
 *
 * @since 0.1.0
 * @category models
 */
export interface Ending {
  readonly code: 0 | 1 | 2 | 130
  readonly line?: string | undefined
}

/** The one line that says what went wrong: an error's `message`, never its stack. */
const lineOf = (error: unknown): string => {
  const message = Predicate.hasProperty(error, "message") ? String(error.message) : String(error)
  const first = printable(message.split("\n")[0]!.trim())
  return first === "" && Predicate.hasProperty(error, "_tag") ? String(error._tag) : first
}

/**
 * The exit code of a run and the line to print: 0 ok, 1 something is wrong (a saga whose journal
 * does not verify included: the command was refused, nothing was written), 2 a usage or
 * infrastructure error (any other typed error, and a defect), 130 interrupted.
 *
 * @since 0.1.0
 * @category exit codes
 */
export const endingOf = (cause: Cause.Cause<unknown>): Ending => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof WroteBefore) {
      // An answer already printed (exit 1) says what the command did itself.
      const ending = endingOf(Cause.fail(error.error))
      return ending.line === undefined
        ? ending
        : { ...ending, line: `${ending.line}; before that, this command journaled ${error.journaled}` }
    }
    if (error instanceof SomethingWrong) return error.line === undefined ? { code: 1 } : { code: 1, line: error.line }
    if (error instanceof JournalTampered) {
      return {
        code: 1,
        line: `${lineOf(error)} (effect-saga show ${shellWord(error.sagaId)} shows the journal as stored)`
      }
    }
    // @effect/cli has printed its own message (and the usage) for a command line it could not parse,
    // unless it had none to print.
    if (ValidationError.isValidationError(error)) {
      return HelpDoc.isEmpty(error.error) ? { code: 2, line: unreadable } : { code: 2 }
    }
    return { code: 2, line: lineOf(error) }
  }
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) return { code: 2, line: `internal error: ${lineOf(defect.value)}` }
  // The command said what its interruption left (`Interruption.told`).
  return { code: 130 }
}

/**
 * What a command line `@effect/cli` refused without a word means: most likely an argument that
 * begins with `-` (an id such as `-x y`) read as options.
 */
const unreadable =
  "the command line could not be read: an argument that begins with - is read as options; give the options first, then -- and the ids (effect-saga COMMAND --option … -- SAGA STEP)"
