/**
 * The explicit undos (`compensateEffect`) asked of a saga's steps, as the saga's own views show them
 * (`effect-saga show`, `GET /api/sagas/:sagaId`, the console's saga page). An explicit undo is a run
 * of its own (journal id `<effectId>/compensate-effect`): the saga's journal is only read, its step
 * stays `executed` with no undo. So these views read, for each executed step, the run's status as
 * `Saga.status` reads it (its answer is `explicitUndo.answerOf`'s), one read a step; a run whose
 * journal does not verify is marked, its status and answer not shown.
 *
 * @since 0.5.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { JournalError, SagaStatus } from "../../Journal.js"
import * as Journal from "../../Journal.js"
import * as Saga from "../../Saga.js"
import * as Timeline from "../../Timeline.js"
import * as ApprovalExpiry from "./approvalExpiry.js"
import { RUN_SUFFIX } from "./identifier.js"
import { undoDetailSaid } from "./undoSaid.js"

/**
 * The run of an explicit undo of one step. `status` and `undo` are the run's (its answer, the undo
 * `Saga.status` gives the run's step), both `undefined` when its journal does not verify (`tampered`).
 *
 * @since 0.5.0
 * @category models
 */
export interface ExplicitUndoRun {
  readonly stepId: string
  readonly runId: string
  readonly status: SagaStatus | undefined
  readonly undo: Saga.StepStatus["undo"]
  readonly undoDetail: string | undefined
  /** Whether the undo's approval is journaled and it has not run: it runs when it is asked for again. */
  readonly approved: boolean
  /** The expiry of that approval, once it has lapsed: asked for again, the run journals `EXPIRED`. */
  readonly approvalLapsedAt: string | undefined
  readonly tampered: Saga.Tamper | undefined
}

/** The run of `step`'s explicit undo, if one was asked for. */
const runOf = (step: Saga.StepStatus) => {
  const runId = `${step.effectId}${RUN_SUFFIX}`
  const of = (run: Partial<ExplicitUndoRun>): ExplicitUndoRun => ({
    stepId: step.stepId,
    runId,
    status: run.status,
    undo: run.undo,
    undoDetail: run.undoDetail,
    approved: run.approved === true,
    approvalLapsedAt: run.approvalLapsedAt,
    tampered: run.tampered
  })
  return Saga.status(runId).pipe(
    Effect.flatMap((run) => {
      if (run.tampered !== undefined) return Effect.succeed([of({ tampered: run.tampered })])
      const undone = run.steps.find((candidate) => candidate.stepId === step.stepId)
      const said = { status: run.status, undo: undone?.undo, undoDetail: undone?.undoDetail }
      if (undone?.state !== "approved" || undone.undo !== undefined) return Effect.succeed([of(said)])
      return Effect.map(lapsedAt(runId, step.stepId), (lapsed) => [
        of({ ...said, approved: lapsed === undefined, approvalLapsedAt: lapsed })
      ])
    }),
    Effect.catchTags({
      SagaNotFound: () => Effect.succeed([]),
      // A journal id no read takes (over its byte limit) is one no run was journaled under.
      InvalidIdentifier: () => Effect.succeed([]),
      JournalCorrupted: (error) =>
        Effect.succeed([of({ tampered: { seq: error.seq, problem: "undecodable", reason: error.reason } })])
    })
  )
}

/** When the journaled approval of a run's undo lapsed, if it has (by this host's clock, as a worker judges it). */
const lapsedAt = (runId: string, stepId: string) =>
  Effect.flatMap(Journal.Journal, (journal) =>
    Effect.zipWith(journal.read(runId), Clock.currentTimeMillis, (entries, now) => {
      const standing = ApprovalExpiry.standing(Timeline.approvedUntil(entries, stepId), now)
      return standing._tag === "Lapsed" ? standing.until : undefined
    })
  )

/**
 * The explicit undos asked of `saga`'s executed steps, in the order of its steps: none for a saga
 * whose journal does not verify (its steps are not shown), or for the run of an explicit undo.
 *
 * @since 0.5.0
 * @category reading
 */
export const explicitUndoRuns = (
  saga: Saga.SagaStatus
): Effect.Effect<ReadonlyArray<ExplicitUndoRun>, JournalError, Saga.Saga | Journal.Journal> =>
  saga.tampered !== undefined || saga.sagaId.endsWith(RUN_SUFFIX)
    ? Effect.succeed([])
    : Effect.map(
        Effect.forEach(
          saga.steps.filter((step) => step.state === "executed"),
          runOf
        ),
        (runs) => runs.flat()
      )

