import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { isObject } from "effect/Predicate"
import { isActive, statusAfter } from "../../Journal.js"
import type { CompensationCause } from "../../SagaError.js"
import { ApprovalRefused, NonDeterminism, StepFailed } from "../../SagaError.js"
import type { SagaResult, UnknownStep } from "../../SagaResult.js"
import { sagaDraft } from "../journal/drafts.js"
import type { PayloadOf, SagaPhase } from "../journal/payloads.js"
import type { JournalView } from "../journal/view.js"
import { isUnknown } from "../journal/view.js"
import type { Writer } from "../journal/writer.js"
import { composedOfMasked } from "../util/masking.js"
import { maskedCause } from "./maskedCause.js"
import type { Halt } from "./run.js"
import { dropWithdrawn, withdrawals, withdrawnBecause } from "./withdrawal.js"

/**
 * The first line of a cause, as journaled and reported: written from the cause with its errors'
 * texts masked (`maskedCause`; `receipts`: those the run's calls set, which a tool's error may
 * quote), then cut. A failure its tool described (`described`: a model turn's) reads as its `FAILED` does.
 */
export const describeCause = (
  cause: Cause.Cause<unknown>,
  receipts: ReadonlyArray<string> = [],
  described?: WeakMap<object, string>
): string => {
  const failure = described === undefined ? Option.none() : Cause.failureOption(cause)
  const said = Option.isSome(failure) && isObject(failure.value) ? described?.get(failure.value) : undefined
  return (said ?? Cause.pretty(maskedCause(cause, receipts)).split("\n")[0]!).slice(0, 500)
}

const unknownOf = (
  view: JournalView,
  extra: UnknownStep | undefined,
  notStarted: ReadonlyArray<string>,
  reasons: ReadonlyMap<string, string>
): ReadonlyArray<UnknownStep> => {
  const steps = unknownBut(view, notStarted).map((step) => ({
    stepId: step.stepId,
    toolName: step.toolName,
    reason:
      step.stepId === extra?.stepId
        ? extra.reason
        : (reasons.get(step.stepId) ??
          view.unknownReason(step.stepId) ??
          "INTENT was journaled but no outcome: it may or may not have run")
  }))
  return extra === undefined || steps.some((step) => step.stepId === extra.stepId) ? steps : [...steps, extra]
}

/** The steps whose outcome is unknown (`unknownSteps`), but for those the run knows did not start. */
const unknownBut = (view: JournalView, notStarted: ReadonlyArray<string>) =>
  notStarted.length === 0
    ? view.unknownSteps()
    : view.unknownSteps().filter((step) => !notStarted.includes(step.stepId))

/**
 * The steps an interruption cut with none of their calls in flight (`SagaRun.notStarted`) whose
 * `INTENT` is still the last, without an outcome: what the entry that ends the run journals, so
 * that they read as not run, not unknown.
 */
const notStartedOf = <E>({ notStarted, writer }: RunEnd<E>): ReadonlyArray<string> => {
  if (notStarted.size === 0) return []
  const steps: Array<string> = []
  for (const [stepId, seq] of notStarted) {
    const step = writer.view.steps.get(stepId)
    if (step !== undefined && step.intent?.seq === seq && isUnknown(step) && !writer.holds(stepId)) steps.push(stepId)
  }
  return steps
}

/** The first failure that taints the saga, if any. */
const taintOf = (view: JournalView): StepFailed | undefined => {
  const step = view.firstTaint()
  if (step === undefined) return undefined
  return new StepFailed({ stepId: step.stepId, toolName: step.toolName, reason: step.failed!.payload.description })
}

