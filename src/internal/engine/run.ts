/**
 * One run of one saga's program: the `CurrentSaga` its steps call. NOTE (file length): one class
 * whose parts — a step's progress, the replay of journaled outcomes, the approval gate, the call
 * and its journaling — share the run's state (its writer, its halt, the calls in flight); payloads,
 * ids and drafts live in `journal/`, how a run ends in `ending.ts`.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import type * as FiberRefs from "effect/FiberRefs"
import * as Option from "effect/Option"
import { isObject } from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import type * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Tracer from "effect/Tracer"
import type { Approval, ApprovalRequest, Decision } from "../../Approval.js"
import type { Unauthorized } from "../../Authority.js"
import type { StepContext } from "../../Compensable.js"
import { DeclarationError, InvalidInput, PayloadTooLarge } from "../../Compensable.js"
import type { AppendError, Draft } from "../../Journal.js"
import { JournalCorrupted, JournalTampered } from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"
import * as Outcome from "../../Outcome.js"
import { ApprovalPending, ApprovalRefused, NonDeterminism } from "../../SagaError.js"
import type { UnknownStep } from "../../SagaResult.js"
import { distrust, requestOf, tamperedAt, withoutMac } from "../journal/decisions.js"
import { executedDraft, intentDraft, stepDraft } from "../journal/drafts.js"
import { sha256 } from "../journal/hash.js"
import {
  callIdOf,
  inputKey,
  isEscapedInIds,
  isOccurrenceOf,
  legacyCallIdOf,
  stepIdOf,
  stepKey
} from "../journal/ids.js"
import type { JournaledReceipt, PayloadOf } from "../journal/payloads.js"
import type { JournalView, StepView } from "../journal/view.js"
import { answersPending, isNotStarted, isRead, isUnknown, isUnsettled } from "../journal/view.js"
import type { Writer } from "../journal/writer.js"
import { observeReplayed } from "../observability/metrics.js"
import { entering, withNewSpan } from "../observability/spans.js"
import { exitInChild } from "../util/child.js"
import { byteLength, decodeJournaled, decodeJournaledJson, decodeValue, encodeJson } from "../util/codec.js"
import { failAfter } from "../util/deadline.js"
import { causeText, cutDetail, defectLine } from "../util/detail.js"
import { fiberRefsNow, sharedFiberRefs } from "../util/fiberRefsOf.js"
import { stepKeyRefusal } from "../util/identifier.js"
import { maskedEncoded } from "../util/maskedEncoded.js"
import { composedOfMasked, masked } from "../util/masking.js"
import { PROGRAM_CUT, RUN_CUT } from "../util/toResolve.js"
import * as boundToUndo from "./boundToUndo.js"
import { isBoundToUndo, notRunBecause, refusal } from "./boundToUndo.js"
import type { StepOptions } from "./context.js"
import { CurrentSaga, EnclosingRun, enclosingRuns } from "./context.js"
import { problemOf } from "./declaration.js"
import type { Expiring } from "./expiry.js"
import { expiredAt, expiredReason } from "./expiry.js"
import { Faults } from "./faults.js"
import { cutCause, isOwnError, maskedCause } from "./maskedCause.js"
import * as Receipts from "./receipts.js"
import type { RegisteredTool, Registry, UndoneStep } from "./registry.js"
import type { StepSpec } from "./spec.js"
import { isWithdrawn } from "./withdrawal.js"

/** No step's reason for an unknown outcome: what a run has until a call halts on one. */
const noReasons: ReadonlyMap<string, string> = new Map()

/** No step ids: what a run that found none shares. */
const noSteps: ReadonlySet<string> = new Set()

/** Why a run stopped before its program ended. */
export type Halt =
  | { readonly _tag: "AwaitingApproval"; readonly request: ApprovalRequest }
  | { readonly _tag: "NeedsAttention"; readonly step: UnknownStep }
  | { readonly _tag: "Refused"; readonly error: ApprovalRefused }
  | { readonly _tag: "Closed" }
  | { readonly _tag: "Unauthorized"; readonly error: Unauthorized }
  | {
      readonly _tag: "Fatal"
      readonly error: AppendError | JournalCorrupted | JournalTampered | NonDeterminism
    }

/** Carries a halt out of the step that decided it. */
class HaltSignal {
  readonly _tag = "HaltSignal"
  constructor(readonly halt: Halt) {}
}

const haltOn = (halt: Halt) => Effect.fail(new HaltSignal(halt))

/**
 * What the span of step `stepId` says when `halt` is its own: `unknown` (the saga needs attention
 * on it), `awaiting_approval`, or `not_run` (refused: rejected, expired, or bound to compensate),
 * with the reason where there is one.
 */
const haltSaid = (halt: Halt, stepId: string): { readonly outcome: string; readonly reason?: string } | undefined => {
  switch (halt._tag) {
    case "NeedsAttention":
      return halt.step.stepId === stepId ? { outcome: "unknown", reason: halt.step.reason } : undefined
    case "AwaitingApproval":
      return halt.request.stepId === stepId ? { outcome: "awaiting_approval" } : undefined
    case "Refused":
      return halt.error.stepId === stepId ? { outcome: "not_run", reason: halt.error.reason } : undefined
    default:
      return undefined
  }
}

const fatal = (error: AppendError | JournalCorrupted | JournalTampered | NonDeterminism) =>
  haltOn({ _tag: "Fatal", error })

/*
 * NOTE (V8's pretenuring): what a step makes on its way is made by classes, not object or array
 * literals. V8 follows where each literal is made and, once most of what one place made survived a
 * young collection (as happens in a process's first sagas, while its young generation is small),
 * makes everything that place makes in the old generation for the rest of the process. What such
 * an object points to then outlives the step until a full collection: on the bench's saga, 5 KB
 * more a saga copied to the old generation, and up to a third more time. Class instances and
 * `Array.of()` are not followed so (docs/performance.md, sixth pass).
 */

/**
 * What a step does once the run has halted: it waits for the halt to interrupt the program. A
 * finalizer of the program (`Effect.ensuring`, `Effect.onInterrupt`, `Effect.acquireRelease`'s
 * release) cannot be interrupted: waiting there would block the program, and the run, for good. Its
 * step stops as interrupted instead, without running or journaling; the run ends with the halt.
 */
const untilInterrupted: Effect.Effect<never> = Effect.checkInterruptible((interruptible) =>
  interruptible ? Effect.never : Effect.interrupt
)

/** Every outcome a journaled failure may hold: `Outcome.Failed`, or a read's unknown or partial outcome. */
const Outcomes = Schema.Union(Outcome.Failed, Outcome.Unknown, Outcome.Partial)

/** The schema an outcome is journaled with: its own kind's (anything else is tried as `Outcome.Failed`). */
const outcomeSchemaOf = (error: unknown): Schema.Schema<any, any> =>
  error instanceof Outcome.Unknown
    ? Outcome.Unknown
    : error instanceof Outcome.Partial
      ? Outcome.Partial
      : Outcome.Failed

/**
 * The exit a step's span ends with: a success for a call answered in its caller's stead (it awaits
 * approval, or the saga refused to run it: nothing failed), or that the journal answered (a replay:
 * nothing ran, even where it answers a failure); else the call's own, unless its spec says how its
 * failure reads in a span (`shownInSpan`); its error's texts masked where they hold a receipt the
 * call set (`maskedCause`), then cut at `MAX_DETAIL` characters (`cutCause`): a span is exported
 * and logged as it ends, its error's own `cause`s rendered too.
 */
const spanExit = (cause: Cause.Cause<unknown>, placed: Placed): Exit.Exit<unknown, unknown> => {
  if (placed.answered || placed.replayed) return Exit.void
  const { receipts } = placed
  const failure = Cause.failureOption(cause)
  const told = Option.isSome(failure) ? placed.spec.shownInSpan?.(failure.value) : undefined
  if (told !== undefined) return Exit.fail(new Error(cutDetail(receipts === undefined ? told : masked(told, receipts))))
  return Exit.failCause(cutCause(placed.failedWith ?? maskedCause(cause, receipts)))
}

