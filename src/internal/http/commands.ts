/**
 * What the API's and the console's commands do: each names the step it acts on (404 if the saga has
 * none by that id), carries the position the caller saw (409 if the saga moved on), runs as the
 * authenticated principal (the `Authority` decides, the journal records who), and answers with
 * whether it wrote anything itself and where the saga stands after it.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Authority from "../../Authority.js"
import {
  ConcurrencyConflict,
  Journal,
  type JournalCorrupted,
  type JournalError,
  JournalTampered
} from "../../Journal.js"
import * as Saga from "../../Saga.js"
import * as Timeline from "../../Timeline.js"
import { tamperedRecord } from "../util/approvalRecord.js"
import * as identifier from "../util/identifier.js"
import { cutoff } from "../util/isoTime.js"
import { quotingAsGiven } from "../util/pastExpiry.js"
import { named } from "../util/printable.js"
import { revisionsBySaga, revisionsOf } from "../util/revisions.js"
import * as ToResolve from "../util/toResolve.js"
import { owingUndo, rejectMayUndo } from "../util/undoNeeded.js"
import * as UndoRunAdvice from "../util/undoRunAdvice.js"
import { undoSaid } from "../util/undoSaid.js"
import { settlesUndo, speaksOfCall } from "../util/undoToResolve.js"
import { Conflict, NotFound, Refused, Unavailable } from "./errors.js"
import type { Answer, CompensationAnswer, EffectUndo, Seen } from "./models.js"
import { leftOfRun, statusOf } from "./reading.js"
import { logAnswer } from "./serverLog.js"

/**
 * How the server runs commands: `tools`, when given, names the tools whose undos this process
 * holds; a command that would undo a step of another tool is refused (422) instead of reporting it
 * `unavailable` and leaving its effect live (the CLI's `--register` rule). A step journaled as
 * changing nothing (a model turn, a read) needs no tool: compensation passes over it.
 *
 * @since 0.2.0
 * @category models
 */
export interface CommandOptions {
  readonly tools?: ReadonlySet<string> | undefined
}

/**
 * The saga as it stands, refused (422, as the engine refuses it) when its journal does not verify:
 * its steps stop at the break, so a step past it must not be answered as one it does not have.
 */
const verifiedStatusOf = (sagaId: string) =>
  Effect.flatMap(statusOf(sagaId), (status) =>
    status.tampered === undefined
      ? Effect.succeed(status)
      : Effect.fail(new Refused({ message: new JournalTampered({ sagaId, ...status.tampered }).message }))
  )

/**
 * The saga as it stands, and the step `stepId` names: a step id that cannot be one is refused
 * before the saga is read (400, as the engine refuses it), a saga whose journal does not verify is
 * 422, a step the saga does not have is 404.
 */
const stepOf = (sagaId: string, stepId: string) =>
  Effect.gen(function* () {
    yield* identifier.check("step id", stepId, identifier.MAX_JOURNAL_ID_BYTES)
    const status = yield* verifiedStatusOf(sagaId)
    const step = status.steps.find((known) => known.stepId === stepId)
    if (step === undefined) {
      return yield* new NotFound({ message: `saga ${named(sagaId)} has no step ${named(stepId)}` })
    }
    return { status, step }
  })

/**
 * Refuses a command that would undo a step of `status` (`only` that one, if given) whose tool this
 * process does not hold. A step journaled as changing nothing (a model turn, a read) or as
 * irreversible, or one an explicit undo's run answers for, needs none (`owingUndo`).
 */
const requireUndos = (options: CommandOptions, command: string, status: Saga.SagaStatus, only?: string) => {
  const tools = options.tools
  if (tools === undefined) return Effect.void
  return Effect.flatMap(owingUndo(status), (owing) => {
    const missing = owing.filter((step) => (only === undefined || step.stepId === only) && !tools.has(step.toolName))
    if (missing.length === 0) return Effect.void
    const names = Array.from(new Set(missing.map((step) => step.toolName))).join(", ")
    return Effect.fail(
      new Refused({
        message: `${command} would undo ${missing.length} step(s) whose tool this server does not hold (${names}): start it with the saga's tools (nothing was written)`
      })
    )
  })
}

