/**
 * The saga service: runs programs whose steps are compensable tools, resumes them from the
 * journal, compensates them, and reports where they stand.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { AlreadyDecided, Approval, ApprovalNotFound } from "./Approval.js"
import type * as Compensable from "./Compensable.js"
import type { CompensationReport } from "./CompensationReport.js"
import type * as commands from "./internal/commands.js"
import { CurrentSaga as CurrentSagaTag } from "./internal/context.js"
import * as internal from "./internal/saga.js"
import type {
  ConcurrencyConflict,
  Journal,
  JournalCorrupted,
  JournalError,
  ListFilter,
  SagaNotFound,
  SagaRecord
} from "./Journal.js"
import type { CommandRefused } from "./SagaError.js"
import type { SagaResult } from "./SagaResult.js"

export {
  /**
   * @since 0.1.0
   * @category errors
   */
  ApprovalRefused,
  /**
   * @since 0.1.0
   * @category errors
   */
  CommandRefused,
  /**
   * @since 0.1.0
   * @category errors
   */
  NonDeterminism,
  /**
   * @since 0.1.0
   * @category errors
   */
  StepFailed
} from "./SagaError.js"

export type {
  /**
   * @since 0.1.0
   * @category models
   */
  SagaResult,
  /**
   * @since 0.1.0
   * @category models
   */
  UnknownStep
} from "./SagaResult.js"

/**
 * The saga a program runs in: `Saga.run` provides it, and a tool called outside a saga does not
 * type-check.
 *
 * @since 0.1.0
 * @category context
 */
export const CurrentSaga = CurrentSagaTag

/**
 * @since 0.1.0
 * @category context
 */
export type CurrentSaga = CurrentSagaTag

/**
 * Options of a run.
 *
 * @since 0.1.0
 * @category models
 */
export type RunOptions = internal.RunOptions

/**
 * The errors a run itself fails with: the journal could not be used, or the program did not
 * replay as journaled. A program's own failures do not land here: they compensate.
 *
 * @since 0.1.0
 * @category errors
 */
export type RunError = internal.RunError

/**
 * Who approves, optionally until when (ISO-8601 UTC), and the `revision`/`digest` the operator saw:
 * if the saga moved on since, the command is refused with `ConcurrencyConflict`.
 *
 * @since 0.1.0
 * @category models
 */
export type ApproveOptions = internal.ApproveOptions

/**
 * Who rejects, why, and the `revision`/`digest` the operator saw.
 *
 * @since 0.1.0
 * @category models
 */
export type RejectOptions = internal.RejectOptions

/**
 * What an operator found out about a step whose outcome was unknown: `applied` (with the result,
 * encoded as the tool's success schema encodes it) or `not-applied`; and the position they saw.
 *
 * @since 0.1.0
 * @category models
 */
export type Resolution = commands.Resolution & commands.Seen

/**
 * The `revision` and `digest` of the saga an operator last saw (`Saga.status` shows them); a command
 * that carries them is refused with `ConcurrencyConflict` if the saga has moved on since.
 *
 * @since 0.1.0
 * @category models
 */
export type Seen = commands.Seen

/**
 * The errors an operator's command can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type CommandError = SagaNotFound | ConcurrencyConflict | JournalError | JournalCorrupted | CommandRefused

/**
 * Where one step stands, as the journal says.
 *
 * @since 0.1.0
 * @category models
 */
export type StepStatus = internal.StepStatus

/**
 * A saga's row and its steps.
 *
 * @since 0.1.0
 * @category models
 */
export interface SagaStatus extends SagaRecord {
  readonly steps: ReadonlyArray<StepStatus>
}

/**
 * The saga service.
 *
 * @since 0.1.0
 * @category services
 */
