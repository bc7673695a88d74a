/**
 * What `exploreCrashes` checks once a saga ended after a crash, besides the user's invariants: the
 * calls each step made, how a `CompensationFailed` came about, and how a failure reads.
 */
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Journal from "../../Journal.js"
import type { SagaResult } from "../../SagaResult.js"
import type { Ledger } from "./crash.js"
import { DriveProblem } from "./drive.js"

/** What the explorer asks where a run or recovery did not repeat what the journal or the first run holds. */
export const DETERMINISM_HINT = "(is the program deterministic?)"

export const describeError = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** What `cause` failed with, as the engine raised it (a drive's problem unwrapped), if it holds a failure. */
const failureOf = (cause: Cause.Cause<unknown>): Option.Option<unknown> =>
  Option.map(Cause.failureOption(cause), (failure) => (failure instanceof DriveProblem ? failure.reason : failure))

/** Whether `exit` failed because the program did not replay as its journal says (`NonDeterminism`). */
export const replayDiverged = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) &&
  Option.exists(failureOf(exit.cause), (failure) => Predicate.isTagged(failure, "NonDeterminism"))

export const describeExit = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return "succeeded"
  const failure = failureOf(exit.cause)
  if (Option.isSome(failure)) return describeError(failure.value)
  return Cause.isInterruptedOnly(exit.cause) ? "it was interrupted" : Cause.pretty(exit.cause).split("\n")[0]!
}

/** The undos a crash hid: started by the dead process (`COMPENSATING` by its last seq), found unsettled after it. */
export const hiddenUndos = (entries: ReadonlyArray<Journal.Entry>, lastSeq: number): Set<string> => {
  const startedBefore = new Set<string | null>()
  const hidden = new Set<string>()
  for (const entry of entries) {
    if (entry.phase === "COMPENSATING" && entry.seq <= lastSeq) startedBefore.add(entry.stepId)
    if (entry.phase === "COMPENSATION_UNKNOWN" && entry.seq > lastSeq && startedBefore.has(entry.stepId)) {
      hidden.add(entry.stepId!)
    }
  }
  return hidden
}

/** Whether a `CompensationFailed` is what the engine promises after a crash: only undos the crash hid are unsettled. */
export const excused = (result: SagaResult<unknown, unknown>, hidden: Set<string>): boolean =>
  result._tag === "CompensationFailed" &&
  hidden.size > 0 &&
  result.report.undone.every(
    (step) =>
      step.outcome === "completed" ||
      step.outcome === "skipped" ||
      (step.outcome === "unknown" && hidden.has(step.stepId))
  ) &&
  result.report.notUndone.every((step) => step.phase === "FAILED")

/** A compensation report under a problem, a line a step: each undo, then what was not undone and why. */
export const formatReport = (result: SagaResult<unknown, unknown>): string =>
  "report" in result
    ? [
        ...result.report.undone.map(
          (step) =>
            `    ${step.outcome} ${step.toolName} (${step.stepId})${step.detail === undefined ? "" : `: ${step.detail}`}`
        ),
        // What was not undone says why a compensation failed as often as an undo does: an unknown outcome.
        ...result.report.notUndone.map(
          (step) =>
            `    not undone: ${step.phase === "UNKNOWN" ? "outcome unknown" : "its call failed"} ${step.toolName} (${step.stepId})`
        )
      ].join("\n")
    : ""

/**
 * A forward call that does not declare it may be retried ran twice for one step, or an undo ran
 * twice. A read (`changesNothing`) may run again: it changed nothing.
 */
export const countProblems = (ledger: Ledger): Array<string> => {
  const problems: Array<string> = []
  for (const step of ledger.steps.values()) {
    const repeatable = step.spec.retryMode === "idempotency-key" || step.spec.changesNothing === true
    if (!repeatable && step.mayHaveApplied > 1) {
      problems.push(
        `${step.toolName} ran ${step.mayHaveApplied} times for step ${step.stepId}; it does not declare retryMode "idempotency-key", so it may run once`
      )
    }
    if (step.undos > 1) {
      problems.push(
        `the undo of ${step.toolName} ran ${step.undos} times for step ${step.stepId}; an undo runs at most once per step`
      )
    }
  }
  return problems
}
