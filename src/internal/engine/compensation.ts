import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { Unauthorized } from "../../Authority.js"
import { DeclarationError } from "../../Compensable.js"
import * as Report from "../../CompensationReport.js"
import type { AppendError, JournalCorrupted, JournalError, JournalTampered } from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"
import * as Outcome from "../../Outcome.js"
import { sagaDraft, stepDraft } from "../journal/drafts.js"
import { undoKey } from "../journal/ids.js"
import type { Recorded, UndoPhase } from "../journal/payloads.js"
import { undoOwnText } from "../journal/resolvedUndo.js"
import type { JournalView, StepView } from "../journal/view.js"
import { isIrreversible } from "../journal/view.js"
import type { Writer } from "../journal/writer.js"
import { withUndoSpan } from "../observability/spans.js"
import { decodeJournaled, decodeJournaledJson } from "../util/codec.js"
import { failAfter } from "../util/deadline.js"
import { causeText, cutDetail } from "../util/detail.js"
import { withFiberRefsOf } from "../util/fiberRefsOf.js"
import { composedOfMasked } from "../util/masking.js"
import { isTakenOver, PENDING_ELSEWHERE, takenOverDetail } from "../util/takenOver.js"
import { CurrentSaga, insideUndo } from "./context.js"
import { Faults } from "./faults.js"
import { maskedCause } from "./maskedCause.js"
import * as Receipts from "./receipts.js"
import type { RegisteredTool, UndoneStep } from "./registry.js"
import { dropWithdrawn, withdrawals, withdrawnBecause } from "./withdrawal.js"

/**
 * Finds the tool of a step, and the context its undo runs in: by the step's tool name in the
 * registry (an operator's command), by the step's own call in a run's own compensation.
 */
export type Lookup = (step: UndoneStep) => RegisteredTool | undefined

/** How an explicit `compensateEffect` of a step ended (`pending` while it has no outcome yet). */
export interface ExplicitUndo {
  readonly outcome: Report.UndoOutcome | "pending"
  readonly detail: string | undefined
}

/** What compensation needs besides the journal: tools, the authority, and explicit undos already made. */
export interface UndoEnv {
  readonly lookup: Lookup
  /** Why `lookup` finds no tool of that name (`Registry.absence`). */
  readonly absence: (toolName: string) => string
  /** Asked before each undo starts: a denied permission stops the compensation there. */
  readonly beforeUndo: (step: StepView) => Effect.Effect<void, Unauthorized>
  /** The explicit undo of the step's effect, if `compensateEffect` was asked for it. */
  readonly explicitUndo: (
    sagaId: string,
    step: StepView
  ) => Effect.Effect<ExplicitUndo | undefined, JournalError | JournalCorrupted | JournalTampered>
  /** Withdraws a pending approval request from the `Approval` service (nothing to approve any more). */
  readonly withdraw: (requestId: string, reason: string) => Effect.Effect<void>
  /** The keys sealed receipts are opened with (the `Saga` layer's `EFFECT_SAGA_RECEIPT_KEYS`). */
  readonly receiptKeys: KeyRing | undefined
  /** Whether interrupting the caller interrupts the undo in flight, and starts no other (see `runUndo`). */
  readonly stopsWithCaller?: boolean | undefined
}

/**
 * Journals the start of compensation (once), and withdraws every approval request still pending in
 * the same write: journaled `REJECTED` (so that nobody approves it), then dropped from the approval
 * service's pending list — again on every pass, should a crash have come in between.
 */
const begin = (writer: Writer, env: UndoEnv, cause: string, notStarted: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const payload = notStarted.length === 0 ? { cause } : { cause, notStarted }
    const start = writer.view.compensationStarted ? [] : [sagaDraft("SAGA_COMPENSATING", payload)]
    const drafts = [...start, ...withdrawals(writer.view, withdrawnBecause.compensating)]
    if (drafts.length > 0) yield* writer.append(drafts)
    yield* dropWithdrawn(writer, env.withdraw)
  })

