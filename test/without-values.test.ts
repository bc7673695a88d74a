/**
 * A decoding error about a journaled input or result, as reports, logs and spans carry it: what the
 * schema expected and where, never the value the journal holds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { decodeJson, decodeValue, withoutValues } from "../src/internal/util/codec.js"

const reasonOf = (either: Either.Either<unknown, string>): string => {
  if (Either.isRight(either)) throw new Error("it decoded")
  return withoutValues(either.left)
}

describe("withoutValues", () => {
  it("keeps the schema's words and the paths, and drops every value met", () => {
    const Card = Schema.Struct({ card: Schema.NumberFromString, kind: Schema.Literal("debit", "credit") })
    const transformed = reasonOf(decodeValue(Card, { card: "4111-SECRET-9", kind: "debit" }))
    expect(transformed).toContain('["card"]')
    expect(transformed).toContain("Unable to decode <value> into a number")
    expect(transformed).not.toContain("SECRET")
    const literal = reasonOf(decodeValue(Card, { card: "12", kind: "SECRET-kind" }))
    expect(literal).toContain('Expected "credit"')
    expect(literal).not.toContain("SECRET")
    expect(reasonOf(decodeValue(Schema.Number, { card: "4111-SECRET" }))).toBe("Expected number")
    expect(reasonOf(decodeJson(Schema.Number, "{SECRET not json"))).toBe("not JSON")
  })
})
