/**
 * Who goes on with a saga the CLI cannot drive itself: the CLI runs no program, so a saga left
 * behind, or one whose approved step waits to run, goes on only when a worker that has its
 * program resumes it. `show`'s `next:` lines say which.
 *
 * @since 0.4.0
 */
import * as ApprovalExpiry from "../util/approvalExpiry.js"
import type { Origin } from "../util/origin.js"
import { printable } from "../util/printable.js"
import { shellWord } from "../util/shellWord.js"
import * as ToResolve from "../util/toResolve.js"

/**
 * `text` as a JavaScript string literal to paste into a program: quotes and backslashes escaped
 * (`JSON.stringify`), and what a terminal acts on or hides as `\u` escapes (`printable`).
 */
const jsString = (text: string): string => printable(JSON.stringify(text))

/**
 * Who can resume the saga at once, by what it was started from.
 *
 * @since 0.5.0
 * @category resuming
 */
export const resumedBy = (sagaId: string, origin: Origin | undefined): string => {
  switch (origin?._tag) {
    case "Definition":
      return `a worker given definition ${origin.name}: Recovery.resume(${jsString(sagaId)}), or Saga.start with ${origin.name}`
    case "Program":
      return `the program that started it, run again under its id: Saga.resume(${jsString(sagaId)}, program) or Saga.run`
    case "Effect":
      return `Recovery.resume(${jsString(sagaId)}) on any worker, or effect-saga compensate-effect ${shellWord(origin.effectId)} --register MODULE`
    case undefined:
      return `the worker that has its program: Recovery.resume(${jsString(sagaId)}), or Saga.resume with its program`
  }
}

/**
 * The `next:` line of an approved step whose saga still awaits approval: nothing runs until the
 * saga is resumed, and recovery's passes do not take a saga awaiting approval. `until`: the
 * approval's journaled expiry, when it names one (`Timeline.approvedUntil`) and has not passed.
 *
 * @since 0.4.0
 * @category resuming
 */
export const approved = (
  sagaId: string,
  stepId: string,
  origin: Origin | undefined,
  until?: string | undefined
): string =>
  `next: ${stepId} is approved${until === undefined ? "" : ` until ${until}`} and runs when the saga is resumed${until === undefined ? "" : " before then"}, by ${resumedBy(sagaId, origin)} (a Recovery pass does not take a saga awaiting approval)`

/**
 * The `next:` line of an approved step whose journaled expiry passed (or names no time a worker can
 * read) before the saga was resumed: a resume journals `EXPIRED` and compensates, unless the approval
 * is renewed first (`Saga.renewApproval`, which takes an expired approval no run refused yet).
 *
 * @since 0.4.0
 * @category resuming
 */
export const approvalLapsed = (
  sagaId: string,
  stepId: string,
  origin: Origin | undefined,
  lapsed: Extract<ApprovalExpiry.Standing, { readonly _tag: "Lapsed" }>,
  at: string
): string =>
  `next: the approval of ${stepId} ${ApprovalExpiry.lapsedText(lapsed)}: ${ApprovalExpiry.sagaResumedLapsed}; to run the step still, renew it first: ${ApprovalExpiry.renewCommand(sagaId, stepId)} ${at}, then resume the saga, by ${resumedBy(sagaId, origin)}`

/**
 * The `next:` line of a saga that needs attention with nothing left to resolve (every step it
 * stopped on resolved, or only a read unknown, which a resume runs again): it goes on only when
 * resumed (a Recovery pass does not take a saga that needs attention), or compensates then when a
 * journaled failure binds it to (`failed`: `Timeline.failureToUndo`, a step resolved not applied too);
 * or only by a compensation, when its program cannot replay a step (`notReplayable`:
 * `Timeline.notReplayable`).
 *
 * @since 0.5.0
 * @category resuming
 */
export const resolved = (
  sagaId: string,
  origin: Origin | undefined,
  at: string,
  failed: string | undefined,
  notReplayable: ReadonlyArray<string>
): string => {
  const compensate = `effect-saga compensate ${shellWord(sagaId)} --register MODULE --as WHO ${at}`
  if (ToResolve.cannotResume(failed, notReplayable)) {
    return `next: nothing is left to resolve, but ${ToResolve.compensateNotResume(notReplayable)}: ${compensate}`
  }
  return `next: nothing is left to resolve: the saga ${ToResolve.resumeDoes(failed)} when it is resumed, by ${resumedBy(sagaId, origin)} (a Recovery pass does not take a saga that needs attention); or ${compensate}`
}

/**
 * How to compensate a saga instead, at `at`: once its steps whose outcome is unknown (`unresolved`)
 * are resolved, as the `next:` lines above say, since a compensation cannot undo such a step and
 * ends the saga `compensation_failed` (then at the position resolving moved it to, not `at`).
 */
const compensateInstead = (sagaId: string, at: string, unresolved: ReadonlyArray<string>): string => {
  const compensate = `effect-saga compensate ${shellWord(sagaId)} --register MODULE --as WHO`
  if (unresolved.length === 0) return `${compensate} ${at}`
  const [it, is] = unresolved.length === 1 ? ["it", "is"] : ["them", "are"]
  // Resolving moves the saga on: the position to compensate at is the one it moved to.
  return `once ${unresolved.join(", ")} ${is} resolved (above: a compensation before then cannot undo ${it} and ends the saga compensation_failed), ${compensate} (at the position the saga moved to: effect-saga show ${shellWord(sagaId)} prints it)`
}

/**
 * The `next:` line of a saga left behind (`Stuck.isLeftBehind`): who takes it, or that no `Recovery` can
 * (started with `Saga.run`), and how to compensate it instead: once the steps whose outcome is
 * unknown (`unresolved`) are resolved.
 *
 * @since 0.4.0
 * @category resuming
 */
export const leftBehind = (
  sagaId: string,
  origin: Origin | undefined,
  at: string,
  unresolved: ReadonlyArray<string> = []
): string => {
  const compensate = compensateInstead(sagaId, at, unresolved)
  switch (origin?._tag) {
    case "Definition":
      return `next: no worker is driving it: a worker whose Recovery was given definition ${origin.name} takes it at its next pass, or ${resumedBy(sagaId, origin)}; or ${compensate}`
    case "Program":
      return `next: no worker is driving it, and no Recovery can (it was started with Saga.run, not from a definition): ${resumedBy(sagaId, origin)}; or ${compensate}`
    case "Effect":
      return `next: no worker is driving it: any worker's Recovery asks for the effect again at its next pass (an undo that started and has no outcome is answered unknown, never run again), or ${resumedBy(sagaId, origin)}`
    case undefined:
      return `next: no worker is driving it: ${resumedBy(sagaId, origin)}; or ${compensate}`
  }
}
