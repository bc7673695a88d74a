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

/** Parses JSON text and decodes it with `schema`, or says why it cannot. */
export const decodeJson = <A>(schema: Schema.Schema<A, any>, json: string | null): Either.Either<A, string> => {
  let parsed: unknown
  try {
    parsed = json === null ? null : JSON.parse(json)
  } catch (error) {
    return Either.left(`not JSON: ${String(error)}`)
  }
  return Either.mapLeft(Schema.decodeUnknownEither(schema)(parsed), (error) =>
    ParseResult.TreeFormatter.formatErrorSync(error)
  )
}

/** Parses a journal payload into a plain object; anything else is `undefined`. */
export const parsePayload = (json: string | null): Record<string, unknown> | undefined => {
  if (json === null) return undefined
  try {
    const parsed: unknown = JSON.parse(json)
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/** The UTF-8 size of a string. */
export const byteLength = (text: string): number => Buffer.byteLength(text, "utf8")
