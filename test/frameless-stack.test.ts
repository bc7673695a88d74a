/**
 * A red run ends and prints its counts: a failed test's error reaches vitest's reporter without a
 * stack that holds no call site (test/support/frameless-stack.ts says why), through the set-up file
 * vitest.config.ts names.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause } from "effect"
import type { TestError } from "vitest"
import config from "../vitest.config.js"
import { withoutFramelessStack } from "./support/frameless-stack.js"

/** The error `@effect/vitest` throws for a test that failed with `failure`, as vitest keeps it. */
const reported = (failure: unknown): TestError => {
  const [error] = Cause.prettyErrors(Cause.fail(failure))
  return { name: error!.name, message: error!.message, stack: error!.stack! }
}

/** A saga page, what a test that expected an error got: a kilobyte of JSON, quotes and no "@". */
const page = {
  sagas: ["n-1", "a-2", "a-1", "c-3", "x-1"].map((sagaId) => ({
    sagaId,
    status: "completed",
    digest: "92d4f76050b7e1f9631e1f91b7ee5054b95bb769d502e63225f9e3918250b6ad",
    createdAt: "1970-01-01T00:00:05.000Z",
    lease: null
  })),
  total: 7
}

describe("a failed test's error as the reporter reads it", () => {
  it("a failure that is not an Error: its stack, the value's JSON and no call site, is left out", () => {
    const error = reported(page)
    expect(error.stack).toBe(`Error: ${JSON.stringify(page)}`)
    expect(withoutFramelessStack(error)).toEqual({ name: "Error", message: JSON.stringify(page) })
  })

  it("a stack with call sites is kept, and a cause's stack without one is left out", () => {
    const thrown = new Error("refused")
    const cause = reported({ reason: 'a "quoted" reason' })
    const error: TestError = { name: "Error", message: "refused", stack: thrown.stack!, cause }
    expect(withoutFramelessStack(error)).toEqual({
      name: "Error",
      message: "refused",
      stack: thrown.stack,
      cause: { name: "Error", message: cause.message }
    })
  })

  it("every test file runs with the set-up file that applies it", () => {
    expect(config.test?.setupFiles).toContain("test/support/reportable-failures.ts")
  })
})