/** What decides how a run ends, besides how its program ended. */
export interface RunEnd<E> {
  readonly sagaId: string
  readonly writer: Writer
  /** Why the run halted, if a step decided it. */
  readonly halt: Halt | undefined
  readonly onInterrupt: "suspend" | "compensate" | undefined
  /** Steps an interruption cut with none of their calls in flight, by the seq of their last `INTENT`. */
  readonly notStarted: ReadonlyMap<string, number>
  /** Compensates, journaling `notStarted` with `SAGA_COMPENSATING`. */
  readonly compensate: (
    cause: Cause.Cause<E | CompensationCause>,
    notStarted: ReadonlyArray<string>
  ) => Effect.Effect<SagaResult<never, E>, any>
  /** Drops a withdrawn approval request from the `Approval` service. */
  readonly withdraw: (requestId: string, reason: string) => Effect.Effect<void>
  /** Why steps the run halted on could not know their outcome (calls in flight with the first halt's too). */
  readonly unknownReasons: ReadonlyMap<string, string>
  /** The unknown steps the run's program succeeded without reaching: journaled `unreached`. */
  readonly unreached: ReadonlySet<string>
  /** A cause as `SAGA_COMPENSATING` journals it (`describeCause`, masking the run's receipts). */
  readonly describe: (cause: Cause.Cause<unknown>) => string
}

/**
 * Whether the run completed with every step's outcome known once what its writer holds back is
 * counted, and nothing else is being written: then that travels with `SAGA_COMPLETED`, in one append.
 */
const completes = <A, E>(end: RunEnd<E>, ran: Exit.Exit<Exit.Exit<A, E>>): boolean => {
  const { writer } = end
  return (
    Exit.isSuccess(ran) &&
    end.halt === undefined &&
    Exit.isSuccess(ran.value) &&
    writer.idle &&
    writer.view.unknownSteps().every((step) => writer.holds(step.stepId)) &&
    taintOf(writer.view) === undefined
  )
}

/**
 * How a run ends: by the halt a step decided, else by how its program ended (interrupted,
 * leaving unknown steps, failed, tainted, or completed), journaled when the saga's status changes.
 * `ran` is the run's own exit: a failure there is the run interrupted from outside. Whatever the
 * writer holds back is written before anything is decided from the view (a run that stops on a
 * fatal error writes it if it can), or, for a run that completes, with `SAGA_COMPLETED`.
 */
export const endRun = <A, E>(end: RunEnd<E>, ran: Exit.Exit<Exit.Exit<A, E>>): Effect.Effect<SagaResult<A, E>, any> => {
  if (completes(end, ran)) return decide(end, ran)
  const flush = end.halt?._tag === "Fatal" ? Effect.ignore(end.writer.flush) : end.writer.flush
  return Effect.zipRight(
    flush,
    Effect.suspend(() => decide(end, ran))
  )
}

