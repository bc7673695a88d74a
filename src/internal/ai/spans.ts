/**
 * What a model turn shows in spans: never the model's answer. A tool call's arguments that do not
 * decode are quoted by the failure `@effect/ai` builds (a `ParseError` as its `cause`), and a span
 * that ends with that failure carries it in its status and exception event.
 */
import * as AiError from "@effect/ai/AiError"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Tracer from "effect/Tracer"

/** The `module` of the `AiError`s this library makes. */
export const MODULE = "effect-saga/ai"

/**
 * How a failed model call reads in a span: the error's tag, where it arose and why (`reason`, an
 * HTTP status), never its `cause` or another module's `description`, which may quote the model's
 * answer. `undefined` for an error that is not an `AiError` (the engine's: a timeout): it is shown
 * as it is.
 */
export const turnFailureInSpan = (error: unknown): string | undefined => {
  if (!AiError.isAiError(error)) return undefined
  const where = `${error._tag} in ${error.module}.${error.method}`
  const why = [
    "reason" in error ? error.reason : undefined,
    error._tag === "HttpResponseError" ? `status ${error.response.status}` : undefined
  ].filter((part) => part !== undefined)
  const said = error.module === MODULE && error.description !== undefined ? `: ${error.description}` : ""
  return `${where}${why.length === 0 ? "" : ` (${why.join(", ")})`}${said}`
}

/**
 * How a failed model turn is described in its journaled `FAILED`: a `MalformedOutput` whose cause is
 * a `ParseError` (a tool call whose parameters do not decode) as its tag, where it arose, the call
 * (its id and tool, when the issue is in one) and the schema's deepest issue, its path and what was
 * expected (quoting the value, as the journal may): the one in the part the model meant (the others
 * are the union's other members, tried first). `@effect/ai`'s own message lists the whole union of a
 * response's parts first, which a description cut at its limit never got past. One this library
 * made (an answer that cannot be journaled) as its tag, where it arose and its description:
 * `@effect/ai`'s message is its fields as an object, an absent `cause` printed `undefined`.
 * `undefined` for any other error: described as its message.
 */
export const turnFailureDescription = (error: unknown): string | undefined => {
  if (!AiError.isAiError(error)) return undefined
  if (
    error.module === MODULE &&
    "description" in error &&
    error.description !== undefined &&
    error.cause === undefined
  ) {
    return `${error._tag} in ${error.module}.${error.method}: ${error.description}`
  }
  if (error._tag !== "MalformedOutput" || !ParseResult.isParseError(error.cause)) return undefined
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error.cause)
  const first = deepestOf(issues)
  if (first === undefined) return undefined
  const [index, ...rest] = first.path
  const call = typeof index === "number" ? callAt(error.cause.issue.actual, index) : undefined
  // In a tool call, the issues of the call's own fields: not those of the union's other parts, tried first.
  const own = call === undefined ? [] : issues.filter((issue) => issue.path[0] === index && isCallField(issue.path[1]))
  const named = own.length > 0 && own.every((issue) => issue.path.length === 2 && issue.path[1] === "name")
  const deepest = deepestOf(own) ?? first
  const path = call === undefined ? first.path : deepest === first ? rest : deepest.path.slice(1)
  const at = path
    .map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`))
    .join("")
    .replace(/^\./, "")
  const why = named ? noSuchTool(own) : deepest.message
  return `MalformedOutput in ${error.module}.${error.method}: ${call ?? "the answer"}${at === "" ? "" : `, at ${at}`}: ${why}`
}

/** The issue of the longest path, the first of those. */
const deepestOf = (issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>) =>
  issues.reduce<ParseResult.ArrayFormatterIssue | undefined>(
    (found, issue) => (found === undefined || issue.path.length > found.path.length ? issue : found),
    undefined
  )

/** A tool call part's own fields, as `@effect/ai` decodes it. */
const isCallField = (key: PropertyKey | undefined): boolean => key === "name" || key === "params"

/**
 * A call whose tool name no member of the union takes (each tried its own names): the toolkit has
 * no tool of that name, and the names it has (in order), from each member's `Expected "A" | "B", actual "X"`.
 */
const noSuchTool = (issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>): string => {
  const said = issues.map((issue) => /^Expected (.*), actual (.*)$/s.exec(issue.message))
  if (said.some((match) => match === null)) return issues.map((issue) => issue.message).join("; ")
  const names = [...new Set(said.flatMap((match) => match![1]!.split(" | ")))].sort().join(" | ")
  return `the toolkit has no tool of that name (expected ${names}, actual ${said[0]![2]})`
}

/** The tool call at `index` of a response's parts, as `the call ID of TOOL`, if that part is one. */
const callAt = (parts: unknown, index: number): string | undefined => {
  const part: unknown = Array.isArray(parts) ? parts[index] : undefined
  if (typeof part !== "object" || part === null) return undefined
  const { id, name } = part as { readonly id?: unknown; readonly name?: unknown }
  return typeof id === "string" && typeof name === "string" ? `the call ${id} of ${name}` : undefined
}

/** `exit`, its failure (if an `AiError`) shown as `turnFailureInSpan` says. */
const maskedExit = (exit: Exit.Exit<unknown, unknown>): Exit.Exit<unknown, unknown> => {
  if (Exit.isSuccess(exit)) return exit
  const failure = Cause.failureOption(exit.cause)
  const shown = Option.isSome(failure) ? turnFailureInSpan(failure.value) : undefined
  return shown === undefined ? exit : Exit.fail(new Error(shown))
}

/** `@effect/ai`'s span of a model call: `LanguageModel.generateText`, `generateObject`, `streamText`. */
const isModelCallSpan = (name: string): boolean => name.startsWith("LanguageModel.")

/** `tracer`, its spans of a model call ending with their failure masked; every other span as it makes it. */
const masking = (tracer: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = tracer.span(name, parent, context, links, startTime, kind, options)
      if (!isModelCallSpan(name)) return span
      const end = span.end.bind(span)
      // The span itself is kept (what exports it may check its class): only how it ends changes.
      Object.defineProperty(span, "end", {
        value: (endTime: bigint, exit: Exit.Exit<unknown, unknown>) => end(endTime, maskedExit(exit))
      })
      return span
    },
    context: (f, fiber) => tracer.context(f, fiber)
  })

/** `call` (a model call), its `@effect/ai` span ending with its failure masked (see `turnFailureInSpan`). */
export const withModelCallSpanMasked = <A, E, R>(call: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.tracer, (tracer) => Effect.withTracer(call, masking(tracer)))
