/**
 * The approvals table's record of a step's request, read before a command that decides it does
 * anything else: a row edited so that it names no decision the store wrote is refused by `reject`
 * (and `approve`) as `JournalTampered` (`problem: "approval"`) whatever else holds, so the CLI and the
 * HTTP API say that first, not that tools are missing; and `show` offers `reject` for a request the
 * table holds otherwise than the journal only where `reject` takes it (the row pending, its copy of
 * the request edited).
 *
 * @since 0.5.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Approval } from "../../Approval.js"
import { Journal, type JournalCorrupted, type JournalError, JournalTampered } from "../../Journal.js"

/**
 * Why the record of step `stepId`'s request cannot be decided, as the saga's `JournalTampered` (at
 * the step's last `AWAITING_APPROVAL` entry), if its row was edited; `undefined` otherwise (no row,
 * or one that decodes).
 *
 * @since 0.5.0
 * @category reading
 */
export const tamperedRecord = (
  sagaId: string,
  stepId: string
): Effect.Effect<JournalTampered | undefined, JournalError | JournalCorrupted, Approval | Journal> =>
  storedRecord(sagaId, stepId).pipe(
    Effect.as(undefined),
    Effect.catchTag("ApprovalTampered", (error) =>
      Effect.map(
        awaitingSeq(sagaId, stepId),
        (seq) => new JournalTampered({ sagaId, seq, problem: "approval", reason: error.message })
      )
    )
  )

/**
 * Whether `reject` takes step `stepId`'s request as the approvals table holds it: its row is
 * pending and decodes (a copy of the request that departs from the journal is no obstacle: the
 * rejection runs nothing); one edited, or holding a decision the journal lacks, is refused.
 *
 * @since 0.5.0
 * @category reading
 */
export const rejectTakes = (sagaId: string, stepId: string): Effect.Effect<boolean, JournalError, Approval> =>
  storedRecord(sagaId, stepId).pipe(
    Effect.map((held) => Option.isNone(held) || held.value.decision._tag === "Pending"),
    Effect.catchTag("ApprovalTampered", () => Effect.succeed(false))
  )

/** The approval store's record of step `stepId`'s request (its id is `${sagaId}/${stepId}`). */
const storedRecord = (sagaId: string, stepId: string) =>
  Effect.flatMap(Approval, (approval) => approval.get(`${sagaId}/${stepId}`))

/** The seq of the step's last `AWAITING_APPROVAL` entry (1 if the journal holds none). */
const awaitingSeq = (sagaId: string, stepId: string) =>
  Effect.map(
    Effect.flatMap(Journal, (journal) => journal.read(sagaId)),
    (entries) =>
      entries.filter((entry) => entry.phase === "AWAITING_APPROVAL" && entry.stepId === stepId).at(-1)?.seq ?? 1
  )
