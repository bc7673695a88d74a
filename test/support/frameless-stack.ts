/**
 * A failed test's error as vitest's reporter may read it: without a stack that holds no call site.
 *
 * The reporter reads a stack that holds no V8 call site (`    at f (file.ts:1:2)`) as Firefox's or
 * Safari's, line by line, with a regular expression that backtracks without end on a long line that
 * holds double quotes and no "@". `@effect/vitest` gives a test that fails with something other than
 * an `Error` (a plain object, an `Effect.flip` of a success) such a stack: `Error: ` and the value's
 * JSON, `Error: {"sagas":[{"sagaId":"n-1",…` a kilobyte long. The run then printed the failure's
 * name, spun at full CPU and never ended, nor printed its counts, nor stopped its PostgreSQL.
 * Such a stack says nothing the error's message does not (vitest shows no frame of it either), so it
 * is left out, of the error and of its causes.
 */

/** What vitest keeps of a failed test's error (its `processError`): a plain object. */
interface Reported {
  readonly stack?: unknown
  readonly cause?: unknown
}

/** A line of a V8 stack, as vitest recognizes one (its CHROME_IE_STACK_REGEXP). */
const v8CallSite = /^\s*at .*(?:\S:\d+|\(native\))/m

/** `error` without its stack when the stack holds no V8 call site, and so its causes. */
export const withoutFramelessStack = <E extends Reported>(error: E): E => {
  const { stack, cause, ...rest } = error
  const kept = typeof stack === "string" && v8CallSite.test(stack) ? { stack } : {}
  const reportable = typeof cause === "object" && cause !== null ? withoutFramelessStack(cause) : cause
  return { ...rest, ...kept, ...(cause === undefined ? {} : { cause: reportable }) } as unknown as E
}
