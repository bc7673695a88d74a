/**
 * The `Saga` service: runs, resumes and operator's commands under one worker's lock and lease.
 * NOTE (file length): one service whose members share the worker's state (its lock, lease, registry
 * and keys); how a run ends, compensation and explicit undos live in files of their own.
 */
import * as Crypto from "node:crypto"
import * as Os from "node:os"
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import type * as Tracer from "effect/Tracer"
import { Approval } from "../../Approval.js"
import type { Action, Principal } from "../../Authority.js"
import { Authority, allowAll, check } from "../../Authority.js"
import * as Compensable from "../../Compensable.js"
import type * as Report from "../../CompensationReport.js"
import type { Holder, ListFilter, SagaRecord, Verification } from "../../Journal.js"
import { isFinished, Journal, JournalCorrupted, JournalError, LeaseHeld, SagaNotFound } from "../../Journal.js"
import * as Keys from "../../Keys.js"
import type {
  ApproveOptions,
  RejectOptions,
  RenewApprovalOptions,
  Resolution,
  RunError,
  RunOptions,
  SagaSummary,
  Seen,
  StepStatus,
  Worker,
  WorkerOptions
} from "../../Saga.js"
import type * as SagaDefinition from "../../SagaDefinition.js"
import type { CommandConflict, CompensationCause, InvalidIdentifier } from "../../SagaError.js"
import { CommandRefused, InvalidSagaInput, NonDeterminism } from "../../SagaError.js"
import type { SagaResult } from "../../SagaResult.js"
import { sagaDraft } from "../journal/drafts.js"
import { recordOf } from "../journal/entries.js"
import { sha256 } from "../journal/hash.js"
import { effectIdOfRun, runIdOf, stepKey } from "../journal/ids.js"
import { pageRows } from "../journal/pagedRows.js"
import * as Signing from "../journal/signing.js"
import type { UndecodableRow } from "../journal/storedRows.js"
import { listRows } from "../journal/storedRows.js"
import * as UnreadStart from "../journal/unreadStart.js"
import { holdsNothing, inspect, tamperOf, trustedPrefix, verifying } from "../journal/verified.js"
import type { JournalView, StepView } from "../journal/view.js"
import { isIrreversible, isNotStarted, isRead, isUnknown, needsReceipt, retriesByKey, viewOf } from "../journal/view.js"
import type { Writer } from "../journal/writer.js"
import { claimAndLoad as loadClaimed, loadForRun, unread } from "../journal/writer.js"
import { metered, startSeriesAtZero } from "../observability/metrics.js"
import { entering, withNewSpan } from "../observability/spans.js"
import { byteLength, encodeJson } from "../util/codec.js"
import * as identifier from "../util/identifier.js"
import { makeKeyedLock } from "../util/keyedLock.js"
import * as Lease from "../util/lease.js"
import type { ExplicitUndos, Lookup, UndoState } from "./compensation.js"
import { compensate, explicitUndos, undoOf, undosToAsk } from "./compensation.js"
import type { CurrentSaga } from "./context.js"
import { insideRunOf, insideUndo, readFirst, undosStopWithCaller } from "./context.js"
import { describeCause, endRun } from "./ending.js"
import * as explicit from "./explicitUndo.js"
import { misplaced as misplacedAuthority } from "./misplacedAuthority.js"
import * as commands from "./operatorCommands.js"
import { sagaPages } from "./pages.js"
import { Registry } from "./registry.js"
import { makeRenewal } from "./renewal.js"
import * as replay from "./replay.js"
import { SagaRun } from "./run.js"
import { cycleInWords, RunWaits } from "./runWaits.js"
import { DEFAULT_MAX_PAYLOAD_BYTES } from "./spec.js"
import * as stepUndo from "./stepUndoResolution.js"
import { LeftRunning } from "./takeover.js"
import * as undoResolution from "./undoResolution.js"
import { rememberingUnreleased } from "./unreleased.js"
import { dropWithdrawnOf, withdrawFrom } from "./withdrawal.js"
import { checked as checkedOptions } from "./workerOptions.js"
import { namingWrites, ownWrites, wroteBefore } from "./written.js"

/** The definition and encoded input a saga was started from, as its `SAGA_STARTED` entry records them. */
interface Origin {
  readonly definition: string
  readonly input: unknown
}

/** What a caller asked a run to do: `drive` carries it from the load to the run's end. */
interface RunRequest<A, E, R> {
  readonly action: "start" | "resume"
  readonly program: Effect.Effect<A, E, R>
  readonly span: Tracer.Span
  readonly options: RunOptions | undefined
  readonly origin: Origin | undefined
}

const defaultOwner = () => `${Os.hostname()}/${process.pid}/${Crypto.randomBytes(3).toString("hex")}`

/** The origin journaled in a saga's `SAGA_STARTED` entry, if it was started from a definition. */
export const originOf = (view: JournalView): Origin | undefined => {
  const started = view.started?.payload
  return started != null && "definition" in started
    ? { definition: started.definition, input: started.input }
    : undefined
}

/**
 * Why a start does not match how the saga was started: the definitions' names, or the inputs'
 * digests, never the inputs (they may hold what must not reach a log, a span or an error).
 */
const originMismatch = (journaled: Origin | undefined, given: Origin): string => {
  if (journaled === undefined) return `the saga was started as a plain program, not from definition ${given.definition}`
  if (journaled.definition !== given.definition) {
    return `the saga was started from definition ${journaled.definition}, not ${given.definition}`
  }
  const digest = (origin: Origin) => sha256(JSON.stringify(origin.input)).slice(0, 12)
  return `the saga was started from definition ${given.definition} with another input (SHA-256 ${digest(journaled)}…, given ${digest(given)}…)`
}

/** The span options of an operator's command on one step. */
const commandSpan = (sagaId: string, stepId: string) => {
  const saga = identifier.shownIdentifier(sagaId)
  return {
    attributes: { "saga.id": saga, "workflow.id": saga, "step.id": identifier.shownIdentifier(stepId) },
    captureStackTrace: false
  }
}

