/**
 * Declaring tools: Effects paired with the Effect that undoes them.
 *
 * NOTE (file length): the public home of a tool's declaration (its options, contexts, errors and
 * constructors, each documented); the checks live in `internal/engine/declaration.ts`.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import type * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Redacted from "effect/Redacted"
import type * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { type CurrentSaga, callStep } from "./internal/engine/context.js"
import * as Spec from "./internal/engine/spec.js"
import { toolDuration } from "./internal/engine/toolDurations.js"
import * as identifier from "./internal/util/identifier.js"
import type * as Outcome from "./Outcome.js"
import type { Saga, CurrentSaga as SagaCurrentSaga } from "./Saga.js"
import type { InvalidIdentifier } from "./SagaError.js"
import { isSagaError } from "./SagaError.js"

/**
 * The most UTF-8 bytes of a tool's name. A name must also be non-empty, well-formed Unicode (no
 * lone surrogate), free of control characters, and hold no `/` (it ends the saga id in effect ids);
 * any other is a `DeclarationError`.
 *
 * @since 0.2.0
 * @category limits
 */
export const MAX_TOOL_NAME_BYTES: number = identifier.MAX_TOOL_NAME_BYTES

/**
 * The most UTF-8 bytes of a call's explicit `key`. A key must also be non-empty, well-formed
 * Unicode, free of control characters, and hold no `/` (it ends the saga id in effect ids); a call with any other fails with `InvalidIdentifier` (from `SagaError`), and nothing
 * is journaled or run.
 *
 * @since 0.2.0
 * @category limits
 */
export const MAX_STEP_KEY_BYTES: number = identifier.MAX_STEP_KEY_BYTES

/**
 * How undoable a tool's effect is. `reversible` (a perfect undo) and `compensatable` (a correction,
 * like a refund) both compensate; `irreversible` has no undo and waits for a human approval.
 *
 * @since 0.1.0
 * @category models
 */
export type Reversibility = "reversible" | "compensatable" | "irreversible"

/**
 * `"idempotency-key"`: the tool accepts a replay with the same key, so a call whose outcome is
 * unknown may be retried safely.
 *
 * @since 0.1.0
 * @category models
 */
export type RetryMode = "none" | "idempotency-key"

/**
 * What the forward call sees: its saga, its stable step id and idempotency key, the attempt number,
 * and `setReceipt` to journal the provider's reference that an undo will need.
 *
 * @since 0.1.0
 * @category models
 */
export interface StepContext {
  readonly sagaId: string
  readonly stepId: string
  readonly toolName: string
  readonly idempotencyKey: string
  /**
   * 1 for the first call, one more for each retry by the tool's `retry` schedule. A resume that runs
   * an unknown step again starts at the number of its journaled `INTENT`s plus one (retries within
   * a run are not journaled).
   */
  readonly attempt: number
  /**
   * Records the receipt the undo needs (the provider's reference): journaled with the step, handed
   * to the undo as `Redacted`, never shown in logs, spans, errors or printed results (a failure of
   * the call that quotes it is journaled and reported with what the tool wrote masked, the
   * library's words around it kept: docs/security.md). At most the tool's
   * `maxPayloadBytes`, as set (before sealing): one over it is never journaled, and the step, which
   * ran, needs attention (a read fails). An Effect: `yield* step.setReceipt(ref)`; not run, it
   * records nothing.
   */
  readonly setReceipt: (receipt: string | Redacted.Redacted<string>) => Effect.Effect<void>
}

/**
 * What an undo sees: the step's journaled input (decoded, and as JSON), its result, its own
 * idempotency key (distinct from the forward step's, stable across replays) and the receipt.
 *
 * @since 0.1.0
 * @category models
 */
export interface CompensationContext<I = unknown, A = unknown> {
  readonly sagaId: string
  readonly stepId: string
  readonly toolName: string
  readonly input: I
  readonly inputJson: string
  readonly result: A
  readonly idempotencyKey: string
  readonly receipt: Option.Option<Redacted.Redacted<string>>
}

