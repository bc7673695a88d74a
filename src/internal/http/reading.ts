/**
 * What the API and the console read: sagas as a page (what needs a person first), one saga with its
 * steps and entries (receipts redacted), and the approval requests waiting, each with the input its
 * saga's journal holds. A saga whose journal does not verify is marked, never shown as fact.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Approval from "../../Approval.js"
import type { Entry, SagaStatus } from "../../Journal.js"
import { isFinished, Journal, SagaStatus as SagaStatusSchema } from "../../Journal.js"
import * as Saga from "../../Saga.js"
import * as Timeline from "../../Timeline.js"
import { asOf } from "../util/asOf.js"
import { byCodePoints } from "../util/codePoints.js"
import { asJson, type ExplicitUndoRun, explicitUndoRuns } from "../util/explicitUndoRuns.js"
import { RUN_SUFFIX } from "../util/identifier.js"
import { settledRequests } from "../util/settledRequests.js"
import * as Stuck from "../util/stuck.js"
import * as UndoRunAdvice from "../util/undoRunAdvice.js"
import { NotFound } from "./errors.js"
import type {
  InboxParams,
  ListParams,
  PendingApproval,
  SagaDetail,
  SagaPage,
  SagaSummary,
  Step,
  Tamper,
  Verification
} from "./models.js"
import { DEFAULT_LIMIT } from "./models.js"

/** The statuses in the order a person should look at them. */
const urgency: ReadonlyArray<SagaStatus> = ["compensation_failed", "needs_attention", "awaiting_approval"]

const humanStatuses: ReadonlySet<SagaStatus> = new Set(urgency)

/** The statuses a stuck saga may have (`Stuck.isLeftBehind`). */
const leftBehindStatuses: ReadonlyArray<SagaStatus> = ["running", "compensating", "suspended"]

/** The row as the API shows it; `stuck` as `Stuck.isStuck` judged it (a tampered saga is marked as such instead). */
const summaryOf = (saga: Saga.SagaSummary, stuck: ReadonlySet<string>): SagaSummary => {
  const isStuck = saga.tampered === undefined && stuck.has(saga.sagaId)
  return {
    sagaId: saga.sagaId,
    status: saga.status,
    revision: saga.revision,
    digest: saga.digest,
    createdAt: saga.createdAt,
    updatedAt: saga.updatedAt,
    lease: saga.lease,
    tampered: saga.tampered ?? null,
    stuck: isStuck,
    needsHuman: saga.tampered !== undefined || humanStatuses.has(saga.status) || isStuck
  }
}

/**
 * The stuck ones among sagas just read and verified, at `now`: only one left behind, and not
 * tampered, is read for its origin (as `effect-saga list` does).
 */
const stuckOf = (sagas: ReadonlyArray<Saga.SagaSummary>, now: number) =>
  Stuck.stuckAmong(
    sagas.filter((saga) => saga.tampered === undefined),
    now
  )

/**
 * "Now" as the store judges a lease: the journal's `leaseNow` (PostgreSQL's `now()`, the clock
 * leases are written by on several hosts), else this process's clock.
 */
const leaseNow = Effect.flatMap(Journal, (journal) => journal.leaseNow ?? Clock.currentTimeMillis)

/** The statuses every status filter given allows (`undefined`: any). */
const allowedStatuses = (params: ListParams): ReadonlyArray<SagaStatus> | undefined =>
  [
    params.status,
    params.awaitingApproval === true ? ["awaiting_approval" as const] : undefined,
    params.needsHuman === true ? urgency : undefined,
    params.finishedBefore === undefined ? undefined : SagaStatusSchema.literals.filter(isFinished)
  ].reduce<ReadonlyArray<SagaStatus> | undefined>(
    (allowed, only) =>
      only === undefined ? allowed : allowed === undefined ? only : allowed.filter((status) => only.includes(status)),
    undefined
  )

/**
 * The sagas `params` selects, what needs a person first (compensation failed, needs attention,
 * awaiting approval, by the status the saga's row holds), then the most recently updated, one page
 * of them, and within the page a tampered saga first. The filters combine: a saga is listed when it
 * passes every one given (`status=completed&awaitingApproval=true` lists none). The store filters,
 * orders and counts; only the page's sagas are read and verified (`tampered`), and those of them no
 * worker drives read for whether they are `stuck` (`Stuck.stuckAmong`, as `effect-saga list`).
 * `needsHuman=true` lists the stuck sagas too, after the others (`stuckAfter`).
 *
 * @since 0.2.0
 * @category reading
 */
