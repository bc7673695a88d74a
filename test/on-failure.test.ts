/**
 * A tool declared `onFailure: "continue"`: its failure is the program's to handle (a fallback to
 * another provider). It is journaled `FAILED` with `taints: false`, and the saga compensates only if
 * its program fails; by default a failure the program caught still taints the saga.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Compensable, Outcome, Saga, SagaResult } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { entriesOf } from "./fixtures/journal-reads.js"

class Declined extends Schema.TaggedError<Declined>()("Declined", { provider: Schema.String }) {}

/** What the providers did, in order. */
const world: Array<string> = []

/** A card provider that declines every charge, or charges and refunds. */
const provider = (name: string, declines: boolean, onFailure?: "compensate" | "continue") =>
  Compensable.make({
    name: `${name}Charge`,
    input: Schema.Number,
    success: Schema.String,
    failure: Declined,
    ...(onFailure === undefined ? {} : { onFailure }),
    execute: (amount) =>
      declines
        ? Effect.fail(new Declined({ provider: name }))
        : Effect.sync(() => {
            world.push(`${name} charged ${amount}`)
            return `${name}-ch-${amount}`
          }),
    compensate: (ctx) => Effect.sync(() => world.push(`${name} refunded ${ctx.result}`))
  })

const primary = provider("stripe", true, "continue")
const fallback = provider("adyen", false)
const ship = Compensable.make({
  name: "ship",
  input: Schema.String,
  success: Schema.String,
  execute: (order) => Effect.succeed(`parcel-${order}`),
  compensate: (ctx) => Effect.sync(() => world.push(`recalled ${ctx.result}`))
})

/** A continue tool whose provider never answers: every call's outcome is unknown. */
const unanswered = Compensable.make({
  name: "stripeCharge",
  input: Schema.Number,
  success: Schema.String,
  failure: Declined,
  onFailure: "continue",
  execute: () => Effect.fail(Outcome.unknown("the provider did not answer")),
  compensate: () => Effect.void
})

/** Charges with the primary provider, falls back to the other on a decline, then ships. */
const checkout = (charge: typeof primary) =>
  Effect.gen(function* () {
    const charged = yield* charge(100).pipe(Effect.catchTag("Declined", () => fallback(100)))
    yield* ship("order-1")
    return charged
  })

describe('a tool declared onFailure: "continue"', () => {
  it.effect("its failure, caught by a fallback, does not compensate the saga: journaled FAILED, taints: false", () =>
    Effect.gen(function* () {
      world.length = 0
      const result = yield* Saga.run("fallback", checkout(primary))
      assert(SagaResult.isCompleted(result))
      expect(result.value).toBe("adyen-ch-100")
      expect(world).toEqual(["adyen charged 100"])
      const failed = (yield* entriesOf("fallback")).find((entry) => entry.phase === "FAILED")!
      expect(failed.toolName).toBe("stripeCharge")
      expect(JSON.parse(failed.payload!)).toMatchObject({ taints: false })
      // Run again, the journaled failure is caught again, and nothing runs twice.
      const again = yield* Saga.run("fallback", checkout(primary))
      expect(again).toEqual(result)
      expect(world).toEqual(["adyen charged 100"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("by default the same fallback compensates the saga when its program ends: the failure taints it", () =>
    Effect.gen(function* () {
      world.length = 0
      const result = yield* Saga.run("tainted", checkout(provider("stripe", true)))
      expect(result._tag).toBe("Compensated")
      expect(world).toEqual(["adyen charged 100", "recalled parcel-order-1", "adyen refunded adyen-ch-100"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a program that fails after it still compensates what ran; the failed call is not undone", () =>
    Effect.gen(function* () {
      world.length = 0
      const program = Effect.zipRight(checkout(primary), Effect.fail(new Outcome.Failed({ reason: "out of stock" })))
      const result = yield* Saga.run("fails-later", program)
      assert(result._tag === "Compensated")
      expect(world).toEqual(["adyen charged 100", "recalled parcel-order-1", "adyen refunded adyen-ch-100"])
      expect(result.report.notUndone.map((step) => step.toolName)).toEqual(["stripeCharge"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an unknown outcome is still not the program's: the saga stops for a person", () =>
    Effect.gen(function* () {
      const result = yield* Saga.run("unsure", Effect.ignore(unanswered(1)))
      expect(result._tag).toBe("NeedsAttention")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "resolved as not applied by an operator, its unknown call binds nothing either: the program falls back",
    () =>
      Effect.gen(function* () {
        world.length = 0
        const program = unanswered(100).pipe(Effect.catchAll(() => fallback(100)))
        const stopped = yield* Saga.run("resolved-fallback", program)
        assert(stopped._tag === "NeedsAttention")
        const stepId = stopped.unknown[0]!.stepId
        const intent = (yield* entriesOf("resolved-fallback")).find((entry) => entry.phase === "INTENT")!
        expect(JSON.parse(intent.payload!)).toMatchObject({ onFailure: "continue" })
        yield* Saga.resolve("resolved-fallback", stepId, { outcome: "not-applied", by: "carol" })
        const failed = (yield* entriesOf("resolved-fallback")).find((entry) => entry.phase === "FAILED")!
        expect(JSON.parse(failed.payload!)).toMatchObject({ taints: false, resolvedBy: "carol" })
        const resumed = yield* Saga.run("resolved-fallback", program)
        assert(SagaResult.isCompleted(resumed))
        expect(resumed.value).toBe("adyen-ch-100")
        expect(world).toEqual(["adyen charged 100"])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("any other value is a DeclarationError: the call fails, and its tool never runs", () =>
    Effect.gen(function* () {
      world.length = 0
      const bad = Compensable.make({
        name: "bad",
        input: Schema.Number,
        success: Schema.String,
        onFailure: "ignore" as "continue",
        execute: () => Effect.sync(() => world.push("bad ran")).pipe(Effect.as("x")),
        compensate: () => Effect.void
      })
      const result = yield* Saga.run("bad", bad(1))
      assert(result._tag === "Compensated")
      expect(String(result.cause)).toContain('onFailure must be "compensate" or "continue", not "ignore"')
      expect(world).toEqual([])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    '"continue" without a failure schema is a DeclarationError: its failure would replay as another error',
    () =>
      Effect.gen(function* () {
        world.length = 0
        const undeclared = Compensable.make({
          name: "undeclared",
          input: Schema.Number,
          success: Schema.String,
          onFailure: "continue",
          execute: () => Effect.sync(() => world.push("undeclared ran")).pipe(Effect.as("x")),
          compensate: () => Effect.void
        })
        const step = Effect.succeed("x").pipe(
          Compensable.withCompensation({
            name: "wrapped",
            success: Schema.String,
            onFailure: "continue",
            compensate: () => Effect.void
          })
        )
        for (const call of [undeclared(1), step]) {
          const result = yield* Saga.run(`undeclared-${world.length}-${call === step}`, call)
          assert(result._tag === "Compensated")
          expect(String(result.cause)).toContain(
            'onFailure "continue" needs a failure schema: a failure it does not describe replays as an Outcome.Failed'
          )
        }
        expect(world).toEqual([])
      }).pipe(Effect.provide(Testing.layer))
  )
})