/**
 * The type id a tool's errors carry: `isCompensableError` checks it, never a `_tag` that a plain
 * value could share.
 *
 * @since 0.2.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("effect-saga/Compensable/Error")

/**
 * @since 0.2.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * A declaration that cannot work: named tool, and why.
 *
 * @since 0.1.0
 * @category errors
 */
export class DeclarationError extends Schema.TaggedError<DeclarationError>("effect-saga/DeclarationError")(
  "DeclarationError",
  { toolName: Schema.String, reason: Schema.String }
) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    // A name refused for its shape is shown quoted, escaped and cut short.
    const shown =
      identifier.identifierProblem(this.toolName, MAX_TOOL_NAME_BYTES) === undefined
        ? this.toolName
        : identifier.preview(this.toolName)
    return `tool ${shown}: ${this.reason}`
  }
}

/**
 * A call's input does not fit the tool's input schema: nothing was journaled or run.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidInput extends Schema.TaggedError<InvalidInput>("effect-saga/InvalidInput")("InvalidInput", {
  toolName: Schema.String,
  reason: Schema.String
}) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `invalid input for tool ${this.toolName}: ${this.reason}`
  }
}

/**
 * A call's encoded input is larger than the tool's `maxPayloadBytes`: nothing was journaled or run.
 *
 * @since 0.1.0
 * @category errors
 */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>("effect-saga/PayloadTooLarge")(
  "PayloadTooLarge",
  { toolName: Schema.String, bytes: Schema.Int, maxBytes: Schema.Int }
) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `input of tool ${this.toolName} is ${this.bytes} bytes, over its limit of ${this.maxBytes}`
  }
}

/**
 * The errors a call can fail with before its tool runs: its input does not fit, or its `key` is
 * refused (`InvalidIdentifier`, since 0.2.0).
 *
 * @since 0.1.0
 * @category errors
 */
export type StepError = InvalidInput | PayloadTooLarge | InvalidIdentifier

/**
 * Whether a value is one of this module's errors (`DeclarationError`, `InvalidInput`,
 * `PayloadTooLarge`), by its `ErrorTypeId`. A refused step key is a `StepError` whose home is
 * `SagaError` (`InvalidIdentifier`): `isStepError` accepts it, this guard does not.
 *
 * @since 0.2.0
 * @category guards
 */
export const isCompensableError = (u: unknown): u is DeclarationError | InvalidInput | PayloadTooLarge =>
  Predicate.hasProperty(u, ErrorTypeId)

/**
 * Whether a value is a `StepError`: `InvalidInput` or `PayloadTooLarge` (by their `ErrorTypeId`),
 * or `SagaError.InvalidIdentifier` refusing a step key (kind `"step key"`; a refused saga id or
 * effect id is not a call's error).
 *
 * @since 0.1.0
 * @category guards
 */
export const isStepError = (u: unknown): u is StepError =>
  (isCompensableError(u) && u._tag !== "DeclarationError") ||
  (isSagaError(u) && u._tag === "InvalidIdentifier" && u.kind === "step key")