/**
 * The run span's attributes: the saga, also as the proposed OpenTelemetry `workflow.*`. A refused
 * id is shown as its `InvalidIdentifier` quotes it, whatever refused it (its form too: `..`).
 */
const runAttributes = (sagaId: string, refused: InvalidIdentifier | undefined, origin: Origin | undefined) => {
  const saga = refused === undefined ? sagaId : refused.identifier
  return origin === undefined
    ? { "saga.id": saga, "workflow.id": saga }
    : { "saga.id": saga, "workflow.id": saga, "workflow.name": identifier.shownIdentifier(origin.definition) }
}

/**
 * Builds the `Saga` service over a journal and an approval service. The service tracks the runs
 * and operators' commands in flight: when its scope closes, the runs are interrupted and left
 * suspended, the commands are waited for (as their callers' interruption is), and then the
 * worker's leases are dropped.
 */
export const makeSaga = Effect.fnUntraced(function* (options: WorkerOptions = {}) {
  const { approvalTtl, leaseTtl, owner } = yield* checkedOptions(options, defaultOwner)
  // Read first: a key list that cannot be used fails the layer before anything is read or written.
  const receiptKeys = Option.getOrUndefined(yield* Keys.receiptKeys)
  const keys = Option.getOrUndefined(yield* Keys.journalKeys)
  const store = yield* Journal
  const mismatch = Signing.keyMismatch(store.append, keys)
  if (mismatch !== undefined)
    return yield* new Keys.KeyError({ variable: "EFFECT_SAGA_JOURNAL_KEYS", reason: mismatch })
  const locks = makeKeyedLock()
  startSeriesAtZero()
  // Every read the engine acts on verifies the saga's chain (and MACs) against its row; a lease it
  // fails to release is dropped at the next renewal.
  const { journal, anyUnreleased, dropUnreleased } = rememberingUnreleased(
    metered(verifying(store, keys)),
    owner,
    locks
  )
  // Where a read costs a round trip, `run` and `start` do not read a new saga first (unreadStart.ts).
  const startsUnread = UnreadStart.allows(journal.append)
  const approval = yield* Approval
  const builtAuthority = Option.getOrUndefined(yield* Effect.serviceOption(Authority))
  const authority = builtAuthority ?? allowAll
  /** Dies if the caller's context holds an `Authority` the service would never ask (misplacedAuthority.ts). */
  const authorityInPlace = Effect.contextWithEffect((context: Context.Context<never>) => {
    const misplaced = misplacedAuthority(builtAuthority, context)
    return misplaced === undefined ? Effect.void : Effect.dieMessage(misplaced)
  })
  const registry = new Registry()
  const leftRunning = new LeftRunning()
  const scope = yield* Effect.scope
  const holder: Holder = { owner, ttlMillis: Duration.toMillis(leaseTtl) }

  const warn = (what: string) => (error: { readonly message: string }) =>
    Effect.logWarning(`effect-saga: ${what}: ${error.message}`)
  // A worker starting under a name declares every lease held under it abandoned.
  if (options.owner !== undefined) {
    yield* Effect.catchAll(journal.release(owner), warn("the leases of a previous run were not released"))
  }
  // Finalizers run last added first: the runs and commands end, then the renewal stops, then the
  // leases are dropped.
  yield* Effect.addFinalizer(() => Effect.catchAll(journal.release(owner), warn("leases were not released")))
  // A defect (a driver that throws) is logged as a failure is: the next tick tries again. The leases
  // left unreleased are dropped at every tick (the renewal's `left`), before the others are renewed.
  const logged = <E extends { readonly message: string }>(what: string, effect: Effect.Effect<unknown, E>) =>
    effect.pipe(
      Effect.catchAllDefect((defect) =>
        Effect.fail({ message: defect instanceof Error ? defect.message : String(defect) })
      ),
      Effect.catchAll(warn(what))
    )
  const renewal = makeRenewal(
    logged("leases were not renewed", journal.renew(holder)),
    Duration.divide(leaseTtl, 3).pipe(Option.getOrElse(() => leaseTtl)),
    yield* Scope.fork(scope, ExecutionStrategy.sequential),
    { pending: anyUnreleased, drop: logged("leases were not released", dropUnreleased) }
  )
  const worker: Worker = { owner, leaseTtl, renewing: renewal.renewing }

  /**
   * The fibers running a saga or an operator's command now, one token each: closing the service's
   * scope interrupts them and waits for them. A run suspends; a command, uninterruptible, runs to
   * its end (its undos too, unless `Saga.withInterruptibleUndos`), its leases renewed meanwhile.
   */
  const running = new Set<InFlight>()
  /** Set once the service's scope closes: a run waiting for its saga's lock then never starts. */
  let closing = false
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      closing = true
      // All at once, then waited for: a run whose suspension is slow to journal (a busy connection
      // pool) must not leave the others going on meanwhile, starting calls.
      return Fiber.interruptAll(new Set(Array.from(running, (run) => run.fiber)))
    })
  )
  /**
   * `effect`, unless the service is closing: a run or an operator's command handed its saga's lock
   * once the service's scope closes (it waited for the lock, untracked, while closing interrupted
   * the holder) does not start: it ends as interrupted, having written nothing.
   */
  const unlessClosing = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => (closing ? Effect.interrupt : effect))
  /** Tracks the caller's fiber in `running` while `effect` runs (call it where interruption is masked). */
  const tracked = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime((fiber) => {
      const token: InFlight = { fiber: fiber as Fiber.RuntimeFiber<unknown, unknown>, driving: undefined }
      running.add(token)
      return Effect.ensuring(
        effect,
        Effect.sync(() => running.delete(token))
      )
    })

  /**
   * Runs `body` as a run of saga `sagaId` on the caller's fiber, in the frame every run needs: the
   * run's span (`body` gets it), the saga's lock in this worker, the worker's leases renewed, and the
   * fiber tracked, so that closing the service's scope interrupts it (a run still waiting for the
   * lock then never starts). Waiting for the lock is as interruptible as the caller; `body` runs uninterruptibly but
   * for what it makes `Effect.interruptible` (its program: interruptible even when the caller is not,
   * so that closing the scope always suspends it). One mask and one exit handler for all of these.
   * (No fiber of its own: forking one a saga cost ≈ a fifth of its time.)
   */
  const inRun = <A, E, R>(
    sagaId: string,
    attributes: Record<string, string>,
    body: (span: Tracer.Span) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime((caller) =>
      insideRunOf(caller, sagaId)
        ? ownRunRefused(sagaId)
        : runWaits.around(
            caller,
            sagaId,
            (cycle) => crossRunRefused(sagaId, cycle),
            (acquired) => frame(sagaId, attributes, body, acquired)
          )
    )

  /** The waits of runs' fibers in this worker for sagas' locks, while their enclosing runs hold theirs. */
  const runWaits = new RunWaits()

  const frame = <A, E, R>(
    sagaId: string,
    attributes: Record<string, string>,
    body: (span: Tracer.Span) => Effect.Effect<A, E, R>,
    acquired?: () => void
  ): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      withNewSpan("effect-saga.run", attributes, (span, fiber) => {
        const entered = entering(fiber, span)
        const run: InFlight = { fiber, driving: undefined }
        running.add(run)
        const end = <X>(exit: Exit.Exit<X, E>) =>
          Effect.flatMap(entered.leave, () => {
            running.delete(run)
            renewal.release()
            entered.end(exit)
            return exit
          })
        // Waiting for the saga's lock is as interruptible as the caller (`restore`): a second run of
        // the same saga waits for the first, and its caller's timeout or interruption ends the wait.
        const driven = Effect.suspend(() => {
          acquired?.()
          run.driving = sagaId
          return body(span)
        })
        const locked = locks.withLockMasked(sagaId, unlessClosing(driven), restore)
        return Effect.zipRight(
          Effect.zipRight(entered.into, renewal.acquire),
          Effect.matchCauseEffect(locked, {
            onFailure: (cause) => end(Exit.failCause(cause)),
            onSuccess: (value) => end(Exit.succeed(value))
          })
        )
      })
    )

  /** A run of a saga from inside its own run would wait for itself for good: refused, as a defect. */
  const ownRunRefused = (sagaId: string) =>
    Effect.dieMessage(
      `effect-saga: saga ${sagaId} was run from inside its own run (its program, a tool it called, or a saga it ran): that run would wait for itself to end, for good. Nothing ran and nothing was journaled`
    )
  /**
   * A run of a saga from inside another's run, while a run inside that saga's run waits for the
   * other (`cycle`: the sagas the waits lead through, from `sagaId` back to a saga the caller's runs
   * hold): each would wait for the other to end, for good. Refused, as a defect, as a run inside its own.
   */
  const crossRunRefused = (sagaId: string, cycle: ReadonlyArray<string>) =>
    Effect.dieMessage(
      `effect-saga: saga ${sagaId} was run from inside the run of saga ${cycle.at(-1)}, while ${cycleInWords(cycle)}: the runs would wait for each other to end, for good (a deadlock). Nothing ran and nothing was journaled`
    )

  /**
   * An operator's command on a saga from inside its own run: refused, as the run drives the saga
   * until it ends (`compensateEffect` would wait for it, which waits for the command).
   */
  const outsideOwnRun = (sagaId: string, asked: Action | "compensateEffect", stepId?: string | undefined) =>
    Effect.withFiberRuntime<void, CommandRefused>((fiber) =>
      insideRunOf(fiber, sagaId)
        ? Effect.fail(
            new CommandRefused({
              sagaId,
              stepId: stepId ?? "SAGA_STARTED",
              reason: `${asked} was asked from inside the saga's own run (its program, a tool it called, or a saga it ran): a command acts on the saga only once that run has ended`
            })
          )
        : Effect.void
    )

  /** Refuses a saga started, resumed or compensated from inside the undo of `toolName`'s step. */
  const refusedInsideUndo = (toolName: string) =>
    Effect.die(
      new Compensable.DeclarationError({
        toolName,
        reason: "an undo cannot start, resume or compensate a saga: the inverse of a step is one undo call"
      })
    )
  const outsideUndo = Effect.flatMap(FiberRef.get(insideUndo), (undoing) =>
    undoing === undefined ? Effect.void : refusedInsideUndo(undoing)
  )

  /** Drops a request the saga withdrew from the approval service (see `withdrawFrom`). */
  const withdraw = withdrawFrom(approval)

  const undoEnv = (sagaId: string, lookup: Lookup) => ({
    lookup,
    absence: (toolName: string) => registry.absence(toolName),
    receiptKeys,
    beforeUndo: (step: StepView) => Effect.asVoid(check(authority, "compensate", sagaId, step.stepId)),
    explicitUndo: explicit.explicitUndoOf(journal),
    withdraw
  })
  const registered: Lookup = (step) => registry.get(step.toolName)

  /** Takes the saga's lease and loads its journal, verified (see `claimAndLoad` in writer.ts). */
  const claimAndLoad = (sagaId: string) => loadClaimed(journal, sagaId, holder)

  const compensated = <E>(
    sagaId: string,
    cause: Cause.Cause<E | CompensationCause>,
    report: Report.CompensationReport
  ): SagaResult<never, E> =>
    report.status === "compensated"
      ? { _tag: "Compensated", sagaId, cause, report }
      : { _tag: "CompensationFailed", sagaId, cause, report }

  /*
   * NOTE (no generator on a run's path): `runSaga`, `drive` and the load (`loadForRun`) are built
   * with `flatMap`, not `Effect.gen`. With the three as generators, what a five-step saga made was
   * kept alive through V8's young collections and copied to the old generation: 9.7 KB a saga
   * against 3.1 KB without them, and its scavenges took about twice as long (docs/performance.md).
   */
  const runSaga = <A, E, R>(
    action: "start" | "resume",
    sagaId: string,
    program: Effect.Effect<A, E, R>,
    options?: RunOptions,
    origin?: Origin
  ) => {
    const refusedId = identifier.sagaIdRefusal(sagaId)
    return inRun(sagaId, runAttributes(sagaId, refusedId, origin), (span) =>
      Effect.withFiberRuntime((fiber) => {
        const misplaced = misplacedAuthority(builtAuthority, fiber.currentContext)
        if (misplaced !== undefined) return Effect.dieMessage(misplaced)
        if (refusedId !== undefined) return Effect.fail(refusedId)
        const undoing = fiber.getFiberRef(insideUndo)
        if (undoing !== undefined) return refusedInsideUndo(undoing)
        const request: RunRequest<A, E, R> = { action, program, span, options, origin }
        const loaded = () => Effect.flatMap(loadForRun(journal, sagaId, holder), (writer) => drive(request, writer))
        const started = () => {
          if (action !== "start" || !startsUnread || fiber.getFiberRef(readFirst)) return loaded()
          const writer = unread(journal, sagaId, holder)
          return Effect.flatMap(Effect.either(drive(request, writer)), (attempt) => {
            if (Either.isRight(attempt)) return Effect.succeed(attempt.right)
            // The saga was there: nothing ran, nothing was written. It starts over, read.
            if (!writer.view.exists && UnreadStart.foundExisting(attempt.left)) return loaded()
            return Effect.fail(attempt.left)
          })
        }
        // `allowAll` answers yes to everything: there is nothing to ask.
        if (authority === allowAll) return started()
        return Effect.zipRight(check(authority, action, sagaId), Effect.suspend(started))
      })
    ) as Effect.Effect<SagaResult<A, E>, RunError, Exclude<R, CurrentSaga>>
  }

  /**
   * Runs the request's program as a run of the saga `writer` loaded (or assumed new), to its end. A
   * write refused after some of the run's own (its lease lapsed mid-step and another worker took the
   * saga over) names them (`written.ts`), wherever it was refused: a step, an undo, the run's end.
   */
  const drive = <A, E, R>(request: RunRequest<A, E, R>, writer: Writer) =>
    namingWrites(
      writer,
      Effect.suspend(() => {
        const { sagaId, view } = writer
        if (request.action === "resume" && !view.exists) return Effect.fail(new SagaNotFound({ sagaId }))
        // `run` of a saga that exists resumes it: that takes the permission to resume.
        if (view.exists && request.action === "start" && authority !== allowAll) {
          return Effect.zipRight(
            Effect.tapError(check(authority, "resume", sagaId), () => writer.release()),
            Effect.suspend(() => driveChecked(request, writer))
          )
        }
        return driveChecked(request, writer)
      })
    )

  /** `drive`, once the caller may run the saga as it is. */
  const driveChecked = <A, E, R>({ action, program, span, options, origin }: RunRequest<A, E, R>, writer: Writer) => {
    const { sagaId, view } = writer
    const journaledOrigin = originOf(view)
    if (view.exists && origin !== undefined && JSON.stringify(journaledOrigin) !== JSON.stringify(origin)) {
      return Effect.zipRight(
        writer.release(),
        Effect.fail(
          new NonDeterminism({
            sagaId,
            stepId: "SAGA_STARTED",
            reason: originMismatch(journaledOrigin, origin)
          })
        )
      )
    }
    // The start (or resume) marker travels with the run's first write: a pure replay writes nothing.
    // A saga that stopped is resumed; one left running by another worker is taken over (takeover.ts).
    if (!view.exists) {
      writer.prepend([sagaDraft("SAGA_STARTED", origin ?? null)])
    } else if (view.status === "running" ? leftRunning.takesOver(sagaId, view) : !isFinished(view.status)) {
      writer.prepend([sagaDraft("SAGA_RESUMED", null)])
    }
    const closed = isFinished(view.status) || view.compensationStarted
    // The permission is asked again before each step progresses: revoking it stops a long run.
    // `allowAll` cannot revoke it, so there is nothing to ask.
    const recheck =
      authority === allowAll ? undefined : Effect.asVoid(check(authority, view.exists ? "resume" : action, sagaId))
    const sagaRun = new SagaRun(writer, approval, withdraw, registry, closed, recheck, receiptKeys, approvalTtl, keys)
    const ended = (ending: Exit.Exit<Exit.Exit<A, E>>) => {
      const compensateWith = (cause: Cause.Cause<E | CompensationCause>, notStarted: ReadonlyArray<string>) =>
        Effect.map(
          compensate(
            writer,
            undoEnv(sagaId, (step) => sagaRun.undoToolOf(step)),
            describeCause(cause, sagaRun.receipts, sagaRun.described),
            undefined,
            notStarted
          ),
          (report) => compensated(sagaId, cause, report)
        )
      const end = {
        sagaId,
        writer,
        halt: sagaRun.haltedWith,
        onInterrupt: options?.onInterrupt,
        notStarted: sagaRun.notStarted,
        compensate: compensateWith,
        withdraw,
        describe: (cause: Cause.Cause<unknown>) => describeCause(cause, sagaRun.receipts, sagaRun.described),
        unknownReasons: sagaRun.unknownReasons,
        unreached: sagaRun.unreached
      }
      const left = Effect.sync(() => {
        leftRunning.leave(writer)
        sagaRun.ended()
      })
      return Effect.map(
        Effect.ensuring(endRun<A, E>(end, ending), Effect.zipRight(left, writer.release())),
        (result) => {
          span.attribute("outcome", result._tag)
          return result
        }
      )
    }
    // As `Effect.flatMap(Effect.exit(…), ended)`, in one frame while the program runs.
    return Effect.matchCauseEffect(Effect.interruptible(sagaRun.runProgram(program)), {
      onFailure: (cause) => ended(Exit.failCause(cause)),
      onSuccess: (exit) => ended(Exit.succeed(exit))
    })
  }

  /**
   * The answer of an explicit undo's run, once journaled (`undefined` for a saga, or a run not
   * finished): the undo of a run's step that journaled none of its own (its approval rejected, or
   * expired) is this answer.
   */
  const runAnswer = (runId: string, view: JournalView): UndoState | undefined => {
    const effectId = effectIdOfRun(runId)
    const answer = effectId === undefined ? undefined : explicit.answerOf(effectId, view)
    return answer?._tag === "Settled" ? answer : undefined
  }

  /**
   * The step an explicit undo's run answered for when the run journaled no entry of it (the undo
   * could not run there, or the saga's own compensation had settled the step), as `status` lists a
   * run's step: read from the saga, its undo the run's answer. None while the saga does not verify.
   */
  const answeredSteps = (runId: string, view: JournalView): Effect.Effect<Array<StepStatus>, JournalError> => {
    const effectId = effectIdOfRun(runId)
    const answer = effectId === undefined ? undefined : explicit.answerOf(effectId, view)
    if (effectId === undefined || answer?._tag !== "Settled") return Effect.succeed([])
    return explicit.findSubject(journal, effectId).pipe(
      Effect.map((subject) => [stepStatus(runId, subject.step, answer, view)]),
      Effect.catchIf(
        (error) => error._tag !== "JournalError",
        () => Effect.succeed([])
      )
    )
  }

  /** A definition's encoded input, journaled with `SAGA_STARTED`, is capped as a tool's input is by default. */
  const boundedInput = (json: string): Either.Either<string, string> => {
    const bytes = byteLength(json)
    return bytes > DEFAULT_MAX_PAYLOAD_BYTES
      ? Either.left(
          `its encoded input is ${bytes} bytes, over the default maxPayloadBytes of ${DEFAULT_MAX_PAYLOAD_BYTES}`
        )
      : Either.right(json)
  }

  const start = <I, A, E, R>(
    definition: SagaDefinition.SagaDefinition<I, A, E, R>,
    sagaId: string,
    input: I,
    options?: RunOptions
  ) =>
    Either.match(Either.flatMap(encodeJson(definition.input, input), boundedInput), {
      onLeft: (reason) =>
        Effect.fail(new InvalidSagaInput({ sagaId, definition: definition.name, reason })) as Effect.Effect<
          never,
          InvalidSagaInput
        >,
      onRight: (json) =>
        runSaga("start", sagaId, definition.program(input, sagaId), options, {
          definition: definition.name,
          input: JSON.parse(json)
        })
    })

  /**
   * Runs an operator's command: asks the authority before reading the journal, then, under the
   * saga's lock and lease (renewed as a run's is, for as long as its undos take), answers an exact
   * replay from the journal (nothing runs, nothing is written), or refuses the command if the saga
   * moved on since `seen`, or carries it out. A write refused after some of the command's own names
   * them (`written.ts`).
   */
  const command = <A, E>(sagaId: string, spec: Command<A, E>) =>
    Effect.gen(function* () {
      yield* authorityInPlace
      yield* outsideOwnRun(sagaId, spec.action, spec.stepId)
      yield* identifier.check("saga id", sagaId, identifier.MAX_JOURNAL_ID_BYTES)
      yield* checkNamed(spec)
      yield* outsideUndo
      const principal = yield* check(authority, spec.action, sagaId, spec.stepId)
      yield* refuseWhileDrivenHere(sagaId)
      return yield* commandLocked(sagaId, spec, principal)
    })

  /**
   * A command never waits for a run of its saga that this worker is driving: it is refused with
   * that run's `LeaseHeld` (this worker's name, the lease's expiry), as a command through another
   * worker is, and nothing is written. (Commands of one worker do take turns on the saga's lock.)
   */
  const refuseWhileDrivenHere = (sagaId: string): Effect.Effect<void, LeaseHeld | JournalError> =>
    Effect.suspend(() => {
      if (!drivenHere(sagaId)) return Effect.void
      return Effect.flatMap(journal.get(sagaId), (row) => {
        const lease = Option.isSome(row) ? row.value.lease : null
        return lease === null || lease.owner !== owner
          ? Effect.void
          : Effect.fail(new LeaseHeld({ sagaId, owner: lease.owner, expiresAt: lease.expiresAt }))
      })
    })

  /** Whether a run of `sagaId` holds its lock in this worker now. */
  const drivenHere = (sagaId: string): boolean => {
    for (const inFlight of running) if (inFlight.driving === sagaId) return true
    return false
  }

  const commandLocked = <A, E>(sagaId: string, spec: Command<A, E>, principal: Principal) =>
    locks.withLock(
      sagaId,
      Effect.uninterruptible(
        unlessClosing(
          tracked(
            renewal.renewing(
              Effect.gen(function* () {
                const writer = yield* claimAndLoad(sagaId)
                if (!writer.view.exists) return yield* new SagaNotFound({ sagaId })
                const carryOut = Effect.gen(function* () {
                  const prior = spec.replay === undefined ? "new" : yield* spec.replay.prior(writer)
                  if (prior === "replay") return yield* spec.replay!.answer(writer)
                  yield* commands.checkSeen(writer, spec.seen)
                  return yield* spec.body(writer, principal)
                })
                return yield* Effect.ensuring(ownWrites(writer, carryOut), writer.release())
              })
            )
          )
        )
      )
    )

  /** An explicit undo's run is settled by asking `compensateEffect` again, never compensated itself. */
  const notAnUndoRun = (writer: Writer): Effect.Effect<void, CommandRefused> =>
    explicit.effectIdOf(writer.view) === undefined
      ? Effect.void
      : Effect.fail(
          new CommandRefused({
            sagaId: writer.sagaId,
            stepId: "SAGA_STARTED",
            reason:
              "this is the run of an explicit undo (compensateEffect): it cannot be compensated itself; ask for its effect again (compensateEffect) for its answer, and close a run that needs attention or ended compensation_failed with resolve of its step (effect-saga show of the run says how)"
          })
        )

  /**
   * A saga's own compensation, as an operator's command or after a rejection (`found`: its explicit
   * undos, looked up before). Under `Saga.withInterruptibleUndos`, interrupting the command
   * interrupts the undo in flight, and no other starts.
   */
  const compensateSaga = (writer: Writer, cause: string, found?: ExplicitUndos) =>
    Effect.flatMap(FiberRef.get(undosStopWithCaller), (stopsWithCaller) =>
      compensate(writer, { ...undoEnv(writer.sagaId, registered), stopsWithCaller }, cause, found)
    )

  /** How long `compensateEffect` waits for another worker holding the saga or the run. */
  const contention = Schedule.exponential("10 millis").pipe(
    Schedule.union(Schedule.spaced("500 millis")),
    Schedule.upTo(Duration.times(leaseTtl, 2))
  )

  /** Fails with why an effect cannot be undone on request, if it cannot (`explicit.notApplied`). */
  const refuseNotApplied = (subject: explicit.Subject): Effect.Effect<void, CommandRefused> => {
    const refused = explicit.notApplied(subject)
    return refused === undefined ? Effect.void : Effect.fail(refused)
  }

  const compensateEffect = (effectId: string) =>
    Effect.gen(function* () {
      yield* authorityInPlace
      yield* identifier.check("effect id", effectId, identifier.MAX_JOURNAL_ID_BYTES)
      yield* outsideUndo
      const subject = yield* explicit.findSubject(journal, effectId)
      yield* check(authority, "compensate", subject.sagaId, subject.step.stepId)
      yield* outsideOwnRun(subject.sagaId, "compensateEffect", subject.step.stepId)
      // A step whose outcome is unknown may still be in flight on the worker driving the saga: it is
      // judged once the saga's lease is this worker's (LeaseHeld meanwhile, retried below).
      const refused = explicit.notApplied(subject)
      if (refused !== undefined && !isUnknown(subject.step)) return yield* refused
      const runView = yield* viewOf(yield* journal.read(runIdOf(effectId)))
      const answered = explicit.finishedAnswer(effectId, runView)
      // Asked again, a run that withdrew its request drops it again, should a crash have come between.
      if (answered !== undefined)
        return yield* Effect.as(dropWithdrawnOf(runIdOf(effectId), runView, withdraw), answered)
      const stopsWithCaller = yield* FiberRef.get(undosStopWithCaller)
      const ctx = {
        journal,
        approval,
        lookup: registered,
        absence: (toolName: string) => registry.absence(toolName),
        holder,
        approvalTtl,
        journalKeys: keys,
        receiptKeys,
        stopsWithCaller
      }
      // The run and the saga are both held meanwhile (their leases renewed as a run's are): the
      // saga's own compensation waits for this undo.
      const attempt = Effect.gen(function* () {
        const run = yield* explicit.loadRun(journal, effectId, holder)
        const done = explicit.finishedAnswer(effectId, run.view)
        if (done !== undefined) return yield* Effect.as(run.release(), done)
        return yield* Effect.ensuring(
          Effect.zipRight(
            journal.claim(subject.sagaId, holder),
            Effect.flatMap(explicit.findSubject(journal, effectId), (fresh) =>
              Effect.zipRight(refuseNotApplied(fresh), ownWrites(run, explicit.compensateEffect(ctx, fresh, run)))
            )
          ),
          Effect.zipRight(run.release(), Effect.ignore(journal.release(owner, subject.sagaId)))
        )
      })
      // From inside a run, waiting for the saga's lock may close a cycle with the runs of this worker.
      const locked = runWaits.here(
        subject.sagaId,
        (cycle) =>
          Effect.fail(
            new CommandRefused({
              sagaId: subject.sagaId,
              stepId: subject.step.stepId,
              reason: `compensateEffect was asked from inside the run of saga ${cycle.at(-1)}, while ${cycleInWords(cycle)}: each would wait for the other to end, for good (a deadlock); nothing was journaled: ask for it once one of the runs has ended`
            })
          ),
        (acquired) =>
          locks.withLock(
            runIdOf(effectId),
            locks.withLock(
              subject.sagaId,
              Effect.zipRight(
                Effect.sync(() => acquired?.()),
                Effect.uninterruptible(unlessClosing(tracked(renewal.renewing(attempt))))
              )
            )
          )
      )
      return yield* locked.pipe(
        Effect.retry({
          // Another caller first: wait for it. A write refused after this call's own is not retried.
          while: (error) => (error._tag === "LeaseHeld" || error._tag === "ConcurrencyConflict") && !wroteBefore(error),
          schedule: contention
        })
      )
    }).pipe(
      Effect.withSpan("effect-saga.compensate-effect", {
        attributes: { "effect.id": identifier.shownIdentifier(effectId) },
        captureStackTrace: false
      })
    )

  const summaries = (rows: ReadonlyArray<Either.Either<SagaRecord, UndecodableRow>>) =>
    Effect.map(
      Effect.forEach(rows, (row) => summaryOf(store, row, keys)),
      (listed) => listed.filter((summary) => summary !== undefined)
    )
  const list = (filter?: ListFilter) => Effect.flatMap(listRows(store, filter), summaries)
  // Only the page's sagas are read and verified.
  sagaPages.set(list, (query) =>
    Effect.flatMap(pageRows(store, query), (page) =>
      Effect.map(summaries(page.rows), (sagas) => ({ sagas, total: page.total }))
    )
  )

  return {
    worker,
    run: <A, E, R>(sagaId: string, program: Effect.Effect<A, E, R>, options?: RunOptions) =>
      runSaga("start", sagaId, program, options),
    start,
    resume: <A, E, R>(sagaId: string, program: Effect.Effect<A, E, R>, options?: RunOptions) =>
      runSaga("resume", sagaId, program, options) as Effect.Effect<
        SagaResult<A, E>,
        RunError | SagaNotFound,
        Exclude<R, CurrentSaga>
      >,
    compensate: (sagaId: string, seen?: Seen) =>
      command(sagaId, {
        action: "compensate",
        seen,
        // Asked again, the compensation it began is reported from the journal (finished first, if it was cut short).
        replay: {
          prior: (writer) => replay.compensation(writer, seen),
          answer: (writer) => compensateSaga(writer, replay.OPERATOR_COMPENSATION)
        },
        body: (writer) => Effect.zipRight(notAnUndoRun(writer), compensateSaga(writer, replay.OPERATOR_COMPENSATION))
      }).pipe(
        Effect.withSpan("effect-saga.compensate", {
          attributes: { "saga.id": identifier.shownIdentifier(sagaId) },
          captureStackTrace: false
        })
      ),
    compensateEffect,
    approve: (sagaId: string, stepId: string, options: ApproveOptions) =>
      command(sagaId, {
        action: "approve",
        stepId,
        by: options.by,
        seen: options,
        replay: { prior: (writer) => replay.approval(writer, stepId, options), answer: () => Effect.void },
        body: (writer, principal) =>
          commands.approve(writer, approval, keys, stepId, { ...options, principal: principal.id })
      }).pipe(Effect.withSpan("effect-saga.approve", commandSpan(sagaId, stepId))),
    renewApproval: (sagaId: string, stepId: string, options: RenewApprovalOptions) =>
      command(sagaId, {
        action: "approve",
        stepId,
        by: options.by,
        seen: options,
        replay: { prior: (writer) => replay.renewal(writer, stepId, options), answer: () => Effect.void },
        body: (writer, principal) => commands.renew(writer, approval, stepId, { ...options, principal: principal.id })
      }).pipe(Effect.withSpan("effect-saga.renew-approval", commandSpan(sagaId, stepId))),
    reject: (sagaId: string, stepId: string, options: RejectOptions) => {
      // Rejecting the approval of an explicit undo answers that run; a saga's step, the saga compensates.
      const cause = `step ${stepId} was rejected by ${options.by}`
      const isUndoRun = (writer: Writer) => explicit.effectIdOf(writer.view) !== undefined
      const compensation = (writer: Writer) =>
        isUndoRun(writer)
          ? explicit.rejected(writer, stepId, commands.rejectionReason(options))
          : compensateSaga(writer, cause)
      // Journaled with REJECTED, in its append: what the rejection starts.
      const rejectionEntry = (writer: Writer) =>
        isUndoRun(writer)
          ? explicit.rejectedAnswer(writer.view, commands.rejectionReason(options))
          : sagaDraft("SAGA_COMPENSATING", { cause })
      return command(sagaId, {
        action: "reject",
        stepId,
        by: options.by,
        seen: options,
        replay: { prior: (writer) => replay.rejection(writer, stepId, options), answer: compensation },
        body: (writer, principal) => {
          const rejecting = commands.reject(
            writer,
            approval,
            keys,
            stepId,
            { ...options, principal: principal.id },
            rejectionEntry(writer)
          )
          if (isUndoRun(writer)) return Effect.zipRight(rejecting, compensation(writer))
          // A rejection compensates: the principal must be allowed each undo it starts, and the
          // explicit undos are read, before the rejection is written (a denial, or a run that does
          // not verify, refuses the command while nothing is decided, journaled or undone).
          const env = undoEnv(writer.sagaId, registered)
          const allowed = (found: ExplicitUndos) =>
            Effect.forEach(
              undosToAsk(writer.view, found, env),
              (step) => check(authority, "compensate", sagaId, step.stepId),
              { discard: true }
            )
          return Effect.flatMap(explicitUndos(writer.sagaId, writer.view, env), (found) =>
            Effect.zipRight(allowed(found), Effect.zipRight(rejecting, compensateSaga(writer, cause, found)))
          )
        }
      }).pipe(Effect.withSpan("effect-saga.reject", commandSpan(sagaId, stepId)))
    },
    resolve: (sagaId: string, stepId: string, resolution: Resolution) =>
      command(sagaId, {
        action: "resolve",
        stepId,
        by: resolution.by,
        seen: resolution,
        // The run of an explicit undo answered unknown: resolving its step settles the undo (undoResolution.ts).
        // A saga's step whose undo its compensation left not undone: resolving it settles that undo (stepUndoResolution.ts).
        replay: {
          prior: (writer) =>
            explicit.effectIdOf(writer.view) !== undefined
              ? undoResolution.prior(writer, stepId, resolution)
              : stepUndo.concernsUndo(writer.view, stepId, resolution)
                ? stepUndo.prior(writer, stepId, resolution)
                : replay.resolution(writer, registered, stepId, resolution, receiptKeys),
          answer: () => Effect.void
        },
        body: (writer, principal) => {
          const effectId = explicit.effectIdOf(writer.view)
          if (effectId !== undefined) {
            const subject = Effect.catchTag(
              explicit.findSubject(journal, effectId),
              "EffectNotFound",
              () => new CommandRefused({ sagaId, stepId, reason: `the saga of effect ${effectId} is not found` })
            )
            return Effect.flatMap(subject, (found) => undoResolution.resolve(writer, stepId, resolution, found))
          }
          if (stepUndo.concernsUndo(writer.view, stepId, resolution))
            return stepUndo.resolve(writer, stepId, resolution)
          const undoTakesNoResult = stepUndo.givenResult(writer.view, stepId)
          if (undoTakesNoResult !== undefined) {
            return Effect.fail(new CommandRefused({ sagaId, stepId, reason: undoTakesNoResult }))
          }
          return commands.resolve(
            writer,
            registered,
            stepId,
            { ...resolution, principal: principal.id },
            receiptKeys,
            withdraw
          )
        }
      }).pipe(Effect.withSpan("effect-saga.resolve", commandSpan(sagaId, stepId))),
    status: (sagaId: string) =>
      Effect.gen(function* () {
        yield* identifier.check("saga id", sagaId, identifier.MAX_JOURNAL_ID_BYTES)
        const inspected = yield* inspect(store, sagaId, keys)
        if (Option.isNone(inspected.record) && inspected.entries.length === 0) {
          return yield* nothingToShow(sagaId, inspected.verification)
        }
        // Entries without a row (the row deleted, or not decodable) are shown as the entries say, marked tampered.
        const record = Option.getOrElse(inspected.record, () => recordOf(inspected.entries))
        // Only what verifies is shown as a fact: the steps come from the entries before the break.
        const view = yield* viewOf(trustedPrefix(inspected))
        const answer = runAnswer(sagaId, view)
        // A run an operator closed as not undone: its answer (who closed it, and what it was) is the step's.
        const closedKept = view.status === "completed" && answer !== undefined && answer.outcome !== "completed"
        const driven = yield* isDriven(store, record)
        const steps = Array.from(view.steps.values(), (step) =>
          stepStatus(sagaId, step, closedKept ? answer : (undoOf(step, view.lastReport) ?? answer), view, driven)
        )
        return {
          ...record,
          tampered: tamperOf(inspected.verification),
          steps: steps.length > 0 ? steps : yield* answeredSteps(sagaId, view)
        }
      }),
    list,
    register: (tools: Iterable<Compensable.Any>) =>
      Effect.flatMap(Effect.context<never>(), (context) =>
        Effect.forEach(
          tools,
          (tool) =>
            registry.register(tool.name, { spec: tool.spec, context }) === "shared"
              ? Effect.logWarning(`effect-saga: ${registry.absence(tool.name)}`)
              : Effect.void,
          { discard: true }
        )
      )
  }
})