/** Errors compensation can stop with: the journal, or a permission denied before an undo. */
export type CompensationError = AppendError | JournalCorrupted | JournalTampered | Unauthorized

const refusedInsideUndo = (toolName: string) =>
  Effect.die(
    new DeclarationError({
      toolName,
      reason: "an undo cannot call a compensable tool: the inverse of a step is one undo call"
    })
  )

/**
 * What an undo sees as its saga: every call of a compensable tool is refused. The inverse is
 * bounded: one undo call, no nested step, no saga started from inside it.
 */
const boundedSaga = CurrentSaga.of({
  sagaId: "",
  step: (spec) => refusedInsideUndo(spec.name),
  stepOn: (_fiber, spec) => refusedInsideUndo(spec.name),
  // A deferred call settled from inside an undo: the undo's own tool is the one at hand to name.
  settle: () => Effect.flatMap(FiberRef.get(insideUndo), (toolName) => refusedInsideUndo(toolName ?? "(an undo)")),
  servesNothingAgain: () => Effect.void
})

/** The undo outcome each journaled compensation phase records. */
export const outcomeOfPhase: Record<UndoPhase, Report.UndoOutcome> = {
  COMPENSATED: "completed",
  COMPENSATION_PARTIAL: "partial",
  COMPENSATION_FAILED: "failed",
  COMPENSATION_UNKNOWN: "unknown",
  SKIPPED: "skipped"
}

/** What an undo's journaled outcome says besides its phase: what remains, or why. */
const detailOf = (entry: Recorded<UndoPhase>): string | undefined =>
  entry.phase === "COMPENSATION_PARTIAL" ? entry.payload?.remaining : entry.payload?.reason

/** What a step's undo came to, as `Saga.status` lists it: its outcome (`started` while it runs) and detail. */
export interface UndoState {
  readonly outcome: Report.UndoOutcome | "started"
  readonly detail: string | undefined
}

/**
 * What a step's undo came to, as the journal says: its last undo entry; `started` while its
 * `COMPENSATING` has no outcome after it; else what `report`, the saga's last, says of it (an undo
 * `unavailable` journals nothing of its own: only the report names it); `undefined` when no undo
 * was asked for.
 */
export const undoOf = (step: StepView, report: Report.CompensationReport | undefined): UndoState | undefined => {
  if (step.compensation !== undefined) {
    return { outcome: outcomeOfPhase[step.compensation.phase], detail: detailOf(step.compensation) }
  }
  if (step.compensating !== undefined) return { outcome: "started", detail: undefined }
  const reported = report?.undone.find((undone) => undone.stepId === step.stepId)
  return reported === undefined ? undefined : { outcome: reported.outcome, detail: reported.detail }
}

const reportOf = (step: StepView, outcome: Report.UndoOutcome, detail: string | undefined): Report.StepReport =>
  detail === undefined
    ? { stepId: step.stepId, toolName: step.toolName, outcome }
    : { stepId: step.stepId, toolName: step.toolName, outcome, detail }

/** An undo's outcome as journaled: what remains of a partial one, why for the others (nothing without a detail). */
const outcomeDraft = (step: StepView, phase: UndoPhase, detail: string | undefined) =>
  detail === undefined
    ? stepDraft(step, phase, null)
    : phase === "COMPENSATION_PARTIAL"
      ? stepDraft(step, phase, { remaining: detail })
      : stepDraft(step, phase, { reason: detail })

/** Journals an undo's outcome and reports it. */
const settle = (writer: Writer, step: StepView, phase: UndoPhase, detail?: string) =>
  Effect.as(writer.append([outcomeDraft(step, phase, detail)]), reportOf(step, outcomeOfPhase[phase], detail))

/** The attributes of the `effect-saga.undo` span of a step of saga `sagaId`. */
const undoAttributes = (sagaId: string, step: StepView) => ({
  "saga.id": sagaId,
  "workflow.id": sagaId,
  "step.id": step.stepId,
  tool: step.toolName
})