/**
 * What a compensation that failed could not undo because a step's outcome is unknown: resolve it
 * first (a compensation again then runs its undo, or ends the saga compensated if it did not happen).
 */
const unresolvedOf = (report: CompensationAnswer["report"]): string => {
  const unknown = report.notUndone.filter((step) => step.phase === "UNKNOWN")
  if (unknown.length === 0) return ""
  const path = (stepId: string) =>
    `POST /api/sagas/${encodeURIComponent(report.sagaId)}/steps/${encodeURIComponent(stepId)}/resolve`
  const [its, it] = unknown.length === 1 ? ["its outcome is", "it"] : ["their outcomes are", "them"]
  return `: ${unknown.map((step) => step.stepId).join(", ")} ${unknown.length === 1 ? "was" : "were"} not undone, since ${its} unknown: resolve ${it} first (${unknown.map((step) => path(step.stepId)).join(", ")}, or effect-saga resolve), then compensate the saga again`
}

/** Where a compensation left the saga, as the end of a sentence: what to resolve first, if a step's outcome is unknown. */
const compensationOutcome = (report: CompensationAnswer["report"]): string =>
  report.status === "compensated" ? "the saga is compensated" : `the saga's compensation failed${unresolvedOf(report)}`

/**
 * Carries out `command` and answers with whether it wrote anything itself (not whether the saga
 * moved meanwhile: the same command sent twice at once writes once, and the other finds that write)
 * and where the saga stands after it; `message` says what it did, from its value, the revisions
 * it wrote itself and the saga as it stands after it.
 */
const carryOut = <A, E, R, E2 = never, R2 = never>(
  sagaId: string,
  stepId: string | null,
  command: Effect.Effect<A, E, R>,
  message: (
    value: A,
    written: ReadonlyArray<number>,
    after: Effect.Effect.Success<ReturnType<typeof statusOf>>
  ) => string | Effect.Effect<string, E2, R2>
) =>
  Effect.gen(function* () {
    const { revisions, value } = yield* withOwnWrites(command)
    const after = yield* statusOf(sagaId)
    const said = message(value, revisions, after)
    const text = typeof said === "string" ? said : yield* said
    const changed = revisions.length > 0
    const answer: Answer = {
      sagaId,
      stepId,
      changed,
      message: changed ? text : `${text}: already so, nothing written`,
      revision: after.revision,
      digest: after.digest
    }
    return { value, answer }
  })

/**
 * Runs `command` and answers its value with the revisions of the entries it journaled itself. One
 * whose store failed after it journaled some (between two of its writes) is answered 503 saying
 * what it wrote, as the CLI's line does: not as if nothing were written.
 */
const withOwnWrites = <A, E, R>(command: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    let written: ReadonlyArray<Saga.WrittenEntry> = []
    return Saga.onWritten(command, (entries) =>
      Effect.sync(() => {
        written = entries
      })
    ).pipe(
      Effect.map((value) => ({ value, revisions: written.map((entry) => entry.revision) })),
      Effect.catchAll(
        (error): Effect.Effect<never, E | Unavailable> =>
          written.length > 0 && isJournalError(error) ? wroteBefore(error, written) : Effect.fail(error)
      )
    )
  })

const isJournalError = (error: unknown): error is JournalError => Predicate.isTagged(error, "JournalError")

/** A 503 for a store that failed after the request journaled `written`, logged as `asApi` logs one. */
const wroteBefore = (error: JournalError, written: ReadonlyArray<Saga.WrittenEntry>) => {
  const journaled = Array.from(
    revisionsBySaga(written),
    ([sagaId, revisions]) =>
      `${revisionsOf(revisions.map((seq) => ({ seq })))} of saga ${sagaId} (GET /api/sagas/${encodeURIComponent(sagaId)} shows where it stands)`
  ).join("; ")
  return Effect.zipRight(
    logAnswer(503, `${error.message}; before that, this request journaled ${journaled}`),
    Effect.fail(
      new Unavailable({
        message: `the store could not be used (${error.operation}); before that, this request journaled ${journaled}`
      })
    )
  )
}

