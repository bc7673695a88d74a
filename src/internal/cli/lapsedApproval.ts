/**
 * What `approve` and `renew-approval`, asked again exactly as before, add when the approval they
 * find lapsed before its step ran: that a resume journals `EXPIRED` and compensates, and how to run
 * the step still (as `show`'s `next:` says). Their "already …: nothing written" alone reads as all
 * good.
 *
 * @since 0.5.0
 */
import * as Effect from "effect/Effect"
import { Journal } from "../../Journal.js"
import * as Saga from "../../Saga.js"
import * as Timeline from "../../Timeline.js"
import * as ApprovalExpiry from "../util/approvalExpiry.js"
import { RUN_SUFFIX } from "../util/identifier.js"
import { shellWord } from "../util/shellWord.js"
import * as LeaseClock from "./leaseClock.js"

/**
 * `; that approval lapsed at T: …` for step `stepId` of `sagaId` when it is approved, has not run,
 * and its journaled expiry is past by the clock `show` judges it by; `""` otherwise.
 *
 * @since 0.5.0
 * @category approvals
 */
export const lapsedNote = (sagaId: string, stepId: string) =>
  Effect.gen(function* () {
    const status = yield* Saga.status(sagaId)
    if (status.steps.find((step) => step.stepId === stepId)?.state !== "approved") return ""
    const entries = yield* Effect.flatMap(Journal, (journal) => journal.read(sagaId))
    const standing = ApprovalExpiry.standing(Timeline.approvedUntil(entries, stepId), yield* LeaseClock.now)
    if (standing._tag !== "Lapsed") return ""
    return `; that approval ${ApprovalExpiry.lapsedText(standing)}: ${lapsedThen(sagaId, stepId)}`
  })

/** What a lapsed approval comes to, and how to run the step still. */
const lapsedThen = (sagaId: string, stepId: string): string =>
  sagaId.endsWith(RUN_SUFFIX)
    ? "asked for again, the run journals EXPIRED and answers failed"
    : `resumed as it is, the saga journals EXPIRED and compensates; to run the step still, renew it first: effect-saga renew-approval ${shellWord(sagaId)} ${shellWord(stepId)} --as WHO --expires-at TIME`