/**
 * What the span of an undo whose journaled input or result does not decode says instead of the
 * decoding error, which may quote them (inputs are never in a span): the report says why.
 */
const undecodable = (what: "input" | "result") =>
  `journaled ${what} does not decode with the tool's ${what === "input" ? "input" : "success"} schema (the report says why)`

/**
 * Maps how an undo ended to the phase that records it, and its detail with the undo's receipt
 * masked: an undo that writes `Redacted.value(ctx.receipt)` into its error must not carry the
 * receipt into the journal (sealed or not), the report, a span or a log. The error's parts are
 * masked (`maskedCause`), then the detail is written from them and cut: a cut cannot leave the
 * start of a receipt, and the library's words are never masked.
 */
const phaseOfExit = (
  exit: Exit.Exit<unknown, unknown>,
  receipt: Option.Option<Redacted.Redacted<string>>
): readonly [UndoPhase, string | undefined] => {
  if (Exit.isSuccess(exit)) return ["COMPENSATED", undefined]
  const cause = Option.isNone(receipt) ? exit.cause : maskedCause(exit.cause, [Redacted.value(receipt.value)])
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && failure.value instanceof Outcome.Partial) {
    return ["COMPENSATION_PARTIAL", cutDetail(undoOwnText(failure.value.remaining, "the undo said: "))]
  }
  if (Option.isSome(failure) && failure.value instanceof Outcome.Unknown) {
    return ["COMPENSATION_UNKNOWN", cutDetail(undoOwnText(failure.value.reason, "the undo said: "))]
  }
  if (Cause.isInterruptedOnly(cause)) return ["COMPENSATION_UNKNOWN", "the undo was interrupted"]
  return ["COMPENSATION_FAILED", cutDetail(undoOwnText(causeText(cause), "the undo failed: "))]
}

/** The phase an explicit undo's outcome is journaled with in the saga's own journal. */
const phaseOfExplicit: Record<Exclude<ExplicitUndo["outcome"], "failed" | "unavailable">, UndoPhase> = {
  completed: "COMPENSATED",
  partial: "COMPENSATION_PARTIAL",
  unknown: "COMPENSATION_UNKNOWN",
  skipped: "SKIPPED",
  pending: "COMPENSATION_UNKNOWN"
}

/** Whether a step was journaled as changing nothing outside: compensation passes over it. */
export const changedNothing = (step: StepView): boolean => step.executed!.payload.changesNothing === true

/** What compensation journals (`SKIPPED`) and reports for a read whose outcome is unknown. */
export const UNKNOWN_READ =
  "a read (changesNothing) whose outcome is unknown: it changed nothing, so there is nothing to undo"

/**
 * A read whose outcome is unknown, passed over: `SKIPPED` once, then reported from the journal. It
 * changed nothing whether it ran or not, so it does not keep the saga from being compensated.
 */
const passOverRead = (writer: Writer, step: StepView) =>
  step.compensation === undefined
    ? withUndoSpan(undoAttributes(writer.sagaId, step))(settle(writer, step, "SKIPPED", UNKNOWN_READ))
    : Effect.succeed(reportOf(step, outcomeOfPhase[step.compensation.phase], detailOf(step.compensation)))

const equivalentReports = Schema.equivalence(Report.CompensationReport)

/** Whether the journal's last report says what `report` says. */
const sameReport = (journaled: Report.CompensationReport | undefined, report: Report.CompensationReport): boolean =>
  journaled !== undefined && equivalentReports(journaled, report)

/** The steps compensation undoes, in reverse execution order: every executed step that changed something. */
const toUndo = (view: JournalView): Array<StepView> =>
  view.executedOrder
    .slice()
    .reverse()
    .map((stepId) => view.steps.get(stepId)!)
    .filter((step) => !changedNothing(step))