/** One call of a step: its spec, id, and its input decoded, encoded and hashed. */
class Call {
  constructor(
    readonly spec: StepSpec,
    readonly stepId: string,
    /** The caller's value (an irreversible step's tool is given the journal's instead, once approved: `gate`). */
    readonly input: unknown,
    readonly inputJson: string,
    readonly digest: string
  ) {}
}

/**
 * A call as it progresses: in its step's span, under the fault injection of the caller's context,
 * if any; with the receipts its attempts set, masked wherever its failure is written or shown.
 */
class Placed extends Call {
  receipts: Array<string> | undefined = undefined
  /** Answered from the journal: nothing ran, so its span ends OK, a journaled failure too. */
  replayed = false
  /**
   * How the call failed, its receipts masked, when the program is answered with its journaled copy
   * instead (`failed`): what its span ends with, its error's own `cause`s included.
   */
  failedWith: Cause.Cause<unknown> | undefined = undefined
  /**
   * The call answered `ApprovalPending` (it defers its approval) or, not run in a saga bound to
   * compensate, `ApprovalRefused` without halting: its span ends as a success.
   */
  answered = false
  constructor(
    call: Call,
    readonly span: Tracer.Span,
    readonly faults: Option.Option<Faults["Type"]>
  ) {
    super(call.spec, call.stepId, call.input, call.inputJson, call.digest)
  }
}

/** A step span's attributes: the saga (also as OpenTelemetry's proposed `workflow.id`), the step and its tool. */
class StepAttributes {
  readonly [key: string]: string
  readonly "saga.id": string
  readonly "workflow.id": string
  readonly "step.id": string
  constructor(
    sagaId: string,
    stepId: string,
    readonly tool: string
  ) {
    this["saga.id"] = sagaId
    this["workflow.id"] = sagaId
    this["step.id"] = stepId
  }
}

/**
 * A call's attempts so far, and the receipt its tool set in the last one: text, unless a tool typed
 * loosely (`any` from a provider's JSON) set something else, which `executed` refuses to journal.
 */
class Attempts {
  receipt: unknown = undefined
  /**
   * Whether a call may have changed something: an attempt was handed to the tool (or to the faults
   * around it), and has not ended with a typed failure since, or an attempt ended with its outcome
   * unknown. False until the first attempt starts: an interruption then left nothing in flight.
   */
  mayHaveRun = false
  /** An attempt ended with `Outcome.unknown` and the call went on (its tool may repeat it). */
  unknownBefore = false
  constructor(public attempt: number) {}
}

/** The steps cut before they started of a run that has none. */
const noneNotStarted: ReadonlyMap<string, number> = new Map()

/** The caller's context as an undo runs in it: without the saga and the caller's span. */
const undoContextOf = (context: Context.Context<never>): Context.Context<never> =>
  Context.omit(CurrentSaga, Tracer.ParentSpan)(context) as Context.Context<never>

/**
 * One call this run made of a tool (or the replay of one), with what its undo runs with: the
 * caller's context, without the saga and the caller's span (an undo has a span of its own), made
 * when an undo asks for it (most runs never compensate); and the calling fiber's FiberRef values
 * (log annotations and spans, `Effect.locally`) as the call started, kept as a reference (they are
 * immutable). Kept per step: a tool called twice under different values is undone each time with
 * its own call's. The registry keeps neither the FiberRef values (they are one saga's, and it serves
 * every saga) nor more than a tool's first context.
 */
class CalledTool implements RegisteredTool {
  private undoContext: Context.Context<never> | undefined
  constructor(
    readonly spec: StepSpec,
    private readonly callContext: Context.Context<never>,
    readonly fiberRefs: FiberRefs.FiberRefs
  ) {}

  get context(): Context.Context<never> {
    this.undoContext ??= undoContextOf(this.callContext)
    return this.undoContext
  }
}

/**
 * How a call treats a pending approval: `halt` the saga, or `defer` (answer `ApprovalPending` and
 * let the program go on); `settle` runs a deferred call once approved.
 */
type Mode = "halt" | "defer" | "settle"

/** How the reason of an unknown step a resumed program did not reach goes on, after why it is unknown. */
const NOT_REACHED = "; this run's program ended without reaching it: "

/** One run of one saga's program: the `CurrentSaga` its steps call. */
export class SagaRun {
  /** Why the run halted, once a step decided it. */
  haltedWith: Halt | undefined
  /** Why each step the run halted on could not know its outcome, by step id: the first halt's, and those of calls in flight with it. */
  unknownReasons: ReadonlyMap<string, string> = noReasons
  /** The unknown steps of the journal this run's program succeeded without reaching (`notReached`). */
  unreached: ReadonlySet<string> = noSteps
  /** This run, as the fibers of its program know it (`enclosingRuns`): `ended` clears it. */
  private readonly enclosing: EnclosingRun
  private inflight = 0
  private programFiber: Fiber.RuntimeFiber<unknown, unknown> | undefined
  private readonly occurrences = new Map<string, number>()
  /** Whether this saga's steps are named as before 0.5.0 (see `callIdOf` below), read once. */
  private legacyIds: boolean | undefined
  /** The specs of the tools this run called, by name. */
  private readonly tools = new Map<string, StepSpec>()
  /** This run's calls by step id, with the context and FiberRef values each one's undo runs with. */
  private readonly calls = new Map<string, CalledTool>()
  /** Each tool's first call in this run: what undoes a step of it this run did not call. */
  private readonly firstCalls = new Map<string, CalledTool>()
  /** The FiberRef values of the run's last call (`fiberRefsOf`). */
  private lastFiberRefs: FiberRefs.FiberRefs | undefined
  /** Journaled steps this run has not called yet (none for a new saga: see the NOTE on lazy state below). */
  private unreplayed: Map<string, StepView> | undefined
  /**
   * A call the program interrupted itself once it had started (`Effect.timeout`, a race, a failing
   * sibling in `Effect.all`): its outcome is unknown, so no further step that may change something starts.
   */
  private abandoned: UnknownStep | undefined
  /**
   * Whether the run itself is being interrupted (a shutdown, its caller's timeout): the calls it cuts
   * are not the program's own doing, and a finalizer of the program may still call a tool.
   */
  private stoppedFromOutside = false
  /** Whether this run made a call the journal had never seen that may change something. */
  private madeFresh = false
  /** On a replay, the calls that may change something this run ran, the journal's and new ones (made at the first). */
  private ranHere: Array<string> | undefined
  /** Calls that answered `ApprovalPending` in this run, by step id (made at the first). */
  private deferred: Map<string, Call> | undefined
  /** The receipts calls set in this run: what is masked in the cause compensation journals. */
  readonly receipts: Array<string> = Array.of()
  /** The errors of this run's calls that their tool describes (`describedAs`), as `FAILED` says them (made at the first). */
  described: WeakMap<object, string> | undefined
  /** `notStarted`'s steps, made at the first. */
  private notStartedSteps: Map<string, number> | undefined

  constructor(
    readonly writer: Writer,
    private readonly approval: Approval["Type"],
    /** Drops a request the saga withdrew from the approval service. */
    private readonly withdraw: (requestId: string, reason: string) => Effect.Effect<void>,
    private readonly registry: Registry,
    private readonly closed: boolean,
    /** Asks again, before each step progresses, whether the caller may go on (absent: the answer cannot change). */
    private readonly recheck: Effect.Effect<void, Unauthorized> | undefined,
    /** The keys receipts are sealed with (the `Saga` layer's `EFFECT_SAGA_RECEIPT_KEYS`); none: plain text. */
    private readonly receiptKeys: KeyRing | undefined,
    /** How long an approval lasts when neither it nor its tool says (the `Saga` layer's default). */
    private readonly approvalTtl: Duration.Duration | undefined,
    /** The journal key ring: what an approval store's decisions are signed with. */
    private readonly journalKeys: KeyRing | undefined
  ) {
    this.unreplayed = writer.view.steps.size === 0 ? undefined : new Map(writer.view.steps)
    this.enclosing = new EnclosingRun(writer.sagaId)
  }

  /*
   * NOTE (lazy state): what only some runs need (a resumed saga's unreplayed steps, deferred calls,
   * steps cut before they started) is made when first needed. A run keeps its state for as long as
   * its saga is in flight, and every young collection copies what is still alive: an empty `Map`
   * is ≈ 180 bytes (docs/performance.md, the working set of a saga in flight).
   */