const by = Effect.map(Authority.currentPrincipal, (principal) => principal.id)

/**
 * An expiry as sent (the body kept it so, checked), as the journal writes times: what the CLI's
 * `--expires-at` journals too.
 */
const journaledTime = (sent: string | undefined): string | undefined =>
  sent === undefined ? undefined : Either.getOrElse(cutoff(sent), () => sent)

/**
 * Approves a step for exactly the input it waits with.
 *
 * @since 0.2.0
 * @category commands
 */
export const approve = (sagaId: string, stepId: string, body: Seen & { readonly expiresAt?: string | undefined }) =>
  Effect.gen(function* () {
    yield* stepOf(sagaId, stepId)
    const who = yield* by
    const expiresAt = journaledTime(body.expiresAt)
    const approving = quotingAsGiven(
      body.expiresAt,
      expiresAt
    )(Saga.approve(sagaId, stepId, { by: who, expiresAt, revision: body.revision, digest: body.digest }))
    const { answer } = yield* carryOut(
      sagaId,
      stepId,
      approving,
      (_, __, after) => `approved by ${who}; ${afterApproval(after, stepId)}`
    )
    return answer
  })

/**
 * What became of a step once approved, as the end of a sentence (a retry may come after it ran). An
 * explicit undo's run is never resumed: its undo runs when it is asked for again.
 */
const afterApproval = (status: Saga.SagaStatus, stepId: string): string => {
  const step = status.steps.find((candidate) => candidate.stepId === stepId)
  if (step?.state === "approved" && isUndoRun(status.sagaId)) {
    return `the undo runs when it is asked for again (nothing resumes a run): ${askAgainAnyWay(step)}`
  }
  if (step?.state === "approved") return "the step runs when the saga is resumed"
  return step?.state === "executed" ? "the step has run" : `the step's state is now ${step?.state}`
}

const isUndoRun = (sagaId: string): boolean => sagaId.endsWith(identifier.RUN_SUFFIX)

/**
 * Each way to ask for an explicit undo again: the CLI, the API (the saga's step, at the saga's
 * position) and the library.
 */
const askAgainAnyWay = (step: Saga.StepStatus): string => {
  const sagaId = UndoRunAdvice.sagaIdOf(step)
  const path = `/api/sagas/${encodeURIComponent(sagaId)}/steps/${encodeURIComponent(step.stepId)}/compensate-effect`
  return `${UndoRunAdvice.askAgain(step.effectId)}, POST ${path} (with the saga's revision and digest), or Saga.compensateEffect("${step.effectId}")`
}

/**
 * Gives an approved step that has not run a new expiry.
 *
 * @since 0.2.0
 * @category commands
 */
export const renew = (
  sagaId: string,
  stepId: string,
  body: Seen & { readonly expiresAt?: string | undefined; readonly inputDigest?: string | undefined }
) =>
  Effect.gen(function* () {
    yield* stepOf(sagaId, stepId)
    const who = yield* by
    const expiresAt = journaledTime(body.expiresAt)
    const renewing = quotingAsGiven(
      body.expiresAt,
      expiresAt
    )(
      Saga.renewApproval(sagaId, stepId, {
        by: who,
        expiresAt,
        inputDigest: body.inputDigest,
        revision: body.revision,
        digest: body.digest
      })
    )
    const { answer } = yield* carryOut(sagaId, stepId, renewing, () => `approval renewed by ${who}`)
    return answer
  })

/**
 * What a reject says it did, from the entries it wrote itself: the rejection; or, sent again after
 * one that stopped mid-way (its process ended during an undo), the rest of the compensation that
 * rejection started (the CLI's `reject` says the same).
 */
const rejectionSaid = (sagaId: string, stepId: string, who: string, written: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    if (written.length === 0) return `rejected by ${who}`
    const entries = yield* Effect.flatMap(Journal, (journal) => journal.read(sagaId))
    const own = entries.filter((entry) => written.includes(entry.seq))
    return own.some((entry) => entry.phase === "REJECTED" && entry.stepId === stepId)
      ? `rejected by ${who}`
      : `already rejected by ${who}: this call finished the compensation that rejection started (journaled ${revisionsOf(own)})`
  })