/** The steps compensation would still run or ask an undo for: those whose undo has no outcome it keeps. */
export const stillToUndo = (view: JournalView): Array<StepView> =>
  toUndo(view).filter((step) => step.compensation === undefined || awaitsItsRun(step))

/** Whether an explicit undo's answer is taken over, not the undo run again: unless it left the effect live. */
const takesOver = (
  explicit: ExplicitUndo | undefined
): explicit is ExplicitUndo & { readonly outcome: Exclude<ExplicitUndo["outcome"], "failed" | "unavailable"> } =>
  explicit !== undefined && explicit.outcome !== "failed" && explicit.outcome !== "unavailable"

/**
 * The steps whose undo compensation would ask the authority about (`beforeUndo`), given their
 * explicit undos: not one settled, nor one whose undo started before, nor one taken over, nor one
 * no tool here can undo (reported `unavailable`).
 */
export const undosToAsk = (
  view: JournalView,
  explicit: ExplicitUndos,
  env: Pick<UndoEnv, "lookup" | "absence">
): Array<StepView> =>
  stillToUndo(view).filter(
    (step) =>
      step.compensating === undefined &&
      !takesOver(explicit.get(step.stepId)) &&
      typeof undoToolOf(env, step) !== "string"
  )

/** The explicit undo (`compensateEffect`) of each step compensation would undo, by step id. */
export type ExplicitUndos = ReadonlyMap<string, ExplicitUndo | undefined>

/**
 * Looks up the explicit undo of every step of `view` compensation would still undo. Read before
 * anything is written: a run's journal that does not verify refuses the compensation (and the
 * command that starts it) while nothing is written or undone yet.
 */
export const explicitUndos = (
  sagaId: string,
  view: JournalView,
  env: UndoEnv
): Effect.Effect<ExplicitUndos, JournalError | JournalCorrupted | JournalTampered> =>
  Effect.map(
    Effect.forEach(
      stillToUndo(view).filter((step) => step.compensating === undefined || awaitsItsRun(step)),
      (step) => Effect.map(env.explicitUndo(sagaId, step), (explicit) => [step.stepId, explicit] as const)
    ),
    (found) => new Map(found)
  )

/**
 * Whether a step's undo is an explicit undo's taken over while its run could still settle it: it
 * had no outcome (`unknown`, or still running), or left part of the effect live (`partial`, which an
 * operator closes in the run once the rest is undone by hand): its run is asked again each
 * compensation, for an outcome got since (the undo ended, an operator resolved it).
 */
export const awaitsItsRun = (step: StepView): boolean =>
  (step.compensation?.phase === "COMPENSATION_UNKNOWN" || step.compensation?.phase === "COMPENSATION_PARTIAL") &&
  isTakenOver(detailOf(step.compensation))

/**
 * Whether the explicit undo's answer moved since `journaled` took it over: it failed or is
 * unavailable (the effect is live: the undo runs here), or it says another outcome or detail.
 */
const movedSince = (journaled: Recorded<UndoPhase>, explicit: ExplicitUndo | undefined): boolean => {
  if (explicit === undefined) return false
  if (!takesOver(explicit)) return true
  return phaseOfExplicit[explicit.outcome] !== journaled.phase || takenOverEntryDetail(explicit) !== detailOf(journaled)
}

/** The detail the saga's journal gives an explicit undo's answer it takes over. */
const takenOverEntryDetail = (explicit: ExplicitUndo): string =>
  explicit.outcome === "pending" ? PENDING_ELSEWHERE : takenOverDetail(explicit.detail)

/**
 * Runs, or reports from the journal, the undo of one executed step (`explicit`: its explicit undo,
 * looked up before). An outcome this pass settles has its undo span, whether the undo ran or not;
 * one journaled before is reported as it is (its span was that pass's).
 */
