/**
 * The series an alert reads exist from the `Saga` layer's build, at 0: a series that first appears
 * at 1 has no earlier sample, so `increase(…) > 0` would miss a process's first
 * `compensation_failed` (docs/observability.md).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Metric } from "effect"
import { Approval, Journal, Saga } from "../src/index.js"

/** Every effect-saga series in the registry, as `name{label=value}`, with its count. */
const series = Effect.map(Metric.snapshot, (pairs) =>
  Object.fromEntries(
    pairs
      .filter((pair) => pair.metricKey.name.startsWith("effect_saga_"))
      .map((pair) => [
        `${pair.metricKey.name}${pair.metricKey.tags.map((tag) => `{${tag.key}=${tag.value}}`).join("")}`,
        (pair.metricState as unknown as { readonly count: number }).count
      ])
  )
)

describe("the series alerts read", () => {
  it.effect("start at 0 when the Saga layer is built, before anything happened", () =>
    Effect.gen(function* () {
      expect(yield* series).toEqual({})
      yield* Effect.scoped(
        Layer.build(Saga.layer.pipe(Layer.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory))))
      )
      expect(yield* series).toEqual({
        effect_saga_sagas_started_total: 0,
        "effect_saga_sagas_ended_total{status=completed}": 0,
        "effect_saga_sagas_ended_total{status=compensated}": 0,
        "effect_saga_sagas_ended_total{status=compensation_failed}": 0,
        "effect_saga_sagas_halted_total{status=awaiting_approval}": 0,
        "effect_saga_sagas_halted_total{status=needs_attention}": 0,
        "effect_saga_sagas_halted_total{status=suspended}": 0,
        effect_saga_recovery_passes_total: 0,
        effect_saga_recovery_claimed_total: 0,
        effect_saga_lease_conflicts_total: 0,
        effect_saga_append_conflicts_total: 0
      })
    })
  )
})
