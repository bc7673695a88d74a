/**
 * What a saga whose compensation failed waits for, on its console page, in the console's words:
 * `CompensationLeft` decides it, as it does `effect-saga show`'s `next:` lines. Its compensation
 * already ran, so a resume does not go on: a compensation again, what to undo by hand, or that
 * nothing is left dirty.
 */
import * as CompensationLeft from "../../util/compensationLeft.js"
import { RUN_SUFFIX } from "../../util/identifier.js"
import { shellWord } from "../../util/shellWord.js"
import type { SagaDetail } from "../models.js"

const compensateWith = (sagaId: string, registered = "--register MODULE "): string =>
  `effect-saga compensate ${shellWord(sagaId)} ${registered}--as WHO, or POST /api/sagas/${encodeURIComponent(sagaId)}/compensate`

/** What ends a saga whose undos left something live, once it is undone by hand: its resolution, then a compensation again. */
const onceUndone = (detail: SagaDetail, steps: ReadonlyArray<CompensationLeft.ByHand>, several: boolean): string => {
  const { sagaId, revision, digest } = detail.saga
  const paths = steps.map(
    (step) => `POST /api/sagas/${encodeURIComponent(sagaId)}/steps/${encodeURIComponent(step.stepId)}/resolve`
  )
  return `effect-saga does not run a settled undo again: once the effect is undone, say so (${paths.join(", ")} with {"outcome":"applied"}, or ${CompensationLeft.resolveUndone(sagaId, steps, `--revision ${revision} --digest ${digest}`, several)}), then compensate it again, which ends it compensated once nothing else is dirty.`
}

/**
 * The lines for a saga `compensation_failed` that nobody drives, judged at `now` (epoch
 * milliseconds); none for any other saga, a tampered one, or the run of an explicit undo (whose
 * answer is final).
 */
export const lines = (detail: SagaDetail, now: number): ReadonlyArray<string> => {
  const row = detail.saga
  const left =
    row.tampered === null && !row.sagaId.endsWith(RUN_SUFFIX) ? CompensationLeft.of(row, detail.steps, now) : undefined
  if (left === undefined) return []
  const compensate = compensateWith(row.sagaId)
  const several = left.byHand.length + left.toAsk.length > 1
  const said: Array<string> = []
  if (left.undoable.length > 0) {
    said.push(
      `Its compensation already ran: compensate it again (${compensate}) from a process that has their tools registered (and the receipt keys, if their receipts are sealed): it runs the undo of ${left.undoable.join(", ")} and journals a new report.`
    )
  }
  if (left.byHand.length > 0) {
    said.push(
      `Undo by hand, at the provider, what ${CompensationLeft.leftLive(row.sagaId, left.byHand)}; ${onceUndone(detail, left.byHand, several)}`
    )
  }
  if (left.toAsk.length > 0) {
    said.push(
      `Ask the provider ${CompensationLeft.mayBeLive(row.sagaId, left.toAsk)}; ${onceUndone(detail, left.toAsk, several)}`
    )
  }
  if (left.ofRuns.length > 0) {
    const follow = CompensationLeft.followRuns(row.sagaId, left.ofRuns)
    said.push(`${follow[0]!.toUpperCase()}${follow.slice(1)} (${compensate}).`)
  }
  if (left.clean) {
    said.push(
      `Nothing is left dirty since the last report: its compensation already ran, so compensate it again (${compensateWith(row.sagaId, "")}; no undo is left to run, so no module to register): that journals a new report, and the saga ends compensated.`
    )
  }
  return said
}
