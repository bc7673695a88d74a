import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { chain } from "../src/internal/journal/hash.js"

/** The framing as specified, written the slow, obvious way: byte length, colon, bytes. */
const reference = (previous: string, fields: ReadonlyArray<string | number | null>): string => {
  const hash = createHash("sha256").update(previous, "utf8")
  for (const field of fields) {
    if (field === null) hash.update("-1:")
    else {
      const bytes = Buffer.from(String(field), "utf8")
      hash.update(`${bytes.length}:`).update(bytes)
    }
  }
  return hash.digest("hex")
}

const field = fc.oneof(fc.string({ unit: "grapheme" }), fc.string(), fc.integer(), fc.constant(null))

describe("the hash chain", () => {
  it.effect.prop(
    "chains SHA-256 over the previous hash and length-prefixed UTF-8 fields",
    {
      previous: fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 64, maxLength: 64 }),
      fields: fc.array(field, { maxLength: 8 })
    },
    ({ fields, previous }) =>
      Effect.sync(() => {
        expect(chain(previous, fields)).toBe(reference(previous, fields))
      }),
    // Generating grapheme strings is slow on a loaded 2-core machine: room to finish, not a speed check.
    { timeout: 60_000 }
  )

  it("does not let a field's content pass for a field boundary", () => {
    expect(chain("0", ["ab", "c"])).not.toBe(chain("0", ["a", "bc"]))
    expect(chain("0", [null, ""])).not.toBe(chain("0", ["", null]))
    expect(chain("0", ["é", "a"])).not.toBe(chain("0", ["éa"]))
  })
})
