import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { Journal, Metrics } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"

describe("Metrics.layerOpenSagas counts the open sagas every `every`", () => {
  for (const [every, reason] of [
    [0, "0 is not a positive duration: the store would be counted without pause"],
    [-5, "-5 is not a positive duration: the store would be counted without pause"],
    [Number.NaN, "NaN is not a positive duration: the store would be counted without pause"],
    ["-1 minute", '"-1 minute" is not a positive duration: the store would be counted without pause'],
    ["1 fortnight", '"1 fortnight" is not a duration']
  ] as const) {
    it.effect(`every ${String(every)} fails the build with InvalidMetricsOptions, nothing counted`, () =>
      Effect.gen(function* () {
        const { counts, layer } = counting()
        const error = yield* Effect.flip(
          Layer.build(Metrics.layerOpenSagas({ every: every as never }).pipe(Layer.provide(layer)))
        )
        expect(Metrics.isInvalidMetricsOptions(error)).toBe(true)
        expect(error).toMatchObject({ option: "every", reason })
        expect(error.message).toBe(`Metrics.layerOpenSagas: every ${reason}`)
        yield* TestClock.adjust("1 minute")
        expect(counts()).toBe(0)
      }).pipe(Effect.scoped)
    )
  }

  it.effect("a misspelled option fails the build, not a default taken silently", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Layer.build(Metrics.layerOpenSagas({ evry: "1 minute" } as never).pipe(Layer.provide(counting().layer)))
      )
      expect(error).toMatchObject({ _tag: "InvalidMetricsOptions", option: "options" })
      expect(error.message).toContain('name "evry", which is no option: the options are every')
    }).pipe(Effect.scoped)
  )

  it.effect("a positive every counts when built, then once each every", () =>
    Effect.gen(function* () {
      const { counts, layer } = counting()
      yield* Layer.build(Metrics.layerOpenSagas({ every: "1 minute" }).pipe(Layer.provide(layer)))
      yield* TestClock.adjust("0 millis")
      expect(counts()).toBe(1)
      yield* TestClock.adjust("3 minutes")
      expect(counts()).toBe(4)
    }).pipe(Effect.scoped)
  )
})

/** A memory journal that counts how often the open sagas were counted. */
const counting = () => {
  let counts = 0
  const journal = makeMemoryJournal()
  const layer = Layer.succeed(
    Journal.Journal,
    Journal.Journal.of({
      ...journal,
      countOpen: () =>
        Effect.zipRight(
          Effect.sync(() => counts++),
          journal.countOpen()
        )
    })
  )
  return { counts: () => counts, layer }
}
