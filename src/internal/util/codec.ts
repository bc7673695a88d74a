import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { withoutQuotes, withoutValues } from "./withoutValues.js"

/**
 * Encodes `value` with `schema` and serializes it, or says why it cannot: also when the JSON would
 * not read back as what was encoded (`NaN`, an infinity, `undefined` in an array or alone, which
 * `JSON.stringify` writes as `null`), since a replay or an undo would then find what it cannot decode;
 * and when `value` inherits data its encoding drops (`inheritsDataAlong`: `PROTO_KEY`).
 */
export const encodeJson = (schema: Schema.Schema<any, any>, value: unknown): Either.Either<string, string> =>
  Either.flatMap(
    guarded(() => Schema.encodeUnknownEither(schema)(value)),
    (encoded) =>
      encoded === undefined
        ? undefinedAsNull(schema)
        : Either.filterOrLeft(
            serialize(encoded),
            () => !inheritsDataAlong(value, encoded, 0),
            () => PROTO_KEY
          )
  )

/** How a schema's failure is put in words: as `TreeFormatter` says it, or without the values it met. */
interface Wording {
  readonly issue: (error: ParseResult.ParseError) => string
  readonly thrown: (line: string) => string
}

const quoting: Wording = { issue: ParseResult.TreeFormatter.formatErrorSync, thrown: (line) => line }

/** For journaled inputs and results, whose reasons reach reports, logs and spans, where they never go. */
const masking: Wording = { issue: withoutValues, thrown: withoutQuotes }

/**
 * A schema's answer, its failure formatted; a schema whose own code throws (a `transform`, a
 * `filter`) is a failure too, named by the first line of what it threw: the caller's typed error
 * (`InvalidInput`, `JournalCorrupted`, …), not a defect in the middle of a run or an undo.
 */
const guarded = <A>(
  run: () => Either.Either<A, ParseResult.ParseError>,
  wording: Wording = quoting
): Either.Either<A, string> => {
  try {
    return Either.mapLeft(run(), wording.issue)
  } catch (error) {
    return Either.left(`its schema threw: ${wording.thrown(String(error).split("\n")[0]!)}`)
  }
}

const lostAsNull = (what: string) => `${what} cannot be journaled: JSON would read it back as null`

/** `undefined` is journaled as `null`, where `null` decodes as the schema says (`Schema.Void` does). */
const undefinedAsNull = (schema: Schema.Schema<any, any>): Either.Either<string, string> =>
  Either.isRight(guarded(() => Schema.decodeUnknownEither(schema)(null)))
    ? Either.right("null")
    : Either.left(lostAsNull("undefined"))

/**
 * How deep a journaled value may nest: far less than the stack `JSON.stringify` needs, so that a
 * value is journaled, or refused, alike at any depth of its caller's stack (a replay's too).
 */
export const MAX_JSON_DEPTH = 1000

/** What a value nested deeper than `MAX_JSON_DEPTH` is. */
export const NESTED_TOO_DEEP = `nested more than ${MAX_JSON_DEPTH} levels deep`

/**
 * What a key named `__proto__` is refused as, in an input, a result or an error: parsed from JSON it
 * is a key, but a schema that decodes or encodes it into a new object (`Schema.Record`) makes its
 * value the object's prototype, whose properties the tool reads and JSON never writes.
 */
export const PROTO_KEY =
  'it holds a key named "__proto__", which decoding may make the object\'s prototype (Schema.Record does): the tool could read properties the journal does not hold'

/**
 * Whether `value` holds a key named `__proto__`, or inherits data through one: a prototype that is
 * a plain object of data, keys of its own and no method, as JSON makes one (a class's prototype has
 * no enumerable key; Effect's `Chunk`, `Duration` or `List` prototypes have methods).
 */
const smugglesProto = (value: object): boolean =>
  Object.hasOwn(value, "__proto__") || dataPrototypeOf(value) !== undefined

/** `value`'s prototype, if it is a plain object of data (keys of its own and no method), as JSON makes one. */
const dataPrototypeOf = (value: object): object | undefined => {
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) !== Object.prototype)
    return undefined
  const values = Object.values(proto as object)
  return values.length > 0 && values.every((inherited) => typeof inherited !== "function")
    ? (proto as object)
    : undefined
}

