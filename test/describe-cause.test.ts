/**
 * `SAGA_COMPENSATING`'s cause is the first line of the program's failure, cut at 500 characters
 * (docs/compensation.md), also where a tool described the failure in its own words (a model turn's
 * `MalformedOutput`, whose `FAILED` description is cut at 1,000).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import { describeCause } from "../src/internal/engine/ending.js"

describe("the cause SAGA_COMPENSATING journals", () => {
  it("is cut at 500 characters, whether Cause.pretty or the tool's description says it", () => {
    const error = new Error("y".repeat(3000))
    expect(describeCause(Cause.fail(error))).toHaveLength(500)
    const described = new WeakMap<object, string>([[error, `MalformedOutput in LanguageModel: ${"9".repeat(995)}`]])
    const said = describeCause(Cause.fail(error), [], described)
    expect(said).toHaveLength(500)
    expect(said.startsWith("MalformedOutput in LanguageModel: 999")).toBe(true)
  })
})