  /**
   * Steps an interruption cut with none of their calls in flight, by the seq of the `INTENT` it left
   * without an outcome: how the run ends journals them as not started (`ending.ts`).
   */
  get notStarted(): ReadonlyMap<string, number> {
    return this.notStartedSteps ?? noneNotStarted
  }

  /** The run has ended (compensation too): a fiber its program left behind may run the saga again. */
  ended(): void {
    this.enclosing.inProgress = false
  }

  get sagaId(): string {
    return this.writer.sagaId
  }

  /**
   * Runs the program in a fiber of its own, which a halt interrupts once no step is between its
   * first and last journal write.
   */
  runProgram<A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<Exit.Exit<A, E>, never, Exclude<R, CurrentSaga>> {
    // The fiber is the program's alone: the saga is added to its context, and this run to the
    // enclosing runs still in progress (context.ts), for good (nothing to restore).
    const own = Effect.withFiberRuntime<Exit.Exit<A, E>, never, Exclude<R, CurrentSaga>>((fiber) => {
      this.programFiber = fiber as Fiber.RuntimeFiber<unknown, unknown>
      const runs = [...fiber.getFiberRef(enclosingRuns).filter((run) => run.inProgress), this.enclosing]
      // As `Effect.exit(Effect.onExit(Effect.tap(program, settleRemaining), programEnded))`, in one
      // mask and one frame while the program runs (docs/performance.md, the working set).
      return Effect.zipRight(
        Effect.zipRight(
          FiberRef.update(FiberRef.currentContext, Context.add(CurrentSaga, this)),
          FiberRef.set(enclosingRuns, runs)
        ),
        Effect.uninterruptibleMask((restore) =>
          Effect.matchCauseEffect(restore(program), {
            onFailure: (cause) => this.programEnded(Exit.failCause(cause)),
            onSuccess: (value) =>
              Effect.matchCauseEffect(restore(Effect.suspend(() => this.settleRemaining())), {
                onFailure: (cause) => this.programEnded(Exit.failCause(cause)),
                onSuccess: () => this.programEnded(Exit.succeed(value))
              })
          })
        )
      ) as Effect.Effect<Exit.Exit<A, E>, never, Exclude<R, CurrentSaga>>
    })
    return exitInChild(own, () => {
      this.stoppedFromOutside = true
    })
  }

  /** What the run keeps of how its program ended (uninterruptibly, as the program's fiber ends); answers `exit`. */
  private programEnded<A, E>(exit: Exit.Exit<A, E>): Effect.Effect<Exit.Exit<A, E>> {
    return Effect.sync(() => {
      // A program that ended on its own (not interrupted) with a call it interrupted itself ends naming that call.
      const ownEnd = Exit.isSuccess(exit) || !Cause.isInterruptedOnly(exit.cause)
      if (ownEnd && this.abandoned !== undefined) {
        this.haltedWith ??= { _tag: "NeedsAttention", step: this.abandoned }
      }
      // A saga a failure binds to compensate does not complete: it compensates from its journal.
      const completes = Exit.isSuccess(exit) && !this.closed && this.writer.view.firstTaint() === undefined
      // A completed saga's replay answers its program's value only from a program that replayed its calls.
      const replaysCompleted = Exit.isSuccess(exit) && this.closed && this.writer.view.status === "completed"
      if (completes || replaysCompleted) this.haltedWith ??= this.notReplayed()
      if (ownEnd && !this.closed) this.notReached(completes)
      this.writer.programEnd()
      return exit
    })
  }

  private interruptIfDrained(): void {
    if (this.haltedWith !== undefined && this.inflight === 0) this.programFiber?.unsafeInterruptAsFork(FiberId.none)
  }

  /*
   * NOTE (methods, not fields): `step`, `stepOn`, `settle` and `undoToolOf` are methods (the engine
   * calls them on the run), and `settleRemaining` is made when the program ends: a field holding a
   * function or an Effect is one more object for every run, kept while its saga is in flight.
   */

  step(
    spec: StepSpec,
    input: unknown,
    key: string | undefined,
    options?: StepOptions
  ): Effect.Effect<unknown, unknown> {
    return Effect.withFiberRuntime((fiber) =>
      this.stepOn(fiber as Fiber.RuntimeFiber<unknown, unknown>, spec, input, key, options)
    )
  }

  stepOn(
    fiber: Fiber.RuntimeFiber<unknown, unknown>,
    spec: StepSpec,
    input: unknown,
    key: string | undefined,
    options?: StepOptions
  ): Effect.Effect<unknown, unknown> {
    if (this.writer.programHasEnded) return this.outlived(spec.name)
    if (this.haltedWith !== undefined) return untilInterrupted
    const badKey = key === undefined ? undefined : stepKeyRefusal(key)
    if (badKey !== undefined) return Effect.fail(badKey)
    const encoded = encodeJson(spec.input, input)
    if (Either.isLeft(encoded)) return Effect.fail(new InvalidInput({ toolName: spec.name, reason: encoded.left }))
    const inputJson = encoded.right
    const bytes = byteLength(inputJson)
    if (bytes > spec.maxPayloadBytes) {
      return Effect.fail(new PayloadTooLarge({ toolName: spec.name, bytes, maxBytes: spec.maxPayloadBytes }))
    }
    const digest = sha256(inputJson)
    const stepId = this.allocate(spec.name, key ?? inputKey(digest))
    const call = new Call(spec, stepId, input, inputJson, digest)
    const mode = options?.deferApproval === true ? "defer" : "halt"
    return this.progress(
      call,
      fiber.currentContext,
      (placed) => this.advance(placed, key !== undefined, mode),
      options?.spanEnded
    )
  }

  settle(stepId: string): Effect.Effect<unknown, unknown> {
    return Effect.suspend(() => {
      if (this.writer.programHasEnded) return this.outlived(this.writer.view.steps.get(stepId)?.toolName ?? stepId)
      // Settled before in this run, its `EXECUTED` held back: written first, so that it replays.
      return this.writer.holds(stepId)
        ? Effect.matchEffect(this.writer.flush, {
            onFailure: (error) => this.stop({ _tag: "Fatal", error }),
            onSuccess: () => this.settleNow(stepId)
          })
        : this.settleNow(stepId)
    })
  }

  private settleNow(stepId: string): Effect.Effect<unknown, unknown> {
    return Effect.withFiberRuntime((fiber) => {
      if (this.haltedWith !== undefined) return untilInterrupted
      const step = this.writer.view.steps.get(stepId)
      if (step === undefined || !answersPending(step)) {
        return Effect.dieMessage(
          `effect-saga: step ${stepId} did not answer ApprovalPending: there is nothing to settle`
        )
      }
      const made = this.deferred?.get(stepId)
      const call = made === undefined ? this.callFromJournal(step) : Either.right(made)
      if (Either.isLeft(call)) return this.stop(call.left)
      return this.progress(call.right, fiber.currentContext, (placed) => this.advance(placed, true, "settle"))
    })
  }

  /** Deferred calls the program did not settle run when it ends, once approved, in journal order. */
  private settleRemaining(): Effect.Effect<void> {
    const unsettled = Array.from(this.writer.view.steps.values()).filter(
      (step) =>
        answersPending(step) &&
        step.executed === undefined &&
        step.failed === undefined &&
        !this.writer.holds(step.stepId)
    )
    if (unsettled.length === 0) return Effect.void
    // A failure is journaled and taints the saga as the tool says; a call that dies halts the run (unknown).
    return Effect.forEach(unsettled, (step) => Effect.ignore(this.settle(step.stepId)), { discard: true })
  }

