import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Schema } from "effect"
import { Compensable, Outcome } from "../src/index.js"
import { Faults } from "../src/internal/engine/faults.js"
import { countProblems } from "../src/internal/testing/checks.js"
import { CrashSwitch, Ledger } from "../src/internal/testing/crash.js"

/**
 * The counts `exploreCrashes` checks at every crash point. The engine never runs a step's call
 * twice without retryMode "idempotency-key", nor an undo twice, so no saga makes these fail: they
 * are checked here on calls fed to the ledger by hand.
 */
describe("the call counts exploreCrashes checks", () => {
  const tool = (retryMode: Compensable.RetryMode) =>
    Compensable.make({
      name: "charge",
      input: Schema.Int,
      success: Schema.String,
      retryMode,
      execute: () => Effect.succeed("charged"),
      compensate: () => Effect.void
    })

  const calling = (
    retryMode: Compensable.RetryMode,
    calls: ReadonlyArray<["execute" | "compensate", Effect.Effect<string, unknown>]>
  ) =>
    Effect.gen(function* () {
      const ledger = new Ledger()
      const faults = Context.get(ledger.faults(yield* CrashSwitch.make(undefined)), Faults)
      for (const [site, call] of calls) {
        yield* Effect.exit(faults.around("charge", site, call, { stepId: "charge#1", spec: tool(retryMode).spec }))
      }
      return countProblems(ledger)
    })

  it.effect("a call run twice for one step, without retryMode idempotency-key, is named", () =>
    Effect.gen(function* () {
      expect(
        yield* calling("none", [
          ["execute", Effect.succeed("a")],
          ["execute", Effect.succeed("b")]
        ])
      ).toEqual([
        'charge ran 2 times for step charge#1; it does not declare retryMode "idempotency-key", so it may run once'
      ])
      expect(
        yield* calling("idempotency-key", [
          ["execute", Effect.succeed("a")],
          ["execute", Effect.succeed("b")]
        ])
      ).toEqual([])
    })
  )

  it.effect("a call that failed proved it did not apply: a retry after it is not a second run", () =>
    Effect.gen(function* () {
      const failed = Effect.fail(Outcome.failed("declined"))
      expect(
        yield* calling("none", [
          ["execute", failed],
          ["execute", Effect.succeed("a")]
        ])
      ).toEqual([])
      const unknown = Effect.fail(Outcome.unknown("lost"))
      expect(
        yield* calling("none", [
          ["execute", unknown],
          ["execute", Effect.succeed("a")]
        ])
      ).toHaveLength(1)
    })
  )

  it.effect("an undo run twice for one step is named", () =>
    Effect.gen(function* () {
      expect(
        yield* calling("idempotency-key", [
          ["compensate", Effect.succeed("a")],
          ["compensate", Effect.succeed("a")]
        ])
      ).toEqual(["the undo of charge ran 2 times for step charge#1; an undo runs at most once per step"])
    })
  )
})

describe("docs/testing.md", () => {
  it("shows test/explore-checkout.test.ts as it is, importing from the package", () => {
    const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8")
    const shown = read("docs/testing.md").match(/### A complete test: the checkout\n[\s\S]*?```ts\n([\s\S]*?)```/)![1]!
    const file = read("test/explore-checkout.test.ts")
    const code = file
      .slice(file.indexOf("import "))
      .replace('from "../src/index.js"', 'from "effect-saga"')
      .replace('from "../src/Testing.js"', 'from "effect-saga/testing"')
    expect(shown).toBe(code)
  })
})