/**
 * A listed saga, verified. A row that does not decode is listed as its entries say, marked
 * tampered; one without an entry to say anything either is logged and left out. A saga pruned since
 * it was listed (neither entries nor a row are left) is passed over.
 */
const summaryOf = (
  store: Journal["Type"],
  row: Either.Either<SagaRecord, UndecodableRow>,
  keys: Keys.KeyRing | undefined
): Effect.Effect<SagaSummary | undefined, JournalError> => {
  const sagaId = Either.isRight(row) ? row.right.sagaId : row.left.sagaId
  return Effect.flatMap(inspect(store, sagaId, keys), (inspected) => {
    const tampered = tamperOf(inspected.verification)
    if (holdsNothing(inspected)) return Effect.succeed(undefined)
    if (Either.isRight(row)) return Effect.succeed({ ...row.right, tampered })
    if (inspected.entries.length > 0) return Effect.succeed({ ...recordOf(inspected.entries), tampered })
    return Effect.as(Effect.logWarning(`effect-saga: not listed: ${row.left.reason}`), undefined)
  })
}

/** Fails with `InvalidIdentifier` if the step id or the `by` a command names cannot be one: checked before anything is read. */
const checkNamed = (spec: {
  readonly stepId?: string | undefined
  readonly by?: string | undefined
}): Effect.Effect<void, InvalidIdentifier> =>
  Effect.suspend(() => {
    const refused =
      (spec.stepId === undefined
        ? undefined
        : identifier.refusal("step id", spec.stepId, identifier.MAX_JOURNAL_ID_BYTES)) ??
      (spec.by === undefined ? undefined : identifier.principalRefusal(spec.by))
    return refused === undefined ? Effect.void : Effect.fail(refused)
  })

