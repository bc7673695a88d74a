/**
 * Test helpers: the in-memory layers in one, fault injection, and crash exploration
 * (`exploreCrashes`: a user's saga crashed at every point, recovered, checked).
 *
 * NOTE (file length): the public home of the exploration's options, results and errors, each
 * documented; the exploration itself lives in `internal/testing/`.
 *
 * @since 0.1.0
 */

import * as Arbitrary from "effect/Arbitrary"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Runtime from "effect/Runtime"
import * as Approval from "./Approval.js"
import type { FaultSite } from "./internal/engine/faults.js"
import { Faults } from "./internal/engine/faults.js"
import { explore, Finding, NothingToExplore, type Unasked } from "./internal/testing/explore.js"
import { exploreKeys, optionsProblem, show } from "./internal/testing/options.js"
import * as Journal from "./Journal.js"
import type { KeyError } from "./Keys.js"
import * as Outcome from "./Outcome.js"
import * as Saga from "./Saga.js"
import type * as SagaDefinition from "./SagaDefinition.js"
import type * as SagaResult from "./SagaResult.js"

/**
 * What an injected fault does:
 * `fail` fails the call before it runs (`Outcome.Failed`: proved not applied);
 * `unknown` runs the call, then loses its answer, a success or a failure (`Outcome.Unknown`);
 * `interrupt` interrupts the call before it runs, as a crash would.
 *
 * @since 0.1.0
 * @category models
 */
export type Fault = "fail" | "unknown" | "interrupt"

/**
 * One fault: which tool, its forward call or its undo, at which call (1-based, counted per tool and
 * site), and what happens.
 *
 * @since 0.1.0
 * @category models
 */
export interface FaultPlan {
  readonly tool: string
  readonly on?: FaultSite | undefined
  readonly at?: number | undefined
  readonly fault: Fault
}

const inject = (
  fault: Fault,
  toolName: string,
  site: FaultSite,
  call: Effect.Effect<any, any, any>
): Effect.Effect<any, any, any> => {
  switch (fault) {
    case "fail":
      return Effect.fail(Outcome.failed(`injected fault: ${toolName} ${site} failed`))
    case "unknown":
      // Whatever the call answered, a success or a failure, is lost.
      return Effect.zipRight(
        Effect.exit(call),
        Effect.fail(Outcome.unknown(`injected fault: ${toolName} ${site} lost its answer`))
      )
    case "interrupt":
      return Effect.interrupt
  }
}

const faultKinds: ReadonlyArray<string> = ["fail", "unknown", "interrupt"]
const faultSites: ReadonlyArray<string> = ["execute", "compensate"]
const planKeys: ReadonlyArray<string> = ["tool", "on", "at", "fault"]

/** Why a plan (from JavaScript: of any shape) can never strike as meant, if it cannot. */
const planProblem = (plan: FaultPlan): string | undefined => {
  if (typeof plan !== "object" || plan === null) return "it is not an object { tool, on?, at?, fault }"
  const unknown = Object.keys(plan).find((key) => !planKeys.includes(key))
  if (unknown !== undefined) return `${show(unknown)} is none of tool, on, at, fault`
  const { at, fault, on, tool } = plan
  if (typeof tool !== "string" || tool === "") return `tool must be a tool's name, not ${show(tool)}`
  if (on !== undefined && !faultSites.includes(on)) return `on must be "execute" or "compensate", not ${show(on)}`
  if (at !== undefined && !(Number.isInteger(at) && at >= 1))
    return `at must be a whole number of at least 1, not ${show(at)}`
  if (!faultKinds.includes(fault)) return `fault must be "fail", "unknown" or "interrupt", not ${show(fault)}`
  return undefined
}

/** The service of one built layer: counts the calls per tool and site, and strikes where a plan says. */
const injecting = (plans: ReadonlyArray<FaultPlan>) => {
  const calls = new Map<string, number>()
  return Faults.of({
    around: (toolName, site, call) =>
      Effect.suspend(() => {
        const key = `${toolName}/${site}`
        const count = (calls.get(key) ?? 0) + 1
        calls.set(key, count)
        const plan = plans.find(
          (plan) => plan.tool === toolName && (plan.on ?? "execute") === site && (plan.at ?? 1) === count
        )
        return plan === undefined ? call : inject(plan.fault, toolName, site, call)
      })
  })
}