/**
 * Options every tool may carry. `In` is what the `retry` schedule is fed: the error of an attempt
 * that failed, as far as the type of the call knows it (`unknown` where it does not).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolOptions<In = unknown> {
  /**
   * After this long, an attempt of the call that started and has not answered has an unknown
   * outcome (one that would answer exactly then counts as timed out). It bounds each attempt of
   * `retry`, not the whole call, and the undo too. A positive duration: zero, a negative one or text
   * that names none is a `DeclarationError` (since 0.4.0).
   */
  readonly timeout?: Duration.DurationInput | undefined
  /**
   * Retries failed attempts, only before the step is journaled `EXECUTED`. The schedule is fed the
   * error of each failed attempt, before `retryMode` (or `changesNothing`: a read's may) decides
   * whether an `Outcome.Unknown` may be retried and before an `Outcome.Partial` stops the retries: what `execute` failed with (its
   * declared failure, another error, an `Outcome`), an `Outcome.Unknown` for an attempt that timed
   * out. `make` types it `E | EX | Outcome.Outcome`; `withCompensation`, whose error the options do
   * not know, `unknown` (a schedule that reads its input checks it, `Schedule.recurWhile((e:
   * unknown) => …)`).
   */
  readonly retry?: Schedule.Schedule<unknown, In, never> | undefined
  /** Cap on the encoded input and result, and on the receipt as set, in bytes (default 1 MiB). */
  readonly maxPayloadBytes?: number | undefined
  /** `"idempotency-key"` lets an unknown outcome be retried with the same key. */
  readonly retryMode?: RetryMode | undefined
  /**
   * How long an approval of an irreversible tool's step lasts, from when it was given (or renewed),
   * when the approval names no `expiresAt` of its own. Overrides the `Saga` layer's `approvalTtl`.
   * A positive duration: zero, a negative one or text that names none is a `DeclarationError`
   * (since 0.4.0).
   */
  readonly approvalTtl?: Duration.DurationInput | undefined
  /**
   * The undo needs the receipt the forward call set (`step.setReceipt`): without one, the effect
   * cannot be undone (`unavailable` from `compensateEffect`, `failed` in a saga's compensation).
   */
  readonly receiptRequired?: boolean | undefined
  /** An explicit undo of this tool's effect (`Saga.compensateEffect`) waits for an approval of its own. */
  readonly approveExplicitUndo?: boolean | undefined
  /**
   * The step changes nothing outside (a read, a question to a model): it needs no undo, and a
   * saga's compensation passes over it, writing and reporting nothing for it. Journaled with the
   * step (its `INTENT` and `EXECUTED`), so that a process without the tool passes over it too.
   *
   * NOTE: whether it ran does not matter, so its outcome is never left for an operator: its `retry`
   * schedule repeats an attempt that ended `Outcome.unknown` or timed out (as with `retryMode:
   * "idempotency-key"`), a call that still cannot know it once the schedule is spent fails with that
   * outcome, which the program gets (its type says so: `ReadOutcome`), a resume runs one a crash
   * left unknown again, and compensation passes over such a one too (journaled `SKIPPED`, reported
   * `skipped`).
   */
  readonly changesNothing?: boolean | undefined
  /**
   * What the call is allowed besides its input (a manifest binding's grants: `network`, `env:NAME`),
   * journaled with its `INTENT` before it runs, so that the audit trail says so (since 0.3.0). Each
   * is one word of at most 200 letters, digits and `_ . : / @ = + -`; any other is a
   * `DeclarationError` (the timeline prints them among its own words).
   */
  readonly capabilities?: ReadonlyArray<string> | undefined
  /**
   * What the undo is allowed besides what it is given (a manifest inverse binding's grants),
   * journaled with its `COMPENSATING` before it runs, as `capabilities` are with the `INTENT`
   * (since 0.5.0). On a tool with no undo it is a `DeclarationError`.
   */
  readonly undoCapabilities?: ReadonlyArray<string> | undefined
  /**
   * What a failed call of this tool does to the saga (since 0.5.0). `"compensate"` (the default):
   * it taints the saga, which compensates when its program ends, even one that caught the failure
   * and went on. `"continue"`: the failure is the program's to handle (a fallback to another
   * provider, `Effect.catchTag`): it is still journaled `FAILED` (with `taints: false`), and the
   * saga compensates only if its program fails. Only a failure is the program's: a call whose
   * outcome is unknown, partial or a defect still stops the saga for a person. It needs `failure`
   * (declare every error the program handles there: only those replay as themselves), so
   * `withCompensation` cannot take it. Any other value, or `"continue"` without `failure`, is a
   * `DeclarationError`.
   */
  readonly onFailure?: "compensate" | "continue" | undefined
}

/**
 * Options of one call: `key` names the call when a program makes identical calls in parallel and
 * cares which is which (at most `MAX_STEP_KEY_BYTES`, see there).
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  readonly key?: string | undefined
}

/**
 * The undo, or its absence, as the reversibility allows.
 *
 * @since 0.1.0
 * @category models
 */
export type Undo<I, A, RC> =
  | {
      readonly reversibility: "irreversible"
      /** None: what the type checker says to a declaration that gives one. */
      readonly compensate?: IrreversibleHasNoUndo
    }
  | {
      readonly reversibility?: "reversible" | "compensatable" | undefined
      /** The undo: it gets the journaled input and result, and an idempotency key of its own. */
      readonly compensate?: ((ctx: CompensationContext<I, A>) => Effect.Effect<unknown, unknown, RC>) | undefined
    }

