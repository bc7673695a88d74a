import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { firstDuplicateKey } from "../src/internal/manifest/duplicateKeys.js"

describe("a key repeated in a JSON object", () => {
  it.prop("JSON.stringify never repeats a key, and the scanner finds none", [fc.jsonValue()], ([value]) => {
    expect(firstDuplicateKey(JSON.stringify(value, null, 1))).toBeUndefined()
  })

  it.prop(
    "a key written twice in one object is found, at its path, whatever surrounds it",
    [fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }), fc.string(), fc.jsonValue(), fc.jsonValue()],
    ([others, key, first, second]) => {
      const rest = Object.entries(others)
        .filter(([other]) => other !== key)
        .map(([other, value]) => `${JSON.stringify(other)}: ${JSON.stringify(value)}`)
      const inner = [
        `${JSON.stringify(key)}: ${JSON.stringify(first)}`,
        ...rest,
        `${JSON.stringify(key)}:${JSON.stringify(second)}`
      ]
      const text = `{ "bindings": [ 1, { ${inner.join(", ")} } ] }`
      expect(firstDuplicateKey(text)).toEqual(["bindings", 1, key])
    }
  )
})