/**
 * A layer that injects the planned faults into the tools and undos of sagas run where it is provided.
 * A plan that can never strike as written (`at: 0`, `on: "undo"`, a fault it does not know, from
 * JavaScript) makes building the layer die, saying which plan and why. A tool name is not checked:
 * a plan for a tool the saga never calls never strikes.
 *
 * @since 0.1.0
 * @category fault injection
 */
export const faults = (...plans: ReadonlyArray<FaultPlan>): Layer.Layer<Faults> =>
  Layer.effect(
    Faults,
    Effect.suspend(() => {
      for (const [index, plan] of plans.entries()) {
        const problem = planProblem(plan)
        if (problem !== undefined) {
          return Effect.dieMessage(`Testing.faults cannot use fault plan ${index + 1} (${show(plan)}): ${problem}`)
        }
      }
      return Effect.sync(() => injecting(plans))
    })
  )

// `Faults`, `FaultSite` and `FaultStep` are declared in `internal/engine/faults.ts` (their JSDoc is
// there) and re-exported here as themselves, so that declaration files can name them.
export type { FaultSite, FaultStep } from "./internal/engine/faults.js"
export { Faults }

/**
 * `Saga.layer` over `Journal.layerMemory` and `Approval.layerMemory`, with both services exposed so
 * tests can read the journal and decide approvals.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Saga.Saga | Journal.Journal | Approval.Approval, KeyError> = Saga.layer.pipe(
  Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory))
)

/**
 * The same as `layer` with a different approval layer (`Approval.layerAutoApprove`, `layerRejectAll`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (
  approval: Layer.Layer<Approval.Approval>
): Layer.Layer<Saga.Saga | Journal.Journal | Approval.Approval, KeyError> =>
  Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, approval)))

/**
 * Where `exploreCrashes` kills the service running a saga: `"after-write"`, right after each of its
 * journal writes (the write is kept, nothing after it happens); `"before-outcome"`, right after each
 * tool call or undo ended, before its outcome was journaled.
 *
 * @since 0.2.0
 * @category crash exploration
 */
export type CrashKind = "after-write" | "before-outcome"

/**
 * What the operator answers when the saga awaits an approval: approve it, reject it, or approve it
 * with an expiry and let the `TestClock` run past it.
 *
 * @since 0.2.0
 * @category crash exploration
 */
export type ApprovalAnswer = "approve" | "reject" | "expire"

/**
 * What the operator answers for a step whose outcome is unknown (`NeedsAttention`): it was applied
 * (resolved with the result the tool was seen to return), it was not, or compensate the saga.
 *
 * @since 0.2.0
 * @category crash exploration
 */
export type OperatorAnswer = "applied" | "not-applied" | "compensate"

/**
 * How a saga ended after its crash and recovery: the tag of its last `SagaResult`.
 *
 * @since 0.2.0
 * @category crash exploration
 */
export type Ending = SagaResult.SagaResult<unknown, unknown>["_tag"]

/**
 * A property of your world that must hold once the saga ended, whatever the crash: `holds` reads
 * the services of the world layer and is told how the saga ended.
 *
 * @since 0.2.0
 * @category crash exploration
 */
export interface Invariant<W> {
  /** Says what must hold, in the failure that names it. */
  readonly name: string
  /**
   * Whether it holds (`true` or `false`), once the saga ended as `ending` (a failure, a defect or a
   * throw counts as not holding, with its reason).
   */
  readonly holds: (ending: Ending) => Effect.Effect<boolean, unknown, W>
}

/**
 * How `exploreCrashes` explores.
 *
 * @since 0.2.0
 * @category crash exploration
 */