/**
 * What the type checker says to an irreversible tool declared with an undo (it is a
 * `DeclarationError` at run time too): its effect waits for an approval instead of being undone.
 *
 * @since 0.5.0
 * @category models
 */
export type IrreversibleHasNoUndo =
  'DeclarationError: an irreversible tool cannot declare an undo (use reversibility "compensatable", or drop the undo)'

/**
 * What a declaration whose undo needs `CurrentSaga` (it calls a compensable tool) or the `Saga`
 * service (it starts a saga) is told by the type checker: the inverse of a step is one undo call.
 *
 * @since 0.1.0
 * @category models
 */
export type BoundedUndo<RC> = [Extract<RC, SagaCurrentSaga | Saga>] extends [never]
  ? unknown
  : { readonly compensate: "DeclarationError: an undo cannot call a compensable tool or start a saga" }

/**
 * What the call of a read (`changesNothing: true`) fails with besides what a write's call does: an
 * outcome it could not know (`Outcome.Unknown`, a `timeout` too) or only part of
 * (`Outcome.Partial`) reaches the program, where a write's halts the saga (`NeedsAttention`) and
 * never does. `never` for a write (`false`); both for a `boolean`, which may be either.
 *
 * @since 0.5.0
 * @category models
 */
export type ReadOutcome<ChangesNothing extends boolean | undefined> = true extends ChangesNothing
  ? Outcome.Unknown | Outcome.Partial
  : never

export type { StepSpec } from "./internal/engine/spec.js"

/**
 * A declared tool: call it with its input inside a saga to run it as a journaled step. It is
 * covariant in `Name`: a `Tool<"hold", …>` is a `Tool<string, …>`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool<out Name extends string, I, A, E, R, RC = never> {
  (input: I, options?: CallOptions): Effect.Effect<A, E | Outcome.Failed | StepError, R | CurrentSaga>
  readonly name: Name
  readonly reversibility: Reversibility
  readonly spec: Spec.StepSpec
  /**
   * Type-level only, never set: what the undo needs (`RC`, also part of `R`), so that
   * `Toolkit.layer`, which registers the undo, asks for it (since 0.4.0).
   */
  readonly "~undoRequirements"?: ((_: never) => RC) | undefined
}

/**
 * What a tool's undo needs: its `Tool`'s `RC` (`never` for a tool without an undo, or any other
 * `Any`).
 *
 * @since 0.4.0
 * @category models
 */
export type UndoRequirements<T> = T extends { readonly "~undoRequirements"?: infer F }
  ? F extends (_: never) => infer RC
    ? RC
    : never
  : never

/**
 * Any tool, for toolkits and registries.
 *
 * @since 0.1.0
 * @category models
 */
export interface Any {
  readonly name: string
  readonly reversibility: Reversibility
  readonly spec: Spec.StepSpec
}

/**
 * Everything `make` needs: schemas for what is journaled, the call, and its undo. Its type
 * parameters are `make`'s (`I, IE` from `input`, `A, AE` from `success`, `E, EE` from `failure`,
 * `R` for `execute`, `RC` for `compensate`, `EX` the errors of `execute` that `failure` does not
 * describe, `ChangesNothing` from `changesNothing`).
 *
 * @since 0.1.0
 * @category models
 */
export type MakeOptions<
  Name extends string,
  I,
  IE,
  A,
  AE,
  E,
  EE,
  R,
  RC,
  EX = never,
  ChangesNothing extends boolean | undefined = false