export const listSagas = (params: ListParams) =>
  Effect.gen(function* () {
    const offset = params.offset ?? 0
    const limit = params.limit ?? DEFAULT_LIMIT
    const now = yield* leaseNow
    const listed = yield* Saga.listPage({
      status: allowedStatuses(params),
      updatedBefore: params.finishedBefore,
      search: params.search?.trim() ?? "",
      offset,
      limit
    })
    const stuck =
      params.needsHuman === true
        ? yield* stuckAfter(
            params,
            { offset: Math.max(0, offset - listed.total), limit: limit - listed.sagas.length },
            now
          )
        : { sagas: [], total: 0, ids: yield* stuckOf(listed.sagas, now) }
    // Within the page, a saga whose journal does not verify comes first (the sort is stable).
    const sagas = [...listed.sagas, ...stuck.sagas]
      .map((saga) => summaryOf(saga, stuck.ids))
      .sort((a, b) => Number(b.tampered !== null) - Number(a.tampered !== null))
    const page: SagaPage = { sagas, total: listed.total + stuck.total, offset, limit }
    return page
  })

/**
 * The stuck sagas `needsHuman=true` lists after those a person waits on by their row's status (as
 * every saga with another status comes after those): the most recently updated first, then by id
 * (code-point order), one page of them, each read and verified. The store has no column for what a
 * saga was started from, so the rows the other filters select with a status a stuck saga may have
 * are listed, and each one no worker drives is read for its origin.
 */
const stuckAfter = (params: ListParams, page: { readonly offset: number; readonly limit: number }, now: number) =>
  Effect.gen(function* () {
    const allowed = allowedStatuses({ ...params, needsHuman: undefined }) ?? leftBehindStatuses
    const status = leftBehindStatuses.filter((status) => allowed.includes(status))
    const search = params.search?.trim() ?? ""
    const rows =
      status.length === 0
        ? []
        : yield* Effect.flatMap(Journal, (journal) => journal.list({ status, updatedBefore: params.finishedBefore }))
    const ids = yield* Stuck.stuckAmong(
      rows.filter((row) => row.sagaId.includes(search)),
      now
    )
    const ordered = rows
      .filter((row) => ids.has(row.sagaId))
      .sort((a, b) => byCodePoints(b.updatedAt, a.updatedAt) || byCodePoints(a.sagaId, b.sagaId))
    const wanted = page.limit <= 0 ? [] : ordered.slice(page.offset, page.offset + page.limit)
    const sagas = yield* Effect.forEach(wanted, (row) =>
      statusOf(row.sagaId).pipe(
        Effect.map((status) => [status]),
        Effect.catchTag("SagaNotFound", () => Effect.succeed([]))
      )
    )
    const read = sagas.flat()
    // Stuck still as read now: a worker may have taken it since it was listed.
    const still = new Set(read.filter((saga) => Stuck.isLeftBehind(saga, now)).map((saga) => saga.sagaId))
    return { sagas: read, total: ordered.length, ids: new Set([...ids].filter((id) => still.has(id))) }
  })

const stepOf = (step: Saga.StepStatus, run?: ExplicitUndoRun): Step => ({
  stepId: step.stepId,
  toolName: step.toolName,
  effectId: step.effectId,
  state: step.state,
  undo: step.undo ?? null,
  ...(step.undoDetail === undefined ? {} : { undoDetail: step.undoDetail }),
  ...(step.changesNothing === true ? { changesNothing: true } : {}),
  ...(step.unknownReason === undefined ? {} : { unknownReason: step.unknownReason }),
  ...(step.receiptRequired === true ? { receiptRequired: true } : {}),
  ...(step.retriesByKey === true ? { retriesByKey: true } : {}),
  ...(step.irreversible === true ? { irreversible: true } : {}),
  ...(run === undefined ? {} : { explicitUndo: asJson(run) })
})

/** The steps, each with the run of the explicit undo asked of it, if one was (`explicitUndoRuns`). */
const stepsOf = (status: Saga.SagaStatus) =>
  Effect.map(explicitUndoRuns(status), (runs) => {
    const byStep = new Map(runs.map((run) => [run.stepId, run]))
    return status.steps.map((step) => stepOf(step, byStep.get(step.stepId)))
  })

/** The saga's entries as stored, receipts redacted; none when one of them does not decode. */
const entriesOf = (sagaId: string) =>
  Journal.pipe(
    Effect.flatMap((journal) => journal.read(sagaId)),
    Effect.map((entries) => entries.map(Timeline.withoutReceipt)),
    Effect.catchTag("JournalCorrupted", () => Effect.succeed<ReadonlyArray<Entry>>([]))
  )

