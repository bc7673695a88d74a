import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** Encodes `value` with `schema` and serializes it, or says why it cannot. */
export const encodeJson = (schema: Schema.Schema<any, any>, value: unknown): Either.Either<string, string> =>
  Either.flatMap(
    Either.mapLeft(Schema.encodeUnknownEither(schema)(value), (error) =>
      ParseResult.TreeFormatter.formatErrorSync(error)
    ),
    (encoded) => {
      try {
        return Either.right(JSON.stringify(encoded ?? null))
      } catch (error) {
        return Either.left(`cannot serialize as JSON: ${String(error)}`)
      }
    }
  )

/** Decodes an encoded (JSON) value with `schema`, or says why it cannot. */
export const decodeValue = <A>(schema: Schema.Schema<A, any>, encoded: unknown): Either.Either<A, string> =>
  Either.mapLeft(Schema.decodeUnknownEither(schema)(encoded), (error) =>
    ParseResult.TreeFormatter.formatErrorSync(error)
  )

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