> = ToolOptions<NoInfer<E | EX> | Outcome.Outcome> &
  Undo<I, A, RC> & {
    readonly name: Name
    readonly input: Schema.Schema<I, IE>
    readonly success: Schema.Schema<A, AE>
    readonly failure?: Schema.Schema<E, EE> | undefined
    /** A read: its call also fails with `ReadOutcome` (see `ToolOptions.changesNothing`). */
    readonly changesNothing?: ChangesNothing
    /**
     * The call: it gets the decoded input and the step (idempotency key, attempt, `setReceipt`). An
     * error it fails with that `failure` does not describe (`EX`) reaches the program on the run
     * that made the call; a replay gives back an `Outcome.Failed` instead. One that quotes the
     * receipt the call set reaches it as a replay gives it, an `Outcome.Failed` with the masked
     * description, on that run too (docs/security.md).
     */
    readonly execute: (input: I, step: StepContext) => Effect.Effect<A, NoInfer<E> | Outcome.Outcome | EX, R>
  }

/** A list of capabilities, or `undefined` where none is declared (an empty list journals nothing). */
const nonEmpty = (list: ReadonlyArray<string> | undefined): ReadonlyArray<string> | undefined =>
  list !== undefined && list.length > 0 ? list : undefined

const toSpec = (
  options: ToolOptions & {
    readonly name: string
    readonly input: Schema.Schema<any, any>
    readonly success: Schema.Schema<any, any>
    readonly failure?: Schema.Schema<any, any> | undefined
    readonly reversibility?: Reversibility | undefined
    readonly execute: Spec.StepSpec["execute"]
    readonly compensate?: Spec.StepSpec["compensate"]
  }
): Spec.StepSpec => {
  const timeout = toolDuration("timeout", options.timeout)
  const approvalTtl = toolDuration("approvalTtl", options.approvalTtl)
  return {
    name: options.name,
    input: options.input,
    success: options.success,
    failure: options.failure,
    reversibility: options.reversibility ?? "compensatable",
    execute: options.execute,
    compensate: options.compensate,
    timeout: timeout.duration,
    retry: options.retry,
    maxPayloadBytes: options.maxPayloadBytes ?? Spec.DEFAULT_MAX_PAYLOAD_BYTES,
    retryMode: options.retryMode ?? "none",
    receiptRequired: options.receiptRequired ?? false,
    approveExplicitUndo: options.approveExplicitUndo ?? false,
    changesNothing: options.changesNothing ?? false,
    capabilities: nonEmpty(options.capabilities),
    undoCapabilities: nonEmpty(options.undoCapabilities),
    approvalTtl: approvalTtl.duration,
    optionProblem: timeout.problem ?? approvalTtl.problem ?? onFailureProblem(options.onFailure, options.failure),
    ...(options.onFailure === "continue" ? { taintsOnFailure: false } : {})
  }
}

/**
 * Why an `onFailure` option cannot work, if it cannot: only `"compensate"` and `"continue"` are,
 * and `"continue"` needs the `failure` the program handles, which alone replays as itself.
 */
const onFailureProblem = (onFailure: unknown, failure: unknown): string | undefined => {
  if (onFailure === "continue") {
    return failure === undefined
      ? `onFailure "continue" needs a failure schema: a failure it does not describe replays as an Outcome.Failed, which a handler of the error the first run caught does not catch, so a resume would take another path`
      : undefined
  }
  return onFailure === undefined || onFailure === "compensate"
    ? undefined
    : `onFailure must be "compensate" or "continue", not ${typeof onFailure === "string" ? JSON.stringify(onFailure.slice(0, 60)) : typeof onFailure}`
}

