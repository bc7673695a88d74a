/**
 * What a manifest field that takes one of a few values says when it is given another, or none, and
 * what a type (`TypeSpec`) says when its own shape is wrong: every value allowed, and what it got
 * (`kind must be one of "read", "external_write", "irreversible" (got "write")`), instead of the first
 * alternative Schema tried.
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { given, preview } from "../util/printable.js"

/** The values, quoted, as a message lists them. */
const listed = (values: ReadonlyArray<string>): string => values.map((value) => JSON.stringify(value)).join(", ")

/** What a value is, as a message quotes it: text quoted and escaped, a number as written, else its kind. */
export const got = (actual: unknown): string => (Array.isArray(actual) ? "an array" : given(actual))

/**
 * A struct field that takes one of `values`: a `Schema.Literal` whose failure names them all, and
 * what it got; missing, it says so and names them too.
 */
export const oneOf = <const Values extends readonly [string, ...Array<string>]>(field: string, ...values: Values) => {
  const allowed = values.length === 1 ? `must be ${listed(values)}` : `must be one of ${listed(values)}`
  const literal = Schema.Literal(...values).annotations({
    message: (issue) => ({ message: `${field} ${allowed} (got ${got(issue.actual)})`, override: true })
  })
  return Schema.propertySignature(literal).annotations({ missingMessage: () => `${field} is missing: it ${allowed}` })
}

/**
 * A struct field that takes a positive integer, at most `Number.MAX_SAFE_INTEGER` (beyond it a
 * number is no longer exact): its failure says so, and what it got (the bound only to a number beyond it).
 */
export const positiveInteger = (field: string) => {
  const integer = Schema.Int.pipe(Schema.positive(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER)).annotations({
    title: field,
    description: `a positive integer, at most ${Number.MAX_SAFE_INTEGER}`,
    message: (issue) => {
      const beyond = typeof issue.actual === "number" && issue.actual > Number.MAX_SAFE_INTEGER
      const rule = beyond ? `a positive integer, at most ${Number.MAX_SAFE_INTEGER}` : "a positive integer"
      return { message: `${field} must be ${rule} (got ${got(issue.actual)})`, override: true }
    }
  })
  return Schema.propertySignature(integer).annotations({
    missingMessage: () => `${field} is missing: it must be a positive integer`
  })
}

/** The `type` names a `TypeSpec` may have. */
export const TYPE_NAMES = ["string", "number", "integer", "boolean", "null", "json", "object", "array"] as const

type TypeName = (typeof TYPE_NAMES)[number]

const typeChoice = `one of ${listed(TYPE_NAMES)}, or the type is { "ref": "Name" }`

/** The keys a type of each kind has. */
const keysOf = (type: TypeName): ReadonlyArray<string> =>
  type === "object" ? ["type", "properties", "required"] : type === "array" ? ["type", "items"] : ["type"]

/** The first key of `actual` none of `keys`, as a message says it. */
const unexpectedKey = (actual: Record<string, unknown>, keys: ReadonlyArray<string>): string | undefined => {
  const key = Object.keys(actual).find((candidate) => !keys.includes(candidate))
  return key === undefined ? undefined : `${preview(key)} is unexpected: this type has ${listed(keys)} only`
}

/**
 * What is wrong with a type's own level (`TypeSpec`): not an object, a `type` missing or none of the
 * names, a key its kind does not have, its `ref`, `properties`, `items` or `required` missing or not
 * what they must be. `undefined` when this level is sound (a problem, if any, is in a type it holds,
 * which says so itself).
 */
export const typeSpecProblem = (actual: unknown): string | undefined => {
  if (!Predicate.isRecord(actual)) return `a type is an object, { "type": … } or { "ref": … } (got ${got(actual)})`
  if ("ref" in actual) {
    return typeof actual.ref === "string"
      ? unexpectedKey(actual, ["ref"])
      : `ref must be the name of a Schema given to Manifest.toolkit, as text (got ${got(actual.ref)})`
  }
  if (!("type" in actual)) return `type is missing: give ${typeChoice}`
  const type = actual.type as TypeName
  if (!TYPE_NAMES.includes(type)) return `type must be ${typeChoice} (got ${got(actual.type)})`
  const unexpected = unexpectedKey(actual, keysOf(type))
  if (unexpected !== undefined) return unexpected
  if (type === "array" && !("items" in actual)) return "items is missing: an array type gives the type of its items"
  if (type === "object") {
    if (!("properties" in actual)) return "properties is missing: an object type gives its properties' types"
    if (!Predicate.isRecord(actual.properties)) {
      return `properties must be an object of property names and their types (got ${got(actual.properties)})`
    }
    const required = actual.required
    if (required !== undefined && !(Array.isArray(required) && required.every(Predicate.isString))) {
      return `required must be an array of property names (got ${got(required)})`
    }
    const missing = required?.find((name: string) => !Object.hasOwn(actual.properties as object, name))
    if (missing !== undefined) return `${JSON.stringify(missing)} is required but not among the properties`
  }
  return undefined
}
