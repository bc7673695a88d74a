/**
 * What `show` says of a request the approvals table holds otherwise than the journal, whose journal
 * verifies: effect-saga decides it no further, but the request is not lost. A decision the journal
 * lacks that an `approve` or `reject` stopped between its two writes left is finished by that same
 * command again (`unfinished`); else the table is restored from a backup, or the saga ended: rejected
 * where `reject` takes the request (`rejectable`: its row pending, only its copy of the request
 * edited), or compensated. An explicit undo's run is never compensated itself: its effect is left
 * to the saga's own compensation.
 *
 * @since 0.5.0
 */
import type { Decided } from "../util/approvalRecord.js"
import type { Origin } from "../util/origin.js"
import { shellWord } from "../util/shellWord.js"
import * as UndoRunAdvice from "../util/undoRunAdvice.js"

/** The saga or run whose request is doubted, as `show` read it. */
export interface Doubted {
  readonly sagaId: string
  readonly stepId: string
  /** Whether the saga has an executed step whose undo compensating it would run (`reject` then needs the tools). */
  readonly undos: boolean
  readonly origin: Origin | undefined
}

/** The command that made `decision`, to be asked again exactly as it was. */
const sameCommand = ({ sagaId, stepId, undos, origin }: Doubted, decision: Decided): string => {
  const at = `effect-saga ${decision._tag === "Approved" ? "approve" : "reject"} ${shellWord(sagaId)} ${shellWord(stepId)} --as ${shellWord(decision.by)}`
  if (decision._tag === "Approved") {
    return decision.expiresAt === undefined ? at : `${at} --expires-at ${shellWord(decision.expiresAt)}`
  }
  const register = undos && origin?._tag !== "Effect" ? " --register MODULE" : ""
  return `${at} --reason ${shellWord(decision.reason)}${register}`
}

/** For a run: its saga's own compensation, which undoes the effect too. */
const leftToSaga = ({ stepId }: Doubted, effectId: string): string => {
  const saga = UndoRunAdvice.sagaIdOf({ stepId, effectId })
  return `leave the effect to the saga's own compensation, which runs this undo as if nobody had asked and undoes every other executed step of ${saga} too: effect-saga compensate ${shellWord(saga)} --register MODULE --as WHO`
}

/**
 * The lines `show` prints under a doubted request's mark: what effect-saga does not do, then what
 * the operator may.
 *
 * @since 0.5.0
 * @category next lines
 */
export const doubtedLines = (
  doubted: Doubted,
  rejectable: boolean,
  unfinished: Decided | undefined
): ReadonlyArray<string> => {
  const compensate = `effect-saga compensate ${shellWord(doubted.sagaId)} --register MODULE --as WHO`
  const run = doubted.origin?._tag === "Effect" ? leftToSaga(doubted, doubted.origin.effectId) : undefined
  if (unfinished !== undefined) {
    const verb = unfinished._tag === "Approved" ? "approve" : "reject"
    return [
      "effect-saga does not act on this decision until the journal holds it; the journal verifies, as below.",
      `next: ask ${unfinished.by} first whether they made this decision (without a journal key, a forged row reads the same): if their ${verb} stopped before journaling it (a crash, a journal write that failed), the same command again finishes it: ${sameCommand(doubted, unfinished)}`,
      `next: if ${unfinished.by} made no such decision, it was forged: restore the approvals table from a backup, or ${run ?? `end the saga: ${compensate}`}`
    ]
  }
  return rejectable
    ? [
        "effect-saga does not decide this request (approve refuses it); the journal verifies, as below.",
        `next: restore the approvals table from a backup, or ${run === undefined ? `end the saga (reject the step, or ${compensate})` : `reject the step, or ${run}`}`
      ]
    : [
        "effect-saga does not decide this request (approve and reject refuse it: its row in the approvals table was edited, or holds a decision the journal lacks); the journal verifies, as below.",
        `next: restore the approvals table from a backup, or ${run ?? `end the saga: ${compensate}`}`
      ]
}

/** `text` as an SQL string literal. */
const sqlText = (text: string): string => `'${text.replaceAll("'", "''")}'`

/**
 * The lines `show` prints under the mark of a request the approvals table lists as pending for a
 * step its saga does not wait on (the journal answered it, or never asked): nothing acts on the row,
 * and it stays listed, marked, until someone who can write the database deletes it.
 *
 * @since 0.5.0
 * @category next lines
 */
export const strayLines = (request: { readonly requestId: string; readonly stepId: string }): ReadonlyArray<string> => [
  `effect-saga does not act on this row: the saga does not wait for a decision on step ${request.stepId} (its journal answered the step, or never asked); the journal verifies, as below.`,
  `next: once you know who wrote the row, delete it (it stays listed, marked, until then): DELETE FROM effect_saga_approvals WHERE request_id = ${sqlText(request.requestId)}; or restore the approvals table from a backup`
]
