/**
 * Why a saga stopped or compensated: the errors a run reports about itself.
 *
 * @since 0.1.0
 */

import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { named } from "./internal/util/printable.js"

/**
 * The type id this module's errors carry: `isSagaError` checks it, never a `_tag` that a plain
 * value could share.
 *
 * @since 0.2.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-saga/SagaError")

/**
 * @since 0.2.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/** Whether an error's `stepId` names one of the saga's own entries (`SAGA_STARTED`), not a step: no step id has that form. */
const isSagaEntry = (stepId: string): boolean => /^SAGA_[A-Z_]+$/.test(stepId)

/** Where an error points: a step, or one of the saga's own entries. */
const placeOf = (stepId: string): string => (isSagaEntry(stepId) ? `its ${stepId} entry` : `step ${stepId}`)

/**
 * The program did not replay as journaled: a step's tool or input differs from the journal at that
 * step, or the program cannot follow what the journal holds there (an agent's model turn whose
 * journaled answer no longer decodes with the toolkit's schemas). Nothing more ran and nothing was
 * written.
 *
 * @since 0.1.0
 * @category errors
 */
export class NonDeterminism extends Schema.TaggedError<NonDeterminism>("effect-saga/NonDeterminism")("NonDeterminism", {
  sagaId: Schema.String,
  stepId: Schema.String,
  reason: Schema.String
}) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    return `saga ${this.sagaId} did not replay as journaled at ${placeOf(this.stepId)}: ${this.reason}`
  }
}

/**
 * A step failed even though the program went on (it caught the error): the saga is tainted and
 * compensates when the program ends.
 *
 * @since 0.1.0
 * @category errors
 */
export class StepFailed extends Schema.TaggedError<StepFailed>("effect-saga/StepFailed")("StepFailed", {
  stepId: Schema.String,
  toolName: Schema.String,
  reason: Schema.String
}) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    return `step ${this.stepId} (${this.toolName}) failed: ${this.reason}`
  }
}

/**
 * An irreversible step was refused: rejected, expired, or its approval did not match its input; or,
 * in a saga a failure has bound to compensate, refused without asking (it never runs there). Such
 * a refusal halts the run, except for a call that defers its approval (an agent's): it is answered
 * with this error and the program goes on.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApprovalRefused extends Schema.TaggedError<ApprovalRefused>("effect-saga/ApprovalRefused")(
  "ApprovalRefused",
  { stepId: Schema.String, toolName: Schema.String, reason: Schema.String }
) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    return `step ${this.stepId} (${this.toolName}) was refused: ${this.reason}`
  }
}

/**
 * An irreversible call that asked not to halt the saga (an agent's tool call) waits for an
 * approval: it has not run. The program goes on; the call runs when the program settles it
 * (`Agent.loop` does, before the model's final answer) or, at the latest, when the program ends,
 * once approved. Until then the saga cannot complete: it returns `AwaitingApproval`.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApprovalPending extends Schema.TaggedError<ApprovalPending>("effect-saga/ApprovalPending")(
  "ApprovalPending",
  { sagaId: Schema.String, stepId: Schema.String, toolName: Schema.String, requestId: Schema.String }
) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    return `step ${this.stepId} (${this.toolName}) awaits an approval (request ${this.requestId}): it has not run`
  }
}

/**
 * A saga-level cause of compensation that did not come from the program itself.
 *
 * @since 0.1.0
 * @category models
 */
export type CompensationCause = StepFailed | ApprovalRefused