/** Why a saga with neither a decodable row nor a decodable entry cannot be shown; `SagaNotFound` when it has neither at all. */
const nothingToShow = (sagaId: string, verification: Verification) => {
  if (verification._tag === "Intact") return new SagaNotFound({ sagaId })
  return verification.problem === "undecodable"
    ? new JournalCorrupted({ sagaId, seq: verification.seq, reason: verification.reason })
    : new JournalError({ operation: "get", reason: verification.reason })
}

/** A run or an operator's command in flight; `driving`: the saga whose lock a run holds now. */
interface InFlight {
  readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
  driving: string | undefined
}

/** An operator's command, as `command` carries it out. */
interface Command<A, E> {
  readonly action: Action
  readonly stepId?: string | undefined
  /** Who the command names as deciding. */
  readonly by?: string | undefined
  readonly seen: Seen | undefined
  /** Whether this exact command was processed before, and its first answer (absent: it is always new). */
  readonly replay?:
    | {
        readonly prior: (writer: Writer) => Effect.Effect<replay.Prior, CommandConflict>
        readonly answer: (writer: Writer) => Effect.Effect<A, E>
      }
    | undefined
  readonly body: (writer: Writer, principal: Principal) => Effect.Effect<A, E>
}

/**
 * A step as `Saga.status` lists it. In an explicit undo's run (`compensateEffect`) the step is the
 * effect being undone: it was applied (`executed`) unless its undo awaits an approval, and its
 * effect id is the one the run undoes. A read says so (`changesNothing`): its unknown outcome is
 * nothing to settle. `undo`: what its undo came to (`undoOf`), or the run's answer. An unknown step
 * says why, as the saga journaled when it stopped on it (`view`).
 */
