/**
 * What `approve` and `renew-approval`, asked again exactly as before, add when the approval they
 * find lapsed before its step ran: that a resume journals `EXPIRED` and compensates, and how to run
 * the step still (as `show`'s `next:` says). Their "already …: nothing written" alone reads as all
 * good.
 *
 * @since 0.5.0
 */
import * as Effect from "effect/Effect"
import type { Entry } from "../../Journal.js"
import type { SagaStatus } from "../../Saga.js"
import * as Timeline from "../../Timeline.js"
import * as ApprovalExpiry from "../util/approvalExpiry.js"
import { RUN_SUFFIX } from "../util/identifier.js"
import * as LeaseClock from "./leaseClock.js"

/**
 * `; that approval lapsed at T: …` for step `stepId` of the saga read as `status` and `entries` when
 * it is approved, has not run, and its journaled expiry is past by the clock `show` judges it by;
 * `""` otherwise.
 *
 * @since 0.5.0
 * @category approvals
 */
export const lapsedNote = (status: SagaStatus, entries: ReadonlyArray<Entry>, stepId: string) =>
  Effect.gen(function* () {
    if (status.steps.find((step) => step.stepId === stepId)?.state !== "approved") return ""
    const standing = ApprovalExpiry.standing(Timeline.approvedUntil(entries, stepId), yield* LeaseClock.now)
    if (standing._tag !== "Lapsed") return ""
    return `; that approval ${ApprovalExpiry.lapsedText(standing)}: ${lapsedThen(status.sagaId, stepId)}`
  })

/** What a lapsed approval comes to, and how to run the step still. */
const lapsedThen = (sagaId: string, stepId: string): string =>
  sagaId.endsWith(RUN_SUFFIX)
    ? `asked for again, ${ApprovalExpiry.runAskedLapsed}`
    : `${ApprovalExpiry.sagaResumedLapsed}; to run the step still, renew it first: ${ApprovalExpiry.renewCommand(sagaId, stepId)}`
