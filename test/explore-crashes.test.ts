import * as fs from "node:fs"
import { afterEach, assert, describe, expect, it, vi } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Layer, Schedule, Schema } from "effect"
import { Compensable, Outcome, SagaDefinition } from "../src/index.js"
import * as Testing from "../src/Testing.js"

/**
 * Sagas explored at every crash point: the travel booking of examples/travel.ts passes; sagas that
 * are wrong in one way each fail, naming the crash point and why.
 */
describe("Testing.exploreCrashes", () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it.effect(
    "three bookings in parallel, then the payment: every point passes, completed or compensated",
    () =>
      Effect.gen(function* () {
        const lisbon = yield* Testing.exploreCrashes(Trip, { city: "Lisbon", nights: 3 }, travel)
        expect(lisbon.endings.Completed).toBeGreaterThan(0)
        const porto = yield* Testing.exploreCrashes(Trip, { city: "Porto", nights: 2 }, travel)
        expect(porto.endings.Completed).toBeUndefined()
        expect(porto.endings.Compensated).toBeGreaterThan(0)
        expect(porto.calls.bookFlight?.compensate).toBeGreaterThan(0)
      }),
    120_000
  )

  it.effect(
    "a fault unknown in the world runs the call: resolved truthfully, as applied with what it returned, a correct saga passes",
    () =>
      Effect.gen(function* () {
        const summary = yield* Testing.exploreCrashes(
          Trip,
          { city: "Lisbon", nights: 3 },
          { ...travel, world: Layer.merge(ProvidersLive, Testing.faults({ tool: "payTrip", fault: "unknown" })) }
        )
        // Completed where the charge ran (unknown, resolved as applied); compensated where a crash came before it ran.
        expect(summary.endings.Completed).toBeGreaterThan(0)
      }),
    120_000
  )

  it.effect(
    "calls at once that end in another order in each run: the failure says so, not that the program is not deterministic",
    () =>
      Effect.gen(function* () {
        // Each world built answers in another order: the first one built (the uncrashed run's) a, b, c; the others c, b, a.
        let worlds = 0
        const Delays = Context.GenericTag<{ readonly of: (who: string) => number }>("Delays")
        const DelaysLive = Layer.sync(Delays, () => {
          const reversed = worlds++ > 0
          return { of: (who) => ({ a: 10, b: 20, c: 30 })[who as "a"] * (reversed ? -1 : 1) + 40 }
        })
        const notify = Compensable.make({
          name: "notify",
          input: Schema.String,
          success: Schema.String,
          retryMode: "idempotency-key",
          execute: (who) => Effect.flatMap(Delays, (delays) => Effect.as(Effect.sleep(delays.of(who)), `sent-${who}`)),
          compensate: () => Effect.void
        })
        const Notify = SagaDefinition.make("notify-all", {
          input: Schema.Null,
          program: () =>
            Effect.zipRight(
              Effect.all([notify("a", { key: "a" }), notify("b", { key: "b" }), notify("c", { key: "c" })], {
                concurrency: "unbounded"
              }),
              notify("d", { key: "d" })
            )
        })
        const found = yield* Effect.flip(Testing.exploreCrashes(Notify, null, { world: DelaysLive }))
        assert(found instanceof Testing.CrashFound)
        expect(found.message).toContain(
          "calls that run at once ended in another order: a world whose delays differ between runs reorders them"
        )
        expect(found.message).not.toContain("is the program deterministic?")
      }),
    60_000
  )

  it.effect(
    "a tool that declares retryMode idempotency-key but charges again on retry: the invariant fails after its call",
    () =>
      Effect.gen(function* () {
        const Order = orderWith(chargeIgnoringKey)
        const found = yield* Effect.flip(
          Testing.exploreCrashes(Order, 42, { world: BankLive, invariants: [chargedOnce] })
        )
        assert(found instanceof Testing.CrashFound)
        expect(found.point).toMatch(/^a crash after tool call 2 of 4 ended \(charge call of step charge:/)
        expect(found.problems).toEqual([`invariant "${chargedOnce.name}" does not hold once the saga ended Completed`])
        expect(found.message).toContain("journal up to the crash:")
        expect(found.message).toContain("written by the recovery:")
        // docs/testing.md quotes this message whole ("Reading a failure"): the recovery's takeover
        // journals SAGA_RESUMED with its first write.
        const docs = fs.readFileSync(new URL("../docs/testing.md", import.meta.url), "utf8")
        const quoted = docs.match(/```text\n(CrashFound: a crash after tool call 2 of 4[\s\S]*?)\n```/)?.[1]
        expect(quoted).toBe(`CrashFound: ${found.message}`)
      }),
    60_000
  )

  it.effect(
    "a point found among others chosen by the seed says so: the same maxPoints and seed explore it again",
    () =>
      Effect.gen(function* () {
        const options = { world: BankLive, invariants: [chargedOnce], maxPoints: 12, seed: 3 }
        const found = yield* Effect.flip(Testing.exploreCrashes(orderWith(chargeIgnoringKey), 42, options))
        assert(found instanceof Testing.CrashFound)
        expect(found.point).toMatch(
          /^a crash after tool call 2 of 4 ended \(charge call of step charge:\w+#1\), before its outcome was journaled \(one of 12 of the 16 points, chosen with seed 3\)$/
        )
        const again = yield* Effect.flip(Testing.exploreCrashes(orderWith(chargeIgnoringKey), 42, options))
        expect(again).toMatchObject({ point: found.point })
      }),
    60_000
  )

  it.effect(
    "a program whose step order depends on Math.random: the first crashed run does not repeat the first run",
    () =>
      Effect.gen(function* () {
        let draws = 0
        vi.spyOn(Math, "random").mockImplementation(() => (draws++ % 2 === 0 ? 0.1 : 0.9))
        const RandomOrder = SagaDefinition.make("random-order", {
          input: Schema.Int,
          program: (amount) =>
            Effect.gen(function* () {
              const steps = [charge(amount), reserve(amount)]
              if (Math.random() > 0.5) steps.reverse()
              for (const step of steps) yield* step
            })
        })
        const found = yield* Effect.flip(Testing.exploreCrashes(RandomOrder, 42, { world: BankLive }))
        assert(found instanceof Testing.CrashFound)
        expect(found.point).toMatch(/^a crash after journal write 1 of /)
        expect(found.problems[0]).toMatch(
          /^the run did not repeat the uncrashed run \(is the program deterministic\?\): its journal write 1 was \[seq 1 SAGA_STARTED/
        )
      }),
    60_000
  )

  it.effect(
    "a keyed step whose input reads Math.random, after a step: a recovery that does not replay asks whether the program is deterministic",
    () =>
      Effect.gen(function* () {
        let draws = 0
        vi.spyOn(Math, "random").mockImplementation(() => ++draws / 1000)
        const book = Compensable.make({
          name: "book",
          input: Schema.Struct({ to: Schema.String }),
          success: Schema.Null,
          execute: () => Effect.succeed(null),
          compensate: () => Effect.void
        })
        const Trip = SagaDefinition.make("trip", {
          input: Schema.Int,
          program: (amount) =>
            Effect.zipRight(charge(amount), book({ to: `OSL-${Math.random()}` }, { key: "outbound" }))
        })
        const found = yield* Effect.flip(Testing.exploreCrashes(Trip, 42, { world: BankLive }))
        assert(found instanceof Testing.CrashFound)
        expect(found.problems[0]).toMatch(
          /^recovery failed: saga explored did not replay as journaled at step book:outbound#1: .+ \(is the program deterministic\?\)$/
        )
      }),
    60_000
  )

  it.effect(
    "a keyed step whose input reads Math.random: its step id stays the same, its input names the first different write",
    () =>
      Effect.gen(function* () {
        let draws = 0
        vi.spyOn(Math, "random").mockImplementation(() => ++draws / 1000)
        const keyedWire = Compensable.make({
          name: "wire",
          input: Schema.Struct({ amount: Schema.Int, reference: Schema.String }),
          success: Schema.Null,
          reversibility: "irreversible",
          execute: () => Effect.succeed(null)
        })
        const Payout = SagaDefinition.make("payout", {
          input: Schema.Int,
          program: (amount) =>
            Effect.zipRight(charge(amount), keyedWire({ amount, reference: `ref-${Math.random()}` }, { key: "payout" }))
        })
        const found = yield* Effect.flip(Testing.exploreCrashes(Payout, 42, { world: BankLive }))
        assert(found instanceof Testing.CrashFound)
        expect(found.problems[0]).toMatch(
          /^the run did not repeat the uncrashed run \(is the program deterministic\?\): its journal write 3 was \[seq 4 AWAITING_APPROVAL wire wire:payout#1 input \{"amount":42,"reference":"ref-[\d.]+"\}\] where the uncrashed run wrote \[seq 4 AWAITING_APPROVAL wire wire:payout#1 input \{"amount":42,"reference":"ref-[\d.]+"\}\]$/
        )
      }),
    60_000
  )

  it.effect(
    "a provider that answers a fresh id each run (the world, not the program): the next step's input carries it and every point passes",
    () =>
      Effect.gen(function* () {
        let issued = 0
        const chargeWithNewId = Compensable.make({
          name: "charge",
          input: Schema.Int,
          success: Schema.Struct({ chargeId: Schema.String }),
          execute: (amount) =>
            Effect.map(Bank, (bank) => {
              bank.charged += amount
              return { chargeId: `ch_${++issued}` }
            }),
          compensate: ({ input }) =>
            Effect.map(Bank, (bank) => {
              bank.refunded += input
            })
        })
        const ship = Compensable.make({
          name: "ship",
          input: Schema.String,
          success: Schema.Null,
          execute: () => Effect.succeed(null),
          compensate: () => Effect.void
        })
        const Shipped = SagaDefinition.make("shipped", {
          input: Schema.Int,
          program: (amount) => Effect.flatMap(chargeWithNewId(amount), ({ chargeId }) => ship(chargeId))
        })
        const explored = yield* Testing.exploreCrashes(Shipped, 42, { world: BankLive })
        expect(explored.endings.Completed).toBeGreaterThan(0)
        expect(issued).toBeGreaterThan(2)

        // Before any answer differs, a program that does not repeat itself is still named.
        const Shuffled = SagaDefinition.make("shuffled", {
          input: Schema.Int,
          program: (amount) => Effect.flatMap(ship(`label-${issued++}`), () => Effect.asVoid(chargeWithNewId(amount)))
        })
        const found = yield* Effect.flip(Testing.exploreCrashes(Shuffled, 42, { world: BankLive }))
        assert(found instanceof Testing.CrashFound)
        expect(found.problems[0]).toMatch(
          /^the run did not repeat the uncrashed run \(is the program deterministic\?\): its journal write 1 /
        )
        // The saga asks for no approval: the message names no answer to one.
        expect(found.approvalAsked).toBe(false)
        expect(found.message).toMatch(/^a crash after journal write \d+ of \d+ \([^)]*\) breaks the saga:\n/)
        expect(found.message).not.toContain("approval answered")
      }),
    60_000
  )

  it.effect(
    "an input the definition's schema refuses (which its type lets through) is InvalidExploreOptions, not a crash",
    () =>
      Effect.gen(function* () {
        const IntIn = SagaDefinition.make("int-in", { input: Schema.Int, program: (amount) => charge(amount) })
        const refused = yield* Effect.flip(Testing.exploreCrashes(IntIn, 1.5, { world: BankLive }))
        assert(refused._tag === "InvalidExploreOptions")
        expect(refused.reason).toMatch(
          /^the input does not fit definition int-in: Int\n.*Expected an integer, actual 1\.5: no saga is started with it, so there is nothing to explore$/s
        )
      })
  )

  it.effect(
    "a user's invariant the saga breaks (an undo that refunds nothing): fails at the first point that compensates",
    () =>
      Effect.gen(function* () {
        const chargeWithoutRefund = Compensable.make({
          name: "charge",
          input: Schema.Int,
          success: Schema.String,
          execute: (amount) =>
            Effect.map(Bank, (bank) => {
              bank.charged += amount
              return "charge-1"
            }),
          compensate: () => Effect.void // refunds nothing
        })
        const found = yield* Effect.flip(
          Testing.exploreCrashes(orderWith(chargeWithoutRefund), 42, {
            world: BankLive,
            invariants: [refundedUnlessCompleted]
          })
        )
        assert(found instanceof Testing.CrashFound)
        // The crash after the wire's INTENT: the operator says it did not run, so the saga compensates.
        expect(found.point).toMatch(/^a crash after journal write 8 of 12 \(seq 9 SAGA_RESUMED, seq 10 INTENT wire\)$/)
        expect(found.problems).toEqual([
          `invariant "${refundedUnlessCompleted.name}" does not hold once the saga ended Compensated`
        ])
      }),
    60_000
  )

  it.effect(
    "Testing.faults in the world or the services strike inside the exploration, which still crashes at every point",
    () =>
      Effect.gen(function* () {
        const Order = orderWith(charge)
        const options = { invariants: [refundedUnlessCompleted, refundedAtMostOnce] }
        const plain = yield* Testing.exploreCrashes(Order, 42, { world: BankLive, ...options })
        expect(plain.endings.Completed).toBeGreaterThan(0)
        // Every charge refused: the order never completes, whether the faults come with the world
        // (kept across a crash) or with the services (built again by each process).
        const refused = Array.from({ length: 20 }, (_, i) => ({ tool: "charge", at: i + 1, fault: "fail" as const }))
        for (const placed of [
          { world: Layer.merge(BankLive, Testing.faults(...refused)) },
          { world: BankLive, services: Testing.faults(...refused) }
        ]) {
          const faulted = yield* Testing.exploreCrashes(Order, 42, { ...placed, ...options })
          expect(faulted.endings.Completed).toBeUndefined()
          expect(faulted.endings.Compensated).toBeGreaterThan(0)
          // The crash points are still explored: the explorer's own faults wrap the test's.
          expect(faulted.points).toBeGreaterThan(1)
        }
      }),
    120_000
  )

  it.effect("an invariant that throws does not hold, with the reason it threw", () =>
    Effect.gen(function* () {
      // A table of checks by ending that forgot Compensated: a TypeError once an order is compensated.
      const byEnding: Partial<Record<Testing.Ending, () => Effect.Effect<boolean, never, Bank>>> = {
        Completed: () => Effect.succeed(true)
      }
      const throwing: Testing.Invariant<Bank> = { name: "by ending", holds: (ending) => byEnding[ending]!() }
      const found = yield* Effect.flip(
        Testing.exploreCrashes(orderWith(charge), 42, {
          world: BankLive,
          approvals: ["reject"],
          crashes: [],
          invariants: [throwing]
        })
      )
      assert(found instanceof Testing.CrashFound)
      expect(found.problems).toEqual([
        expect.stringMatching(
          /^invariant "by ending" could not be checked: TypeError: byEnding\[ending\] is not a function/
        )
      ])
    })
  )

  it.effect(
    "an undo that would refund twice if called twice: the engine never calls an undo twice, at any point",
    () =>
      Effect.gen(function* () {
        const chargeRefundingByAmount = bankCharge({}) // its undo is not idempotent
        const summary = yield* Testing.exploreCrashes(orderWith(chargeRefundingByAmount), 42, {
          world: BankLive,
          invariants: [refundedAtMostOnce],
          approvals: ["approve", "reject"]
        })
        // Its undo ran at many points, never twice for one step (the exploration checks it at each).
        expect(summary.calls.charge?.compensate).toBeGreaterThan(1)
        expect(summary.hiddenUndos).toBeGreaterThan(0)
        // The same undos are counted when `allow` accepts CompensationFailed itself.
        const allowing = yield* Testing.exploreCrashes(orderWith(chargeRefundingByAmount), 42, {
          world: BankLive,
          invariants: [refundedAtMostOnce],
          approvals: ["approve", "reject"],
          allow: ["Completed", "Compensated", "CompensationFailed"]
        })
        expect(allowing.endings).toEqual(summary.endings)
        expect(allowing.hiddenUndos).toBe(summary.hiddenUndos)
      }),
    60_000
  )

  it.effect(
    "a step whose outcome the operator wrongly says not applied: the invariant names it",
    () =>
      Effect.gen(function* () {
        const found = yield* Effect.flip(
          Testing.exploreCrashes(orderWith(charge), 42, {
            world: BankLive,
            invariants: [refundedUnlessCompleted],
            resolve: "not-applied"
          })
        )
        assert(found instanceof Testing.CrashFound)
        expect(found.point).toMatch(/^a crash after tool call 2 of \d+ ended \(charge call/)
      }),
    60_000
  )

  it.effect(
    "an operator who compensates whatever is unknown: the saga ends CompensationFailed, which the test allows",
    () =>
      Effect.gen(function* () {
        const refused = yield* Effect.flip(
          Testing.exploreCrashes(orderWith(charge), 42, { world: BankLive, resolve: "compensate" })
        )
        assert(Testing.isExploreError(refused) && refused._tag === "CrashFound")
        expect(refused.problems[0]).toMatch(/^the saga ended CompensationFailed; expected Completed or Compensated/)
        // The step that made it fail is named: its outcome unknown, not undone.
        expect(refused.problems[0]).toMatch(/\n {4}not undone: outcome unknown \w+ \(/)
        const summary = yield* Testing.exploreCrashes(orderWith(charge), 42, {
          world: BankLive,
          resolve: "compensate",
          allow: ["Completed", "Compensated", "CompensationFailed"],
          invariants: [refundedAtMostOnce]
        })
        expect(summary.endings.CompensationFailed).toBeGreaterThan(0)
      }),
    60_000
  )

  it.effect("an approval let expire: the wire never runs and the order is compensated", () =>
    Effect.gen(function* () {
      const summary = yield* Testing.exploreCrashes(orderWith(charge), 42, {
        world: BankLive,
        approvals: ["expire"],
        crashes: [], // the uncrashed run only: a crash before the clock moved on may let the approval run
        allow: ["Compensated"],
        invariants: [refundedUnlessCompleted]
      })
      expect(summary).toMatchObject({ points: 1, found: 0, endings: { Compensated: 1 } })
    })
  )

  it.effect(
    "a step whose input changes when the program runs again fails at the recovery, said once",
    () =>
      Effect.gen(function* () {
        // The world is new at each crash point; the program run again by the recovery finds it moved on.
        const Drifting = SagaDefinition.make("drifting", {
          input: Schema.Int,
          program: (amount) => Effect.flatMap(Bank, (bank) => charge(amount + bank.reserved++))
        })
        const found = yield* Effect.flip(Testing.exploreCrashes(Drifting, 42, { world: BankLive }))
        assert(found instanceof Testing.CrashFound)
        expect(found.problems[0]).toMatch(/^recovery failed: saga explored did not replay as journaled at step charge:/)
        expect(found.message).not.toContain("recovery failed: recovery failed")
      }),
    60_000
  )

  it.effect(
    "a tool's retry delays and timeout fire on the explorer's own clock: the exploration ends",
    () =>
      Effect.gen(function* () {
        let attempts = 0
        // Refused on every other attempt (proved not applied): the retry, 100 ms later, succeeds.
        const flaky = Compensable.make({
          name: "flaky",
          input: Schema.Int,
          success: Schema.String,
          retry: Schedule.exponential("100 millis").pipe(Schedule.compose(Schedule.recurs(3))),
          execute: () => (++attempts % 2 === 1 ? Effect.fail(Outcome.failed("busy, try again")) : Effect.succeed("ok")),
          compensate: () => Effect.void
        })
        // testing.md's slow tool: it answers after a minute, its timeout is 5 seconds.
        const slow = Compensable.make({
          name: "slow",
          input: Schema.Null,
          success: Schema.String,
          timeout: "5 seconds",
          execute: () => Effect.as(Effect.sleep("1 minute"), "late"),
          compensate: () => Effect.void
        })
        const Waiting = SagaDefinition.make("waiting", {
          input: Schema.Int,
          program: (n) => Effect.zipRight(flaky(n), slow(null))
        })
        const summary = yield* Testing.exploreCrashes(Waiting, 1, { world: BankLive })
        // The slow call timed out at every point: nobody saw it answer, so it was settled not applied.
        expect(summary.endings.Completed).toBeUndefined()
        expect(summary.endings.Compensated).toBeGreaterThan(0)
        expect(attempts).toBeGreaterThan(summary.points) // the retries ran
      }),
    60_000
  )

  it.effect("the summary counts every forward call that ran, a refused one too", () =>
    Effect.gen(function* () {
      let attempts = 0
      const refuse = Compensable.make({
        name: "refuse",
        input: Schema.Int,
        success: Schema.String,
        execute: () =>
          Effect.suspend(() => {
            attempts++
            return Effect.fail(Outcome.failed("the warehouse refused"))
          }),
        compensate: () => Effect.void
      })
      const Refused = SagaDefinition.make("refused", { input: Schema.Int, program: (n) => refuse(n) })
      const summary = yield* Testing.exploreCrashes(Refused, 1, { world: BankLive })
      expect(attempts).toBeGreaterThan(0)
      expect(summary.calls.refuse).toEqual({ execute: attempts, compensate: 0 })
    })
  )

  it.effect("a saga that breaks a check without any crash fails as the run without a crash", () =>
    Effect.gen(function* () {
      const found = yield* Effect.flip(
        Testing.exploreCrashes(orderWith(charge), 42, { world: BankLive, approvals: ["reject"], allow: ["Completed"] })
      )
      assert(found._tag === "CrashFound")
      expect(found.point).toBe("the run without a crash")
      expect(found.message).toMatch(
        /^the run without a crash \(approval answered "reject"\) breaks the saga:\n {2}- the saga ended Compensated; expected Completed/
      )
      expect(found.timeline).toMatch(/^journal of the uncrashed run:\n/)
    })
  )

  it.effect("options it cannot explore with are refused before anything runs", () =>
    Effect.gen(function* () {
      let worlds = 0
      const counted = Layer.effect(
        Bank,
        Effect.sync(() => {
          worlds++
          return { charged: 0, refunded: 0, reserved: 0, shipped: 0, keys: new Set<string>() }
        })
      )
      // As a JavaScript caller may pass them: values the types would refuse.
      const refused = (options: Record<string, unknown>) =>
        Effect.flip(
          Testing.exploreCrashes(orderWith(charge), 42, {
            world: counted,
            ...options
          } as unknown as Testing.ExploreOptions<Bank, never>)
        )
      for (const [options, reason] of [
        [{ maxPoints: 0 }, "maxPoints must be a whole number of at least 1, not 0"],
        [{ maxPoints: 1.5 }, "maxPoints must be a whole number of at least 1, not 1.5"],
        [{ seed: Number.NaN }, "seed must be a finite number, not NaN"],
        [{ seed: "7" }, 'seed must be a finite number, not "7"'],
        [{ approvals: [] }, "approvals names no answer"],
        [{ approvals: ["approve", "reject", "approve"] }, 'approvals lists "approve" twice'],
        [{ crashes: ["after-write", "after-write"] }, 'crashes lists "after-write" twice'],
        [{ allow: ["Completed", "Completed"] }, 'allow lists "Completed" twice'],
        [
          { invariants: [{ name: " ", holds: () => Effect.succeed(true) }] },
          "invariants[0] has a blank name: a failure names the invariant it broke"
        ],
        [{ approvals: ["maybe"] }, 'approvals holds "maybe", which is none of "approve", "reject", "expire"'],
        [{ approvals: "approve" }, 'approvals must be a list of "approve", "reject", "expire", not "approve"'],
        [{ crashes: ["bogus"] }, 'crashes holds "bogus", which is none of "after-write", "before-outcome"'],
        [
          { crashes: ["after-write", undefined] },
          'crashes holds undefined, which is none of "after-write", "before-outcome"'
        ],
        [{ allow: [] }, "allow names no ending"],
        [
          { allow: ["Done"] },
          'allow holds "Done", which is none of "Completed", "Compensated", "CompensationFailed", "AwaitingApproval", "NeedsAttention", "Suspended"'
        ],
        [
          { resolve: "sometimes" },
          'resolve must be one of "truthfully", "applied", "not-applied", "compensate" or a function, not "sometimes"'
        ],
        [{ store: "pg" }, 'store must be one of "memory", "sqlite", not "pg"'],
        [{ invariants: [{ name: "paid" }] }, "invariants[0] must be { name: string, holds: (ending) => Effect }"],
        [{ sagaId: "" }, 'sagaId "" cannot be a saga id: it is empty'],
        [{ services: {} }, "services must be a Layer, not {}"],
        [{ world: () => Layer.empty }, "world must be a Layer, not a function"],
        [{ world: undefined }, "world must be a Layer, not undefined"],
        [
          { approval: ["reject"] },
          '"approval" is no option: the options are world, services, sagaId, allow, invariants, crashes, approvals, resolve, maxPoints, seed, store'
        ],
        [
          { runs: 3 },
          '"runs" is no option: the options are world, services, sagaId, allow, invariants, crashes, approvals, resolve, maxPoints, seed, store'
        ]
      ] as const) {
        const error = yield* refused(options)
        assert(error instanceof Testing.InvalidExploreOptions)
        expect(error.message).toBe(`exploreCrashes cannot explore: ${reason}`)
      }
      for (const [options, shown] of [
        [null, "null"],
        [undefined, "undefined"],
        ["fast", '"fast"']
      ] as const) {
        const error = yield* Effect.flip(Testing.exploreCrashes(orderWith(charge), 42, options as never))
        assert(error instanceof Testing.InvalidExploreOptions)
        expect(error.reason).toBe(`the options must be an object, not ${shown}`)
        const property = yield* Effect.flip(Testing.exploreCrashesProperty(orderWith(charge), options as never))
        expect(property).toMatchObject({ _tag: "InvalidExploreOptions", reason: error.reason })
      }
      const runs = yield* Effect.flip(
        Testing.exploreCrashesProperty(orderWith(charge), { world: counted, runs: "3" as unknown as number })
      )
      expect(runs).toMatchObject({ reason: 'runs must be a whole number of at least 1, not "3"' })
      const misspelled = yield* Effect.flip(
        Testing.exploreCrashesProperty(orderWith(charge), { world: counted, crash: [] } as never)
      )
      expect(misspelled).toMatchObject({
        reason:
          '"crash" is no option: the options are world, services, sagaId, allow, invariants, crashes, approvals, resolve, maxPoints, seed, store, runs'
      })
      expect(worlds).toBe(0) // nothing ran
    })
  )

  it.effect("crashes the saga offers no point of are refused after its uncrashed run, not passed", () =>
    Effect.gen(function* () {
      const NoTools = SagaDefinition.make("no-tools", { input: Schema.Int, program: (n) => Effect.succeed(n) })
      const error = yield* Effect.flip(
        Testing.exploreCrashes(NoTools, 1, { world: BankLive, crashes: ["before-outcome"] })
      )
      assert(error instanceof Testing.InvalidExploreOptions)
      expect(error.reason).toBe(
        'crashes asks for "before-outcome" crashes, but the uncrashed run made 1 journal write and 0 tool calls: there is no such crash point to explore (crashes: [] checks the uncrashed run alone)'
      )
      // Asked for explicitly, the uncrashed run alone passes.
      const summary = yield* Testing.exploreCrashes(NoTools, 1, { world: BankLive, crashes: [] })
      expect(summary).toMatchObject({ points: 1, found: 0, endings: { Completed: 1 } })
    })
  )

  it.effect(
    "approval answers for a saga that asks for no approval are refused after its uncrashed run, not passed; in a property, an input that asks none has nothing to answer",
    () =>
      Effect.gen(function* () {
        const NoApproval = SagaDefinition.make("no-approval", { input: Schema.Int, program: (n) => charge(n) })
        const error = yield* Effect.flip(
          Testing.exploreCrashes(NoApproval, 1, { world: BankLive, approvals: ["reject"] })
        )
        assert(error instanceof Testing.InvalidExploreOptions)
        expect(error.reason).toBe(
          'approvals answers "reject", but the uncrashed run asked for no approval: there is no request to answer (leave approvals out)'
        )
        // Left out, the default answer is never given, and nothing is refused.
        const summary = yield* Testing.exploreCrashes(NoApproval, 1, { world: BankLive })
        expect(summary.endings.Completed).toBeGreaterThan(0)
        // Over generated inputs, one whose path asks for no approval has nothing to answer: not refused.
        const WireOverHundred = SagaDefinition.make("wire-over-hundred", {
          input: Schema.Int.pipe(Schema.between(1, 200)),
          program: (n) => Effect.zipRight(charge(n), n > 100 ? wire(n) : Effect.void)
        })
        const summaries = yield* Testing.exploreCrashesProperty(WireOverHundred, {
          world: BankLive,
          approvals: ["approve", "reject"],
          runs: 12,
          seed: 3
        })
        expect(summaries).toHaveLength(12)
        expect(summaries.some((explored) => (explored.endings.Compensated ?? 0) > 0)).toBe(true)
      }),
    // Twelve explorations: seconds on a loaded machine, over the default 5 s.
    60_000
  )

  it.effect('an invariant must answer true or false: the text "false" does not hold', () =>
    Effect.gen(function* () {
      const texty = { name: "texty", holds: () => Effect.succeed("false") } as unknown as Testing.Invariant<Bank>
      const found = yield* Effect.flip(
        Testing.exploreCrashes(orderWith(charge), 1, { world: BankLive, crashes: [], invariants: [texty] })
      )
      assert(found instanceof Testing.CrashFound)
      expect(found.problems).toEqual(['invariant "texty" answered "false", not true or false'])
    })
  )

  it.effect("a services layer that fails to build: the exploration fails with its error, typed", () =>
    Effect.gen(function* () {
      class Refused extends Schema.TaggedError<Refused>()("Refused", { why: Schema.String }) {}
      const services = Layer.fail(new Refused({ why: "no bank today" })) as Layer.Layer<Bank, Refused>
      const explored = Testing.exploreCrashes(orderWith(charge), 1, { world: Layer.empty, services })
      type Fails = typeof explored extends Effect.Effect<unknown, infer E> ? E : never
      const typed: Refused extends Fails ? "typed" : "untyped" = "typed"
      expect(typed).toBe("typed")
      const failure = yield* Effect.flip(explored)
      assert(failure instanceof Refused)
      expect(failure.why).toBe("no bank today")
    })
  )

  it.effect("a world layer that lacks a service the program needs does not type-check", () =>
    Effect.sync(() => {
      const check = () =>
        // @ts-expect-error the world layer must provide Bank
        Testing.exploreCrashes(orderWith(charge), 1, { world: Layer.empty })
      expect(typeof check).toBe("function")
    })
  )
})

describe("Testing.exploreCrashesProperty", () => {
  // The property testing.md shows, as written there: a crash-safe saga passes it.
  const Order = SagaDefinition.make("order", {
    input: Schema.Int.pipe(Schema.between(1, 10_000)),
    program: (amount) => Effect.zipRight(reserve(amount), charge(amount))
  })
  it.effect.prop(
    "or a property of your own (testing.md): survives a crash anywhere",
    [Order.input],
    ([input]) =>
      Effect.asVoid(Testing.exploreCrashes(Order, input, { world: BankLive, invariants: [refundedUnlessCompleted] })),
    { fastCheck: { numRuns: 3 }, timeout: 60_000 }
  )

  it.effect(
    "explores generated inputs; the first that breaks a check is shrunk and named",
    () =>
      Effect.gen(function* () {
        const Amount = Schema.Int.pipe(Schema.between(1, 10_000))
        const passing = yield* Testing.exploreCrashesProperty(
          SagaDefinition.make("order", {
            input: Amount,
            program: (amount) => Effect.zipRight(reserve(amount), charge(amount))
          }),
          { world: BankLive, invariants: [refundedUnlessCompleted], runs: 3, seed: 7 }
        )
        expect(passing).toHaveLength(3)

        // Over 1000, the charge forgets its undo.
        const bigChargeForgets = chargeForgettingUndo((amount) => amount > 1000)
        const found = yield* Effect.flip(
          Testing.exploreCrashesProperty(
            SagaDefinition.make("order", {
              input: Amount,
              program: (amount) =>
                Effect.gen(function* () {
                  yield* bigChargeForgets(amount)
                  yield* ship(amount)
                })
            }),
            { world: BankLive, invariants: [refundedUnlessCompleted], runs: 20, seed: 7 }
          )
        )
        assert(found instanceof Testing.CrashFound)
        expect(found.input).toBe("1001") // shrunk to the smallest amount that breaks it
        expect(found.message).toContain("input 1001, seed 7")
      }),
    120_000
  )

  it.effect(
    "a failure names the seed fast-check drew the inputs with, given or not; given back, it fails the same way",
    () =>
      Effect.gen(function* () {
        const Amount = Schema.Int.pipe(Schema.between(1, 10_000))
        const forgetsUnder50 = chargeForgettingUndo((amount) => amount < 50)
        const Forgetful = SagaDefinition.make("order", {
          input: Amount,
          program: (amount) => Effect.zipRight(forgetsUnder50(amount), ship(amount))
        })
        const explored = (seed?: number) =>
          Effect.flip(
            Testing.exploreCrashesProperty(Forgetful, {
              world: BankLive,
              invariants: [refundedUnlessCompleted],
              runs: 30,
              ...(seed === undefined ? {} : { seed })
            })
          )
        const unseeded = yield* explored()
        assert(unseeded instanceof Testing.CrashFound)
        assert(typeof unseeded.seed === "number")
        expect(unseeded.message).toContain(`input ${unseeded.input}, seed ${unseeded.seed}`)
        const again = yield* explored(unseeded.seed)
        assert(again instanceof Testing.CrashFound)
        expect([again.input, again.seed]).toEqual([unseeded.input, unseeded.seed])
      }),
    120_000
  )

  it.effect("an exploration that dies fails the property the same way, never passes it", () =>
    Effect.gen(function* () {
      const Order = SagaDefinition.make("order", {
        input: Schema.Int.pipe(Schema.between(1, 10_000)),
        program: (amount) => charge(amount)
      })
      const noDatabase = new Error("no database")
      const dyingWorld = Layer.effect(Bank, Effect.die(noDatabase))
      const direct = yield* Effect.exit(Testing.exploreCrashes(Order, 1, { world: dyingWorld }))
      const property = yield* Effect.exit(
        Testing.exploreCrashesProperty(Order, { world: dyingWorld, runs: 3, seed: 1 })
      )
      assert(Exit.isFailure(direct) && Exit.isFailure(property))
      expect(Cause.squash(property.cause)).toBe(noDatabase)
      expect(Cause.squash(direct.cause)).toBe(noDatabase)

      const refusing: Testing.Invariant<Bank> = { name: "checked", holds: () => Effect.die(noDatabase) }
      const checked = yield* Effect.flip(
        Testing.exploreCrashesProperty(Order, { world: BankLive, invariants: [refusing], runs: 3, seed: 1 })
      )
      assert(checked instanceof Testing.CrashFound)
      expect(checked.problems[0]).toMatch(/^invariant "checked" could not be checked: /)
    })
  )
})

// --- a bank and an order over it -------------------------------------------------------------------

class Bank extends Context.Tag("Bank")<
  Bank,
  { charged: number; refunded: number; reserved: number; shipped: number; readonly keys: Set<string> }
>() {}

const BankLive = Layer.sync(Bank, () => ({ charged: 0, refunded: 0, reserved: 0, shipped: 0, keys: new Set<string>() }))

/** A provider that applies each idempotency key once. */
const once = (key: string, apply: (bank: Bank["Type"]) => void) =>
  Effect.map(Bank, (bank) => {
    if (!bank.keys.has(key)) {
      bank.keys.add(key)
      apply(bank)
    }
  })

const reserve = Compensable.make({
  name: "reserve",
  input: Schema.Int,
  success: Schema.Null,
  retryMode: "idempotency-key",
  execute: (_, step) =>
    Effect.as(
      once(step.idempotencyKey, (bank) => {
        bank.reserved++
      }),
      null
    ),
  compensate: (ctx) =>
    once(ctx.idempotencyKey, (bank) => {
      bank.reserved--
    })
})

const charge = bankCharge({})

/** A charge at the `Bank` that ignores any key: called twice, it charges twice; its undo refunds the amount each time. */
function bankCharge(options: { readonly retryMode?: "idempotency-key" }) {
  return Compensable.make({
    name: "charge",
    input: Schema.Int,
    success: Schema.String,
    ...options,
    execute: (amount) =>
      Effect.map(Bank, (bank) => {
        bank.charged += amount
        return "charge-1"
      }),
    compensate: ({ input }) =>
      Effect.map(Bank, (bank) => {
        bank.refunded += input
      })
  })
}

/** A charge that declares retryMode idempotency-key, but ignores its key: it charges again on retry. */
const chargeIgnoringKey = bankCharge({ retryMode: "idempotency-key" })

const ship = Compensable.make({
  name: "ship",
  input: Schema.Int,
  success: Schema.Null,
  execute: () =>
    Effect.map(Bank, (bank) => {
      bank.shipped++
      return null
    }),
  compensate: () =>
    Effect.map(Bank, (bank) => {
      bank.shipped--
    })
})

const wire = Compensable.make({
  name: "wire",
  input: Schema.Int,
  success: Schema.Null,
  reversibility: "irreversible",
  execute: () => Effect.succeed(null)
})

const orderWith = (chargeTool: typeof charge) =>
  SagaDefinition.make("order", {
    input: Schema.Int,
    program: (amount) =>
      Effect.gen(function* () {
        yield* reserve(amount)
        yield* chargeTool(amount)
        yield* wire(amount)
        yield* ship(amount)
      })
  })

const chargedOnce: Testing.Invariant<Bank> = {
  name: "the card is charged at most once",
  holds: () => Effect.map(Bank, (bank) => bank.charged <= 42)
}

const refundedUnlessCompleted: Testing.Invariant<Bank> = {
  name: "what was charged is refunded unless the order completed",
  holds: (ending) => Effect.map(Bank, (bank) => ending === "Completed" || bank.charged === bank.refunded)
}

const refundedAtMostOnce: Testing.Invariant<Bank> = {
  name: "nothing is refunded more than was charged",
  holds: () => Effect.map(Bank, (bank) => bank.refunded <= bank.charged)
}

// --- the trip of examples/travel.ts, its providers behind a service -----------------------------------

class Providers extends Context.Tag("Providers")<
  Providers,
  { readonly live: Set<string>; readonly byKey: Map<string, string>; charged: number }
>() {}

const ProvidersLive = Layer.sync(Providers, () => ({
  live: new Set<string>(),
  byKey: new Map<string, string>(),
  charged: 0
}))

const noCarLeftIn = new Set(["Porto"])

/** Books `reference` once per idempotency key, or refuses (then nothing is booked). */
const book = (step: Compensable.StepContext, reference: string, refusal?: string) =>
  Effect.flatMap(Providers, (providers) => {
    if (refusal !== undefined) return Effect.fail(Outcome.failed(refusal))
    const known = providers.byKey.get(step.idempotencyKey)
    if (known !== undefined) return Effect.succeed(known)
    providers.byKey.set(step.idempotencyKey, reference)
    providers.live.add(reference)
    return Effect.succeed(reference)
  })

const cancel = (reference: string) =>
  Effect.map(Providers, (providers) => {
    providers.live.delete(reference)
  })

const bookFlight = Compensable.make({
  name: "bookFlight",
  input: Schema.Struct({ to: Schema.String }),
  success: Schema.String,
  execute: ({ to }, step) => book(step, `flight-${to}`),
  compensate: ({ result }) => cancel(result)
})

const bookHotel = Compensable.make({
  name: "bookHotel",
  input: Schema.Struct({ city: Schema.String, nights: Schema.Int }),
  success: Schema.String,
  execute: ({ city, nights }, step) => book(step, `hotel-${city}-${nights}n`),
  compensate: ({ result }) => cancel(result)
})

const rentCar = Compensable.make({
  name: "rentCar",
  input: Schema.Struct({ city: Schema.String, days: Schema.Int }),
  success: Schema.String,
  execute: ({ city, days }, step) =>
    book(step, `car-${city}-${days}d`, noCarLeftIn.has(city) ? `no car left in ${city}` : undefined),
  compensate: ({ result }) => cancel(result)
})

const payTrip = Compensable.make({
  name: "payTrip",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: ({ amount }, step) =>
    Effect.map(Providers, (providers) => {
      providers.charged += amount
      providers.live.add(`charge-${step.sagaId}`)
      return `charge-${step.sagaId}`
    }),
  compensate: ({ input, result }) =>
    Effect.map(Providers, (providers) => {
      providers.charged -= input.amount
      providers.live.delete(result)
    })
})

const Trip = SagaDefinition.make("trip", {
  input: Schema.Struct({ city: Schema.String, nights: Schema.Int }),
  program: ({ city, nights }) =>
    Effect.gen(function* () {
      const bookings = yield* Effect.all(
        {
          flight: bookFlight({ to: city }),
          hotel: bookHotel({ city, nights }),
          car: rentCar({ city, days: nights })
        },
        { concurrency: "unbounded" }
      )
      const payment = yield* payTrip({ amount: 120_00 * nights })
      return { ...bookings, payment }
    })
})

const travel: Testing.ExploreOptions<Providers, never> = {
  world: ProvidersLive,
  invariants: [
    {
      name: "a completed trip holds its three bookings and the charge; a compensated one holds nothing",
      holds: (ending) =>
        Effect.map(
          Providers,
          ({ charged, live }) =>
            ending === "Completed"
              ? live.size === 4 && charged > 0
              : ending === "Compensated"
                ? live.size === 0 && charged === 0
                : live.size <= 1 // CompensationFailed: the one undo a crash hid
        )
    }
  ]
}

/** A charge of 1 to 10,000 whose undo refunds nothing for the amounts `forgets` picks. */
const chargeForgettingUndo = (forgets: (amount: number) => boolean) =>
  Compensable.make({
    name: "charge",
    input: Schema.Int.pipe(Schema.between(1, 10_000)),
    success: Schema.String,
    execute: (amount) =>
      Effect.map(Bank, (bank) => {
        bank.charged += amount
        return "charge-1"
      }),
    compensate: ({ input }) =>
      Effect.map(Bank, (bank) => {
        if (!forgets(input)) bank.refunded += input
      })
  })