/**
 * A saga's status as `Saga.status` reads it; a journal that does not even decode is a saga marked
 * tampered (`undecodable`) at the seq where it breaks, with its row as stored and no steps.
 *
 * @since 0.2.0
 * @category reading
 */
export const statusOf = (sagaId: string) =>
  Saga.status(sagaId).pipe(
    Effect.catchTag("JournalCorrupted", (error) =>
      Effect.gen(function* () {
        const row = yield* Effect.flatMap(Journal, (journal) => journal.get(sagaId))
        if (Option.isNone(row)) return yield* new NotFound({ message: `no saga ${sagaId} in the journal` })
        const status: Saga.SagaStatus = {
          ...row.value,
          tampered: { seq: error.seq, problem: "undecodable", reason: error.reason },
          steps: []
        }
        return status
      })
    )
  )

/**
 * What is left to do with the effect of an explicit undo's run that ended `compensation_failed`,
 * one sentence a step, as `effect-saga show`'s `next:` lines say it: by hand, or the saga's own
 * compensation at the saga's position as it stands now (none for a saga, or a run in another state).
 *
 * @since 0.5.0
 * @category reading
 */
export const leftOfRun = (run: Saga.SagaStatus) =>
  Effect.gen(function* () {
    const step = run.steps[0]
    if (!run.sagaId.endsWith(RUN_SUFFIX) || run.status !== "compensation_failed" || step === undefined) return []
    if (run.tampered !== undefined) return []
    const saga = Option.getOrUndefined(yield* Effect.option(statusOf(UndoRunAdvice.sagaIdOf(step))))
    const said = UndoRunAdvice.compensationFailed(run, saga)
    return run.steps.map(
      (undone, index): UndoRunAdvice.RunLeft => ({
        stepId: undone.stepId,
        said: said[index]!,
        keep: UndoRunAdvice.keepOffered(undone, saga)
      })
    )
  })

/**
 * One saga: its row and mark, its steps (each with the run of the explicit undo asked of it, if one
 * was: one read of each executed step's run), its entries (receipts redacted).
 *
 * @since 0.2.0
 * @category reading
 */
export const getSaga = (sagaId: string) =>
  Effect.flatMap(Effect.zip(statusOf(sagaId), leaseNow), ([status, now]) => detailOf(status, now))

/**
 * For an explicit undo's run awaiting approval, its steps (awaiting approval, or approved and not
 * run) that the saga's own compensation has reached since, by step id, each with what is left
 * (`UndoRunAdvice.reachedBySaga`): nothing to decide or run; asked again, the run answers what the
 * saga's did. Empty for a saga, or a run in another state.
 *
 * @since 0.5.0
 * @category reading
 */
export const reachedOfRun = (run: Saga.SagaStatus) =>
  Effect.gen(function* () {
    const step = run.steps[0]
    const reached = new Map<string, string>()
    if (!run.sagaId.endsWith(RUN_SUFFIX) || run.status !== "awaiting_approval" || step === undefined) return reached
    if (run.tampered !== undefined) return reached
    const saga = Option.getOrUndefined(yield* Effect.option(statusOf(UndoRunAdvice.sagaIdOf(step))))
    for (const undone of run.steps) {
      const own = UndoRunAdvice.sagaUndoSince(undone, saga)
      const open = undone.state === "awaiting_approval" || undone.state === "approved"
      if (open && own !== undefined) {
        reached.set(undone.stepId, UndoRunAdvice.reachedBySaga(undone, own, undone.state === "approved"))
      }
    }
    return reached
  })

/**
 * One saga as the console's page shows it: its detail; for an explicit undo's run that ended
 * `compensation_failed`, what is left to do with the effect (`leftOfRun`); for one awaiting
 * approval, the steps the saga's own compensation has reached since (`reachedOfRun`).
 *
 * @since 0.5.0
 * @category reading
 */
export const sagaPage = (sagaId: string) =>
  Effect.flatMap(Effect.zip(statusOf(sagaId), leaseNow), ([status, now]) =>
    Effect.all({
      detail: detailOf(status, now),
      left: leftOfRun(status),
      reached: reachedOfRun(status),
      waiting: waitingOn(status),
      now: Effect.succeed(now)
    })
  )

/**
 * The requests a saga awaiting approval waits on, as the inbox shows them (`Approval.inboxOf`), so
 * that its page offers the same decisions: an operator sent to the saga need not find it among the
 * inbox's pages. None for a saga with no step awaiting approval.
 */