/** How a run ends, once its writer holds back nothing but what travels with `SAGA_COMPLETED`. */
const decide = <A, E>(end: RunEnd<E>, ran: Exit.Exit<Exit.Exit<A, E>>): Effect.Effect<SagaResult<A, E>, any> => {
  const { sagaId, writer } = end
  const view = writer.view
  const notStarted = notStartedOf(end)
  const suspended = notStarted.length === 0 ? null : { notStarted }

  const endWith = <P extends SagaPhase>(phase: P, payload: PayloadOf<P>) =>
    view.status === statusAfter(view.status, [{ phase }]) ? Effect.void : writer.append([sagaDraft(phase, payload)])

  const needsAttention = (extra: UnknownStep | undefined) => {
    const unknown = unknownOf(view, extra, notStarted, end.unknownReasons)
    const journaled = unknown.map((step) =>
      end.unreached.has(step.stepId) ? { ...step, unreached: true as const } : step
    )
    const payload = notStarted.length === 0 ? { unknown: journaled } : { unknown: journaled, notStarted }
    // A step newly found unreached is journaled so even by a run that wrote nothing else (a step removed).
    const marks = [...end.unreached].some((stepId) => !view.unreached(stepId))
    const write = marks
      ? writer.append([sagaDraft("SAGA_NEEDS_ATTENTION", payload)])
      : endWith("SAGA_NEEDS_ATTENTION", payload)
    return Effect.as(write, {
      _tag: "NeedsAttention" as const,
      sagaId,
      unknown
    })
  }

  /**
   * What a run answers for a compensation begun before whose program does not fail now: the taint
   * again (`StepFailed`, rebuilt from the journal) where that began it, as it did for the first run;
   * else a defect that quotes the journaled cause (masked when it was journaled).
   */
  const compensatedBefore = (): Cause.Cause<StepFailed> => {
    const taint = taintOf(view)
    if (taint !== undefined && view.compensationCause === describeCause(Cause.fail(taint))) return Cause.fail(taint)
    return Cause.die(composedOfMasked(new Error(`the saga was compensated before: ${view.compensationCause}`)))
  }

  /**
   * Whether a step's outcome cannot be known: its `INTENT` journaled, no outcome written or held
   * back, and not one the run knows did not start.
   */
  const leftUnknown = () => unknownBut(view, notStarted).some((step) => !writer.holds(step.stepId))

  const compensate = (cause: Cause.Cause<E | CompensationCause>) => end.compensate(cause, notStarted)

  /**
   * A run interrupted from outside (its caller gets no answer) before it wrote anything leaves a
   * saga that was waiting (for an approval, an operator, a resume) as it was. A new saga, one that
   * was running, or one whose program interrupted itself (the run answers `Suspended`) is
   * journaled suspended.
   */
  const suspend = (fromOutside: boolean) => {
    const answer = { _tag: "Suspended" as const, sagaId }
    const leftAsItWas = fromOutside && writer.markerPending && view.exists && !isActive(view.status)
    return leftAsItWas ? Effect.succeed(answer) : Effect.as(endWith("SAGA_SUSPENDED", suspended), answer)
  }

  // An interruption that cut a call in flight left its outcome unknown: nothing is undone then.
  const suspendOrCompensate = (cause: Cause.Cause<unknown>, fromOutside: boolean) =>
    end.onInterrupt !== "compensate"
      ? suspend(fromOutside)
      : leftUnknown()
        ? needsAttention(undefined)
        : compensate(cause as Cause.Cause<E>)

  const halted = (halt: Halt): Effect.Effect<SagaResult<A, E>, any> => {
    switch (halt._tag) {
      case "AwaitingApproval": {
        // Withdrawn while the run stopped (a failure in flight bound the saga to compensate): nothing to await.
        const withdrawn = view.steps.get(halt.request.stepId)
        if (withdrawn?.refused !== undefined) {
          const { stepId, toolName } = withdrawn
          return compensate(
            Cause.fail(new ApprovalRefused({ stepId, toolName, reason: withdrawn.refused.payload.reason }))
          )
        }
        // A call in flight with the request that died, or was cut, left its outcome unknown: that
        // needs a human first (saying why), and the request stays pending, asked as it was.
        if (leftUnknown()) return needsAttention(undefined)
        return Effect.as(
          endWith("SAGA_AWAITING_APPROVAL", { stepId: halt.request.stepId, requestId: halt.request.requestId }),
          { _tag: "AwaitingApproval" as const, sagaId, request: halt.request }
        )
      }
      case "NeedsAttention":
        return needsAttention(halt.step)
      case "Refused":
        return compensate(Cause.fail(halt.error))
      case "Fatal":
        return Effect.fail(halt.error)
      case "Unauthorized":
        return Effect.zipRight(endWith("SAGA_SUSPENDED", suspended), Effect.fail(halt.error))
      case "Closed":
        return compensate(compensatedBefore())
    }
  }

  if (view.status === "completed") return replayOfCompleted(end, ran)
  if (view.status === "compensated" || view.status === "compensation_failed") {
    return replayOfUndone(end, ran, compensatedBefore)
  }
  if (Exit.isFailure(ran)) return suspendOrCompensate(ran.cause, true)
  if (end.halt !== undefined) return halted(end.halt)
  const exit = ran.value
  if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) return suspendOrCompensate(exit.cause, false)
  if (leftUnknown()) return needsAttention(undefined)
  if (Exit.isFailure(exit)) return compensate(exit.cause)
  // A saga that began to compensate never completes, even if its program now succeeds.
  if (view.compensationStarted) return compensate(compensatedBefore())
  const taint = taintOf(view)
  if (taint !== undefined) return compensate(Cause.fail(taint))
  return Effect.as(complete(end, notStarted), { _tag: "Completed" as const, sagaId, value: exit.value })
}