  /** A deferred call made in an earlier run, rebuilt from the journal and the registered tools. */
  private callFromJournal(step: StepView): Either.Either<Call, Halt> {
    const spec = this.tools.get(step.toolName) ?? this.registry.get(step.toolName)?.spec
    if (spec === undefined) {
      const reason = this.registry.isShared(step.toolName)
        ? `it awaits approval, but two different tools named ${step.toolName} are known in this process (two manifests, toolkits or agents bind that name): the journal cannot tell which one it is, so it cannot run here`
        : "it awaits approval, but its tool is not registered in this process, so it cannot run here"
      return Either.left({ _tag: "NeedsAttention", step: { stepId: step.stepId, toolName: step.toolName, reason } })
    }
    const inputJson = step.input ?? "null"
    return Either.match(decodeJournaledJson(spec.input, inputJson), {
      onLeft: (reason) =>
        Either.left({
          _tag: "Fatal",
          error: new JournalCorrupted({
            sagaId: this.sagaId,
            seq: step.awaiting!.seq,
            reason: `input of ${step.stepId} does not decode with the tool's schema: ${reason}`
          })
        }),
      onRight: (input) => Either.right(new Call(spec, step.stepId, input, inputJson, sha256(inputJson)))
    })
  }

  /**
   * Runs one call's progress as a step: its tool registered (with the caller's `context`), counted
   * in flight (a halt waits for it), the caller's permission asked again, halts caught, in a span.
   */
  private progress(
    call: Call,
    context: Context.Context<never>,
    advance: (placed: Placed) => Effect.Effect<unknown, unknown>,
    spanEnded?: StepOptions["spanEnded"]
  ): Effect.Effect<unknown, unknown> {
    const { spec, stepId } = call
    if (!this.tools.has(spec.name)) {
      const problem = problemOf(spec)
      if (problem !== undefined) return Effect.die(new DeclarationError({ toolName: spec.name, reason: problem }))
      this.tools.set(spec.name, spec)
      if (this.registry.remember(spec.name, { spec, context: undoContextOf(context) }) === "shared") {
        const warning = Effect.logWarning(`effect-saga: ${this.registry.absence(spec.name)}`)
        return Effect.zipRight(warning, this.progress(call, context, advance, spanEnded))
      }
    }
    const faults = Context.getOption(context, Faults)
    // The span is made inside the mask: an interruption cannot come between its start and its end.
    // (Its attributes are made there too: a variable of this scope would be kept with it while the step runs.)
    return Effect.uninterruptibleMask((restore) =>
      withNewSpan("effect-saga.step", new StepAttributes(this.sagaId, stepId, spec.name), (span, fiber) => {
        this.called(new CalledTool(spec, context, this.fiberRefsOf(fiber)), stepId)
        const entered = entering(fiber, span)
        this.inflight++
        const placed = new Placed(call, span, faults)
        const progress =
          this.recheck === undefined
            ? advance(placed)
            : Effect.zipRight(
                Effect.catchAll(this.recheck, (error) => haltOn({ _tag: "Unauthorized", error })),
                Effect.suspend(() => advance(placed))
              )
        const left = <A>(then: () => Effect.Effect<A, any>) =>
          Effect.flatMap(entered.leave, () => {
            this.inflight--
            this.interruptIfDrained()
            return then()
          })
        const ended = Effect.matchCauseEffect(restore(progress), {
          onFailure: (cause) =>
            left(() => {
              const failure = Cause.failureOption(cause)
              if (Option.isSome(failure) && failure.value instanceof HaltSignal) {
                const halt = failure.value.halt
                // The trace says why this step halts the saga, as the journal does.
                const said = haltSaid(halt, stepId)
                if (said !== undefined) {
                  span.attribute("outcome", said.outcome)
                  if (said.reason !== undefined) span.attribute("outcome.reason", said.reason)
                }
                // The step blocks until the halt interrupts the program: its span ends then.
                return Effect.onExit(restore(this.stop(halt)), (exit) => Effect.sync(() => entered.end(exit)))
              }
              if (Cause.isInterruptedOnly(cause)) {
                this.abandon(call)
                if (this.cutWithoutOutcome(placed)) span.attribute("outcome", "interrupted")
              }
              const shown = spanExit(cause, placed)
              entered.end(shown)
              spanEnded?.(shown)
              return Effect.failCause(cause)
            }),
          onSuccess: (value) =>
            left(() => {
              entered.end(Exit.succeed(value))
              return Effect.succeed(value)
            })
        })
        return Effect.zipRight(entered.into, ended)
      })
    )
  }

  /** The FiberRef values a call on `fiber` runs with now: the run's last call's where they are the same. */
  private fiberRefsOf(fiber: Fiber.RuntimeFiber<unknown, unknown>): FiberRefs.FiberRefs {
    this.lastFiberRefs = sharedFiberRefs(fiberRefsNow(fiber), this.lastFiberRefs)
    return this.lastFiberRefs
  }

  /** Keeps what a call ran with, for its step's undo (a settled call's replaces its deferral's). */
  private called(tool: CalledTool, stepId: string): void {
    this.calls.set(stepId, tool)
    if (!this.firstCalls.has(tool.spec.name)) this.firstCalls.set(tool.spec.name, tool)
  }

  /**
   * What the run's own compensation undoes a step with: the step's call in this run; else (a step an
   * earlier run journaled and this one did not reach) the run's first call of its tool; else what
   * the registry holds, as an operator's compensation does.
   */
  undoToolOf(step: UndoneStep): RegisteredTool | undefined {
    return this.calls.get(step.stepId) ?? this.firstCalls.get(step.toolName) ?? this.registry.get(step.toolName)
  }

  /** Whether an interrupted call ran with nothing journaled of its outcome: not answered, not replayed. */
  private cutWithoutOutcome(placed: Placed): boolean {
    const step = this.writer.view.steps.get(placed.stepId)
    return !placed.answered && !placed.replayed && (step === undefined || isUnsettled(step))
  }

  /**
   * Remembers an interrupted call whose `INTENT` was journaled and has no outcome, unless it is a
   * read. Acted on only where the next step starts (or the run ends with it unknown), which an
   * interruption of the run itself never reaches: that one suspends the saga as before, or, with
   * `onInterrupt: "compensate"`, needs attention saying the interruption cut the call (`RUN_CUT`).
   */
  private abandon(call: Call): void {
    const step = this.writer.view.steps.get(call.stepId)
    const known = step === undefined || !isUnsettled(step) || this.writer.holds(call.stepId)
    if (known || this.notStarted.has(call.stepId)) return
    if (this.stoppedFromOutside) {
      const reason = `${RUN_CUT}, after its INTENT was journaled: it may or may not have run`
      this.unknownReasons = new Map(this.unknownReasons).set(call.stepId, reason)
      return
    }
    if (this.abandoned !== undefined) return
    const reason = `${PROGRAM_CUT} (Effect.timeout, a race, a failing sibling, an MCP client that went away) after its INTENT was journaled: it may or may not have run`
    this.abandoned = { stepId: call.stepId, toolName: call.spec.name, reason }
  }

  /**
   * A call made once the run's program ended, from a fiber that outlived it (one forked with
   * `Effect.forkDaemon`, or into a scope outside the program): it does not run and journals nothing,
   * as a call outside any saga does not run. The writer refuses a late step's entry too (`lateStep`).
   */
  private outlived(toolName: string): Effect.Effect<never> {
    return Effect.dieMessage(
      `effect-saga: tool ${toolName} was called in saga ${this.sagaId} after the saga's run had ended (from a fiber that outlived the saga's program, such as one forked with Effect.forkDaemon or Effect.forkIn): it did not run, and nothing was journaled`
    )
  }

  /**
   * Halts the run (the first halt wins) and blocks this fiber until the program is interrupted; a
   * halt decided in a fiber that outlived the program has no run left to halt: it dies.
   */
  private stop(halt: Halt): Effect.Effect<never> {
    if (this.writer.programHasEnded) {
      return Effect.dieMessage(
        `effect-saga: a step of saga ${this.sagaId} halted (${halt._tag}) after the saga's run had ended (in a fiber that outlived the saga's program): nothing more was journaled`
      )
    }
    // A concurrent call that halts after the first keeps its own reason for its unknown outcome.
    if (halt._tag === "NeedsAttention") {
      this.unknownReasons = new Map(this.unknownReasons).set(halt.step.stepId, halt.step.reason)
    }
    this.haltedWith ??= halt
    this.interruptIfDrained()
    return untilInterrupted
  }

  private allocate(toolName: string, key: string): string {
    const callId = this.callIdOf(toolName, key)
    const occurrence = (this.occurrences.get(callId) ?? 0) + 1
    this.occurrences.set(callId, occurrence)
    const stepId = stepIdOf(callId, occurrence)
    this.unreplayed?.delete(stepId)
    return stepId
  }