/**
 * What a rejected explicit undo's run answered, and what is left to do with the effect it leaves
 * live, as `effect-saga show` says it.
 */
const runLeft = (run: Saga.SagaStatus) =>
  Effect.map(leftOfRun(run), (left) => {
    const step = run.steps[0]
    const answered = step?.undo === undefined ? "" : `: the run answered ${undoSaid(step.undo, step.undoDetail)}`
    return [`the undo never runs${answered}`, ...left.map(({ said }) => said)].join("; ")
  })

/**
 * Rejects a step; the saga compensates (an explicit undo's run answers `failed`: the effect stays live).
 *
 * @since 0.2.0
 * @category commands
 */
export const reject = (
  options: CommandOptions,
  sagaId: string,
  stepId: string,
  body: Seen & { readonly reason: string }
) =>
  Effect.gen(function* () {
    const { status, step } = yield* stepOf(sagaId, stepId)
    // An edited approvals row is refused whatever tools this server holds: said first.
    const tampered = yield* tamperedRecord(sagaId, stepId)
    if (tampered !== undefined) return yield* new Refused({ message: tampered.message })
    if (rejectMayUndo(step)) yield* requireUndos(options, "rejecting", status)
    const who = yield* by
    const rejecting = Saga.reject(sagaId, stepId, {
      by: who,
      reason: body.reason,
      revision: body.revision,
      digest: body.digest
    })
    const { answer, value } = yield* carryOut(sagaId, stepId, rejecting, (report, written, after) =>
      Effect.zipWith(
        rejectionSaid(sagaId, stepId, who, written),
        isUndoRun(sagaId) ? runLeft(after) : Effect.succeed(compensationOutcome(report)),
        (said, outcome) => `${said}; ${outcome}`
      )
    )
    const done: CompensationAnswer = { ...answer, report: value }
    return done
  })

/**
 * Settles a step whose outcome is unknown; in a saga `compensation_failed`, the undo its
 * compensation left not undone of a step (`settlesUndo`: `applied` with no result says the effect is
 * undone now).
 *
 * @since 0.2.0
 * @category commands
 */
export const resolve = (
  sagaId: string,
  stepId: string,
  body: Seen &
    (
      | {
          readonly outcome: "applied"
          readonly result?: unknown
          readonly undone?: boolean | undefined
          readonly receipt?: string | undefined
        }
      | { readonly outcome: "not-applied" }
    )
) =>
  Effect.gen(function* () {
    const { status, step } = yield* stepOf(sagaId, stepId)
    const who = yield* by
    const seen = { revision: body.revision, digest: body.digest }
    const resolving = Saga.resolve(
      sagaId,
      stepId,
      body.outcome === "applied"
        ? {
            outcome: "applied",
            by: who,
            result: body.result,
            undone: body.undone,
            receipt: body.receipt === undefined ? undefined : Redacted.make(body.receipt),
            ...seen
          }
        : { outcome: "not-applied", by: who, ...seen }
    )
    const undoneByHand = body.outcome === "applied" && body.undone === true
    const noReceipt =
      body.outcome === "applied" && !undoneByHand && body.receipt === undefined && step.receiptRequired === true
        ? `; given no receipt, though ${ToResolve.receiptNeeded("the API's receipt, or effect-saga resolve --receipt")}`
        : ""
    const undo = !isUndoRun(sagaId) && !speaksOfCall(body) && settlesUndo(status.status, step)
    const how = undoneByHand ? "applied and undone by hand" : body.outcome
    const { answer } = yield* carryOut(sagaId, stepId, resolving, (_, __, after) =>
      undo
        ? `resolved its undo as ${body.outcome === "applied" ? "undone" : "not undone"} by ${who}; ${afterUndoResolve(after, body.outcome)}`
        : Effect.map(afterResolve(after, body.outcome), (next) => `resolved as ${how} by ${who}${noReceipt}; ${next}`)
    )
    return answer
  })