export interface ExploreOptions<W, EW, S = never, ES = never> {
  /** The services your tools use (the outside world): built afresh for every crash point, kept across its crash. */
  readonly world: Layer.Layer<W, EW>
  /**
   * What the service itself is made of and rebuilds when it restarts (a toolkit's or agent's
   * handlers, which register their undos with its `Saga`): built in every process, over the world.
   * One that fails to build fails the exploration with its error `ES`, as a failing `world` does.
   */
  readonly services?: Layer.Layer<S, ES, W | Saga.Saga | Journal.Journal | Approval.Approval> | undefined
  /** The saga's id in every run (default `"explored"`). */
  readonly sagaId?: string | undefined
  /** The endings accepted (default `["Completed", "Compensated"]`; see `exploreCrashes` for one more). */
  readonly allow?: ReadonlyArray<Ending> | undefined
  /** What must hold in the world once the saga ended. */
  readonly invariants?: ReadonlyArray<Invariant<W>> | undefined
  /** Which crashes to inject (default both; none: only the uncrashed run is checked). */
  readonly crashes?: ReadonlyArray<CrashKind> | undefined
  /**
   * The answers given to approval requests, each explored at every crash point (default `["approve"]`);
   * refused for a saga that asks for no approval.
   */
  readonly approvals?: ReadonlyArray<ApprovalAnswer> | undefined
  /**
   * The operator's answer for an unknown step: one for all, or asked per step (reading the world).
   * Default `"truthfully"`: `"applied"` if a call of the step was seen to return a result, else `"not-applied"`.
   */
  readonly resolve?:
    | "truthfully"
    | OperatorAnswer
    | ((step: SagaResult.UnknownStep) => Effect.Effect<OperatorAnswer, unknown, W>)
    | undefined
  /** At most this many crash points per approval answer (default 200), chosen with `seed` when there are more. */
  readonly maxPoints?: number | undefined
  /** Seeds the choice of crash points under `maxPoints` (default 1). */
  readonly seed?: number | undefined
  /** `"memory"` (default), or `"sqlite"`: a fresh SQLite file per crash point, reopened by each process. */
  readonly store?: "memory" | "sqlite" | undefined
}

/**
 * What an exploration where every crash point passed went through: the points explored (of those
 * found), the recoveries made, the endings by count, and the undos whose outcome a crash hid (their
 * sagas ended `CompensationFailed`, accepted: see `exploreCrashes`).
 *
 * @since 0.2.0
 * @category crash exploration
 */
export interface CrashSummary {
  /** Crash points explored, with the uncrashed run of each approval answer. */
  readonly points: number
  /** Crash points found (before `maxPoints`). */
  readonly found: number
  /** Points where the service died and a new one recovered the saga. */
  readonly recoveries: number
  /** How many runs ended so, by ending. */
  readonly endings: Readonly<Record<string, number>>
  /**
   * Undos whose outcome a crash hid, in sagas that ended `CompensationFailed` with only such undos
   * unsettled (counted whether or not `allow` names `CompensationFailed`).
   */
  readonly hiddenUndos: number
  /**
   * Forward calls and undos run, by tool, over the whole exploration: every one that started, however
   * it ended (each attempt of a tool's `retry` is one; one a fault stopped before the tool ran too).
   */
  readonly calls: Readonly<Record<string, { readonly execute: number; readonly compensate: number }>>
}

/**
 * The type id the exploration's errors carry: `isExploreError` checks it, never a `_tag` that a
 * plain value could share.
 *
 * @since 0.2.0
 * @category type ids
 */
export const ExploreErrorTypeId: unique symbol = Symbol.for("effect-saga/Testing/ExploreError")

/**
 * @since 0.2.0
 * @category type ids
 */
export type ExploreErrorTypeId = typeof ExploreErrorTypeId

/**
 * Options `exploreCrashes` cannot explore with (a value it does not know, an option it does not
 * know): nothing was run; or what the saga offers nothing of, found by its uncrashed run: crashes it
 * has no point of (`["before-outcome"]` on a saga that calls no tool), `approvals` when it asks for none.
 *
 * @since 0.2.0
 * @category crash exploration
 */
export class InvalidExploreOptions extends Data.TaggedError("InvalidExploreOptions")<{
  /** Which option, and why. */
  readonly reason: string
}> {
  /** @since 0.2.0 */
  get [ExploreErrorTypeId](): ExploreErrorTypeId {
    return ExploreErrorTypeId
  }
  override get message(): string {
    return `exploreCrashes cannot explore: ${this.reason}`
  }
}

/**
 * Whether a value is one of the exploration's errors (`CrashFound`, `InvalidExploreOptions`), by its
 * `ExploreErrorTypeId`.
 *
 * @since 0.2.0
 * @category guards
 */
export const isExploreError = (u: unknown): u is CrashFound | InvalidExploreOptions =>
  Predicate.hasProperty(u, ExploreErrorTypeId)

/**
 * The first crash point that broke a check: where the service died, with which approval answer (and
 * input, for a property), what went wrong against what was expected, and the journal before the
 * crash and after recovery.
 *
 * @since 0.2.0
 * @category crash exploration
 */