const waitingOn = (status: Saga.SagaStatus) =>
  Effect.gen(function* () {
    if (!status.steps.some((step) => step.state === "awaiting_approval")) return []
    // The Saga layer of this server read the same keys when it was built: a bad key list stopped it there.
    const requests = yield* Approval.inboxOf(status.sagaId).pipe(Effect.catchTag("KeyError", Effect.die))
    if (requests.length === 0) return []
    const entries = yield* Effect.flatMap(Journal, (journal) => journal.read(status.sagaId)).pipe(
      Effect.orElseSucceed((): ReadonlyArray<Entry> => [])
    )
    const settled = yield* settledRequests(requests)
    return requests.map((request) => pendingOf(request, status, entries, settled.get(request.requestId)))
  })

const detailOf = (status: Saga.SagaStatus, now: number) =>
  Effect.gen(function* () {
    const { sagaId } = status
    const stuck = yield* stuckOf([status], now)
    // Read after the row: cut to its revision, so that the row, its steps and the entries are one state.
    const entries = yield* entriesOf(sagaId)
    const detail: SagaDetail = {
      saga: summaryOf(status, stuck),
      steps: yield* stepsOf(status),
      entries: status.tampered === undefined ? asOf(entries, status.revision) : entries
    }
    return detail
  })

const orphan: Tamper = {
  seq: null,
  problem: "approval",
  reason: "the approvals table holds a request for a saga the journal does not have"
}

const pendingOf = (
  request: Approval.PendingRequest,
  status: Saga.SagaStatus | undefined,
  entries: ReadonlyArray<Entry>,
  settled: string | undefined
): PendingApproval => {
  const journaled = Approval.journaledRequest(request, entries)
  return {
    requestId: request.requestId,
    sagaId: request.sagaId,
    stepId: request.stepId,
    toolName: request.toolName,
    input: journaled.input,
    inputDigest: journaled.inputDigest,
    requestedAt: request.requestedAt,
    revision: status?.revision ?? 0,
    digest: status?.digest ?? "",
    tampered: status === undefined ? orphan : (status.tampered ?? journaled.problem),
    settled: settled ?? null
  }
}

/**
 * A page of the approval requests waiting for a decision (`Approval.inboxPage`: `offset` and
 * `limit`, default 50, count sagas with something waiting), oldest first, each with the input and
 * digest its saga's journal holds and the saga's position; only the page's sagas are read, each
 * once (and, for a request of an explicit undo's run, the saga whose effect it undoes: `settled`).
 * `sagas` counts every saga with something waiting.
 *
 * @since 0.5.0
 * @category reading
 */
export const pendingApprovalsPage = (params: InboxParams) =>
  Effect.gen(function* () {
    const journal = yield* Journal
    const offset = params.offset ?? 0
    const limit = params.limit ?? DEFAULT_LIMIT
    // The Saga layer of this server read the same keys when it was built: a bad key list stopped it there.
    const page = yield* Approval.inboxPage({ offset, limit }).pipe(Effect.catchTag("KeyError", Effect.die))
    const { requests } = page
    const sagaIds = Array.from(new Set(requests.map((request) => request.sagaId)))
    const sagas = new Map(
      yield* Effect.forEach(sagaIds, (sagaId) =>
        Effect.all([
          statusOf(sagaId).pipe(Effect.catchTag("SagaNotFound", () => Effect.succeed(undefined))),
          journal.read(sagaId).pipe(Effect.orElseSucceed((): ReadonlyArray<Entry> => []))
        ]).pipe(Effect.map(([status, entries]) => [sagaId, { status, entries }] as const))
      )
    )
    const settled = yield* settledRequests(requests)
    const approvals = requests.map((request) => {
      const saga = sagas.get(request.sagaId)!
      return pendingOf(request, saga.status, saga.entries, settled.get(request.requestId))
    })
    return { approvals, sagas: page.sagas, offset, limit }
  })

/**
 * Whether a saga's journal verifies against its row (chain, MACs with a journal key, the approvals
 * table's copies of its requests), and where it breaks if not.
 *
 * @since 0.2.0
 * @category reading
 */
export const verifySaga = (sagaId: string) =>
  Effect.map(statusOf(sagaId), (status): Verification => {
    const tampered = status.tampered ?? null
    return { sagaId, intact: tampered === null, tampered, revision: status.revision, digest: status.digest }
  })

/**
 * Every approval request waiting for a decision, oldest first, in one answer (every waiting saga
 * read): what `GET /api/approvals` answered before it was paged. The API and the console read
 * `pendingApprovalsPage`.
 *
 * @since 0.2.0
 * @category reading
 */
export const pendingApprovals = Effect.map(
  pendingApprovalsPage({ limit: Number.POSITIVE_INFINITY }),
  (page) => page.approvals
)