/**
 * What a saga waits for once a step is resolved, as the end of a sentence: a resume goes on; a saga
 * whose compensation already ran (`compensation_failed`) is compensated again instead, which runs
 * any undo still owed and journals a new report (`effect-saga show` says what is left). An explicit
 * undo's run is never resumed: the resolution of its undo is its answer, as the CLI says it.
 */
const afterResolve = (
  status: Saga.SagaStatus,
  outcome: "applied" | "not-applied"
): Effect.Effect<string, JournalError | JournalCorrupted, Journal> => {
  if (isUndoRun(status.sagaId))
    return Effect.succeed(
      UndoRunAdvice.closed(status.steps[0]?.undo ?? (outcome === "applied" ? "completed" : "failed"))
    )
  return status.status === "compensation_failed"
    ? Effect.succeed(
        `its compensation already ran: compensate the saga again (${compensateCommand(status.sagaId)}), which runs any undo still owed and journals a new report`
      )
    : Effect.map(
        Effect.flatMap(Journal, (journal) => journal.read(status.sagaId)),
        (entries) =>
          ToResolve.resumeAfterResolve(
            Timeline.failureToUndo(entries),
            Timeline.notReplayable(entries),
            compensateCommand(status.sagaId),
            ToResolve.toResolve(status.steps).map((step) => step.stepId)
          )
      )
}

/**
 * What a saga waits for once the undo of a step is resolved, as the end of a sentence: undone, a
 * compensation again counts it so without running it again; not undone, it is undone by hand first.
 */
const afterUndoResolve = (status: Saga.SagaStatus, outcome: "applied" | "not-applied"): string =>
  outcome === "applied"
    ? `its compensation already ran: compensate the saga again (${compensateCommand(status.sagaId)}), which counts this step undone without running its undo again and journals a new report`
    : "its effect is still in place: undo it by hand, then resolve the step again as applied"

/** How to compensate a saga again: the CLI's command, or the API's. */
const compensateCommand = (sagaId: string): string =>
  `effect-saga compensate, or POST /api/sagas/${encodeURIComponent(sagaId)}/compensate`

/**
 * Undoes every executed step of a saga not undone yet.
 *
 * @since 0.2.0
 * @category commands
 */
export const compensate = (options: CommandOptions, sagaId: string, seen: Seen) =>
  Effect.gen(function* () {
    const status = yield* verifiedStatusOf(sagaId)
    yield* requireUndos(options, "compensating", status)
    const who = yield* by
    const { answer, value } = yield* carryOut(
      sagaId,
      null,
      Saga.compensate(sagaId, seen),
      (report) => `compensation asked by ${who}: ${compensationOutcome(report)}`
    )
    const done: CompensationAnswer = { ...answer, report: value }
    return done
  })

/**
 * Undoes one applied step as a run of its own. `Saga.compensateEffect` takes no position, so the
 * one the caller saw is checked against the saga just before.
 *
 * @since 0.2.0
 * @category commands
 */
export const compensateEffect = (options: CommandOptions, sagaId: string, stepId: string, seen: Seen) =>
  Effect.gen(function* () {
    const { status, step } = yield* stepOf(sagaId, stepId)
    if (status.revision !== seen.revision || status.digest !== seen.digest) {
      // The engine's own conflict, as its commands answer it: the digest is named when only it differs.
      const conflict = new ConcurrencyConflict({
        sagaId,
        expectedRevision: seen.revision,
        actualRevision: status.revision
      })
      return yield* new Conflict({ message: `${conflict.message}: read the saga again` })
    }
    yield* requireUndos(options, "undoing this effect", status, step.stepId)
    const result = yield* Saga.compensateEffect(step.effectId)
    const undo: EffectUndo =
      result._tag === "Settled"
        ? { effectId: result.effectId, runId: result.runId, result: result.outcome, detail: result.detail ?? null }
        : {
            effectId: result.effectId,
            runId: result.runId,
            result: "awaiting_approval",
            detail: result.request.requestId
          }
    return undo
  })
