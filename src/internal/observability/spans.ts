/** How the engine's spans end: what the OpenTelemetry status of a span says about its outcome. */
import * as Effect from "effect/Effect"
import type { StepReport } from "../../CompensationReport.js"

/** Carries an undo's report through its span as a failure, so that the span ends with an error status. */
class UndoNotDone extends Error {
  constructor(readonly report: StepReport) {
    super(
      `the undo of ${report.toolName} ended ${report.outcome}${report.detail === undefined ? "" : `: ${report.detail}`}`
    )
    this.name = "UndoNotDone"
  }
}

/** Outcomes that leave the step's effect in place, wholly or in part, or unknown: the span is an error. */
const notDone = (report: StepReport) =>
  report.outcome === "failed" || report.outcome === "partial" || report.outcome === "unknown"

/**
 * Runs an undo in the `effect-saga.undo` span: its outcome annotated, and an error status when the
 * undo failed, was partial or has an unknown outcome. The caller gets the report either way.
 */
export const withUndoSpan =
  (attributes: Record<string, unknown>) =>
  <E, R>(undo: Effect.Effect<StepReport, E, R>): Effect.Effect<StepReport, E, R> =>
    undo.pipe(
      Effect.tap((report) => Effect.annotateCurrentSpan("outcome", report.outcome)),
      Effect.flatMap((report) => (notDone(report) ? Effect.fail(new UndoNotDone(report)) : Effect.succeed(report))),
      Effect.withSpan("effect-saga.undo", { attributes, captureStackTrace: false }),
      Effect.catchIf(
        (error): error is UndoNotDone => error instanceof UndoNotDone,
        (error) => Effect.succeed(error.report)
      )
    )
