/**
 * Whether a saga's journal can be trusted, as the read commands say it: they verify a saga's chain
 * against its row before they show it, and mark a saga whose journal does not verify instead of
 * showing its values as facts.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Entry, SagaRecord, TamperProblem, Verification } from "../../Journal.js"
import * as Journal from "../../Journal.js"
import { printable } from "../util/printable.js"
import { onlyTheTable } from "../util/tamperMark.js"
import { SomethingWrong } from "./failure.js"

/**
 * A saga as a read command finds it: its row and entries as stored (no entries when one does not
 * decode, no row when it does not decode), and whether they verify.
 *
 * @since 0.2.0
 * @category models
 */
export interface Inspection {
  readonly sagaId: string
  readonly record: SagaRecord | undefined
  readonly entries: ReadonlyArray<Entry>
  readonly verification: Verification
}

/**
 * Why a saga (or one of its approval requests) is not to be trusted: the first entry that does not
 * fit (`null` when the mark is about a row of the approvals table that no entry backs), what is
 * wrong, and in words.
 *
 * @since 0.2.0
 * @category models
 */
export interface Tampered {
  readonly seq: number | null
  readonly problem: TamperProblem
  readonly reason: string
}

/**
 * Reads a saga's row and entries and verifies them (chain, MACs with a journal key, the row's
 * revision and digest); an entry that does not decode is a break at its seq, and a row that does
 * not decode is one as `Journal.verify` names it (`row`, at seq 1).
 *
 * @since 0.2.0
 * @category reading
 */
export const inspect = (sagaId: string) =>
  Effect.map(
    Journal.inspect(sagaId),
    ({ entries, record, verification }): Inspection => ({
      sagaId,
      record: Option.getOrUndefined(record),
      entries,
      verification
    })
  )

/**
 * The mark of a verification: `null` when it is intact.
 *
 * @since 0.2.0
 * @category marks
 */
export const tamperedOf = (verification: Verification): Tampered | null =>
  verification._tag === "Intact"
    ? null
    : { seq: verification.seq, problem: verification.problem, reason: verification.reason }

/**
 * A table cell for the mark: `intact`, `TAMPERED at seq 7`, or `TAMPERED (approvals table)`.
 *
 * @since 0.2.0
 * @category marks
 */
export const cell = (tampered: Tampered | null): string => {
  if (tampered === null) return "intact"
  return onlyTheTable(tampered) ? "TAMPERED (approvals table)" : `TAMPERED at seq ${tampered.seq}`
}

/**
 * The mark in one line, naming the saga: what a read prints first about a tampered saga.
 *
 * @since 0.2.0
 * @category marks
 */
export const line = (sagaId: string, tampered: Tampered): string =>
  printable(
    onlyTheTable(tampered)
      ? `saga ${sagaId}: TAMPERED: ${tampered.reason}`
      : `saga ${sagaId}: TAMPERED: its journal does not verify at seq ${tampered.seq} (${tampered.problem}): ${tampered.reason}`
  )

/**
 * Ends the command with exit code 1 if any of `marked` is tampered (its answer is already printed).
 *
 * @since 0.2.0
 * @category exit codes
 */
export const exitIfTampered = (
  marked: ReadonlyArray<{ readonly sagaId: string; readonly tampered: Tampered | null }>
): Effect.Effect<void, SomethingWrong> => {
  const tampered = marked.filter((item) => item.tampered !== null)
  return tampered.length === 0
    ? Effect.void
    : Effect.fail(new SomethingWrong({ reason: tampered.map((item) => `saga ${item.sagaId} is tampered`).join(", ") }))
}