export class CrashFound extends Data.TaggedError("CrashFound")<{
  /** Where the service died, in words ("a crash after journal write 3 of 12 (…)"), or "the run without a crash". */
  readonly point: string
  /** The answer given to approval requests in that run. */
  readonly approval: ApprovalAnswer
  /**
   * Whether the saga asked for an approval in the run without a crash: when it did not, `approval`
   * answered nothing, and the message does not name it.
   *
   * @since 0.5.0
   */
  readonly approvalAsked: boolean
  /** The input, as JSON, when a property generated it. */
  readonly input: string | undefined
  /**
   * The seed fast-check generated the inputs with, when a property generated the input: the same
   * `seed` and `runs` given to `exploreCrashesProperty` explore the same inputs again.
   *
   * @since 0.5.0
   */
  readonly seed?: number | undefined
  /** Each check that failed, with what was expected. */
  readonly problems: ReadonlyArray<string>
  /** The journal up to the crash and what recovery wrote after it. */
  readonly timeline: string
}> {
  /** @since 0.2.0 */
  get [ExploreErrorTypeId](): ExploreErrorTypeId {
    return ExploreErrorTypeId
  }
  override get message(): string {
    const given = [
      ...(this.approvalAsked ? [`approval answered "${this.approval}"`] : []),
      ...(this.input === undefined ? [] : [`input ${this.input}`]),
      ...(this.seed === undefined ? [] : [`seed ${this.seed}`])
    ]
    return [
      `${this.point}${given.length === 0 ? "" : ` (${given.join(", ")})`} breaks the saga:`,
      ...this.problems.map((problem) => `  - ${problem}`),
      this.timeline
    ].join("\n")
  }
}

/**
 * The errors an exploration fails with: a crash point that breaks a check, the world layer's own
 * and the services layer's own (`EW`: `exploreCrashes` passes both), or a store that cannot be
 * opened.
 *
 * @since 0.2.0
 * @category crash exploration
 */
export type ExploreError<EW> =
  | CrashFound
  | InvalidExploreOptions
  | EW
  | Journal.JournalError
  | Journal.JournalCorrupted
  | KeyError

/**
 * What the type checker says when the world and services layers lack a service the saga's program needs.
 *
 * @since 0.2.0
 * @category crash exploration
 */
export type ProvidesProgram<R, W> = [Exclude<R, Saga.CurrentSaga>] extends [W]
  ? unknown
  : { readonly world: "the world layer must provide every service the saga's program needs" }

/** Refuses options that cannot be explored with: a value of the wrong kind, or one the explorer does not know. */
const validate = (
  options: ExploreOptions<any, any, any, any>,
  known: ReadonlyArray<string> = exploreKeys
): Effect.Effect<void, InvalidExploreOptions> => {
  const reason = optionsProblem(options, known)
  return reason === undefined ? Effect.void : Effect.fail(new InvalidExploreOptions({ reason }))
}

/**
 * Proves a saga survives crashes. It runs `definition` on `input` once, counting its journal
 * writes and tool calls; then, for each (of the `crashes` kinds), starts afresh — a new store and a
 * new `world` — kills the service right there, and recovers as a restarted service would:
 * `Recovery.recoverAll` on a new `Saga` service over the same store, then the operators: approval
 * requests answered as `approvals` says, unknown steps settled as `resolve` says, until the saga
 * ends. Each time it checks that the journal verifies, that the saga ended as `allow` says, that no
 * forward call ran twice for one step unless its tool declares `retryMode: "idempotency-key"` and
 * no undo ran twice, and that every invariant holds. It fails with the first `CrashFound`.
 *
 * NOTE: the engine never runs an undo twice, so an undo whose outcome the crash hid (started, not
 * settled) is journaled `COMPENSATION_UNKNOWN` and the saga ends `CompensationFailed` for a human
 * to check. That ending is accepted where only such undos are unsettled, and counted in
 * `hiddenUndos`; your invariants are told the ending. Every run uses a fresh `TestClock`, which the
 * explorer moves to the earliest pending sleep whenever the saga waits on it (a retry's delay, a
 * timeout), a day at most; a saga that waits on anything else and writes nothing for 10 seconds of
 * real time fails the check. The runs log through the caller's loggers, at its minimum level, each
 * line stamped by the caller's clock (not the run's `TestClock`).
 *
 * @since 0.2.0
 * @category crash exploration
 */
