/**
 * The typed errors a tool or an undo fails with to say what happened to the world.
 *
 * - `Failed`: proved not applied (safe to treat as if it never ran).
 * - `Unknown`: it may or may not have happened; a human or an idempotent retry must decide.
 * - `Partial`: applied in part; `remaining` says what is left.
 *
 * @since 0.1.0
 */

import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { FAILED_WORDS } from "./internal/util/failedWords.js"

/**
 * The type id the three outcomes carry: `isOutcome` checks it, never a `_tag` that a plain
 * value could share.
 *
 * @since 0.2.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-saga/Outcome")

/**
 * @since 0.2.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * The call was proved not applied: nothing changed in the world.
 *
 * @since 0.1.0
 * @category errors
 */
export class Failed extends Schema.TaggedError<Failed>("effect-saga/Outcome/Failed")("OutcomeFailed", {
  reason: Schema.String
}) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    return `${FAILED_WORDS}${this.reason}`
  }
}

/**
 * The call's outcome cannot be known: it is never assumed done, never assumed undone.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unknown extends Schema.TaggedError<Unknown>("effect-saga/Outcome/Unknown")("OutcomeUnknown", {
  reason: Schema.String
}) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    return `outcome unknown: ${this.reason}`
  }
}

/**
 * The call was applied in part; `remaining` describes what is still to do.
 *
 * @since 0.1.0
 * @category errors
 */
export class Partial extends Schema.TaggedError<Partial>("effect-saga/Outcome/Partial")("OutcomePartial", {
  remaining: Schema.String
}) {
  /** @since 0.2.0 */
  get [TypeId](): TypeId {
    return TypeId
  }
  override get message(): string {
    return `partially applied; remaining: ${this.remaining}`
  }
}

/**
 * Any of the three outcomes.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome = Failed | Unknown | Partial

/**
 * Builds a `Failed` outcome.
 *
 * @since 0.1.0
 * @category constructors
 */
export const failed = (reason: string): Failed => new Failed({ reason })

/**
 * Builds an `Unknown` outcome.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unknown = (reason: string): Unknown => new Unknown({ reason })

/**
 * Builds a `Partial` outcome.
 *
 * @since 0.1.0
 * @category constructors
 */
export const partial = (remaining: string): Partial => new Partial({ remaining })

/**
 * Whether a value is one of the three outcomes, by its `TypeId`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isOutcome = (u: unknown): u is Outcome => Predicate.hasProperty(u, TypeId)