  /**
   * A call's id in this saga: as `callIdOf` makes it, or, in a saga journaled before 0.5.0 with a
   * step of a tool whose name holds `:` or `%` under the name as it is, as ids were made then
   * (`legacyCallIdOf`), every call alike, so that its steps replay under the ids they have.
   */
  private callIdOf(toolName: string, key: string): string {
    this.legacyIds ??= holdsLegacyIds(this.writer.view)
    return this.legacyIds ? legacyCallIdOf(toolName, key) : callIdOf(toolName, key)
  }

  private advance(call: Placed, keyed: boolean, mode: Mode) {
    const step = this.abandoned
    // A read changes nothing: it may still run while an abandoned call's outcome is unknown.
    if (step === undefined || this.stoppedFromOutside || call.spec.changesNothing === true) {
      return this.proceed(call, keyed, mode)
    }
    // A call made by a finalizer (uninterruptible: a halt would block it for good, the program with
    // it) still runs; the run ends NeedsAttention for the abandoned call all the same.
    return Effect.checkInterruptible((interruptible) =>
      interruptible ? haltOn({ _tag: "NeedsAttention", step }) : this.proceed(call, keyed, mode)
    )
  }

  /** Runs, replays or refuses the call, as the journal says of its step. */
  private proceed(call: Placed, keyed: boolean, mode: Mode) {
    const { spec, stepId, inputJson } = call
    const journaled = this.writer.view.steps.get(stepId)
    if (journaled === undefined) return this.fresh(call, keyed, mode)
    if (journaled.toolName !== spec.name) {
      return fatal(
        this.divergence(stepId, `the journal has tool ${journaled.toolName} here, the program called ${spec.name}`)
      )
    }
    if (journaled.input !== inputJson) {
      if (journaled.awaiting !== undefined && journaled.intents === 0) {
        return this.refuse(journaled, "the input differs from the one that awaits approval")
      }
      return fatal(this.divergence(stepId, "the input differs from the journaled input"))
    }
    if (mode !== "settle" && answersPending(journaled)) return this.pending(call)
    if (journaled.executed !== undefined) return this.replayResult(spec, journaled)
    if (journaled.failed !== undefined) {
      call.replayed = true
      return this.replayFailure(spec, journaled)
    }
    if (isBoundToUndo(journaled)) return this.notRun(call, journaled, mode)
    // A refusal that closed the saga is its cause again, typed, on every replay.
    if (this.closed && journaled.refused !== undefined && !isWithdrawn(journaled)) return this.refusedBefore(journaled)
    if (this.closed) return this.closedOn(journaled)
    if (isUnknown(journaled)) {
      // A read changed nothing, whether it ran or not: it runs again, as a call that may be repeated does.
      if (spec.retryMode !== "idempotency-key" && !isRead(journaled)) {
        return haltOn({
          _tag: "NeedsAttention",
          step: {
            stepId,
            toolName: spec.name,
            reason:
              this.writer.view.unknownReason(stepId) ??
              "INTENT was journaled but no outcome: it may or may not have run"
          }
        })
      }
      return this.execute(call, call.input, journaled.intents + 1, mode === "settle")
    }
    return this.gate(call, journaled, mode)
  }

  /** A step the journal has never seen. */
  private fresh(call: Placed, keyed: boolean, mode: Mode) {
    const { spec, stepId } = call
    if (!keyed && this.unreplayed !== undefined && this.unreplayed.size > 0) {
      const pending = this.unreplayedOf(this.unreplayed, spec.name)
      if (pending !== undefined) {
        if (pending.awaiting !== undefined && pending.intents === 0) {
          return this.refuse(pending, "resumed with a different input than the one that awaits approval")
        }
        return fatal(this.divergence(stepId, notReplayedFirst(spec.name, pending.stepId)))
      }
    }
    if (this.closed) return this.refuseToRun(stepId)
    if (spec.changesNothing !== true) this.madeFresh = true
    return this.gate(call, undefined, mode)
  }

  /** The answer of a deferred call where the program made it: it has not run (its span says so). */
  private pending(call: Placed) {
    this.deferred ??= new Map()
    this.deferred.set(call.stepId, call)
    call.answered = true
    call.span.attribute("outcome", "awaiting_approval")
    return Effect.fail(
      new ApprovalPending({
        sagaId: this.sagaId,
        stepId: call.stepId,
        toolName: call.spec.name,
        requestId: stepKey(this.sagaId, call.stepId)
      })
    )
  }

  /**
   * A journaled step a closed saga's replay reaches without an outcome to answer. A read whose
   * outcome is unknown in a completed saga is one its program interrupted and went on without (a
   * read holds nothing up): it answers nothing now either, so that the program goes on as it did.
   */
  private closedOn(journaled: StepView) {
    // Likewise a call it interrupted before it started (journaled `notStarted`).
    if (
      this.writer.view.status === "completed" &&
      (isNotStarted(journaled) || (isUnknown(journaled) && isRead(journaled)))
    ) {
      return Effect.never
    }
    return this.refuseToRun(journaled.stepId)
  }

  /** Once a saga completed or began to compensate, no step runs forward again. */
  private refuseToRun(stepId: string) {
    return this.writer.view.status === "completed"
      ? fatal(this.divergence(stepId, "the saga completed without running this step"))
      : haltOn({ _tag: "Closed" })
  }

  /**
   * A program that succeeded without replaying a call (not a read) the journal holds executed did
   * not follow the journal: a step removed, made conditional, or renamed (a new call made instead, or
   * in an earlier run). It does not complete: it would leave that call's effect live, never undone.
   * Nor does one that skipped a read and made a new call (a read renamed). Only here, at its end:
   * while it runs, a concurrent branch may still reach them. A resumed MCP session skips the calls
   * it served, and says so (`servesNothingAgain`): it only settles the calls that awaited approval.
   */
  private notReplayed(): Halt | undefined {
    if (this.unreplayed === undefined) return undefined
    const skipped = Array.from(this.unreplayed.values()).filter((step) => step.executed !== undefined)
    const fresh = this.madeFresh
    if (skipped.length === 0 || (!fresh && skipped.every(isRead))) return undefined
    const one = skipped.length === 1
    const named = skipped.map((step) => `${step.stepId} (${step.toolName})`).join(", ")
    const reason = `the program ended without replaying the journal's executed ${one ? "step" : "steps"} ${named}: ${this.insteadOf(fresh)}`
    return { _tag: "Fatal", error: this.divergence(skipped[0]!.stepId, reason) }
  }

  /**
   * A program that ended on its own (succeeded or failed) without reaching a step of the journal
   * whose outcome is unknown (not a read) stops on it as on any unknown step (`NeedsAttention`),
   * saying why this run did not reach it: the same program would have, and stopped there before
   * anything after it ran. A reason that says so already (journaled by an earlier run) is kept as it
   * is: the saga's next entry journals the same words the run answers.
   */
  private notReached(succeeded: boolean): void {
    if (this.unreplayed === undefined) return
    const unreached = Array.from(this.unreplayed.values()).filter((step) => isUnknown(step) && !isRead(step))
    if (unreached.length === 0) return
    const reasons = new Map(this.unknownReasons)
    for (const step of unreached) {
      if (this.writer.view.unreached(step.stepId)) continue
      const why =
        this.writer.view.unknownReason(step.stepId) ?? "INTENT was journaled but no outcome: it may or may not have run"
      reasons.set(step.stepId, `${why}${NOT_REACHED}${this.insteadOf(this.madeFresh)}`)
    }
    this.unknownReasons = reasons
    // Marked unreached where a resume of this program, once the step is settled, would fail at its end
    // (`NonDeterminism`): a program that failed compensates instead.
    if (succeeded) this.unreached = new Set(unreached.map((step) => step.stepId))
  }

  /** What a program that skipped the journal's calls did instead. */
  private insteadOf(fresh: boolean): string {
    const ran = this.ranHereSaid()
    if (fresh) {
      return `it made a new call instead (${ran === "" ? "" : `it ran ${ran}: `}a tool renamed, or a step replaced, removed or made conditional)`
    }
    const why = "(a step removed, made conditional, or renamed in an earlier run)"
    if (!this.replayedOthers()) return `it called nothing but reads, or nothing at all ${why}`
    return ran === ""
      ? `it replayed the journal's other calls without it ${why}`
      : `it replayed the journal's other calls without it ${why}, and ran ${ran}, which the journal held without an outcome: a call approved, or retried by its key`
  }

