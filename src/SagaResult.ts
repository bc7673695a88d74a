/**
 * How a run of a saga ended.
 *
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import { dual } from "effect/Function"
import type { ApprovalRequest } from "./Approval.js"
import type { CompensationReport } from "./CompensationReport.js"
import type { CompensationCause } from "./SagaError.js"

/**
 * A step whose outcome cannot be known: its `INTENT` is journaled, its outcome is not.
 *
 * @since 0.1.0
 * @category models
 */
export interface UnknownStep {
  readonly stepId: string
  readonly toolName: string
  readonly reason: string
}

/**
 * The program ended and every step it ran is journaled `EXECUTED`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Completed<A> {
  readonly _tag: "Completed"
  readonly sagaId: string
  readonly value: A
}

/**
 * The saga failed and every executed step was undone (or declares no undo).
 *
 * @since 0.1.0
 * @category models
 */
export interface Compensated<E> {
  readonly _tag: "Compensated"
  readonly sagaId: string
  readonly cause: Cause.Cause<E | CompensationCause>
  readonly report: CompensationReport
}

/**
 * The saga failed and something may still be dirty: an undo failed, was partial, or its outcome is
 * unknown. Page a human; the report says what.
 *
 * @since 0.1.0
 * @category models
 */
export interface CompensationFailed<E> {
  readonly _tag: "CompensationFailed"
  readonly sagaId: string
  readonly cause: Cause.Cause<E | CompensationCause>
  readonly report: CompensationReport
}

/**
 * An irreversible step waits for a human; approve it and resume the saga.
 *
 * @since 0.1.0
 * @category models
 */
export interface AwaitingApproval {
  readonly _tag: "AwaitingApproval"
  readonly sagaId: string
  readonly request: ApprovalRequest
}

/**
 * A step's outcome cannot be known; an operator must resolve it before the saga goes on.
 *
 * @since 0.1.0
 * @category models
 */
export interface NeedsAttention {
  readonly _tag: "NeedsAttention"
  readonly sagaId: string
  readonly unknown: ReadonlyArray<UnknownStep>
}

/**
 * The run was interrupted; the saga is left as it was, to be resumed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Suspended {
  readonly _tag: "Suspended"
  readonly sagaId: string
}

/**
 * How a run of a saga ended. `A` is what the program returns (in `Completed`); `E` is how the
 * program may fail (the cause in `Compensated` and `CompensationFailed`): `Saga.run` gives
 * `SagaResult<A, E>` for a program `Effect<A, E, R>`, so `E` also holds the tools' failures
 * (`Outcome.Failed`, your `failure` schemas).
 *
 * NOTE: `E` defaults to `never`, so `SagaResult<A>` is the result of a program that cannot fail. A
 * helper over any run takes both: `<A, E>(result: SagaResult<A, E>) => ...`.
 *
 * @since 0.1.0
 * @category models
 */
export type SagaResult<A, E = never> =
  | Completed<A>
  | Compensated<E>
  | CompensationFailed<E>
  | AwaitingApproval
  | NeedsAttention
  | Suspended

/**
 * Whether a run ended with something a human must look at: dirty state, an approval, an unknown step.
 *
 * @since 0.1.0
 * @category guards
 */
export const needsHuman = <A, E>(result: SagaResult<A, E>): boolean =>
  result._tag === "CompensationFailed" || result._tag === "AwaitingApproval" || result._tag === "NeedsAttention"

/**
 * A handler for each way a run can end, as `match` takes them.
 *
 * @since 0.5.0
 * @category pattern matching
 */
export interface Cases<A, E, B> {
  /** The program ended and every step it ran is journaled `EXECUTED`. */
  readonly Completed: (result: Completed<A>) => B
  /** The saga failed and every executed step was undone. */
  readonly Compensated: (result: Compensated<E>) => B
  /** The saga failed and something may still be dirty. */
  readonly CompensationFailed: (result: CompensationFailed<E>) => B
  /** An irreversible step waits for a human. */
  readonly AwaitingApproval: (result: AwaitingApproval) => B
  /** A step's outcome cannot be known. */
  readonly NeedsAttention: (result: NeedsAttention) => B
  /** The run was interrupted; the saga is left to be resumed. */
  readonly Suspended: (result: Suspended) => B
}

/**
 * Handles each way a run can end: data-first (`match(result, cases)`) or data-last
 * (`Effect.map(Saga.run(id, program), SagaResult.match(cases))`, since 0.5.0).
 *
 * @since 0.1.0
 * @category pattern matching
 */
export const match: {
  <A, E, B>(cases: Cases<A, E, B>): (result: SagaResult<A, E>) => B
  <A, E, B>(result: SagaResult<A, E>, cases: Cases<A, E, B>): B
} = dual(
  2,
  <A, E, B>(result: SagaResult<A, E>, cases: Cases<A, E, B>): B =>
    (cases[result._tag] as (result: SagaResult<A, E>) => B)(result)
)

/**
 * Whether the program ended with every step it ran journaled `EXECUTED` (`Completed`).
 *
 * @since 0.5.0
 * @category guards
 */
export const isCompleted = <A, E>(result: SagaResult<A, E>): result is Completed<A> => result._tag === "Completed"

/**
 * Whether the saga failed and every executed step was undone (`Compensated`).
 *
 * @since 0.5.0
 * @category guards
 */
export const isCompensated = <A, E>(result: SagaResult<A, E>): result is Compensated<E> => result._tag === "Compensated"

/**
 * Whether the saga failed and something may still be dirty (`CompensationFailed`).
 *
 * @since 0.5.0
 * @category guards
 */
export const isCompensationFailed = <A, E>(result: SagaResult<A, E>): result is CompensationFailed<E> =>
  result._tag === "CompensationFailed"

/**
 * Whether an irreversible step waits for a human (`AwaitingApproval`).
 *
 * @since 0.5.0
 * @category guards
 */
export const isAwaitingApproval = <A, E>(result: SagaResult<A, E>): result is AwaitingApproval =>
  result._tag === "AwaitingApproval"

/**
 * Whether a step's outcome cannot be known (`NeedsAttention`).
 *
 * @since 0.5.0
 * @category guards
 */
export const isNeedsAttention = <A, E>(result: SagaResult<A, E>): result is NeedsAttention =>
  result._tag === "NeedsAttention"

/**
 * Whether the run was interrupted, the saga left to be resumed (`Suspended`).
 *
 * @since 0.5.0
 * @category guards
 */
export const isSuspended = <A, E>(result: SagaResult<A, E>): result is Suspended => result._tag === "Suspended"