const undoStep = (
  writer: Writer,
  env: UndoEnv,
  step: StepView,
  explicit: ExplicitUndo | undefined
): Effect.Effect<Report.StepReport, CompensationError> => {
  if (step.compensation !== undefined && !(awaitsItsRun(step) && movedSince(step.compensation, explicit))) {
    return Effect.succeed(reportOf(step, outcomeOfPhase[step.compensation.phase], detailOf(step.compensation)))
  }
  const inSpan = withUndoSpan(undoAttributes(writer.sagaId, step))
  if (step.compensating !== undefined) {
    return inSpan(
      settle(
        writer,
        step,
        "COMPENSATION_UNKNOWN",
        "COMPENSATING was journaled but no outcome: the undo may or may not have run"
      )
    )
  }
  // An effect undone on request (compensateEffect) is not undone again: its outcome is taken over.
  if (takesOver(explicit)) {
    return inSpan(settle(writer, step, phaseOfExplicit[explicit.outcome], takenOverEntryDetail(explicit)))
  }
  const tool = undoToolOf(env, step)
  if (typeof tool === "string") {
    // An irreversible step has no undo to run anywhere: no process needs its tool to skip it.
    return inSpan(
      isIrreversible(writer.sagaId, step)
        ? settle(writer, step, "SKIPPED", IRREVERSIBLE)
        : Effect.succeed(reportOf(step, "unavailable", tool))
    )
  }
  return Effect.zipRight(
    env.beforeUndo(step),
    runUndo(writer, tool, step, {
      sagaId: writer.sagaId,
      idempotencyKey: undoKey(writer.sagaId, step.stepId),
      receiptKeys: env.receiptKeys,
      stopsWithCaller: env.stopsWithCaller
    })
  )
}

/**
 * The tool that undoes `step` in this process, or why none can: none registered under its name, two
 * different ones, or one that declares no undo where the step's `INTENT` says its tool did (its code
 * or manifest changed since). Nothing is journaled for any of these: where the tool is, with its
 * undo, it can undo the effect.
 */
export const undoToolOf = (env: Pick<UndoEnv, "lookup" | "absence">, step: StepView): RegisteredTool | string => {
  const tool = env.lookup(step)
  if (tool === undefined) return env.absence(step.toolName)
  return tool.spec.compensate === undefined && step.intent?.payload?.undo === true
    ? `the step ran when tool ${step.toolName} declared an undo, and the tool registered here declares none (its declaration changed since): undo the effect where the tool still declares its undo, or by hand, then resolve the undo as applied`
    : tool
}

/** Why an irreversible step's undo is skipped. */
export const IRREVERSIBLE = "irreversible: no undo exists"

/** Why a tool's undo cannot run for a step, as a journaled phase and reason; `undefined` if it can. */
export const unavailability = (
  tool: RegisteredTool,
  step: StepView
): readonly ["SKIPPED" | "COMPENSATION_FAILED", string] | undefined => {
  if (tool.spec.compensate === undefined) {
    return ["SKIPPED", tool.spec.reversibility === "irreversible" ? IRREVERSIBLE : "no undo declared"]
  }
  if (tool.spec.receiptRequired && !Receipts.isSet(step.executed!.payload.receipt)) {
    return ["COMPENSATION_FAILED", "the receipt its undo needs was never set: the effect cannot be undone here"]
  }
  return undefined
}

/** Where an undo runs: the saga whose step it undoes, its idempotency key, the keys its receipt opens with. */
export interface UndoOptions {
  readonly sagaId: string
  readonly idempotencyKey: string
  readonly receiptKeys: KeyRing | undefined
  /** Whether interrupting the caller interrupts the undo (`stopsWithCaller` below); otherwise it runs to its end. */
  readonly stopsWithCaller?: boolean | undefined
}

/**
 * Waits for the undo's fiber. With `stopsWithCaller`, interrupting the caller interrupts the undo
 * (and waits for it to stop): its exit is then the undo's own, `interrupted` told so.
 */
