/**
 * The one line a request the API's schemas refuse is answered with: the field, what was expected
 * and what was sent, cut and escaped. `@effect/platform`'s own message is the whole tree of the
 * schema with the value whole (a 900 KB string sent as `revision` came back whole); this reads its
 * issues instead.
 */
import { cut, preview, printable } from "../util/printable.js"

/** An issue as `ParseResult.ArrayFormatter` writes it (what `HttpApiDecodeError.issues` holds). */
export interface Issue {
  readonly _tag: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** The most characters of what a field expects that a message shows. */
const MAX_EXPECTED = 200

/** The most characters of a value sent that a message shows (a string is shown as `preview` shows it). */
const MAX_SHOWN = 64

/** `revision`, `status[0]`, `body` for the body as a whole. */
const fieldOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0
    ? "body"
    : printable(
        path
          .map((key, index) => (typeof key === "number" ? `[${key}]` : `${index === 0 ? "" : "."}${String(key)}`))
          .join("")
      )

/** A value as `ParseResult` formatted it (JSON for a string), cut and escaped. */
const shown = (actual: string): string => {
  if (actual.startsWith('"')) {
    try {
      const text: unknown = JSON.parse(actual)
      if (typeof text === "string") return preview(text)
    } catch {}
  }
  return printable(cut(actual, MAX_SHOWN))
}

/** A schema's description as a person reads it: a struct or an array's whole type is named by its kind. */
const described = (expected: string): string => {
  if (expected.startsWith("{")) return "a JSON object"
  if (expected.startsWith("ReadonlyArray<") || expected.startsWith("readonly [")) return "a JSON array"
  return printable(cut(expected, MAX_EXPECTED))
}

interface Reading {
  readonly expected?: string | undefined
  readonly actual?: string | undefined
  readonly said?: string | undefined
}

/** What one issue's message says was expected and was sent; or, for a message of the API's own, that message. */
const readingOf = (message: string): Reading => {
  const typed = /^Expected ([\s\S]*?), actual ([\s\S]*)$/.exec(message)
  if (typed !== null) return { expected: typed[1]!, actual: typed[2]! }
  const transformed = /^Unable to decode ([\s\S]*?) into ([\s\S]*)$/.exec(message)
  if (transformed !== null) return { expected: transformed[2]!, actual: transformed[1]! }
  return { said: printable(cut(message, MAX_EXPECTED * 2)) }
}

const pathKey = (issue: Issue): string => JSON.stringify(issue.path.map(String))

/**
 * The message for `issues` (of a body, a path or a query that does not fit its schema): the first
 * field that does not fit, what it expects (an optional field's "or nothing" left out) and what was
 * sent, cut and escaped; `nothing was written`.
 */
export const decodeMessage = (issues: ReadonlyArray<Issue>): string => {
  const first = issues[0]
  if (first === undefined) return "the request does not fit the API; nothing was written"
  const field = fieldOf(first.path)
  const here = issues.filter((issue) => pathKey(issue) === pathKey(first))
  // Other fields, not other issues of this one: `status[0]` and `status` are one field sent.
  const others = new Set(
    issues.map((issue) => String(issue.path[0] ?? "")).filter((key) => key !== String(first.path[0] ?? ""))
  ).size
  const more = others > 0 ? ` (and ${others} other field(s))` : ""
  if (here.some((issue) => issue._tag === "Missing")) return `${field} is missing${more}; nothing was written`
  if (here.some((issue) => issue._tag === "Unexpected")) {
    return `${field} is not expected here${more}; nothing was written`
  }
  const readings = here.map((issue) => readingOf(issue.message))
  const said = readings.find((reading) => reading.said !== undefined)?.said
  if (said !== undefined) return `invalid ${field}: ${said}${more}; nothing was written`
  const named = Array.from(new Set(readings.map((reading) => reading.expected!).filter((text) => text !== "undefined")))
  const expected =
    named.length === 0
      ? "nothing"
      : named.length === 1
        ? described(named[0]!)
        : `one of ${cut(named.map(described).join(", "), MAX_EXPECTED)}`
  const actual = readings.find((reading) => reading.actual !== undefined)?.actual
  const got = actual === undefined ? "" : `, got ${shown(actual)}`
  return `invalid ${field}: expected ${expected}${got}${more}; nothing was written`
}
