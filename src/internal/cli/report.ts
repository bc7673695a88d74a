/**
 * Printing a compensation report, and its exit code: 1 unless it is clean.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as CompensationReport from "../../CompensationReport.js"
import { SomethingWrong } from "./failure.js"
import { print, printJson } from "./output.js"

/**
 * Prints `report` (as JSON with `json`) under `title`, if any,, and ends the command with exit code 1 if
 * something may still be live (`compensation_failed`).
 *
 * @since 0.1.0
 * @category printing
 */
export const printReport = (
  title: string | undefined,
  report: CompensationReport.CompensationReport,
  json: boolean
): Effect.Effect<void, SomethingWrong> =>
  Effect.zipRight(
    json
      ? printJson(report)
      : print([...(title === undefined ? [] : [title]), CompensationReport.format(report)].join("\n")),
    report.status === "compensated"
      ? Effect.void
      : Effect.fail(new SomethingWrong({ reason: `saga ${report.sagaId} is ${report.status}` }))
  )