const awaitUndo = (
  fiber: Fiber.RuntimeFiber<Exit.Exit<unknown, unknown>>,
  stopsWithCaller: boolean | undefined,
  interrupted: () => void
): Effect.Effect<Exit.Exit<unknown, unknown>> => {
  if (stopsWithCaller !== true) return Fiber.join(fiber)
  // The fiber never fails (it ends with the undo's exit): the join fails only when the caller is interrupted.
  return Effect.catchAllCause(Effect.interruptible(Fiber.join(fiber)), () => {
    interrupted()
    return Effect.flatten(Fiber.interrupt(fiber))
  })
}

/**
 * Journals `COMPENSATING` in `writer`'s journal, runs the tool's undo of a step of saga `sagaId`
 * with `idempotencyKey` (bounded, with the tool's timeout and injected faults), and journals its
 * outcome; or journals why it cannot run. (An explicit undo is journaled in a run of its own.)
 * A sealed receipt that does not open here (no key, a wrong one) makes it `unavailable`, journaled
 * nowhere for the step, as a tool not registered is: a process that holds the key can still undo it.
 * Each way has its `effect-saga.undo` span, an undo that cannot run too.
 */
export const runUndo = (writer: Writer, tool: RegisteredTool, step: StepView, options: UndoOptions) =>
  Effect.suspend(() => {
    const attributes = undoAttributes(options.sagaId, step)
    const inSpan = withUndoSpan(attributes)
    const cannot = unavailability(tool, step)
    if (cannot !== undefined) return inSpan(settle(writer, step, cannot[0], cannot[1]))
    const compensate = tool.spec.compensate!
    const executed = step.executed!.payload
    /** The undo cannot run: the journaled `part` does not decode (its value never quoted). */
    const undecodableAt = (part: "input" | "result", reason: string) =>
      withUndoSpan(
        attributes,
        undecodable(part)
      )(settle(writer, step, "COMPENSATION_FAILED", `journaled ${part} does not decode: ${reason}`))
    const input = decodeJournaledJson(tool.spec.input, step.input)
    if (Either.isLeft(input)) return undecodableAt("input", input.left)
    const result = decodeJournaled(tool.spec.success, executed.result ?? null)
    if (Either.isLeft(result)) return undecodableAt("result", result.left)
    const receipt = Receipts.forUndo(options.receiptKeys, options.sagaId, step.stepId, executed.receipt)
    if (Either.isLeft(receipt)) return inSpan(Effect.succeed(reportOf(step, "unavailable", receipt.left)))
    const { idempotencyKey, sagaId } = options
    const faults = Context.getOption(tool.context, Faults)
    // Suspended: an undo whose own code throws before it makes its Effect fails like one that dies.
    let undo: Effect.Effect<unknown, unknown, any> = Effect.suspend(() =>
      compensate({
        sagaId,
        stepId: step.stepId,
        toolName: step.toolName,
        input: input.right,
        inputJson: step.input ?? "null",
        result: result.right,
        idempotencyKey,
        receipt: receipt.right
      })
    )
    if (Option.isSome(faults))
      undo = faults.value.around(step.toolName, "compensate", undo, { stepId: step.stepId, spec: tool.spec })
    undo = Effect.locally(Effect.provideService(undo, CurrentSaga, boundedSaga), insideUndo, step.toolName)
    if (tool.spec.timeout !== undefined) {
      const timeout = tool.spec.timeout
      undo = failAfter(undo, timeout, () => composedOfMasked(Outcome.unknown("the undo timed out")))
    }
    // The undo runs in a fiber of its own, interruptible there: its timeout can stop it even when
    // the command or run that settles it is uninterruptible, and a run interrupted meanwhile (a
    // shutdown) does not cut it short. The fiber ends with the undo's exit, never failed: a failed
    // daemon fiber is logged by Effect ("Fiber terminated with an unhandled error", with its cause).
    // A caller that stops with its undo (`stopsWithCaller`) journals its outcome, then stops too.
    // It runs as its call ran: with the call's context (`tool.context`) and, for a run's own undo, the
    // call's FiberRef values (log annotations, `Effect.locally`); its span and its saga are its own.
    if (tool.fiberRefs !== undefined) undo = withFiberRefsOf(undo, tool.fiberRefs)
    let callerInterrupted = false
    const isolated = Effect.flatMap(
      Effect.forkDaemon(Effect.exit(Effect.interruptible(Effect.provide(undo, tool.context)))),
      (fiber) => awaitUndo(fiber, options.stopsWithCaller, () => (callerInterrupted = true))
    )
    // Interrupted before the undo starts, the caller starts none: nothing is journaled for it.
    const beforeStart = options.stopsWithCaller === true ? Effect.interruptible(Effect.void) : Effect.void
    return beforeStart.pipe(
      Effect.zipRight(writer.append([stepDraft(step, "COMPENSATING", compensatingOf(idempotencyKey, tool.spec))])),
      Effect.zipRight(Effect.exit(Effect.flatten(isolated) as Effect.Effect<unknown, unknown>)),
      Effect.flatMap((exit) => {
        const [phase, detail] = phaseOfExit(exit, receipt.right)
        const settled = settle(writer, step, phase, detail)
        return callerInterrupted ? Effect.zipRight(settled, Effect.interrupt) : settled
      }),
      inSpan
    )
  })

