import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { Approval } from "../Approval.js"
import type * as Compensable from "../Compensable.js"
import type * as Report from "../CompensationReport.js"
import type { ConcurrencyConflict, Draft, JournalCorrupted, JournalError } from "../Journal.js"
import { isFinished, Journal, SagaNotFound, statusAfter } from "../Journal.js"
import type { CompensationCause, NonDeterminism } from "../SagaError.js"
import { StepFailed } from "../SagaError.js"
import type { SagaResult, UnknownStep } from "../SagaResult.js"
import { parsePayload } from "./codec.js"
import * as commands from "./commands.js"
import { compensate, outcomeOfPhase } from "./compensation.js"
import type { CurrentSaga } from "./context.js"
import { makeKeyedLock } from "./keyedLock.js"
import type { Registry } from "./registry.js"
import { SagaRun } from "./run.js"
import type { JournalView, StepView } from "./view.js"
import { isUnknown } from "./view.js"
import type { Writer } from "./writer.js"
import { load } from "./writer.js"

/** What a run does when it is interrupted. */
export interface RunOptions {
  /** `"suspend"` (default) leaves the saga resumable; `"compensate"` undoes it. */
  readonly onInterrupt?: "suspend" | "compensate" | undefined
}

const sagaEntry = (phase: Draft["phase"], payload?: object): Draft => ({
  stepId: null,
  toolName: null,
  phase,
  input: null,
  payload: payload === undefined ? null : JSON.stringify(payload)
})

const unknownOf = (view: JournalView, extra: UnknownStep | undefined): ReadonlyArray<UnknownStep> => {
  const steps = view.unknownSteps().map((step) => ({
    stepId: step.stepId,
    toolName: step.toolName,
    reason:
      step.stepId === extra?.stepId ? extra.reason : "INTENT was journaled but no outcome: it may or may not have run"
  }))
  return extra === undefined || steps.some((step) => step.stepId === extra.stepId) ? steps : [...steps, extra]
}

const taintOf = (view: JournalView): StepFailed | undefined => {
  const step = view.failedSteps()[0]
  if (step === undefined) return undefined
  const description = parsePayload(step.failed!.payload)?.description
  return new StepFailed({
    stepId: step.stepId,
    toolName: step.toolName,
    reason: typeof description === "string" ? description : "failed"
  })
}

const describe = (cause: Cause.Cause<unknown>): string => Cause.pretty(cause).split("\n")[0]!.slice(0, 500)