const stepStatus = (
  sagaId: string,
  step: StepView,
  undo: UndoState | undefined,
  view: JournalView,
  driven = false
): StepStatus => ({
  ...(isRead(step) ? { changesNothing: true } : {}),
  ...(needsReceipt(step) ? { receiptRequired: true } : {}),
  ...(retriesByKey(step) ? { retriesByKey: true } : {}),
  ...(isIrreversible(sagaId, step) ? { irreversible: true } : {}),
  ...(driven ? {} : unknownReasonOf(step, view)),
  stepId: step.stepId,
  toolName: step.toolName,
  effectId: effectIdOfRun(sagaId) ?? stepKey(sagaId, step.stepId),
  state: step.executed
    ? "executed"
    : step.failed
      ? "failed"
      : isUnknown(step)
        ? driven
          ? "in_flight"
          : "unknown"
        : isNotStarted(step)
          ? "not_started"
          : step.refused
            ? "refused"
            : step.approved
              ? "approved"
              : step.awaiting
                ? "awaiting_approval"
                : "executed",
  undo: undo?.outcome,
  ...(undo?.detail === undefined ? {} : { undoDetail: undo.detail })
})

/**
 * Whether a worker drives the saga now: it is running under a live lease, judged by the store's
 * clock (PostgreSQL's `now()`, as leases are), so a step with no outcome is its call, running.
 */
const isDriven = (journal: Journal["Type"], record: SagaRecord): Effect.Effect<boolean, JournalError> =>
  record.status !== "running" || record.lease === null
    ? Effect.succeed(false)
    : Effect.map(journal.leaseNow ?? Clock.currentTimeMillis, (now) => Lease.isInFlight(record, now))

const unknownReasonOf = (step: StepView, view: JournalView): { readonly unknownReason?: string } => {
  const reason = view.unknownReason(step.stepId)
  return reason === undefined ? {} : { unknownReason: reason }
}
