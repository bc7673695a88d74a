/**
 * The options of `Metrics.layerOpenSagas`, checked when the layer is built: an `every` that is
 * zero, negative or `NaN` (which `Duration.decode` reads as zero) would count the store without
 * pause, and text that names no duration would kill the background count after the first.
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { OpenSagasOptions } from "../../Metrics.js"
import { positiveDurationOf, unknownOption } from "../util/options.js"
import { typeName } from "../util/printable.js"

/**
 * The type id the errors of `Metrics` carry (`InvalidMetricsOptions`). `Metrics` re-exports it:
 * that is its public home; it lives here, beside the error, so that this file need not import
 * `Metrics.ts` back.
 *
 * @since 0.4.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("effect-saga/Metrics/Error")

/**
 * @since 0.4.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * `layerOpenSagas` was given an option it cannot work with (`option`: `"every"`, or `"options"`
 * for a misspelled one), and why: the layer fails to build.
 *
 * @since 0.4.0
 * @category errors
 */
export class InvalidMetricsOptions extends Schema.TaggedError<InvalidMetricsOptions>(
  "effect-saga/Metrics/InvalidMetricsOptions"
)("InvalidMetricsOptions", { option: Schema.Literal("options", "every"), reason: Schema.String }) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `Metrics.layerOpenSagas: ${this.option} ${this.reason}`
  }
}

/** The time between two counts when none is given. */
const DEFAULT_EVERY = "30 seconds"

/** The time between two counts, or `InvalidMetricsOptions` for options it cannot work with. */
export const everyOf = (options: OpenSagasOptions): Effect.Effect<Duration.Duration, InvalidMetricsOptions> =>
  Effect.suspend(() => {
    // From JavaScript anything may come: no options (null) take the defaults, a misspelled one is refused.
    if (options === null || options === undefined) return everyOf({})
    if (typeof options !== "object") {
      const reason = `are ${typeName(options)}, not an object of every`
      return Effect.fail(new InvalidMetricsOptions({ option: "options", reason }))
    }
    const unknown = unknownOption(options, ["every"])
    if (unknown !== undefined) return Effect.fail(new InvalidMetricsOptions({ option: "options", reason: unknown }))
    return Effect.mapError(
      positiveDurationOf(options.every ?? DEFAULT_EVERY, "the store would be counted without pause"),
      (reason) => new InvalidMetricsOptions({ option: "every", reason })
    )
  })