/**
 * Declares a tool. The call journals `INTENT`, runs `execute`, then journals `EXECUTED` with the
 * encoded result (the handle the undo needs: return it, not "ok") or `FAILED` with the error.
 *
 * The type parameters are inferred from the options; none needs to be written:
 * `Name` the tool's name; `I`/`IE` the input's type and its encoded (journaled) form, from `input`;
 * `A`/`AE` the result and its encoded form, from `success`; `E`/`EE` the typed failure and its
 * encoded form, from `failure` only (`never` without one); `EX` the errors `execute` fails with
 * that are neither `E` nor an `Outcome` (a call fails with them on the run that made it, a replay
 * with an `Outcome.Failed` carrying their description: declare `failure` for every error the
 * program reacts to); `R` what `execute` needs; `RC` what `compensate` needs; `ChangesNothing`
 * whether the tool is a read (`changesNothing: true`; `false` without it). The tool is
 * `Tool<Name, I, A, E | EX | ReadOutcome<ChangesNothing>, R | RC, RC>`: a call fails with any of
 * them (or `Outcome.Failed`, or a `StepError`) and needs both, and `Toolkit.layer`, which registers
 * the undo, needs `RC`. An `Outcome` `execute` fails with is never part of `EX`: a write's
 * `Outcome.Unknown` or `Outcome.Partial` halts the saga (`NeedsAttention`) and never reaches the
 * program, a read's is its `ReadOutcome`, and an `Outcome.Failed` is the call's anyway.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <
  Name extends string,
  I,
  IE,
  A,
  AE,
  E = never,
  EE = never,
  R = never,
  RC = never,
  EX = never,
  ChangesNothing extends boolean | undefined = false
>(
  options: MakeOptions<Name, I, IE, A, AE, E, EE, R, RC, EX, ChangesNothing> & BoundedUndo<RC>
): Tool<Name, I, A, E | Exclude<EX, Outcome.Outcome> | ReadOutcome<ChangesNothing>, R | RC, RC> => {
  const spec = toSpec(options as Parameters<typeof toSpec>[0])
  const tool = (input: I, call?: CallOptions) => callStep(spec, input, call?.key)
  Object.defineProperty(tool, "name", { value: spec.name })
  return Object.assign(tool, { spec, reversibility: spec.reversibility }) as any
}

/**
 * What `withCompensation` needs: the step's name, the schema of its result and its undo
 * (`ChangesNothing` from `changesNothing`).
 *
 * @since 0.1.0
 * @category models
 */
export type WithCompensationOptions<A, AE, RC, ChangesNothing extends boolean | undefined = false> = ToolOptions & {
  readonly name: string
  readonly success: Schema.Schema<A, AE>
  readonly reversibility?: "reversible" | "compensatable" | undefined
  readonly key?: string | undefined
  /** A read: the step also fails with `ReadOutcome` (see `ToolOptions.changesNothing`). */
  readonly changesNothing?: ChangesNothing
  /** The undo: it gets the journaled result, and an idempotency key of its own. */
  readonly compensate: (ctx: CompensationContext<null, A>) => Effect.Effect<unknown, unknown, RC>
}

/**
 * Attaches an undo to any Effect, making it a named, journaled step of the saga it runs in. A
 * `key` that is refused (see `MAX_STEP_KEY_BYTES`) fails the step with `InvalidIdentifier`: nothing
 * is journaled and the effect does not run. It has no `failure` schema: the step fails with the
 * effect's error `E` on the run that made it and, on a replay, with the `Outcome.Failed` carrying
 * its description, hence `E | Outcome.Failed | InvalidIdentifier` (a `catchTag` on `E` does not
 * catch it on a replay), and for a read (`changesNothing: true`) its `ReadOutcome` too.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withCompensation: {
  <A, AE, RC, ChangesNothing extends boolean | undefined = false>(
    options: WithCompensationOptions<A, AE, RC, ChangesNothing> & BoundedUndo<RC>
  ): <E, R>(
    self: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | Outcome.Failed | InvalidIdentifier | ReadOutcome<ChangesNothing>, R | RC | CurrentSaga>
  <A, E, R, AE, RC, ChangesNothing extends boolean | undefined = false>(
    self: Effect.Effect<A, E, R>,
    options: WithCompensationOptions<A, AE, RC, ChangesNothing> & BoundedUndo<RC>
  ): Effect.Effect<A, E | Outcome.Failed | InvalidIdentifier | ReadOutcome<ChangesNothing>, R | RC | CurrentSaga>
} = dual(
  2,
  <A, E, R, AE, RC>(
    self: Effect.Effect<A, E, R>,
    options: WithCompensationOptions<A, AE, RC>
  ): Effect.Effect<A, E | Outcome.Failed | InvalidIdentifier, R | RC | CurrentSaga> => {
    const spec = toSpec({ ...options, input: Schema.Null, execute: () => self } as Parameters<typeof toSpec>[0])
    return callStep(spec, null, options.key) as Effect.Effect<
      A,
      E | Outcome.Failed | InvalidIdentifier,
      R | RC | CurrentSaga
    >
  }
)