/**
 * A run as the JSON views print it beside its step (`GET /api/sagas/:sagaId`'s `explicitUndo`,
 * `effect-saga show --json`): what it does not know is `null`, and `undoDetail` is absent when there
 * is none.
 *
 * @since 0.5.0
 * @category models
 */
export interface ExplicitUndoJson {
  readonly runId: string
  readonly status: SagaStatus | null
  readonly undo: NonNullable<Saga.StepStatus["undo"]> | null
  readonly undoDetail?: string
  readonly approved?: true
  readonly approvalLapsedAt?: string
  readonly tampered: Saga.Tamper | null
}

/**
 * `run` as the JSON views print it (`ExplicitUndoJson`).
 *
 * @since 0.5.0
 * @category reading
 */
export const asJson = (run: ExplicitUndoRun): ExplicitUndoJson => ({
  runId: run.runId,
  status: run.status ?? null,
  undo: run.undo ?? null,
  ...(run.undoDetail === undefined ? {} : { undoDetail: run.undoDetail }),
  ...(run.approved ? { approved: true as const } : {}),
  ...(run.approvalLapsedAt === undefined ? {} : { approvalLapsedAt: run.approvalLapsedAt }),
  tampered: run.tampered ?? null
})

/**
 * `saga`'s status with, on each step an explicit undo was asked of, its run as `explicitUndo`
 * (`asJson`), as `effect-saga show --json` prints it.
 *
 * @since 0.5.0
 * @category reading
 */
export const withRuns = (saga: Saga.SagaStatus, runs: ReadonlyArray<ExplicitUndoRun>) => {
  const byStep = new Map(runs.map((run) => [run.stepId, run]))
  return {
    ...saga,
    steps: saga.steps.map((step) => {
      const run = byStep.get(step.stepId)
      return run === undefined ? step : { ...step, explicitUndo: asJson(run) }
    })
  }
}

/**
 * Why the saga's views cannot vouch for its explicit undos: each run whose journal does not verify
 * (`effect-saga show` exits 1 for it, as for a saga that does not verify).
 *
 * @since 0.5.0
 * @category reading
 */
export const unverified = (runs: ReadonlyArray<ExplicitUndoRun>): ReadonlyArray<string> =>
  runs.flatMap((run) =>
    run.tampered === undefined
      ? []
      : [`the run ${run.runId} of the explicit undo of ${run.stepId} does not verify (${run.tampered.problem})`]
  )

/** What the saga's views read of an explicit undo's run: `ExplicitUndoRun`, or the API's copy of it. */
interface Said {
  readonly status: SagaStatus | null | undefined
  readonly undo: Saga.StepStatus["undo"] | null
  readonly undoDetail?: string | undefined
  readonly approved?: boolean | undefined
  readonly approvalLapsedAt?: string | undefined
  readonly tampered: { readonly seq: number | null; readonly problem: string } | null | undefined
}

/**
 * What came of an explicit undo, as the saga's views say it beside its step: `explicit undo
 * completed`, `explicit undo failed (rejected by alice: …)`, `explicit undo awaiting approval`,
 * `explicit undo approved: it runs when it is asked for again (compensateEffect)`; of a
 * run whose journal does not verify, that it does not (nothing of it is a fact). `own` is the
 * step's own undo in the saga (`Saga.StepStatus`'s `undo`): where the saga's compensation reached
 * the step after a run that left it live (its answer `failed` or `unavailable`: the compensation
 * ran the undo itself), what it came to follows, since the run's answer alone would read as if the
 * effect were still live (`…; the saga's own compensation: undo completed`; not "since then": an
 * operator may have resolved the run after the compensation reached the step).
 *
 * @since 0.5.0
 * @category reading
 */
export const describe = (run: Said, own?: Saga.StepStatus["undo"] | null): string => {
  if (run.tampered != null) {
    return `explicit undo: its run's journal does not verify${run.tampered.seq === null ? "" : ` at seq ${run.tampered.seq}`} (${run.tampered.problem}): nothing of it is a fact`
  }
  if (run.approved === true && run.undo == null) {
    return "explicit undo approved: it runs when it is asked for again (compensateEffect)"
  }
  if (run.approvalLapsedAt !== undefined && run.undo == null) {
    return `explicit undo approved, and the approval lapsed at ${run.approvalLapsedAt}: asked for again, its run journals EXPIRED and answers failed`
  }
  const answer = run.undo ?? run.status?.replaceAll("_", " ") ?? "asked"
  const said = `explicit undo ${answer}${run.undoDetail === undefined ? "" : ` (${undoDetailSaid(answer, run.undoDetail)})`}`
  const leftLive = run.undo === "failed" || run.undo === "unavailable"
  return leftLive && own != null ? `${said}; the saga's own compensation: undo ${own}` : said
}
