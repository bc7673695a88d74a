import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * Encodes `value` with `schema` and serializes it, or says why it cannot: also when the JSON would
 * not read back as what was encoded (`NaN`, an infinity, `undefined` in an array or alone, which
 * `JSON.stringify` writes as `null`), since a replay or an undo would then find what it cannot decode.
 */
export const encodeJson = (schema: Schema.Schema<any, any>, value: unknown): Either.Either<string, string> =>
  Either.flatMap(
    guarded(() => Schema.encodeUnknownEither(schema)(value)),
    (encoded) => (encoded === undefined ? undefinedAsNull(schema) : serialize(encoded))
  )

/**
 * A schema's answer, its failure formatted; a schema whose own code throws (a `transform`, a
 * `filter`) is a failure too, named by the first line of what it threw: the caller's typed error
 * (`InvalidInput`, `JournalCorrupted`, …), not a defect in the middle of a run or an undo.
 */
const guarded = <A>(run: () => Either.Either<A, ParseResult.ParseError>): Either.Either<A, string> => {
  try {
    return Either.mapLeft(run(), (error) => ParseResult.TreeFormatter.formatErrorSync(error))
  } catch (error) {
    return Either.left(`its schema threw: ${String(error).split("\n")[0]}`)
  }
}

const lostAsNull = (what: string) => `${what} cannot be journaled: JSON would read it back as null`

/** `undefined` is journaled as `null`, where `null` decodes as the schema says (`Schema.Void` does). */
const undefinedAsNull = (schema: Schema.Schema<any, any>): Either.Either<string, string> =>
  Either.isRight(guarded(() => Schema.decodeUnknownEither(schema)(null)))
    ? Either.right("null")
    : Either.left(lostAsNull("undefined"))

/**
 * What of `value` JSON would read back as `null`, if anything: a number that is not finite, or
 * `undefined` in an array. A walk of its own keeps `JSON.stringify` on V8's fast path (a replacer
 * would leave it).
 */
const lostIn = (value: unknown): string | undefined => {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : String(value)
  if (typeof value !== "object" || value === null) return undefined
  if (Array.isArray(value)) {
    for (const item of value) {
      const lost = item === undefined ? "undefined in an array" : lostIn(item)
      if (lost !== undefined) return lost
    }
    return undefined
  }
  for (const key in value) {
    const lost = lostIn((value as Record<string, unknown>)[key])
    if (lost !== undefined) return lost
  }
  return undefined
}

const serialize = (encoded: unknown): Either.Either<string, string> => {
  let lost: string | undefined
  let text: string | undefined
  try {
    lost = lostIn(encoded)
    text = lost === undefined ? JSON.stringify(encoded) : undefined
  } catch (error) {
    return Either.left(`cannot serialize as JSON: ${String(error)}`)
  }
  if (lost !== undefined) return Either.left(lostAsNull(lost))
  return text === undefined ? Either.left(lostAsNull("the value")) : Either.right(text)
}

/**
 * `value` as JSON text, or why it cannot be: a cycle, a `BigInt`, a `toJSON` that throws, or a
 * value JSON has no text for (`undefined`, a function, a symbol).
 */
export const jsonText = (value: unknown): Either.Either<string, string> => {
  let text: string | undefined
  try {
    text = JSON.stringify(value)
  } catch (error) {
    return Either.left(`cannot serialize as JSON: ${String(error)}`)
  }
  return text === undefined ? Either.left(`cannot serialize as JSON: a ${typeof value}`) : Either.right(text)
}

/** Decodes an encoded (JSON) value with `schema`, or says why it cannot. */
export const decodeValue = <A>(schema: Schema.Schema<A, any>, encoded: unknown): Either.Either<A, string> =>
  guarded(() => Schema.decodeUnknownEither(schema)(encoded))

/**
 * A line of a decoding error whose quotes are the schema's, not values met: a path (`["card"]`,
 * `[0]`), what was expected (`Expected "a" | "b"`, once `actual` is cut), a struct's description.
 */
const schemaLine = /^[\s│├└─]*(\[.*\]$|Expected |\{ readonly )/

/** A JSON string literal, as a decoding error quotes a value it met. */
const quoted = /"(?:[^"\\]|\\.)*"/g

/**
 * A reason `decodeValue` or `decodeJson` gave, without the values it quotes (`Expected number,
 * actual "4111…"` reads `Expected number`; `Unable to decode "4111…" into a number` reads `Unable
 * to decode <value> into a number`; JSON that does not parse reads `not JSON`): for a reason about
 * journaled inputs and results, which reaches reports, logs and spans, where they never go.
 */
export const withoutValues = (reason: string): string =>
  reason.startsWith("not JSON: ")
    ? "not JSON"
    : reason
        .replace(/, actual .*$/gm, "")
        .split("\n")
        .map((line) => (schemaLine.test(line) ? line : line.replace(quoted, "<value>")))
        .join("\n")

/** Parses JSON text and decodes it with `schema`, or says why it cannot. */
export const decodeJson = <A>(schema: Schema.Schema<A, any>, json: string | null): Either.Either<A, string> => {
  let parsed: unknown
  try {
    parsed = json === null ? null : JSON.parse(json)
  } catch (error) {
    return Either.left(`not JSON: ${String(error)}`)
  }
  return decodeValue(schema, parsed)
}

/** The UTF-8 size of a string. */
export const byteLength = (text: string): number => Buffer.byteLength(text, "utf8")