/**
 * Whether `value` (a caller's, before encoding) or an object in it inherits data through its
 * prototype that `encoded`, what its schema made of it, does not hold: a `Schema.Record` that
 * decoded a key named `__proto__` (from a model's or a request's JSON) made its value the object's
 * prototype, which the tool reads and the encoding, copying own keys only, drops (a struct's
 * defaults inherited by its fields are encoded, and pass). Walked only where `encoded`
 * goes as JSON (`encoded` serialized already), so what its schema does not declare is never
 * followed; an object the encoding kept as it is (`Schema.Unknown`) is `problemIn`'s to judge, and
 * one with a `toJSON` (a `Chunk`, whose structure refers to itself) is JSON's own.
 */
const inheritsDataAlong = (value: unknown, encoded: unknown, depth: number): boolean => {
  if (typeof value !== "object" || value === null || typeof encoded !== "object" || encoded === null) return false
  if (value === encoded || depth > MAX_JSON_DEPTH || typeof (encoded as Partial<Shown>).toJSON === "function") {
    return false
  }
  const proto = Array.isArray(value) ? undefined : dataPrototypeOf(value)
  if (proto !== undefined && Object.keys(proto).some((key) => !(key in encoded))) return true
  for (const key in encoded) {
    const inner = (encoded as Record<string, unknown>)[key]
    if (typeof inner === "object" && inheritsDataAlong((value as Record<string, unknown>)[key], inner, depth + 1)) {
      return true
    }
  }
  return false
}

/**
 * Why `value` cannot be journaled as it is, if it cannot: nested deeper than `MAX_JSON_DEPTH`,
 * something JSON would read back as `null` (a number that is not finite, `undefined` in an array,
 * an invalid `Date`), a function or a symbol (which JSON drops), an object whose content is not its
 * own keys (`lostShape`: a `Map`, a `Set`), a key named `__proto__` (`PROTO_KEY`), or an object with
 * a `toJSON` (a `Date`, Effect's `Chunk`: `readsBackAs`). A walk of its own keeps `JSON.stringify`
 * on V8's fast path (a replacer would leave it).
 */
export const problemIn = (value: unknown, depth = 0): string | undefined => {
  if (typeof value === "object" && value !== null && typeof (value as Partial<Shown>).toJSON === "function") {
    return readsBackAs(value as Shown)
  }
  return problemInShown(value, depth)
}

/**
 * Why an object with a `toJSON` cannot be journaled as it is: JSON holds what its `toJSON` returns,
 * and reads that back, never the object (a `Date` comes back as text, a `Chunk` as a plain object),
 * so the tool or the program would be given what a replay, an undo and an approver never see.
 */
const readsBackAs = (value: Shown): string => {
  if (value instanceof Date) {
    return Number.isNaN(value.getTime())
      ? lostAsNull("an invalid Date")
      : "a Date cannot be journaled as it is: JSON would read it back as text (declare it with Schema.Date, which journals its ISO text and gives back a Date, or give the text)"
  }
  return `${kindOf(value)} with a toJSON cannot be journaled as it is: JSON would read back what its toJSON returns, not it (declare it with its schema, or give plain data)`
}

/** An object with a `toJSON`, named: by the `_id` Effect's data types write (`a Chunk`), or its class. */
const kindOf = (value: Shown): string => {
  let id: unknown
  try {
    id = (value.toJSON() as { readonly _id?: unknown } | null)?._id
  } catch {}
  const name = typeof id === "string" ? id : (value as object).constructor?.name
  if (name === undefined || name === "Object" || name === "") return "an object"
  return /^[AEIOU]/.test(name) ? `an ${name}` : `a ${name}`
}

/**
 * Why JSON cannot hold an object whose content is not its own keys, if so: a `Map`, a `Set`, a
 * typed array, a `RegExp`… (which `JSON.stringify` writes as `{}` or an object of indices, while
 * the tool is given the object itself). A plain object passes at once.
 */
