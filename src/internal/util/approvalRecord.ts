/**
 * The approvals table's record of a step's request, read before a command that decides it does
 * anything else: a row edited so that it names no decision the store wrote is refused by `reject`
 * (and `approve`) as `JournalTampered` (`problem: "approval"`) whatever else holds, so the CLI and the
 * HTTP API say that first, not that tools are missing; and `show` offers `reject` for a request the
 * table holds otherwise than the journal only where `reject` takes it (the row pending, its copy of
 * the request edited), and the same command again where a decision the journal lacks is one an
 * `approve` or `reject` that stopped between its writes left (`unfinishedDecision`).
 *
 * @since 0.5.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Approval, type ApprovalRequest, type Decision } from "../../Approval.js"
import { Journal, type JournalCorrupted, type JournalError, JournalTampered } from "../../Journal.js"
import { outOfTime } from "../journal/decisions.js"
import * as Signing from "../journal/signing.js"

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

/**
 * A decision the approvals table holds and the journal lacks that the command which made it can
 * still finish: an `approve` or `reject` that stopped between its two writes (a crash, a journal
 * write that failed), asked again as it was (the same principal, expiry or reason), journals it,
 * as the engine judges it (`operatorCommands`): no journal key is configured (with one, only a
 * decision it signs is taken, and such a decision is not held against the journal at all), the
 * decision names a time a command writes, between the request and now, and an approval is of the
 * digest the journal holds and was not renewed. `request`: as the journal holds it.
 *
 * @since 0.5.0
 * @category reading
 */
export const unfinishedDecision = (
  request: ApprovalRequest
): Effect.Effect<Decided | undefined, JournalError, Approval | Journal> =>
  Effect.gen(function* () {
    const keys = yield* Effect.flatMap(Journal, Signing.keysOf).pipe(Effect.orElseSucceed(() => "unreadable" as const))
    if (keys !== undefined) return undefined
    const held = yield* storedRecord(request.sagaId, request.stepId).pipe(
      Effect.catchTag("ApprovalTampered", () => Effect.succeed(Option.none()))
    )
    if (Option.isNone(held) || held.value.decision._tag === "Pending") return undefined
    const decision = held.value.decision
    const approvedOther =
      decision._tag === "Approved" && (decision.inputDigest !== request.inputDigest || decision.renewedBy !== undefined)
    if (approvedOther) return undefined
    return outOfTime(request, decision, yield* Clock.currentTimeMillis) === undefined ? decision : undefined
  })

/**
 * A decision the approvals table holds: approved or rejected.
 *
 * @since 0.5.0
 * @category models
 */
export type Decided = Exclude<Decision, { readonly _tag: "Pending" }>

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