export const exploreCrashes = <I, A, E, R, W, EW, S = never, ES = never>(
  definition: SagaDefinition.SagaDefinition<I, A, E, R>,
  input: I,
  options: ExploreOptions<W, EW, S, ES> & ProvidesProgram<R, W | S>
): Effect.Effect<CrashSummary, ExploreError<EW | ES>> => exploreOne(definition, input, options, "refuse")

/** `exploreCrashes`; `unasked` says what `approvals` for a run that asks for none is: refused, or nothing to answer. */
const exploreOne = <I, A, E, R, W, EW, S, ES>(
  definition: SagaDefinition.SagaDefinition<I, A, E, R>,
  input: I,
  options: ExploreOptions<W, EW, S, ES> & ProvidesProgram<R, W | S>,
  unasked: Unasked
): Effect.Effect<CrashSummary, ExploreError<EW | ES>> =>
  Effect.mapError(
    Effect.zipRight(
      validate(options),
      Effect.suspend(() => explore(definition, input, options, unasked))
    ),
    (error) =>
      error instanceof Finding
        ? new CrashFound({
            point: error.point,
            approval: error.approval,
            approvalAsked: error.approvalAsked,
            input: undefined,
            problems: error.problems,
            timeline: error.timeline
          })
        : error instanceof NothingToExplore
          ? new InvalidExploreOptions({ reason: error.reason })
          : error
  )

/**
 * How many inputs `exploreCrashesProperty` generates, seeded how.
 *
 * @since 0.2.0
 * @category crash exploration
 */
export interface PropertyOptions {
  /** How many inputs (default 10): each is explored at every crash point. */
  readonly runs?: number | undefined
  /** Seeds fast-check, so that a failure can be repeated. */
  readonly seed?: number | undefined
}

/**
 * `exploreCrashes` over inputs generated from the definition's input schema (`Arbitrary.make`), with
 * fast-check: the first input that breaks a check is shrunk, and its `CrashFound` names it. An input
 * whose exploration fails otherwise or dies fails it with that error or defect, never passes it.
 *
 * @since 0.2.0
 * @category crash exploration
 */
export const exploreCrashesProperty = <I, A, E, R, W, EW, S = never, ES = never>(
  definition: SagaDefinition.SagaDefinition<I, A, E, R>,
  options: ExploreOptions<W, EW, S, ES> & ProvidesProgram<R, W | S> & PropertyOptions
): Effect.Effect<ReadonlyArray<CrashSummary>, ExploreError<EW | ES>> =>
  Effect.gen(function* () {
    yield* validate(options, [...exploreKeys, "runs"])
    const { runs = 10, ...explored } = options
    if (!(Number.isInteger(runs) && runs >= 1)) {
      return yield* new InvalidExploreOptions({
        reason: `runs must be a whole number of at least 1, not ${show(runs)}`
      })
    }
    const summaries: Array<CrashSummary> = []
    // The last input whose exploration failed or died, and how: fast-check shrinks towards it.
    let failure: { readonly input: I; readonly cause: Cause.Cause<ExploreError<EW | ES>> } | undefined
    // Each input is explored in the caller's runtime: its loggers, log level and services.
    const runtime = yield* Effect.runtime<never>()
    const property = FastCheck.asyncProperty(Arbitrary.make(definition.input), async (input) => {
      const exit = await Runtime.runPromiseExit(runtime)(
        // Generated inputs may take a path that asks for no approval: `approvals` then has nothing to answer.
        exploreOne(definition, input, explored as ExploreOptions<W, EW, S, ES> & ProvidesProgram<R, W | S>, "skip")
      )
      if (Exit.isSuccess(exit)) {
        summaries.push(exit.value)
        return true
      }
      failure = { input, cause: exit.cause }
      return false
    })
    const details = yield* Effect.promise(() =>
      FastCheck.check(property, { numRuns: runs, ...(options.seed === undefined ? {} : { seed: options.seed }) })
    )
    if (failure === undefined) {
      // A property that failed without an exploration failing: fast-check itself could not run it.
      return details.failed ? yield* Effect.die(details.errorInstance ?? new Error(String(details.error))) : summaries
    }
    const { cause, input } = failure
    const error = Cause.failureOption(cause)
    // An exploration that died dies here the same way; only a CrashFound is told its input.
    if (Option.isNone(error) || !(error.value instanceof CrashFound)) return yield* Effect.failCause(cause)
    return yield* Effect.fail(new CrashFound({ ...error.value, input: JSON.stringify(input), seed: details.seed }))
  })