/**
 * Journals `SAGA_COMPLETED`, with the calls the program interrupted before they started
 * (`notStarted`), if any. An approval request the program did not reach this time (it changed
 * since the request was filed) is withdrawn in the same append: nobody can approve a call of a
 * completed saga.
 */
const complete = <E>({ withdraw, writer }: RunEnd<E>, notStarted: ReadonlyArray<string>) => {
  const completed = sagaDraft("SAGA_COMPLETED", notStarted.length === 0 ? null : { notStarted })
  const withdrawn = withdrawals(writer.view, withdrawnBecause.completed)
  if (withdrawn.length === 0) return writer.append([completed])
  return Effect.zipRight(writer.append([...withdrawn, completed]), dropWithdrawn(writer, withdraw))
}

/** Whether a halt is an error to pass on as it is: nothing is decided from it. */
const passesOn = (halt: Halt | undefined): halt is Extract<Halt, { _tag: "Fatal" | "Unauthorized" }> =>
  halt?._tag === "Fatal" || halt?._tag === "Unauthorized"

/**
 * The replay of a completed saga writes nothing and undoes nothing: it answers the program's value.
 * A program that now fails or halts did not replay as journaled: `NonDeterminism`. Interrupted
 * from outside, the run is interrupted.
 */
const replayOfCompleted = <A, E>(
  end: RunEnd<E>,
  ran: Exit.Exit<Exit.Exit<A, E>>
): Effect.Effect<SagaResult<A, E>, any> => {
  if (Exit.isFailure(ran)) return Effect.failCause(ran.cause)
  const { halt, sagaId } = end
  if (passesOn(halt)) return Effect.fail(halt.error)
  const diverged = (now: string) =>
    Effect.fail(
      new NonDeterminism({ sagaId, stepId: "SAGA_COMPLETED", reason: `the saga completed, its program now ${now}` })
    )
  const exit = ran.value
  if (halt !== undefined) return diverged(`halts (${halt._tag})`)
  if (Exit.isFailure(exit)) return diverged(`fails: ${describeCause(exit.cause)}`)
  return Effect.succeed({ _tag: "Completed", sagaId, value: exit.value })
}

/**
 * The replay of a compensated saga, or of one whose compensation failed, writes nothing (unless an
 * undo that could not run before runs now: see `compensate`): however its program ends now, it
 * answers the report of its compensation, with the program's failure as its cause when that is the
 * failure journaled as the compensation's cause (not after an operator's `compensate`, nor another
 * failure). Interrupted from outside, the run is interrupted.
 */
const replayOfUndone = <A, E>(
  end: RunEnd<E>,
  ran: Exit.Exit<Exit.Exit<A, E>>,
  compensatedBefore: () => Cause.Cause<StepFailed>
): Effect.Effect<SagaResult<A, E>, any> => {
  if (Exit.isFailure(ran)) return Effect.failCause(ran.cause)
  const { halt } = end
  if (passesOn(halt)) return Effect.fail(halt.error)
  if (halt?._tag === "Refused") return end.compensate(Cause.fail(halt.error), [])
  const exit = ran.value
  // The program's failure is the answer only when it is the one that began the compensation.
  const again =
    halt === undefined && Exit.isFailure(exit) && end.describe(exit.cause) === end.writer.view.compensationCause
  return end.compensate(again ? exit.cause : compensatedBefore(), [])
}
