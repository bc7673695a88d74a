import * as Crypto from "node:crypto"
import * as Os from "node:os"
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { Approval } from "../Approval.js"
import type * as Compensable from "../Compensable.js"
import type * as Report from "../CompensationReport.js"
import type { ConcurrencyConflict, Draft, Holder, JournalCorrupted, JournalError, LeaseHeld } from "../Journal.js"
import { isFinished, Journal, SagaNotFound, statusAfter } from "../Journal.js"
import type * as SagaDefinition from "../SagaDefinition.js"
import type { CompensationCause } from "../SagaError.js"
import { InvalidSagaInput, NonDeterminism, StepFailed } from "../SagaError.js"
import type { SagaResult, UnknownStep } from "../SagaResult.js"
import { encodeJson, parsePayload } from "./codec.js"
import * as commands from "./commands.js"
import { compensate, outcomeOfPhase } from "./compensation.js"
import type { CurrentSaga } from "./context.js"
import { makeKeyedLock } from "./keyedLock.js"
import type { Registry } from "./registry.js"
import { makeRenewal } from "./renewal.js"
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

/** Who this worker is and how long its leases last. */
export interface WorkerOptions {
  /**
   * The worker's name in leases, unique among the workers alive at one time. A stable name (say,
   * the host's) lets a restarted worker take its own sagas back at once: starting up, it drops
   * every lease held under its name. Default: host, process id and a random suffix.
   */
  readonly owner?: string | undefined
  /** How long a lease lasts without renewal (default 30 seconds); it is renewed every third of that. */
  readonly leaseTtl?: Duration.DurationInput | undefined
  /**
   * How long an approval lasts, from when it was given (or renewed), when neither the approval
   * (`expiresAt`) nor its tool (`approvalTtl`) says. Default: no expiry.
   */
  readonly approvalTtl?: Duration.DurationInput | undefined
}

/** The worker a `Saga` service runs sagas as. */
export interface Worker {
  readonly owner: string
  readonly leaseTtl: Duration.Duration
  /**
   * Keeps the worker's leases renewed while `effect` runs. Runs do this for themselves; recovery
   * does it for the sagas it claimed and has not started yet.
   */
  readonly renewing: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** The definition and encoded input a saga was started from, as its `SAGA_STARTED` entry records them. */
interface Origin {
  readonly definition: string
  readonly input: unknown
}

const defaultOwner = () => `${Os.hostname()}/${process.pid}/${Crypto.randomBytes(3).toString("hex")}`

/** The origin journaled in a saga's `SAGA_STARTED` entry, if it was started from a definition. */
export const originOf = (view: JournalView): Origin | undefined => {
  const payload = parsePayload(view.started?.payload ?? null)
  return typeof payload?.definition === "string" ? { definition: payload.definition, input: payload.input } : undefined
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

/**
 * Builds the `Saga` service over a journal and an approval service. Runs are forked into the
 * service's scope: when it closes, the runs in flight are interrupted and left suspended, and
 * the worker's leases are dropped.
 */
export const makeSaga = Effect.fnUntraced(function* (options: WorkerOptions = {}) {
  const journal = yield* Journal
  const approval = yield* Approval
  const registry: Registry = new Map()
  const withLock = makeKeyedLock()
  const scope = yield* Effect.scope
  const owner = options.owner ?? defaultOwner()
  const leaseTtl = Duration.decode(options.leaseTtl ?? "30 seconds")
  const holder: Holder = { owner, ttlMillis: Duration.toMillis(leaseTtl) }
  const approvalTtl = options.approvalTtl === undefined ? undefined : Duration.decode(options.approvalTtl)

  const warn = (what: string) => (error: unknown) => Effect.logWarning(`effect-saga: ${what}`, error)
  // A worker starting under a name declares every lease held under it abandoned.
  if (options.owner !== undefined) {
    yield* Effect.catchAll(journal.release(owner), warn("the leases of a previous run were not released"))
  }
  const renewing = makeRenewal(
    Effect.catchAll(journal.renew(holder), warn("leases were not renewed")),
    Duration.divide(leaseTtl, 3).pipe(Option.getOrElse(() => leaseTtl)),
    scope
  )
  yield* Effect.addFinalizer(() => Effect.catchAll(journal.release(owner), warn("leases were not released")))
  const worker: Worker = { owner, leaseTtl, renewing }

  /**
   * Runs `effect` in a fiber of the service's scope, its leases renewed while it runs;
   * interrupting the caller interrupts it too. The fiber is interruptible even when the caller is
   * not, so that closing the scope always suspends it.
   */
  const supervised = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(Effect.forkIn(Effect.interruptible(renewing(effect)), scope), (fiber) =>
      Effect.onInterrupt(Fiber.join(fiber), () => Fiber.interrupt(fiber))
    )

  /** Takes the saga's lease and loads its journal; a saga that does not exist yet gets its lease with its first write. */
  const claimAndLoad = (sagaId: string) =>
    Effect.flatMap(journal.claim(sagaId, holder), (claimed) =>
      Effect.map(load(journal, sagaId, holder), (writer) => {
        writer.holdsLease = Option.isSome(claimed)
        return writer
      })
    )

  const compensated = <E>(
    sagaId: string,
    cause: Cause.Cause<E | CompensationCause>,
    report: Report.CompensationReport
  ): SagaResult<never, E> =>
    report.status === "compensated"
      ? { _tag: "Compensated", sagaId, cause, report }
      : { _tag: "CompensationFailed", sagaId, cause, report }

  const runSaga = <A, E, R>(sagaId: string, program: Effect.Effect<A, E, R>, options?: RunOptions, origin?: Origin) =>
    withLock(
      sagaId,
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const writer = yield* claimAndLoad(sagaId)
          const view = writer.view
          const journaledOrigin = originOf(view)
          if (view.exists && origin !== undefined && JSON.stringify(journaledOrigin) !== JSON.stringify(origin)) {
            yield* writer.release()
            return yield* new NonDeterminism({
              sagaId,
              stepId: "SAGA_STARTED",
              reason: `the saga was started as ${JSON.stringify(journaledOrigin ?? "a plain program")}, not as ${JSON.stringify(origin)}`
            })
          }
          // The start (or resume) marker travels with the run's first write: a pure replay writes nothing.
          if (!view.exists) writer.prepend([sagaEntry("SAGA_STARTED", origin)])
          else if (view.status !== "running" && !isFinished(view.status)) writer.prepend([sagaEntry("SAGA_RESUMED")])
          const closed = isFinished(view.status) || view.compensationStarted
          const sagaRun = new SagaRun(writer, approval, registry, closed, approvalTtl)
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

          const result = yield* Effect.ensuring(
            Exit.isFailure(ending) ? suspendOrCompensate(ending.cause) : settle(ending.value),
            writer.release()
          )
          yield* Effect.annotateCurrentSpan("outcome", result._tag)
          return result
        })
      )
    ).pipe(
      supervised,
      Effect.withSpan("effect-saga.run", { attributes: { "saga.id": sagaId }, captureStackTrace: false })
    ) as Effect.Effect<SagaResult<A, E>, RunError, Exclude<R, CurrentSaga>>

