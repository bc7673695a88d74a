/**
 * A decoding error about a journaled input or result, as reports, logs and spans carry it: what the
 * schema expected and where, in the schema's own words, never the value the journal holds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { Compensable, Saga } from "../src/index.js"
import { decodeJournaled, decodeJournaledJson } from "../src/internal/util/codec.js"
import * as Testing from "../src/Testing.js"

const SECRET = "4111-SECRET-9"

const reasonOf = (either: Either.Either<unknown, string>): string => {
  if (Either.isRight(either)) throw new Error("it decoded")
  return either.left
}

describe("decodeJournaled", () => {
  it("keeps the schema's words and the paths, and drops every value met", () => {
    const Card = Schema.Struct({ card: Schema.NumberFromString, kind: Schema.Literal("debit", "credit") })
    const transformed = reasonOf(decodeJournaled(Card, { card: SECRET, kind: "debit" }))
    expect(transformed).toContain('["card"]')
    expect(transformed).toContain("Unable to decode <value> into a number")
    expect(transformed).not.toContain("SECRET")
    const literal = reasonOf(decodeJournaled(Card, { card: "12", kind: "SECRET-kind" }))
    expect(literal).toContain('Expected "credit"')
    expect(literal).not.toContain("SECRET")
    expect(reasonOf(decodeJournaled(Schema.Number, { card: SECRET }))).toBe("Expected number")
    expect(reasonOf(decodeJournaledJson(Schema.Number, "{SECRET not json"))).toBe("not JSON")
  })

  it("names a union of literals and a branded refinement as the schema does, at the top as in a field", () => {
    const Letter = Schema.Literal("a", "b")
    expect(reasonOf(decodeJournaled(Letter, SECRET))).toBe('"a" | "b"\n├─ Expected "a"\n└─ Expected "b"')
    expect(reasonOf(decodeJournaled(Schema.Struct({ letter: Letter }), { letter: SECRET }))).toBe(
      '{ readonly letter: "a" | "b" }\n└─ ["letter"]\n   └─ "a" | "b"\n      ├─ Expected "a"\n      └─ Expected "b"'
    )
    const Code = Schema.String.pipe(Schema.length(3), Schema.brand("Code"))
    expect(reasonOf(decodeJournaled(Code, SECRET))).toBe(
      'length(3) & Brand<"Code">\n└─ Predicate refinement failure\n   └─ Expected a string 3 character(s) long'
    )
  })

  it("masks a key the value brought (a Record's), a filter's own message, and what a schema's code threw", () => {
    const Totals = Schema.Record({ key: Schema.String, value: Schema.Number })
    const keyed = reasonOf(decodeJournaled(Totals, { [SECRET]: "x" }))
    expect(keyed).toBe('{ readonly [x: string]: number }\n└─ ["<key>"]\n   └─ Expected number')
    const Short = Schema.String.pipe(Schema.filter((text) => text.length < 3 || `too long: "${text}"`))
    expect(reasonOf(decodeJournaled(Short, SECRET))).toContain("too long: <value>")
    const Throwing = Schema.String.pipe(
      Schema.filter((text) => {
        throw new Error(`cannot read "${text}"`)
      })
    )
    expect(reasonOf(decodeJournaled(Throwing, SECRET))).toBe("its schema threw: Error: cannot read <value>")
  })

  it("names the fields a struct that refuses excess properties expected, not the key the value brought", () => {
    const Amount = Schema.Struct({ amount: Schema.Number }).annotations({
      parseOptions: { onExcessProperty: "error" }
    })
    const excess = reasonOf(decodeJournaled(Amount, { amount: 1, [SECRET]: 2 }))
    expect(excess).toBe('{ readonly amount: number }\n└─ ["<key>"]\n   └─ is unexpected, expected: "amount"')
  })

  it("a message annotation that quotes the issue's value sees the placeholder", () => {
    const Named = Schema.String.annotations({ message: (issue) => `not a name: ${String(issue.actual)}` })
    expect(reasonOf(decodeJournaled(Named, { card: SECRET }))).toBe("not a name: <value>")
  })
})

describe("a replayed result that no longer decodes (JournalCorrupted)", () => {
  /** A saga that journals `result` from a tool whose result was a string, then replays it with `success`. */
  const replayed = (sagaId: string, result: unknown, success: Schema.Schema<any, any>) =>
    Effect.gen(function* () {
      const tool = (schema: Schema.Schema<any, any>) =>
        Compensable.make({
          name: "noted",
          input: Schema.Number,
          success: schema,
          execute: () => Effect.succeed(result),
          compensate: () => Effect.void
        })
      const before = tool(Schema.Unknown)
      expect((yield* Saga.run(sagaId, Effect.zipRight(before(1), Effect.interrupt)))._tag).toBe("Suspended")
      const error = yield* Effect.flip(Saga.run(sagaId, tool(success)(1)))
      expect(error._tag).toBe("JournalCorrupted")
      return (error as { readonly reason: string }).reason
    })

  it.effect("names the literals a union expected", () =>
    Effect.gen(function* () {
      const reason = yield* replayed("literal", SECRET, Schema.Literal("a", "b"))
      expect(reason).toMatch(/^result of noted:\w+#1 does not decode with the tool's schema: /)
      expect(reason).toContain(`does not decode with the tool's schema: "a" | "b"\n├─ Expected "a"\n└─ Expected "b"`)
      expect(reason).not.toContain(SECRET)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("names the brand and the refinement", () =>
    Effect.gen(function* () {
      const reason = yield* replayed("brand", SECRET, Schema.String.pipe(Schema.length(3), Schema.brand("Code")))
      expect(reason).toContain(`does not decode with the tool's schema: length(3) & Brand<"Code">`)
      expect(reason).toContain("Expected a string 3 character(s) long")
      expect(reason).not.toContain(SECRET)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("names a struct's field and what it expected, never the secret it holds", () =>
    Effect.gen(function* () {
      const reason = yield* replayed("field", { token: SECRET }, Schema.Struct({ token: Schema.Number }))
      expect(reason).toContain(`{ readonly token: number }\n└─ ["token"]\n   └─ Expected number`)
      expect(reason).not.toContain(SECRET)
      expect(reason).not.toContain("SECRET")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("masks the keys a Record's value brought: they are journaled values too", () =>
    Effect.gen(function* () {
      const totals = Schema.Record({ key: Schema.String, value: Schema.Number })
      const reason = yield* replayed("keyed", { [SECRET]: "twelve" }, totals)
      expect(reason).toContain(`{ readonly [x: string]: number }\n└─ ["<key>"]\n   └─ Expected number`)
      expect(reason).not.toContain(SECRET)
    }).pipe(Effect.provide(Testing.layer))
  )
})
