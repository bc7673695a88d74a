import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Schema } from "effect"
import { Approval, Compensable, Journal, Saga, Toolkit } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"

/** One in-memory journal and approval store, and a Saga service on them: a process and an operator's share them. */
const sharedStore = () => {
  const journal = makeMemoryJournal()
  const store = Layer.merge(
    Layer.succeed(Journal.Journal, journal),
    Layer.succeed(Approval.Approval, Approval.makeMemory())
  )
  return { journal, service: Saga.layer.pipe(Layer.provide(store)) }
}

/** A tool named `create` of `provider`, whose undo (by default) notes what it undid in `undone`. */
const creatingInto =
  (undone: Array<string>) =>
  (
    provider: string,
    undo = (ctx: { readonly result: string }) => Effect.sync(() => undone.push(`${provider} undid ${ctx.result}`))
  ) =>
    Compensable.make({
      name: "create",
      input: Schema.String,
      success: Schema.String,
      execute: (x) => Effect.succeed(`${provider}-${x}`),
      compensate: undo
    })

describe("toolkits", () => {
  it.effect(
    "an operator's process without the toolkit reports undos unavailable and journals nothing; with it, undoes them",
    () =>
      Effect.gen(function* () {
        const released: Array<string> = []
        const reserve = Compensable.make({
          name: "reserve",
          input: Schema.String,
          success: Schema.String,
          execute: (sku) => Effect.succeed(`res-${sku}`),
          compensate: (ctx) => Effect.sync(() => released.push(ctx.result))
        })
        const { journal, service } = sharedStore()

        const completed = yield* Effect.provide(Saga.run("order", reserve("A-1")), service)
        expect(completed._tag).toBe("Completed")

        const without = yield* Effect.provide(Saga.compensate("order"), service)
        expect(without.undone).toEqual([expect.objectContaining({ outcome: "unavailable" })])
        expect(without.status).toBe("compensation_failed")
        expect(released).toEqual([])
        expect((yield* journal.read("order")).some((entry) => entry.phase === "COMPENSATING")).toBe(false)

        const report = yield* Effect.provide(
          Saga.compensate("order"),
          Layer.provideMerge(Toolkit.layer(Toolkit.make({ reserve })), service)
        )
        expect(report.undone).toEqual([expect.objectContaining({ outcome: "completed" })])
        expect(report.status).toBe("compensated")
        expect(released).toEqual(["res-A-1"])
      })
  )

  it.effect(
    "two toolkits that bind one name to different tools: an operator's compensation runs neither's undo, reports the steps unavailable saying why, and a warning says so when the second registers",
    () =>
      Effect.gen(function* () {
        const undone: Array<string> = []
        const creating = creatingInto(undone)
        const a = creating("a")
        const b = creating("b")
        const { service } = sharedStore()
        // The run undoes its own steps by their own calls; a compensation from the journal alone cannot tell them apart.
        const completed = yield* Effect.provide(Saga.run("two-providers", Effect.zip(a("x"), b("y"))), service)
        expect(completed._tag).toBe("Completed")

        const warnings: Array<string> = []
        const logger = Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") warnings.push(String(Array.isArray(message) ? message[0] : message))
        })
        const both = Layer.provideMerge(
          Layer.merge(Toolkit.layer(Toolkit.make({ a })), Toolkit.layer(Toolkit.make({ b }))),
          service
        )
        const report = yield* Effect.provide(Saga.compensate("two-providers"), both).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, logger))
        )
        const why =
          "two different tools named create are known in this process (two manifests, toolkits or agents bind that name, or a program called another tool than the one registered): a step journaled under that name cannot be told to be either's, so neither undoes it here"
        expect(report.status).toBe("compensation_failed")
        expect(report.undone.map((step) => [step.outcome, step.detail])).toEqual([
          ["unavailable", why],
          ["unavailable", why]
        ])
        expect(undone).toEqual([])
        expect(warnings).toEqual([`effect-saga: ${why}`])

        // The same toolkit registered twice is one tool: its undo runs.
        const once = Layer.provideMerge(
          Layer.merge(Toolkit.layer(Toolkit.make({ a })), Toolkit.layer(Toolkit.make({ a }))),
          service
        )
        yield* Effect.provide(Saga.run("one-provider", a("z")), service)
        const undoneOnce = yield* Effect.provide(Saga.compensate("one-provider"), once)
        expect(undoneOnce.status).toBe("compensated")
        expect(undone).toEqual(["a undid a-z"])
      })
  )

  it.effect(
    "a run's call of another tool than the one registered under its name marks the name shared: an operator's compensation runs neither's undo",
    () =>
      Effect.gen(function* () {
        const undone: Array<string> = []
        const creating = creatingInto(undone)
        const { service } = sharedStore()
        const registered = Layer.provideMerge(Toolkit.layer(Toolkit.make({ a: creating("a") })), service)
        const warnings: Array<string> = []
        const logger = Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") warnings.push(String(Array.isArray(message) ? message[0] : message))
        })
        const report = yield* Effect.gen(function* () {
          expect((yield* Saga.run("called-b", creating("b")("x")))._tag).toBe("Completed")
          // Said at the call, not first at the compensation.
          expect(warnings).toEqual([
            "effect-saga: two different tools named create are known in this process (two manifests, toolkits or agents bind that name, or a program called another tool than the one registered): a step journaled under that name cannot be told to be either's, so neither undoes it here"
          ])
          return yield* Saga.compensate("called-b")
        }).pipe(Effect.provide(registered), Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        expect(report.undone.map((step) => step.outcome)).toEqual(["unavailable"])
        expect(warnings).toHaveLength(1)
        expect(undone).toEqual([])

        // Two tools made with one undo (a manifest's tool and the agent's handler made of it) undo alike: not shared.
        const undo = (ctx: { readonly result: string }) => Effect.sync(() => undone.push(`shared undid ${ctx.result}`))
        const alike = Layer.provideMerge(
          Layer.merge(
            Toolkit.layer(Toolkit.make({ one: creating("c", undo) })),
            Toolkit.layer(Toolkit.make({ two: creating("c", undo) }))
          ),
          service
        )
        const alikeReport = yield* Effect.gen(function* () {
          expect((yield* Saga.run("alike", creating("c", undo)("y")))._tag).toBe("Completed")
          return yield* Saga.compensate("alike")
        }).pipe(Effect.provide(alike))
        expect(alikeReport.status).toBe("compensated")
        expect(undone).toEqual(["shared undid c-y"])
      })
  )

  const reserveDeclaration = {
    name: "reserve",
    input: Schema.String,
    success: Schema.String,
    execute: (sku: string) => Effect.succeed(`res-${sku}`)
  }

  it.effect.each([
    ["declares no undo any more", () => Compensable.make(reserveDeclaration)],
    ["became irreversible", () => Compensable.make({ ...reserveDeclaration, reversibility: "irreversible" })]
  ] as const)(
    "a step run while its tool declared an undo, compensated where the tool registered %s: unavailable, nothing journaled, and undone where the undo is back",
    ([, edited]) =>
      Effect.gen(function* () {
        const released: Array<string> = []
        const reserve = Compensable.make({
          ...reserveDeclaration,
          compensate: (ctx) => Effect.sync(() => released.push(ctx.result))
        })
        const { journal, service } = sharedStore()
        expect((yield* Effect.provide(Saga.run("drifted", reserve("A-1")), service))._tag).toBe("Completed")

        const registered = (tool: Compensable.Any) => Layer.provideMerge(Toolkit.layer(Toolkit.make({ tool })), service)
        const report = yield* Effect.provide(Saga.compensate("drifted"), registered(edited()))
        expect(report.status).toBe("compensation_failed")
        expect(report.undone.map((step) => [step.outcome, step.detail])).toEqual([
          [
            "unavailable",
            "the step ran when tool reserve declared an undo, and the tool registered here declares none (its declaration changed since): undo the effect where the tool still declares its undo, or by hand, then resolve the undo as applied"
          ]
        ])
        const phases = (yield* journal.read("drifted")).map((entry) => entry.phase)
        expect(phases).not.toContain("SKIPPED")

        const undone = yield* Effect.provide(Saga.compensate("drifted"), registered(reserve))
        expect(undone.status).toBe("compensated")
        expect(released).toEqual(["res-A-1"])
      })
  )

  it.effect(
    "a step run while its tool declared no undo, compensated where the tool now declares one: that undo runs",
    () =>
      Effect.gen(function* () {
        const released: Array<string> = []
        const { journal, service } = sharedStore()
        expect(
          (yield* Effect.provide(Saga.run("gained", Compensable.make(reserveDeclaration)("B-2")), service))._tag
        ).toBe("Completed")
        const withUndo = Compensable.make({
          ...reserveDeclaration,
          compensate: (ctx) => Effect.sync(() => released.push(ctx.result))
        })
        const registered = Layer.provideMerge(Toolkit.layer(Toolkit.make({ withUndo })), service)
        const report = yield* Effect.provide(Saga.compensate("gained"), registered)
        expect(report.status).toBe("compensated")
        expect(report.undone.map((step) => step.outcome)).toEqual(["completed"])
        expect(released).toEqual(["res-B-2"])
        expect((yield* journal.read("gained")).map((entry) => entry.phase)).toContain("COMPENSATED")
      })
  )

  it.effect("Toolkit.call decodes the encoded input and runs the named tool as a step", () =>
    Effect.gen(function* () {
      const book = Compensable.make({
        name: "book",
        input: Schema.Struct({ night: Schema.DateFromString }),
        success: Schema.String,
        execute: ({ night }) => Effect.succeed(`room-${night.toISOString().slice(0, 10)}`)
      })
      const toolkit = Toolkit.make({ book })
      const result = yield* Saga.run("call", Toolkit.call(toolkit, "book", { night: "2026-12-24" }))
      expect(result).toMatchObject({ _tag: "Completed", value: "room-2026-12-24" })
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))))
  )
})