  const start = <I, A, E, R>(
    definition: SagaDefinition.SagaDefinition<I, A, E, R>,
    sagaId: string,
    input: I,
    options?: RunOptions
  ) =>
    Either.match(encodeJson(definition.input, input), {
      onLeft: (reason) =>
        Effect.fail(new InvalidSagaInput({ sagaId, definition: definition.name, reason })) as Effect.Effect<
          never,
          InvalidSagaInput
        >,
      onRight: (json) =>
        runSaga(sagaId, definition.program(input, sagaId), options, {
          definition: definition.name,
          input: JSON.parse(json)
        })
    })

  const existing = (sagaId: string) =>
    Effect.flatMap(journal.get(sagaId), (record) =>
      Option.isSome(record) ? Effect.succeed(record.value) : Effect.fail(new SagaNotFound({ sagaId }))
    )

  /**
   * Runs an operator's command under the saga's lock and lease, refused if another worker drives
   * the saga or if it moved on since `seen`.
   */
  const command = <A, E>(
    sagaId: string,
    seen: commands.Seen | undefined,
    body: (writer: Writer) => Effect.Effect<A, E>
  ) =>
    withLock(
      sagaId,
      Effect.uninterruptible(
        Effect.gen(function* () {
          const writer = yield* claimAndLoad(sagaId)
          if (!writer.view.exists) return yield* new SagaNotFound({ sagaId })
          return yield* Effect.ensuring(
            Effect.zipRight(commands.checkSeen(writer, seen), body(writer)),
            writer.release()
          )
        })
      )
    )

  return {
    worker,
    run: <A, E, R>(sagaId: string, program: Effect.Effect<A, E, R>, options?: RunOptions) =>
      runSaga(sagaId, program, options),
    start,
    resume: <A, E, R>(sagaId: string, program: Effect.Effect<A, E, R>, options?: RunOptions) =>
      Effect.zipRight(existing(sagaId), runSaga(sagaId, program, options)),
    compensate: (sagaId: string, seen?: commands.Seen) =>
      command(sagaId, seen, (writer) =>
        compensate(writer, (name) => registry.get(name), "an operator asked for compensation")
      ).pipe(
        Effect.withSpan("effect-saga.compensate", { attributes: { "saga.id": sagaId }, captureStackTrace: false })
      ),
    approve: (sagaId: string, stepId: string, options: ApproveOptions) =>
      command(sagaId, options, (writer) => commands.approve(writer, approval, stepId, options)),
    renewApproval: (sagaId: string, stepId: string, options: RenewApprovalOptions) =>
      command(sagaId, options, (writer) => commands.renew(writer, approval, stepId, options)),
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

/** Who renews, until when, optionally the input digest they saw, and the position the operator saw. */
export interface RenewApprovalOptions extends commands.RenewOptions, commands.Seen {}

/** Who rejects, why, and the position the operator saw. */
export interface RejectOptions extends commands.Seen {
  readonly by: string
  readonly reason: string
}

/** The errors a run itself can fail with (as opposed to the program's, which compensate). */
export type RunError = JournalError | ConcurrencyConflict | LeaseHeld | JournalCorrupted | NonDeterminism

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