/** Builds the `Saga` service over a journal and an approval service. */
export const makeSaga = Effect.gen(function* () {
  const journal = yield* Journal
  const approval = yield* Approval
  const registry: Registry = new Map()
  const withLock = makeKeyedLock()

  const compensated = <E>(
    sagaId: string,
    cause: Cause.Cause<E | CompensationCause>,
    report: Report.CompensationReport
  ): SagaResult<never, E> =>
    report.status === "compensated"
      ? { _tag: "Compensated", sagaId, cause, report }
      : { _tag: "CompensationFailed", sagaId, cause, report }

  const run = <A, E, R>(sagaId: string, program: Effect.Effect<A, E, R>, options?: RunOptions) =>
    withLock(
      sagaId,
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const writer = yield* load(journal, sagaId)
          const view = writer.view
          // The start (or resume) marker travels with the run's first write: a pure replay writes nothing.
          if (!view.exists) writer.prepend([sagaEntry("SAGA_STARTED")])
          else if (view.status !== "running" && !isFinished(view.status)) writer.prepend([sagaEntry("SAGA_RESUMED")])
          const sagaRun = new SagaRun(writer, approval, registry, isFinished(view.status) || view.compensationStarted)
          const ending = yield* Effect.exit(restore(sagaRun.runProgram(program)))

          const lookup = (name: string) => sagaRun.tools.get(name) ?? registry.get(name)
          const compensateWith = (cause: Cause.Cause<E | CompensationCause>) =>
            Effect.map(compensate(writer, lookup, describe(cause)), (report) => compensated(sagaId, cause, report))

          const endWith = (phase: Draft["phase"], payload?: object) =>
            view.status === statusAfter(view.status, [{ phase }])
              ? Effect.void
              : writer.append([sagaEntry(phase, payload)])

          const needsAttention = (extra: UnknownStep | undefined) => {
            const unknown = unknownOf(view, extra)
            return Effect.as(endWith("SAGA_NEEDS_ATTENTION", { unknown }), {
              _tag: "NeedsAttention" as const,
              sagaId,
              unknown
            })
          }

          const suspendOrCompensate = (cause: Cause.Cause<unknown>) =>
            options?.onInterrupt === "compensate"
              ? compensateWith(cause as Cause.Cause<E>)
              : Effect.as(endWith("SAGA_SUSPENDED"), { _tag: "Suspended" as const, sagaId })

          const settle = (exit: Exit.Exit<A, E>): Effect.Effect<SagaResult<A, E>, any> => {
            if (sagaRun.haltedWith !== undefined) {
              const halt = sagaRun.haltedWith
              switch (halt._tag) {
                case "AwaitingApproval":
                  return Effect.as(
                    endWith("SAGA_AWAITING_APPROVAL", {
                      stepId: halt.request.stepId,
                      requestId: halt.request.requestId
                    }),
                    { _tag: "AwaitingApproval" as const, sagaId, request: halt.request }
                  )
                case "NeedsAttention":
                  return needsAttention(halt.step)
                case "Refused":
                  return compensateWith(Cause.fail(halt.error))
                case "Fatal":
                  return Effect.fail(halt.error)
                case "Closed":
                  return compensateWith(
                    Cause.die(new Error(`the saga was compensated before: ${view.compensationCause}`))
                  )
              }
            }
            if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) return suspendOrCompensate(exit.cause)
            if (view.unknownSteps().length > 0) return needsAttention(undefined)
            if (Exit.isFailure(exit)) return compensateWith(exit.cause as Cause.Cause<E>)
            const taint = taintOf(view)
            if (taint !== undefined) return compensateWith(Cause.fail(taint))
            return Effect.as(endWith("SAGA_COMPLETED"), { _tag: "Completed" as const, sagaId, value: exit.value })
          }

          if (Exit.isFailure(ending)) return yield* suspendOrCompensate(ending.cause)
          const result = yield* settle(ending.value)
          yield* Effect.annotateCurrentSpan("outcome", result._tag)
          return result
        })
      )
    ).pipe(
      Effect.withSpan("effect-saga.run", { attributes: { "saga.id": sagaId }, captureStackTrace: false })
    ) as Effect.Effect<SagaResult<A, E>, RunError, Exclude<R, CurrentSaga>>

  const existing = (sagaId: string) =>
    Effect.flatMap(journal.get(sagaId), (record) =>
      Option.isSome(record) ? Effect.succeed(record.value) : Effect.fail(new SagaNotFound({ sagaId }))
    )

  /** Runs an operator's command under the saga's lock, refused if the saga moved on since `seen`. */
  const command = <A, E>(
    sagaId: string,
    seen: commands.Seen | undefined,
    body: (writer: Writer) => Effect.Effect<A, E>
  ) =>
    withLock(
      sagaId,
      Effect.uninterruptible(
        Effect.gen(function* () {
          yield* existing(sagaId)
          const writer = yield* load(journal, sagaId)
          yield* commands.checkSeen(writer, seen)
          return yield* body(writer)
        })
      )
    )

  return {
    run,
    resume: <A, E, R>(sagaId: string, program: Effect.Effect<A, E, R>, options?: RunOptions) =>
      Effect.zipRight(existing(sagaId), run(sagaId, program, options)),
    compensate: (sagaId: string, seen?: commands.Seen) =>
      command(sagaId, seen, (writer) =>
        compensate(writer, (name) => registry.get(name), "an operator asked for compensation")
      ).pipe(
        Effect.withSpan("effect-saga.compensate", { attributes: { "saga.id": sagaId }, captureStackTrace: false })
      ),
    approve: (sagaId: string, stepId: string, options: ApproveOptions) =>
      command(sagaId, options, (writer) => commands.approve(writer, approval, stepId, options)),
    reject: (sagaId: string, stepId: string, options: RejectOptions) =>
      command(sagaId, options, (writer) =>
        Effect.zipRight(
          commands.reject(writer, approval, stepId, options),
          compensate(writer, (name) => registry.get(name), `step ${stepId} was rejected by ${options.by}`)
        )
      ),
    resolve: (sagaId: string, stepId: string, resolution: commands.Resolution & commands.Seen) =>
      command(sagaId, resolution, (writer) =>
        commands.resolve(writer, (name) => registry.get(name), stepId, resolution)
      ),
    status: (sagaId: string) =>
      Effect.gen(function* () {
        const record = yield* existing(sagaId)
        const writer = yield* load(journal, sagaId)
        return { ...record, steps: Array.from(writer.view.steps.values(), stepStatus) }
      }),
    list: journal.list,
    register: (tools: Iterable<Compensable.Any>) =>
      Effect.contextWith((context: Context.Context<never>) => {
        for (const tool of tools) registry.set(tool.name, { spec: tool.spec, context })
      })
  }
})

/** Who approves, until when (ISO-8601 UTC), and the position the operator saw. */
export interface ApproveOptions extends commands.Seen {
  readonly by: string
  readonly expiresAt?: string | undefined
}

/** Who rejects, why, and the position the operator saw. */
export interface RejectOptions extends commands.Seen {
  readonly by: string
  readonly reason: string
}

/** The errors a run itself can fail with (as opposed to the program's, which compensate). */
export type RunError = JournalError | ConcurrencyConflict | JournalCorrupted | NonDeterminism

/** Where one step stands, as the journal says. */
export interface StepStatus {
  readonly stepId: string
  readonly toolName: string
  readonly state: "executed" | "failed" | "unknown" | "awaiting_approval" | "approved" | "refused"
  readonly undo: Report.UndoOutcome | "started" | undefined
}

const stepStatus = (step: StepView): StepStatus => ({
  stepId: step.stepId,
  toolName: step.toolName,
  state: step.executed
    ? "executed"
    : step.failed
      ? "failed"
      : isUnknown(step)
        ? "unknown"
        : step.refused
          ? "refused"
          : step.approved
            ? "approved"
            : "awaiting_approval",
  undo: step.compensation ? outcomeOfPhase[step.compensation.phase] : step.compensating ? "started" : undefined
})