  /** The first calls this replay ran (`ranHere`), by step id; "" for none. */
  private ranHereSaid(): string {
    const ran = this.ranHere ?? []
    const more = ran.length > 3 ? `, and ${ran.length - 3} more` : ""
    return ran.slice(0, 3).join(", ") + more
  }

  /** Whether this run replayed a call (not a read) of the journal. */
  private replayedOthers(): boolean {
    for (const step of this.writer.view.steps.values()) {
      if (!this.unreplayed!.has(step.stepId) && !isRead(step)) return true
    }
    return false
  }

  servesNothingAgain(): Effect.Effect<void> {
    return Effect.sync(() => {
      this.unreplayed = undefined
    })
  }

  /** A journaled, unkeyed call of `toolName` that this replay has not reached. */
  private unreplayedOf(unreplayed: Map<string, StepView>, toolName: string): StepView | undefined {
    for (const step of unreplayed.values()) {
      const callId = this.callIdOf(toolName, inputKey(sha256(step.input ?? "null")))
      if (step.toolName === toolName && isOccurrenceOf(step.stepId, callId)) return step
    }
    return undefined
  }

  private divergence(stepId: string, reason: string) {
    return new NonDeterminism({ sagaId: this.sagaId, stepId, reason })
  }

  private replayResult(spec: StepSpec, step: StepView) {
    observeReplayed(spec.name)
    const { payload, seq } = step.executed!
    const decoded = decodeJournaled(spec.success, payload.result ?? null)
    if (Either.isLeft(decoded)) {
      // An operator's resolution is checked against the schema only where the tool is registered.
      const whose =
        payload.resolvedBy === undefined
          ? `result of ${step.stepId}`
          : `result ${payload.resolvedBy} resolved ${step.stepId} with (Saga.resolve, in a process where the tool was not registered to check it)`
      return fatal(
        new JournalCorrupted({
          sagaId: this.sagaId,
          seq,
          reason: `${whose} does not decode with the tool's schema: ${decoded.left}`
        })
      )
    }
    // The journal holds what it held; the program can no longer follow it (its code changed).
    const unfollowable = spec.unfollowable?.(decoded.right)
    if (unfollowable !== undefined) return fatal(this.divergence(step.stepId, unfollowable))
    return Effect.succeed(decoded.right)
  }

  private replayFailure(spec: StepSpec, step: StepView) {
    observeReplayed(spec.name)
    return this.asJournaled(spec, step.failed!.payload)
  }

  /** How a journaled failure reaches the program: its error decoded, or an `Outcome.Failed` saying what it was. */
  private asJournaled(
    spec: StepSpec,
    failed: Pick<PayloadOf<"FAILED">, "defect" | "description" | "error">
  ): Effect.Effect<never, unknown> {
    const { defect, description, error } = failed
    // The description is the defect's first line as printed (`Error: boom`): its error prints that prefix again.
    if (defect) return Effect.die(new Error(description.replace(/^Error: /, "")))
    // A read journals its unknown or partial outcome as its failure (see `failed`).
    const schema =
      spec.failure === undefined
        ? Outcomes
        : Schema.Union(spec.failure, Outcome.Failed, Outcome.Unknown, Outcome.Partial)
    const decoded = decodeValue(schema, error ?? null)
    return Effect.fail(Either.isRight(decoded) ? decoded.right : Outcome.failed(description))
  }

  /**
   * Irreversible steps wait for an approval that names exactly this input; others pass. A pending
   * approval halts the saga, or, for a call that defers it, answers `ApprovalPending`. In a saga a
   * failure has bound to compensate, an irreversible step never runs and asks for nothing.
   */
  private gate(call: Placed, journaled: StepView | undefined, mode: Mode) {
    const { spec, stepId, inputJson, digest } = call
    // A step journaled as not started runs as its next attempt.
    const attempt = (journaled?.intents ?? 0) + 1
    if (spec.reversibility !== "irreversible") return this.execute(call, call.input, attempt, false)
    return Effect.gen(this, function* () {
      if (journaled?.refused !== undefined) return yield* this.refusedBefore(journaled)
      const taint = this.writer.view.firstTaint()
      if (taint !== undefined) return yield* this.refuseBoundToUndo(call, journaled, taint, mode)
      if (journaled?.approved === undefined) {
        // A request this run journals is new: what the store holds under its id is an earlier saga's.
        const fresh = journaled?.awaiting === undefined
        if (fresh) {
          const awaiting = { inputDigest: digest, deferred: mode === "defer" ? true : undefined }
          yield* this.write(stepDraft({ stepId, toolName: spec.name }, "AWAITING_APPROVAL", awaiting, inputJson))
        }
        const step = this.writer.view.steps.get(stepId)!
        const request = requestOf(this.sagaId, step)
        const decision = yield* Effect.catchAll(this.approval.request(request, { fresh }), (error) =>
          fatal(tamperedAt(this.sagaId, step.awaiting!.seq)(error))
        )
        yield* this.trust(request, decision)
        if (decision._tag === "Pending") {
          return yield* mode === "defer" && step.deferred
            ? this.pending(call)
            : haltOn({ _tag: "AwaitingApproval", request })
        }
        if (decision._tag === "Rejected") {
          return yield* this.refuse(step, `rejected by ${decision.by}: ${decision.reason}`, decision)
        }
        yield* this.verify(spec, step, decision, digest)
        yield* this.write(stepDraft({ stepId, toolName: spec.name }, "APPROVED", withoutMac(decision)))
      } else {
        yield* this.verify(spec, journaled, journaled.approved.payload, digest)
      }
      // What was approved is the journaled input, byte for byte: the tool is given that, decoded,
      // not the caller's value (a property its schema does not declare never reaches it).
      const approved = decodeJournaledJson(spec.input, inputJson)
      if (Either.isLeft(approved)) {
        const reason = `its input, as journaled and approved, does not decode with its schema: ${approved.left}`
        return yield* Effect.fail(new InvalidInput({ toolName: spec.name, reason }))
      }
      return yield* this.execute(call, approved.right, attempt, mode === "settle")
    })
  }

  /**
   * A decision the journal does not hold yet that cannot be trusted refuses the run as tampered,
   * unless the journal moved on since the run read it (its lease lapsed and an operator decided, or
   * is deciding: a command writes the store, then the journal): then the run's view is what is
   * wrong, and it is refused as its next append would be, with nothing run or written.
   */
  private trust(request: ApprovalRequest, decision: Decision) {
    const reason = distrust(this.approval, this.journalKeys, request, decision)
    if (reason === undefined) return Effect.void
    const seq = this.writer.view.steps.get(request.stepId)?.awaiting?.seq ?? this.writer.view.position.revision
    return Effect.matchEffect(this.writer.staleness(), {
      onFailure: fatal,
      onSuccess: (stale) =>
        fatal(stale ?? new JournalTampered({ sagaId: this.sagaId, seq, problem: "approval", reason }))
    })
  }

  /**
   * Refuses an approval that names another input digest than `digest`, then one that has expired
   * (its own `expiresAt`, else its time plus the tool's or the layer's `approvalTtl`).
   */
  private verify(
    spec: StepSpec,
    step: StepView,
    approval: Expiring & { readonly inputDigest?: unknown },
    digest: string
  ) {
    if (approval.inputDigest !== digest) return this.refuse(step, "the approval names a different input")
    return Effect.flatMap(expiredAt(approval, spec.approvalTtl ?? this.approvalTtl), (expiry) =>
      expiry === undefined ? Effect.void : this.expire(step, expiredReason(approval, expiry))
    )
  }

