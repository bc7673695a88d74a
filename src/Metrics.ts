/**
 * The library's metrics, as Effect `Metric`s: `@effect/opentelemetry`'s `NodeSdk.layer` (or any
 * reader of Effect's metric registry) exports them as they are. Names start with `effect_saga_`;
 * durations are in seconds. Counts are taken from what the journal records, so a replay does not
 * count a step twice. See the observability guide for each metric's meaning and alert rules.
 *
 * @since 0.2.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Metric from "effect/Metric"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as metrics from "./internal/observability/metrics.js"
import type { InvalidMetricsOptions } from "./internal/observability/openSagasOptions.js"
import * as openSagasOptions from "./internal/observability/openSagasOptions.js"
import { ErrorTypeId } from "./internal/observability/openSagasOptions.js"
import type { JournalError, OpenCounts } from "./Journal.js"
import { Journal } from "./Journal.js"

export { ErrorTypeId } from "./internal/observability/openSagasOptions.js"

/**
 * `effect_saga_sagas_started_total`: sagas started (explicit undos are not sagas).
 *
 * @since 0.2.0
 * @category metrics
 */
export const sagasStarted: Metric.Metric.Counter<number> = metrics.sagasStarted

/**
 * `effect_saga_sagas_ended_total{status}`: sagas that ended `completed`, `compensated` or
 * `compensation_failed`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const sagasEnded: Metric.Metric.Counter<number> = metrics.sagasEnded

/**
 * `effect_saga_sagas_halted_total{status}`: runs that left their saga `awaiting_approval`,
 * `needs_attention` or `suspended`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const sagasHalted: Metric.Metric.Counter<number> = metrics.sagasHalted

/**
 * `effect_saga_saga_duration_seconds{status}`: seconds from a saga's start to its end, waits for
 * approval included, by end status.
 *
 * @since 0.2.0
 * @category metrics
 */
export const sagaDuration: Metric.Metric.Histogram<number> = metrics.sagaDuration

/**
 * `effect_saga_steps_total{tool, outcome}`: steps `executed`, `failed`, `unknown` (the saga needs
 * attention) or `replayed` (answered from the journal without running again).
 *
 * @since 0.2.0
 * @category metrics
 */
export const steps: Metric.Metric.Counter<number> = metrics.steps

/**
 * `effect_saga_step_duration_seconds{tool}`: seconds from a step's last `INTENT` to its
 * journaled outcome, retries within the run included (an operator's resolution is not a duration).
 *
 * @since 0.2.0
 * @category metrics
 */
export const stepDuration: Metric.Metric.Histogram<number> = metrics.stepDuration

/**
 * `effect_saga_undos_total{tool, outcome}`: undos `completed`, `partial`, `failed`, `unknown` or
 * `skipped`, as journaled.
 *
 * @since 0.2.0
 * @category metrics
 */
export const undos: Metric.Metric.Counter<number> = metrics.undos

/**
 * `effect_saga_approvals_total{tool, decision}`: approvals `requested`, `approved`, `rejected`,
 * `expired`, `renewed`, or `withdrawn` (the saga compensated before a decision).
 *
 * @since 0.2.0
 * @category metrics
 */
export const approvals: Metric.Metric.Counter<number> = metrics.approvals

/**
 * `effect_saga_recovery_passes_total`: recovery passes run, counted when a pass ends (done, or
 * failed part-way by the store); an interrupted pass is not counted.
 *
 * @since 0.2.0
 * @category metrics
 */
export const recoveryPasses: Metric.Metric.Counter<number> = metrics.recoveryPasses

/**
 * `effect_saga_recovery_claimed_total`: sagas left behind that recovery passes claimed to resume,
 * counted as each batch is claimed: a pass still running the sagas it claimed has counted them.
 *
 * @since 0.2.0
 * @category metrics
 */
export const recoveryClaimed: Metric.Metric.Counter<number> = metrics.recoveryClaimed

/**
 * `effect_saga_lease_conflicts_total`: claims and appends refused because another worker holds
 * the saga's lease.
 *
 * @since 0.2.0
 * @category metrics
 */
export const leaseConflicts: Metric.Metric.Counter<number> = metrics.leaseConflicts

/**
 * `effect_saga_append_conflicts_total`: appends refused because the saga moved on since it was read.
 *
 * @since 0.2.0
 * @category metrics
 */
export const appendConflicts: Metric.Metric.Counter<number> = metrics.appendConflicts

/**
 * `effect_saga_open_sagas{status}`: sagas under each `Journal.OpenStatus`, as the store counted
 * them when `refreshOpenSagas` last ran.
 *
 * @since 0.2.0
 * @category metrics
 */
export const openSagas: Metric.Metric.Gauge<number> = metrics.openSagas

/**
 * Counts the open sagas in the store (`Journal.countOpen`, from an index of open sagas only) and
 * sets the `openSagas` gauge to the counts; returns them.
 *
 * @since 0.2.0
 * @category gauges
 */
export const refreshOpenSagas: Effect.Effect<OpenCounts, JournalError, Journal> = Effect.flatMap(Journal, (journal) =>
  Effect.tap(journal.countOpen(), (counts) => Effect.sync(() => metrics.setOpenSagas(counts)))
)

/**
 * How often `layerOpenSagas` counts.
 *
 * @since 0.2.0
 * @category models
 */
export interface OpenSagasOptions {
  /** Time between two counts (default 30 seconds); the first runs when the layer is built. */
  readonly every?: Duration.DurationInput | undefined
}

/**
 * Keeps the `openSagas` gauge current: refreshes it when built and then every `every`, in the
 * background, while the layer lives. A count that fails is logged and tried again next time. An
 * `every` that is not a positive duration (`0`, `-5`, `NaN`, text naming none), or an option it
 * does not know, fails the build with `InvalidMetricsOptions` (since 0.4.0), nothing counted.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerOpenSagas = (options: OpenSagasOptions = {}): Layer.Layer<never, InvalidMetricsOptions, Journal> =>
  Layer.scopedDiscard(
    Effect.flatMap(openSagasOptions.everyOf(options), (every) =>
      Effect.forkScoped(
        refreshOpenSagas.pipe(
          Effect.catchAll((error) =>
            Effect.logWarning(`effect-saga: the open sagas could not be counted: ${error.message}`)
          ),
          Effect.repeat(Schedule.spaced(every))
        )
      )
    )
  )

export { InvalidMetricsOptions } from "./internal/observability/openSagasOptions.js"

/**
 * Whether a value is an `InvalidMetricsOptions` (the one error of `Metrics`), by its `ErrorTypeId`.
 *
 * @since 0.4.0
 * @category guards
 */
export const isInvalidMetricsOptions = (u: unknown): u is InvalidMetricsOptions => Predicate.hasProperty(u, ErrorTypeId)