/**
 * A saga was started from a definition with an input that does not encode with its schema:
 * nothing was journaled or run.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidSagaInput extends Schema.TaggedError<InvalidSagaInput>("effect-saga/InvalidSagaInput")(
  "InvalidSagaInput",
  { sagaId: Schema.String, definition: Schema.String, reason: Schema.String }
) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    return `saga ${this.sagaId} was not started: its input does not fit definition ${this.definition}: ${this.reason}`
  }
}

/**
 * An operator's command does not fit the step it names: approving a step that is not awaiting
 * approval, resolving one whose outcome is known. Nothing was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class CommandRefused extends Schema.TaggedError<CommandRefused>("effect-saga/CommandRefused")("CommandRefused", {
  sagaId: Schema.String,
  stepId: Schema.String,
  reason: Schema.String
}) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    return isSagaEntry(this.stepId)
      ? `refused for saga ${named(this.sagaId)} (its ${this.stepId} entry): ${this.reason}`
      : `refused for step ${named(this.stepId)} of saga ${named(this.sagaId)}: ${this.reason}`
  }
}

/**
 * A command on a step that already has a terminal answer from another command (approving a
 * rejected step, resolving differently a step already resolved). An exact replay of the first
 * command is not a conflict: it returns the first answer. Nothing was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class CommandConflict extends Schema.TaggedError<CommandConflict>("effect-saga/CommandConflict")(
  "CommandConflict",
  { sagaId: Schema.String, stepId: Schema.String, answer: Schema.String }
) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    // An approval a refusal overtook (`approved by alice, then refused: …`) is refused to its own retry too.
    const overtaken = this.answer.startsWith("approved by ") && this.answer.includes(", then refused")
    return `step ${named(this.stepId)} of saga ${named(this.sagaId)} was already ${this.answer}: ${overtaken ? "nothing can revive it" : "a different command is refused"}`
  }
}

/**
 * No applied effect has this id. An effect id is the forward idempotency key of a step,
 * `${sagaId}/${stepId}` (`Saga.status` lists each step's `effectId`).
 *
 * @since 0.1.0
 * @category errors
 */
export class EffectNotFound extends Schema.TaggedError<EffectNotFound>("effect-saga/EffectNotFound")("EffectNotFound", {
  effectId: Schema.String
}) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    return `no effect ${named(this.effectId)}: an effect id is a step's idempotency key, <sagaId>/<stepId>`
  }
}

/**
 * `Saga.layerWith` was given an option it cannot work with: an `owner` that is not an identifier
 * (empty, a control character, over 256 UTF-8 bytes), a `leaseTtl` that is not a finite duration
 * of at least 1 millisecond (since 0.4.0: a lease expires in whole milliseconds) and at most 365
 * days (a zero or infinite lease would let two workers drive one saga, or
 * none), an `approvalTtl` that is not a positive duration, or (`option: "options"`) options that
 * are not an object or name a key that is no option (`leaseTTL`). The layer fails to build; nothing
 * is read or written.
 *
 * @since 0.2.0
 * @category errors
 */
export class InvalidWorkerOptions extends Schema.TaggedError<InvalidWorkerOptions>("effect-saga/InvalidWorkerOptions")(
  "InvalidWorkerOptions",
  { option: Schema.Literal("options", "owner", "leaseTtl", "approvalTtl"), reason: Schema.String }
) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    return `Saga.layerWith: ${this.option} ${this.reason}`
  }
}

/**
 * Any of this module's errors.
 *
 * @since 0.2.0
 * @category models
 */
export type SagaError =
  | NonDeterminism
  | StepFailed
  | ApprovalRefused
  | ApprovalPending
  | InvalidSagaInput
  | CommandRefused
  | CommandConflict
  | EffectNotFound
  | InvalidIdentifier
  | InvalidWorkerOptions

/**
 * Whether a value is one of this module's errors (every member of `SagaError`), by its `TypeId`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isSagaError = (u: unknown): u is SagaError => Predicate.hasProperty(u, TypeId)

/**
 * What an `InvalidIdentifier` names: a saga id (or the journal id a command names), a call's
 * explicit step `key`, the effect id `compensateEffect` was asked for, the step id an operator's
 * command names, or who it names as deciding (`by`, a `"principal"`).
 *
 * @since 0.2.0
 * @category models
 */
export const IdentifierKind = Schema.Literal("saga id", "step key", "effect id", "step id", "principal")

/**
 * @since 0.2.0
 * @category models
 */
export type IdentifierKind = typeof IdentifierKind.Type

/**
 * An identifier was refused before anything was journaled or run: it is empty, not well-formed
 * Unicode (a lone surrogate, which no store keeps as written), holds a control character, or is
 * over its limit of UTF-8 bytes (`Saga.MAX_SAGA_ID_BYTES`, `Compensable.MAX_STEP_KEY_BYTES`, …);
 * a principal (`by`) also when it is only blanks. An operator's command checks its saga id, step id
 * and `by` before it reads anything. `identifier` shows it quoted, escaped and cut to 64
 * characters, never whole.
 *
 * @since 0.2.0
 * @category errors
 */
export class InvalidIdentifier extends Schema.TaggedError<InvalidIdentifier>("effect-saga/InvalidIdentifier")(
  "InvalidIdentifier",
  { kind: IdentifierKind, identifier: Schema.String, reason: Schema.String }
) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    return `invalid ${this.kind} ${this.identifier}: ${this.reason}; nothing was journaled or run`
  }
}