  /** Journals the rejection of an irreversible step (the store's, if it decided one) and halts the run so that it compensates. */
  private refuse(step: StepView, reason: string, rejection?: Extract<Decision, { readonly _tag: "Rejected" }>) {
    if (step.refused !== undefined) return this.refusedBefore(step)
    // A request nobody decided, refused by the library itself, is withdrawn from the approval
    // service too, as compensation withdraws one: nobody may approve it there any more.
    const undecided = rejection === undefined && step.awaiting !== undefined && step.approved === undefined
    const withdrawn = undecided ? this.withdraw(stepKey(this.sagaId, step.stepId), reason) : Effect.void
    return this.halt(step, reason, stepDraft(step, "REJECTED", { ...rejection, reason }), withdrawn)
  }

  /**
   * Journals that an irreversible call of a saga bound to compensate does not run (see
   * `boundToUndo.ts`), withdraws its request if one was filed, and answers as `notRun` does.
   */
  private refuseBoundToUndo(call: Placed, journaled: StepView | undefined, taint: StepView, mode: Mode) {
    const { spec, stepId, inputJson } = call
    const reason = notRunBecause(taint)
    const draft = refusal({ stepId, toolName: spec.name }, reason, journaled === undefined ? inputJson : null)
    const filed = journaled?.awaiting !== undefined
    return Effect.zipRight(
      this.write(draft),
      Effect.suspend(() => {
        const answer = this.notRun(call, this.writer.view.steps.get(stepId)!, mode)
        return filed ? Effect.zipRight(this.withdraw(stepKey(this.sagaId, stepId), reason), answer) : answer
      })
    )
  }

  /**
   * A call refused because the saga was bound to compensate, as journaled: a call that defers its
   * approval (an agent's) or is settled is answered `ApprovalRefused` and the program goes on; a
   * halting one halts the run, which compensates.
   */
  private notRun(call: Placed, step: StepView, mode: Mode): Effect.Effect<never, HaltSignal | ApprovalRefused> {
    if (mode === "halt") return this.refusedBefore(step)
    call.answered = true
    call.span.attribute("outcome", "not_run")
    const { stepId, toolName } = step
    return Effect.fail(new ApprovalRefused({ stepId, toolName, reason: step.refused!.payload.reason }))
  }

  /** A step journaled `REJECTED` or `EXPIRED` is refused again as journaled: nothing new is written. */
  private refusedBefore(step: StepView) {
    const { stepId, toolName } = step
    return haltOn({
      _tag: "Refused",
      error: new ApprovalRefused({ stepId, toolName, reason: step.refused!.payload.reason })
    })
  }

  /** Journals that the approval of an irreversible step expired and halts the run so that it compensates. */
  private expire(step: StepView, reason: string) {
    return this.halt(step, reason, stepDraft(step, "EXPIRED", { reason }))
  }

  private halt(step: StepView, reason: string, refusal: Draft, then: Effect.Effect<void> = Effect.void) {
    return Effect.zipRight(
      Effect.zipRight(this.write(refusal), then),
      haltOn({ _tag: "Refused", error: new ApprovalRefused({ stepId: step.stepId, toolName: step.toolName, reason }) })
    )
  }

  private write(draft: Draft) {
    return this.writer.appendThen([draft], fatal, () => Effect.void)
  }

  /**
   * Journals `INTENT` (saying whether the call runs `deferred`, where the program settled it), runs
   * the tool on `input` (retrying as it declares), journals its outcome.
   */
  private execute(call: Placed, input: unknown, firstAttempt: number, deferred: boolean) {
    const { spec, stepId } = call
    if (this.unreplayed !== undefined && spec.changesNothing !== true) {
      this.ranHere ??= []
      this.ranHere.push(stepId)
    }
    const idempotencyKey = stepKey(this.sagaId, stepId)
    const state = new Attempts(firstAttempt - 1)
    const nextContext = (): StepContext => {
      // A receipt is the attempt's that set it: a retry starts without one.
      state.receipt = undefined
      return {
        sagaId: this.sagaId,
        stepId,
        toolName: spec.name,
        idempotencyKey,
        attempt: ++state.attempt,
        setReceipt: (value) =>
          Effect.sync(() => {
            state.receipt = Redacted.isRedacted(value) ? Redacted.value(value) : value
            if (typeof state.receipt === "string") {
              call.receipts ??= Array.of()
              call.receipts.push(state.receipt)
              this.receipts.push(state.receipt)
            }
          })
      }
    }
    // Only the call is interruptible: an interruption that comes while `INTENT` is written is met as
    // the call is entered (before the tool has it), and one that comes as the call answers cannot
    // keep its outcome from being journaled.
    // `Array.of`, not `[…]`: see the NOTE on V8's pretenuring above. The `INTENT`'s payload is made
    // inside the mask: a variable of this scope would be kept with it while the call runs.
    return Effect.uninterruptibleMask((restore) =>
      this.writer.appendThen(Array.of(this.intentOf(call, firstAttempt, deferred, idempotencyKey)), fatal, () =>
        Effect.matchCauseEffect(restore(this.call(call, input, nextContext, state)), {
          onSuccess: (value) => this.executed(call, value, state.receipt),
          onFailure: (cause) =>
            Cause.isInterruptedOnly(cause) ? this.interrupted(call, state, cause) : this.failed(call, cause)
        })
      )
    )
  }

  /** The `INTENT` of a call's attempt `attempt` (`deferred`: it runs where the program settled it). */
  private intentOf(call: Placed, attempt: number, deferred: boolean, idempotencyKey: string): Draft {
    const { spec, stepId, inputJson } = call
    const intent = {
      idempotencyKey,
      attempt,
      deferred,
      capabilities: spec.capabilities,
      changesNothing: spec.changesNothing === true,
      undo: spec.compensate !== undefined,
      receiptRequired: spec.receiptRequired,
      continues: spec.taintsOnFailure === false,
      retriesByKey: spec.retryMode === "idempotency-key"
    }
    return intentDraft({ stepId, toolName: spec.name }, intent, inputJson)
  }

  /**
   * A call interrupted: with nothing in flight (no attempt started, or every one failed), the run
   * keeps that its `INTENT` did not run, for how it ends to journal; otherwise its outcome is unknown.
   */
  private interrupted(call: Placed, state: Attempts, cause: Cause.Cause<unknown>) {
    const intent = this.writer.view.steps.get(call.stepId)?.intent
    if (!state.mayHaveRun && intent !== undefined) {
      this.notStartedSteps ??= new Map()
      this.notStartedSteps.set(call.stepId, intent.seq)
    }
    return Effect.failCause(cause)
  }

  /** Journals `EXECUTED` with the encoded result and the receipt, if both can be journaled. */
  private executed(call: Placed, value: unknown, receipt: unknown) {
    const { spec, stepId } = call
    const result = encodeJson(spec.success, value)
    const tooLarge = Either.isRight(result) && byteLength(result.right) > spec.maxPayloadBytes
    const notText = receipt !== undefined && typeof receipt !== "string"
    // Measured as the tool set it, before any sealing (which adds bytes of its own).
    const receiptTooLarge = typeof receipt === "string" && byteLength(receipt) > spec.maxPayloadBytes
    if (Either.isLeft(result) || tooLarge || notText || receiptTooLarge) {
      // Never the receipt's value: it is a secret whatever its type.
      const why = Either.isLeft(result)
        ? `its result does not encode: ${result.left}`
        : tooLarge
          ? "its result exceeds maxPayloadBytes"
          : notText
            ? `the receipt it set is not text (${receipt === null ? "null" : typeof receipt})`
            : "the receipt it set exceeds maxPayloadBytes"
      // A step that changes nothing (a read) left nothing to settle: it failed, the program's to handle.
      if (spec.changesNothing === true) {
        return this.failed(
          call,
          Cause.fail(Outcome.failed(`the tool ran but ${why}, so its result cannot be journaled`))
        )
      }
      return haltOn({
        _tag: "NeedsAttention",
        step: { stepId, toolName: spec.name, reason: `the tool ran but ${why}, so it cannot be journaled` }
      })
    }
    const journal = (receipt: JournaledReceipt | undefined) => {
      const fields = { resultJson: result.right, receipt, changesNothing: spec.changesNothing === true }
      return this.writer.appendExecuted(executedDraft({ stepId, toolName: spec.name }, fields), fatal, () => {
        call.span.attribute("outcome", "executed")
        return Effect.succeed(value)
      })
    }
    return receipt === undefined
      ? journal(undefined)
      : Effect.flatMap(Receipts.journaled(this.receiptKeys, this.sagaId, stepId, receipt as string), journal)
  }