/** The `COMPENSATING` payload: the undo's key, and what it is allowed where its tool declares it. */
const compensatingOf = (
  idempotencyKey: string,
  spec: { readonly undoCapabilities?: ReadonlyArray<string> | undefined }
) =>
  spec.undoCapabilities === undefined ? { idempotencyKey } : { idempotencyKey, capabilities: spec.undoCapabilities }

/**
 * Undoes every executed step not undone yet, in reverse execution order, journaling each undo
 * before and after it runs; steps already settled are reported from the journal, never run again.
 * The report is journaled when the saga's status changes or it differs from the report the journal
 * holds last, so that the last one journaled is always this one.
 * The steps' explicit undos are looked up first (`explicitUndos`), unless the caller did (`found`,
 * before its own writes). `notStarted`: steps the run that compensates knows did not start,
 * journaled with `SAGA_COMPENSATING` (see `payloads.ts`), so that they are not unknown.
 */
export const compensate = (
  writer: Writer,
  env: UndoEnv,
  cause: string,
  found?: ExplicitUndos,
  notStarted: ReadonlyArray<string> = []
): Effect.Effect<Report.CompensationReport, CompensationError> =>
  Effect.gen(function* () {
    const view = writer.view
    const explicit = found ?? (yield* explicitUndos(writer.sagaId, view, env))
    yield* begin(writer, env, cause, notStarted)
    const undone: Array<Report.StepReport> = []
    // Reads left in flight first: the calls that started last, whose outcome nobody heard.
    for (const step of view.unknownReads().reverse()) undone.push(yield* passOverRead(writer, step))
    for (const step of toUndo(view)) {
      undone.push(yield* undoStep(writer, env, step, explicit.get(step.stepId)))
    }
    // A read whose outcome is unknown is reported above (`skipped`), not as a step that may be live.
    const notUndone: Array<Report.NotUndone> = [
      ...view.failedSteps().map((step) => ({ stepId: step.stepId, toolName: step.toolName, phase: "FAILED" as const })),
      ...view
        .unknownSteps()
        .map((step) => ({ stepId: step.stepId, toolName: step.toolName, phase: "UNKNOWN" as const }))
    ]
    const report = Report.make(writer.sagaId, undone, notUndone)
    // Journaled when the status changes, and when the report does: an undo a later pass ran (one
    // `unavailable` before) or a step resolved since leaves the journal's last report stale.
    if (view.status !== report.status || !sameReport(view.lastReport, report)) {
      const phase = report.status === "compensated" ? "SAGA_COMPENSATED" : "SAGA_COMPENSATION_FAILED"
      yield* writer.append([sagaDraft(phase, report)])
    }
    return report
  })