export class Saga extends Context.Tag("effect-saga/Saga")<
  Saga,
  {
    /** Runs `program` as saga `sagaId`; a saga that already exists is resumed, never run twice. */
    readonly run: <A, E, R>(
      sagaId: string,
      program: Effect.Effect<A, E, R>,
      options?: RunOptions
    ) => Effect.Effect<SagaResult<A, E>, RunError, Exclude<R, CurrentSaga>>
    /** Replays `program` over the journal of an existing saga and goes on from where it stopped. */
    readonly resume: <A, E, R>(
      sagaId: string,
      program: Effect.Effect<A, E, R>,
      options?: RunOptions
    ) => Effect.Effect<SagaResult<A, E>, RunError | SagaNotFound, Exclude<R, CurrentSaga>>
    /** Undoes every executed step not undone yet; calling it again never undoes a step twice. */
    readonly compensate: (sagaId: string, seen?: Seen) => Effect.Effect<CompensationReport, CommandError>
    /** Approves a step awaiting approval: recorded and journaled `APPROVED`; it runs on the next resume. */
    readonly approve: (
      sagaId: string,
      stepId: string,
      options: ApproveOptions
    ) => Effect.Effect<void, CommandError | ApprovalNotFound | AlreadyDecided>
    /** Rejects a step awaiting approval: journaled `REJECTED`, then the saga compensates. */
    readonly reject: (
      sagaId: string,
      stepId: string,
      options: RejectOptions
    ) => Effect.Effect<CompensationReport, CommandError | ApprovalNotFound | AlreadyDecided>
    /** Settles a step whose outcome is unknown as applied (journaled `EXECUTED`) or not (`FAILED`). */
    readonly resolve: (sagaId: string, stepId: string, resolution: Resolution) => Effect.Effect<void, CommandError>
    /** A saga's status, revision, digest and steps, read from the journal. */
    readonly status: (sagaId: string) => Effect.Effect<SagaStatus, SagaNotFound | JournalError | JournalCorrupted>
    /** Saga rows matching `filter`. */
    readonly list: (filter?: ListFilter) => Effect.Effect<ReadonlyArray<SagaRecord>, JournalError>
    /** Makes tools' undos available to `compensate` in this process (toolkits do this for you). */
    readonly register: (tools: Iterable<Compensable.Any>) => Effect.Effect<void>
  }
>() {}

/**
 * The saga service over the `Journal` and `Approval` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Saga, never, Journal | Approval> = Layer.effect(Saga, internal.makeSaga)

/**
 * Runs `program` as saga `sagaId`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const run = <A, E, R>(
  sagaId: string,
  program: Effect.Effect<A, E, R>,
  options?: RunOptions
): Effect.Effect<SagaResult<A, E>, RunError, Saga | Exclude<R, CurrentSaga>> =>
  Effect.flatMap(Saga, (saga) => saga.run(sagaId, program, options))

/**
 * Resumes an existing saga by replaying `program` over its journal.
 *
 * @since 0.1.0
 * @category accessors
 */
export const resume = <A, E, R>(
  sagaId: string,
  program: Effect.Effect<A, E, R>,
  options?: RunOptions
): Effect.Effect<SagaResult<A, E>, RunError | SagaNotFound, Saga | Exclude<R, CurrentSaga>> =>
  Effect.flatMap(Saga, (saga) => saga.resume(sagaId, program, options))

/**
 * Undoes a saga on an operator's request.
 *
 * @since 0.1.0
 * @category accessors
 */
export const compensate = (sagaId: string, seen?: Seen) => Effect.flatMap(Saga, (saga) => saga.compensate(sagaId, seen))

/**
 * Reads a saga's status from the journal.
 *
 * @since 0.1.0
 * @category accessors
 */
export const status = (sagaId: string) => Effect.flatMap(Saga, (saga) => saga.status(sagaId))

/**
 * Lists saga rows.
 *
 * @since 0.1.0
 * @category accessors
 */
export const list = (filter?: ListFilter) => Effect.flatMap(Saga, (saga) => saga.list(filter))

/**
 * Approves a step that awaits approval; resume the saga to run it.
 *
 * @since 0.1.0
 * @category commands
 */
export const approve = (sagaId: string, stepId: string, options: ApproveOptions) =>
  Effect.flatMap(Saga, (saga) => saga.approve(sagaId, stepId, options))

/**
 * Rejects a step that awaits approval; the saga compensates.
 *
 * @since 0.1.0
 * @category commands
 */
export const reject = (sagaId: string, stepId: string, options: RejectOptions) =>
  Effect.flatMap(Saga, (saga) => saga.reject(sagaId, stepId, options))

/**
 * Settles a step whose outcome is unknown; resume the saga to go on or compensate.
 *
 * @since 0.1.0
 * @category commands
 */
export const resolve = (sagaId: string, stepId: string, resolution: Resolution) =>
  Effect.flatMap(Saga, (saga) => saga.resolve(sagaId, stepId, resolution))
