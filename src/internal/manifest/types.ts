/** A binding's `input` or `output` type as a Schema: built from its JSON-Schema-like spec, or registered in code. */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { TypeSpec } from "./format.js"

/** The Schemas a manifest's `{ "ref": name }` types name, given to `Manifest.toolkit`. */
export type Registered = Readonly<Record<string, Schema.Schema<any, any>>>

/** Why a type cannot be built: the path below the type, and the reason. */
export interface TypeProblem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly reason: string
}

const scalars = {
  string: Schema.String,
  number: Schema.Number,
  integer: Schema.Int,
  boolean: Schema.Boolean,
  null: Schema.Null,
  json: Schema.Unknown
} as const

/** The Schema of a type spec; a `ref` to a Schema that was not registered is a problem. */
export const schemaOf = (
  spec: TypeSpec,
  registered: Registered
): Either.Either<Schema.Schema<any, any>, TypeProblem> => {
  if ("ref" in spec) {
    const schema = Object.hasOwn(registered, spec.ref) ? registered[spec.ref] : undefined
    return schema === undefined
      ? Either.left({ path: ["ref"], reason: `no Schema ${JSON.stringify(spec.ref)} was given to Manifest.toolkit` })
      : Either.right(schema)
  }
  switch (spec.type) {
    case "array":
      return Either.map(
        Either.mapLeft(schemaOf(spec.items, registered), (problem) => ({
          ...problem,
          path: ["items", ...problem.path]
        })),
        (items) => Schema.Array(items)
      )
    case "object":
      return objectOf(spec.properties, spec.required ?? [], registered)
    default:
      return Either.right(scalars[spec.type])
  }
}

const objectOf = (
  properties: { readonly [key: string]: TypeSpec },
  required: ReadonlyArray<string>,
  registered: Registered
): Either.Either<Schema.Schema<any, any>, TypeProblem> => {
  const fields: Record<string, Schema.Schema<any, any> | Schema.PropertySignature.Any> = {}
  for (const [key, spec] of Object.entries(properties)) {
    const schema = schemaOf(spec, registered)
    if (Either.isLeft(schema)) return Either.left({ ...schema.left, path: ["properties", key, ...schema.left.path] })
    fields[key] = required.includes(key) ? schema.right : Schema.optional(schema.right)
  }
  const unknown = required.find((key) => !Object.hasOwn(properties, key))
  if (unknown !== undefined) {
    return Either.left({
      path: ["required"],
      reason: `${JSON.stringify(unknown)} is required but not among the properties`
    })
  }
  return Either.right(Schema.Struct(fields) as unknown as Schema.Schema<any, any>)
}