  private call(call: Placed, input: unknown, nextContext: () => StepContext, state: Attempts) {
    const { faults, spec, stepId } = call
    // An attempt has started once the tool (or the faults around it, which stand in for it) has it:
    // an interruption met as the call is entered comes before this.
    let run: Effect.Effect<unknown, unknown>
    if (Option.isNone(faults)) {
      run = Effect.suspend(() => {
        state.mayHaveRun = true
        return spec.execute(input, nextContext()) as Effect.Effect<unknown, unknown>
      })
    } else {
      const around = faults.value
      run = Effect.suspend(() => {
        state.mayHaveRun = true
        // An attempt the faults stand in for is an attempt too: the next one the tool sees counts it.
        const context = nextContext()
        const attempt = Effect.suspend(() => spec.execute(input, context) as Effect.Effect<unknown, unknown>)
        return around.around(spec.name, "execute", attempt, { stepId, spec })
      })
    }
    if (spec.timeout !== undefined) {
      const timeout = spec.timeout
      run = failAfter(run, timeout, () =>
        composedOfMasked(Outcome.unknown("the call started but timed out before it answered"))
      )
    }
    if (spec.retry !== undefined) {
      // A read changed nothing, whether it ran or not: an attempt whose outcome is unknown may be repeated.
      const repeatable = spec.retryMode === "idempotency-key" || spec.changesNothing === true
      run = Effect.retry(run, {
        schedule: spec.retry as Schedule.Schedule<unknown, unknown>,
        while: (error) => {
          if (error instanceof Outcome.Partial) return false
          if (error instanceof Outcome.Unknown) {
            state.unknownBefore = true
            return repeatable
          }
          // A typed failure: the attempt did not apply; while the call waits to try again, nothing is in flight.
          state.mayHaveRun = state.unknownBefore
          return true
        }
      })
    }
    return run
  }

  /**
   * Journals how a call that did not succeed ended, and answers the program accordingly. What it
   * says is written from its error masked part by part (`maskedCause`), then cut: a receipt the
   * call set never reaches the journal, a report or a log through its own error, and the library's
   * words around it are never masked. A read (`changesNothing`) whose outcome is unknown, partial
   * or a defect failed: it changed nothing, so there is nothing for an operator to settle.
   */
  private failed(call: Placed, cause: Cause.Cause<unknown>) {
    const { spec, stepId } = call
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
    const shown = maskedCause(cause, call.receipts)
    const failure = Cause.failureOption(shown)
    const read = spec.changesNothing === true
    if (
      !read &&
      Option.isSome(failure) &&
      (failure.value instanceof Outcome.Unknown || failure.value instanceof Outcome.Partial)
    ) {
      const reason = cutDetail(failure.value.message)
      return haltOn({ _tag: "NeedsAttention", step: { stepId, toolName: spec.name, reason } })
    }
    if (Option.isNone(failure) && !read) {
      // A call that died may have applied its effect first (the provider answered, then parsing threw).
      const reason = `the call died (a defect: ${cutDetail(defectLine(shown))}): it may or may not have run`
      return haltOn({ _tag: "NeedsAttention", step: { stepId, toolName: spec.name, reason } })
    }
    const error = Cause.failureOption(cause)
    const journaled = Option.isSome(error) ? this.encodeFailure(spec, error.value, failure, call.receipts) : undefined
    const described = Option.isSome(failure) ? spec.describedAs?.(failure.value) : undefined
    const payload = {
      description: cutDetail(described ?? causeText(shown)),
      defect: Option.isNone(failure),
      taints: spec.taintsOnFailure === false ? false : undefined,
      error: journaled?.error
    }
    const failedDraft = stepDraft({ stepId, toolName: spec.name }, "FAILED", payload)
    if (described !== undefined && Option.isSome(error) && isObject(error.value)) {
      this.described ??= new WeakMap()
      this.described.set(error.value, payload.description)
    }
    // A failure that quoted a receipt reaches the program as its replay will: as journaled, masked
    // (a receipt only its encoded form shows, too); so does an error `failure` describes that could
    // not be journaled (too deep, too large): its replay is an `Outcome.Failed` with the description.
    if (shown !== cause) call.failedWith = shown
    const lost = journaled?.error === undefined && Option.isSome(error) && describes(spec, error.value)
    const asIs = shown === cause && journaled?.masked !== true && !lost
    const answer = asIs ? Effect.failCause(cause) : this.asJournaled(spec, payload)
    return Effect.zipRight(
      Effect.map(payload.taints === false ? this.write(failedDraft) : this.taint(failedDraft, call), () =>
        call.span.attribute("outcome", "failed")
      ),
      answer
    )
  }

  /**
   * Journals a failure that binds the saga to compensate, with the withdrawal of every request still
   * waiting for a decision (an approval of it could never matter now), then drops those requests
   * from the approval service.
   */
  private taint(failedDraft: Draft, call: Placed) {
    const withdrawn = boundToUndo.withdrawals(this.writer.view, { stepId: call.stepId, toolName: call.spec.name })
    if (withdrawn.length === 0) return this.write(failedDraft)
    const reason = notRunBecause({ stepId: call.stepId, toolName: call.spec.name })
    return this.writer.appendThen([failedDraft, ...withdrawn], fatal, () =>
      Effect.forEach(withdrawn, (draft) => this.withdraw(stepKey(this.sagaId, draft.stepId!), reason), {
        discard: true
      })
    )
  }

  /**
   * The error as journaled, for its replay: none when it does not encode or is over the tool's
   * `maxPayloadBytes` encoded (the replay then fails with `Outcome.Failed` and the description). An
   * outcome is encoded as its own kind. An error that holds a receipt the call set is journaled
   * with its data masked: the error as the program is shown it (`shownError`, its texts masked) is
   * encoded, then the encoded data masked, its schema's own words kept (`maskedEncoded`: its `_tag`,
   * its field names, its literals), so that its replay is the same error and the program takes the
   * same path (a field the schema transforms, base64 or hex, holds the masked text encoded). None
   * if that no longer decodes. `masked`: whether the encoded data held a receipt.
   */
  private encodeFailure(
    spec: StepSpec,
    error: unknown,
    shownError: Option.Option<unknown>,
    receipts: ReadonlyArray<string> | undefined
  ): { readonly error: unknown; readonly masked: boolean } {
    const schema = Outcome.isOutcome(error) || spec.failure === undefined ? outcomeSchemaOf(error) : spec.failure
    const own = receipts === undefined || isOwnError(error)
    const encoded = encodeJson(schema, own ? error : Option.getOrElse(shownError, () => error))
    if (Either.isLeft(encoded) || byteLength(encoded.right) > spec.maxPayloadBytes) {
      return { error: undefined, masked: false }
    }
    const value = JSON.parse(encoded.right)
    if (own) return { error: value, masked: false }
    const shown = maskedEncoded(schema, value, (text) => masked(text, receipts))
    if (JSON.stringify(shown) === encoded.right) return { error: value, masked: false }
    return { error: Either.isRight(decodeValue(schema, shown)) ? shown : undefined, masked: true }
  }
}

/** Why an unkeyed call whose input the journal does not hold diverges: the journal's own call of that tool comes first. */
const notReplayedFirst = (toolName: string, journaledStepId: string) =>
  `the program called ${toolName} with an input the journal holds no call of, before replaying the journal's call of ${toolName} at ${journaledStepId}: the input changed since that call ran (the program's code or data, or the tool's input type; for a model's turn, its prompt or the tools offered to it), or the calls come in another order`

/** Whether a journal names a step of a tool whose name holds `:` or `%` as before 0.5.0: unescaped. */
const holdsLegacyIds = (view: JournalView): boolean => {
  for (const step of view.steps.values()) {
    if (isEscapedInIds(step.toolName) && !step.stepId.startsWith(callIdOf(step.toolName, ""))) return true
  }
  return false
}

/** Whether `error` is one the tool's `failure` (or the outcomes) describes: its replay decodes as it. */
const describes = (spec: StepSpec, error: unknown): boolean =>
  Outcome.isOutcome(error) || (spec.failure !== undefined && Schema.is(spec.failure)(error))