const lostShape = (value: object): string | undefined => {
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto === Object.prototype || proto === null) return undefined
  const opaque =
    value instanceof Map ||
    value instanceof Set ||
    value instanceof WeakMap ||
    value instanceof WeakSet ||
    value instanceof RegExp ||
    value instanceof Promise ||
    value instanceof ArrayBuffer ||
    ArrayBuffer.isView(value)
  if (!opaque) return undefined
  const kind = Object.prototype.toString.call(value).slice(8, -1)
  return `a ${kind} cannot be journaled: JSON would read it back as a plain object (make it an object or an array first)`
}

interface Shown {
  readonly toJSON: () => unknown
}

/** `problemIn` of a value with no `toJSON`: as `JSON.stringify` writes it. */
const problemInShown = (value: unknown, depth: number): string | undefined => {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : lostAsNull(String(value))
  if (typeof value === "function" || typeof value === "symbol") {
    return `a ${typeof value} cannot be journaled: JSON has no text for it`
  }
  if (typeof value !== "object" || value === null) return undefined
  if (depth === MAX_JSON_DEPTH) return `it is ${NESTED_TOO_DEEP}`
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = item === undefined ? lostAsNull("undefined in an array") : problemIn(item, depth + 1)
      if (problem !== undefined) return problem
    }
    return undefined
  }
  const lost = lostShape(value)
  if (lost !== undefined) return lost
  if (smugglesProto(value)) return PROTO_KEY
  for (const key in value) {
    const problem = problemIn((value as Record<string, unknown>)[key], depth + 1)
    if (problem !== undefined) return problem
  }
  return undefined
}

/** Whether `value` (its objects and arrays; not the bytes of a typed array) nests deeper than `MAX_JSON_DEPTH`. */
export const nestsTooDeep = (value: unknown, depth = 0): boolean => {
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return false
  if (depth === MAX_JSON_DEPTH) return true
  for (const key in value) {
    if (nestsTooDeep((value as Record<string, unknown>)[key], depth + 1)) return true
  }
  return false
}

const serialize = (encoded: unknown): Either.Either<string, string> => {
  let problem: string | undefined
  let text: string | undefined
  try {
    problem = problemIn(encoded)
    text = problem === undefined ? JSON.stringify(encoded) : undefined
  } catch (error) {
    return Either.left(`cannot serialize as JSON: ${String(error)}`)
  }
  if (problem !== undefined) return Either.left(problem)
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

/** Decodes an encoded (JSON) value with `schema`, or says why it cannot, quoting what it met. */
export const decodeValue = <A>(schema: Schema.Schema<A, any>, encoded: unknown): Either.Either<A, string> =>
  guarded(() => Schema.decodeUnknownEither(schema)(encoded))

/** Parses JSON text and decodes it with `schema`, or says why it cannot, quoting what it met. */
export const decodeJson = <A>(schema: Schema.Schema<A, any>, json: string | null): Either.Either<A, string> =>
  Either.flatMap(parsedJson(json), (parsed) => decodeValue(schema, parsed))

/**
 * Decodes a journaled value (an input, a result) with `schema`, or says why it cannot without the
 * value: where, and what the schema expected in its own words (`withoutValues`).
 */
export const decodeJournaled = <A>(schema: Schema.Schema<A, any>, encoded: unknown): Either.Either<A, string> =>
  guarded(() => Schema.decodeUnknownEither(schema)(encoded), masking)

/** `decodeJournaled` of JSON text; text that does not parse reads `not JSON`. */
export const decodeJournaledJson = <A>(schema: Schema.Schema<A, any>, json: string | null): Either.Either<A, string> =>
  Either.flatMap(
    Either.mapLeft(parsedJson(json), () => "not JSON"),
    (parsed) => decodeJournaled(schema, parsed)
  )

const parsedJson = (json: string | null): Either.Either<unknown, string> => {
  try {
    return Either.right(json === null ? null : JSON.parse(json))
  } catch (error) {
    return Either.left(`not JSON: ${String(error)}`)
  }
}

/** The UTF-8 size of a string. */
export const byteLength = (text: string): number => Buffer.byteLength(text, "utf8")
