import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Approval, Compensable, Journal, Saga, Toolkit } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"

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
        const journal = makeMemoryJournal()
        const store = Layer.merge(
          Layer.succeed(Journal.Journal, journal),
          Layer.succeed(Approval.Approval, Approval.makeMemory())
        )
        const service = Saga.layer.pipe(Layer.provide(store))

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
