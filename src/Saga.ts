/**
 * The saga service: runs programs whose steps are compensable tools, resumes them from the
 * journal, compensates them, and reports where they stand.
 *
 * NOTE (file length): the public home of the service's types (its options, errors and results, each
 * documented); the implementation is `internal/engine/saga.ts`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type { AlreadyDecided, Approval, ApprovalNotFound, ApprovalRequest, RenewError } from "./Approval.js"
import type { Unauthorized } from "./Authority.js"
import type * as Compensable from "./Compensable.js"
import type { CompensationReport, UndoOutcome } from "./CompensationReport.js"
import { CurrentSaga, undosStopWithCaller } from "./internal/engine/context.js"
import * as operatorCommands from "./internal/engine/operatorCommands.js"
import { sagaPages } from "./internal/engine/pages.js"
import * as internal from "./internal/engine/saga.js"
import * as Written from "./internal/engine/written.js"
import { JournalError } from "./internal/journal/errors.js"
import { byUrgency, pageProblem } from "./internal/journal/pagedRows.js"
import * as identifier from "./internal/util/identifier.js"
import type {
  ConcurrencyConflict,
  Journal,
  JournalCorrupted,
  JournalTampered,
  LeaseHeld,
  ListFilter,
  SagaNotFound,
  SagaRecord,
  TamperProblem
} from "./Journal.js"
import type { KeyError } from "./Keys.js"
import type { SagaDefinition } from "./SagaDefinition.js"
import type {
  CommandConflict,
  CommandRefused,
  EffectNotFound,
  InvalidIdentifier,
  InvalidSagaInput,
  InvalidWorkerOptions,
  NonDeterminism
} from "./SagaError.js"
import type { SagaResult } from "./SagaResult.js"

// `CurrentSaga` is declared in `internal/engine/context.ts` (its JSDoc is there) and re-exported here
// as itself, so that a consumer's declaration files can name it as `Saga.CurrentSaga`.
export { CurrentSaga } from "./internal/engine/context.js"
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
 * Options of a run.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions {
  /**
   * `"suspend"` (default) leaves the saga resumable; `"compensate"` undoes it, unless the
   * interruption cut a call in flight (its outcome is unknown: the run ends `NeedsAttention`).
   */
  readonly onInterrupt?: "suspend" | "compensate" | undefined
}

/**
 * Who a worker is in the leases it takes (`owner`, unique among live workers; a stable name lets a
 * restarted worker take its sagas back at once) and how long they last without renewal (`leaseTtl`,
 * default 30 seconds). `approvalTtl`: how long an approval lasts when neither it nor its tool says.
 *
 * @since 0.1.0
 * @category models
 */
export interface WorkerOptions {
  /**
   * The worker's name in leases, unique among the workers alive at one time. A stable name (say,
   * the host's) lets a restarted worker take its own sagas back at once: starting up, it drops
   * every lease held under its name. Default: host, process id and a random suffix.
   */
  readonly owner?: string | undefined
  /**
   * How long a lease lasts without renewal (default 30 seconds); it is renewed every third of that.
   * At least 1 millisecond (a lease expires in whole milliseconds) and at most 365 days.
   */
  readonly leaseTtl?: Duration.DurationInput | undefined
  /**
   * How long an approval lasts, from when it was given (or renewed), when neither the approval
   * (`expiresAt`) nor its tool (`approvalTtl`) says. Default: no expiry.
   */
  readonly approvalTtl?: Duration.DurationInput | undefined
}

/**
 * The worker a `Saga` service runs sagas as.
 *
 * @since 0.1.0
 * @category models
 */
export interface Worker {
  /** The worker's name in the leases it takes. */
  readonly owner: string
  /** How long its leases last without renewal. */
  readonly leaseTtl: Duration.Duration
  /**
   * Keeps the worker's leases renewed while `effect` runs. Runs do this for themselves; recovery
   * does it for the sagas it claimed and has not started yet.
   */
  readonly renewing: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * The most UTF-8 bytes of a saga id that `run`, `start` and `resume` accept. A saga id must also be
 * non-empty, well-formed Unicode (no lone surrogate) and free of control characters; any other is
 * refused with `InvalidIdentifier` before anything is journaled or run.
 *
 * @since 0.2.0
 * @category limits
 */
export const MAX_SAGA_ID_BYTES: number = identifier.MAX_SAGA_ID_BYTES

/**
 * The most UTF-8 bytes of the id that an operator's command (`compensate`, `approve`, `reject`,
 * `renewApproval`, `resolve`), `status` or `compensateEffect` names: more than `MAX_SAGA_ID_BYTES`,
 * because the journal id of an explicit undo's run, `<sagaId>/<stepId>/compensate-effect`, holds a
 * saga id and a step id. The same rules as for a saga id apply otherwise.
 *
 * @since 0.2.0
 * @category limits
 */
export const MAX_JOURNAL_ID_BYTES: number = identifier.MAX_JOURNAL_ID_BYTES

/**
 * The most UTF-8 bytes of who an operator's command (`approve`, `reject`, `renewApproval`,
 * `resolve`) names as deciding, its `by`. It must also be non-empty and not only blanks,
 * well-formed Unicode and free of control characters: it is journaled and printed as a name. Any
 * other is refused with `InvalidIdentifier` (`kind: "principal"`) before anything is read; the step
 * id the command names is checked as an id (`kind: "step id"`, at most `MAX_JOURNAL_ID_BYTES`).
 *
 * @since 0.2.0
 * @category limits
 */
export const MAX_PRINCIPAL_BYTES: number = identifier.MAX_PRINCIPAL_BYTES

/**
 * The most UTF-8 bytes of the `reason` a rejection (`reject`) gives: it is journaled with the
 * decision and read by people. A longer one, or a blank one, is refused with `CommandRefused` and
 * nothing is decided or written.
 *
 * @since 0.5.0
 * @category limits
 */
export const MAX_REJECTION_REASON_BYTES: number = operatorCommands.MAX_REJECTION_REASON_BYTES

/**
 * The errors a run itself fails with: the saga id was refused, the journal could not be used, or
 * the program did not replay as journaled. A program's own failures do not land here: they compensate.
 * A `ConcurrencyConflict` or `LeaseHeld` that refuses a write after the run wrote entries of its
 * own (its lease lapsed mid-step and another worker took the saga over) carries `written`, and its
 * message names them.
 *
 * @since 0.1.0
 * @category errors
 */
export type RunError =
  | JournalError
  | ConcurrencyConflict
  | LeaseHeld
  | JournalCorrupted
  | JournalTampered
  | NonDeterminism
  | Unauthorized
  | InvalidIdentifier

/**
 * Who approves, optionally until when (ISO-8601 UTC), and the `revision`/`digest` the operator saw:
 * if the saga moved on since, the command is refused with `ConcurrencyConflict`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApproveOptions extends Seen {
  readonly by: string
  readonly expiresAt?: string | undefined
}

/**
 * Who renews, the new expiry (ISO-8601 UTC; absent: the TTL counts from the renewal), optionally the
 * `inputDigest` the operator saw (another one is refused), and the `revision`/`digest` they saw.
 *
 * @since 0.1.0
 * @category models
 */
export interface RenewApprovalOptions extends Seen {
  readonly by: string
  readonly expiresAt?: string | undefined
  readonly inputDigest?: string | undefined
}

/**
 * Who rejects, why, and the `revision`/`digest` the operator saw.
 *
 * @since 0.1.0
 * @category models
 */
export interface RejectOptions extends Seen {
  readonly by: string
  readonly reason: string
}

/**
 * What an operator found out about a step whose outcome was unknown: `applied` (with the result,
 * encoded as the tool's success schema encodes it, and the `receipt` the provider gave for the call,
 * if the undo needs one) or `not-applied`; and the position they saw. A `receipt` is journaled as
 * a tool's own is: sealed under `EFFECT_SAGA_RECEIPT_KEYS` when they are configured (since 0.4.0).
 *
 * For an undo (an explicit undo's run that answered `unknown`, or, in a saga `compensation_failed`,
 * the undo of a step that compensation left not undone), `applied` says the effect is undone now
 * (the undo happened, or someone undid it by hand) and takes no `result` or `receipt`;
 * `not-applied` says the undo did not happen (since 0.5.0 for a saga's step).
 *
 * @since 0.1.0
 * @category models
 */
export type Resolution = (
  | {
      readonly outcome: "applied"
      readonly by: string
      readonly result?: unknown
      readonly receipt?: Redacted.Redacted<string> | undefined
      /**
       * The call happened, and its effect was undone by hand since: journals `EXECUTED` and, at once,
       * `COMPENSATED` (`resolved as undone by WHO`), so that a compensation counts the step undone and
       * never runs its undo. Only once the saga began to compensate (a step compensation passed over
       * as unknown, found applied later); refused (`CommandRefused`) before then (since 0.5.0).
       */
      readonly undone?: boolean | undefined
    }
  | { readonly outcome: "not-applied"; readonly by: string }
) &
  Seen

/**
 * The `revision` and `digest` of the saga an operator last saw (`Saga.status` shows them); a command
 * that carries them is refused with `ConcurrencyConflict` if the saga has moved on since.
 *
 * @since 0.1.0
 * @category models
 */
export interface Seen {
  readonly revision?: number | undefined
  readonly digest?: string | undefined
}

/**
 * The errors an operator's command can fail with. `CommandRefused` too for a command on a saga
 * asked from inside that saga's own run (the run drives the saga until it ends).
 *
 * @since 0.1.0
 * @category errors
 */
export type CommandError =
  | SagaNotFound
  | ConcurrencyConflict
  | LeaseHeld
  | JournalError
  | JournalCorrupted
  | JournalTampered
  | CommandRefused
  | CommandConflict
  | Unauthorized
  | InvalidIdentifier

/**
 * What an explicit undo of one effect came to: `Settled` with its outcome (`completed`, `partial`,
 * `unavailable`, `failed`, `unknown`) and detail, or `AwaitingApproval` for the undo's own approval.
 * `runId` is the journal id of the undo's run.
 *
 * @since 0.1.0
 * @category models
 */
export type EffectCompensation =
  | {
      readonly _tag: "Settled"
      readonly effectId: string
      readonly runId: string
      readonly outcome: Exclude<UndoOutcome, "skipped">
      readonly detail: string | undefined
    }
  | {
      readonly _tag: "AwaitingApproval"
      readonly effectId: string
      readonly runId: string
      readonly request: ApprovalRequest
    }

/**
 * Where one step stands, as the journal says.
 *
 * @since 0.1.0
 * @category models
 */
export interface StepStatus {
  readonly stepId: string
  readonly toolName: string
  /** The step's forward idempotency key: what `compensateEffect` names the step's effect by. */
  readonly effectId: string
  /**
   * `"unknown"`: its `INTENT` has no outcome, it may or may not have run. `"not_started"`: its
   * `INTENT` has no outcome because the run was interrupted with none of its calls in flight (it
   * never started, or every attempt failed and it was waiting to retry): it did not run, a resume
   * runs it (since 0.5.0). `"in_flight"`: its `INTENT` has no outcome while the saga is running
   * under a live lease (judged by the store's clock): its worker is running the call and journals
   * its outcome when it answers, or journals why it has none when its run stops (a call that timed
   * out while other branches still run; an unknown step a resuming worker has not reached yet, which
   * it stops on): wait, nothing to resolve yet (since 0.5.0; before, `"unknown"`). Once that lease
   * lapses with no outcome, or the saga stops on the step, it is `"unknown"`.
   */
  readonly state:
    | "executed"
    | "failed"
    | "unknown"
    | "in_flight"
    | "not_started"
    | "awaiting_approval"
    | "approved"
    | "refused"
  /**
   * What its undo came to, `"started"` while it runs, `undefined` when none was asked for. A step
   * whose undo journaled nothing of its own (`unavailable`: its tool not registered, its receipt's
   * key missing) says what the saga's last compensation report (`SAGA_COMPENSATION_FAILED`) says of it.
   * In an explicit undo's run, an undo that never ran (its approval rejected or expired) is the run's
   * answer, `"failed"` (since 0.5.0).
   */
  readonly undo: UndoOutcome | "started" | undefined
  /**
   * What its undo left, as journaled or reported: what a `partial` undo did not undo (its
   * `remaining`), why one `failed`, was `unknown`, `skipped` or `unavailable`. Absent when there is
   * none (since 0.5.0).
   */
  readonly undoDetail?: string | undefined
  /**
   * `true` when the journal says the step changes nothing outside (a read, declared
   * `changesNothing`): its `"unknown"` state leaves nothing dirty, so there is nothing to resolve
   * (a resume runs it again, compensation passes over it). Absent otherwise (since 0.4.0).
   */
  readonly changesNothing?: boolean | undefined
  /**
   * Why its outcome is `"unknown"`, as the saga journaled when it stopped on it (`the call died (a
   * defect: …)`, a timeout's `outcome unknown: the call started but timed out before it answered`,
   * `Outcome.unknown`'s words; `Timeline.unknownReasons` reads the same). Absent for any other
   * state, and for a step the saga never stopped on (its worker died) (since 0.5.0).
   */
  readonly unknownReason?: string | undefined
  /**
   * `true` when its tool declared `receiptRequired` when it was called: resolved as applied, the
   * step needs the provider's receipt (`Resolution`'s `receipt`), or its undo can never run. Absent
   * otherwise (since 0.5.0).
   */
  readonly receiptRequired?: boolean | undefined
  /**
   * `true` when its tool declared `retryMode: "idempotency-key"` when it was called: with its
   * outcome `"unknown"`, a resume runs it again with the same idempotency key (if the tool the
   * resuming worker registers still declares it). Absent otherwise, and on a step whose `INTENT` was
   * journaled before 0.5.0 (since 0.5.0).
   */
  readonly retriesByKey?: boolean | undefined
  /**
   * `true` when the step waits, or waited before it ran, for an approval, as only an irreversible
   * tool's step does: its tool had no undo then. A process that registers no tool of its name
   * journals it `SKIPPED` (`irreversible: no undo exists`) when it compensates, and an operator's
   * undo command needs no tool for it; where a tool of its name is registered, that tool decides
   * (one that declares an undo since runs it). Absent otherwise, and on the step of an explicit
   * undo's run (since 0.5.0).
   */
  readonly irreversible?: boolean | undefined
}

/**
 * A saga's row and its steps.
 *
 * @since 0.1.0
 * @category models
 */
export interface SagaStatus extends SagaSummary {
  /** The steps, as the entries before the first break say (all of them when the journal verifies). */
  readonly steps: ReadonlyArray<StepStatus>
}

/**
 * Where a saga's journal breaks: the first entry that does not verify, what is wrong with it, why.
 *
 * @since 0.2.0
 * @category models
 */
export interface Tamper {
  readonly seq: number
  readonly problem: TamperProblem
  readonly reason: string
}

/**
 * A saga's row, and whether its journal verifies: `tampered` names the first break (`undefined`
 * when the chain, its MACs and the row agree). Nothing about a tampered saga should be taken as a
 * fact past that entry.
 *
 * @since 0.2.0
 * @category models
 */
export interface SagaSummary extends SagaRecord {
  readonly tampered: Tamper | undefined
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
    /** The worker this service runs sagas as: its name in leases and their length. */
    readonly worker: Worker
    /** Runs `program` as saga `sagaId`; a saga that already exists is resumed, never run twice. */
    readonly run: <A, E, R>(
      sagaId: string,
      program: Effect.Effect<A, E, R>,
      options?: RunOptions
    ) => Effect.Effect<SagaResult<A, E>, RunError, Exclude<R, CurrentSaga>>
    /**
     * Runs a definition's program on `input` as saga `sagaId`, journaling the definition's name and
     * the encoded input so that `Recovery` can resume it anywhere. A saga that already exists is
     * resumed, and must have been started from the same definition and input.
     */
    readonly start: <I, A, E, R>(
      definition: SagaDefinition<I, A, E, R>,
      sagaId: string,
      input: I,
      options?: RunOptions
    ) => Effect.Effect<SagaResult<A, E>, RunError | InvalidSagaInput, Exclude<R, CurrentSaga>>
    /**
     * Replays `program` over the journal of an existing saga and goes on from where it stopped. A
     * finished saga answers from its journal: a replay never undoes a completed saga (a program that
     * now fails, or ends without replaying a call the journal holds executed, meets `NonDeterminism`)
     * and never completes one that began to compensate.
     */
    readonly resume: <A, E, R>(
      sagaId: string,
      program: Effect.Effect<A, E, R>,
      options?: RunOptions
    ) => Effect.Effect<SagaResult<A, E>, RunError | SagaNotFound, Exclude<R, CurrentSaga>>
    /**
     * Undoes every executed step not undone yet; calling it again never undoes a step twice. An
     * approval request still pending is withdrawn (journaled `REJECTED` by `effect-saga`). Asked
     * again at the position `seen` it began the compensation from, it answers the report from the
     * journal instead of `ConcurrencyConflict`. The report it answers is the one the journal holds
     * last: journaled again when it changed (an undo `unavailable` before ran), even if the status did not.
     */
    readonly compensate: (sagaId: string, seen?: Seen) => Effect.Effect<CompensationReport, CommandError>
    /**
     * Undoes one applied effect (`effectId`: the step's forward idempotency key, `Saga.status` lists
     * it) on request, as a run of its own with its own journal entries, idempotency key, timeout and
     * at most one approval of its own. The saga's step stays `EXECUTED`. Asking again returns the
     * first answer and runs nothing.
     */
    readonly compensateEffect: (effectId: string) => Effect.Effect<EffectCompensation, CommandError | EffectNotFound>
    /** Approves a step awaiting approval: recorded and journaled `APPROVED`; it runs on the next resume. */
    readonly approve: (
      sagaId: string,
      stepId: string,
      options: ApproveOptions
    ) => Effect.Effect<void, CommandError | ApprovalNotFound | AlreadyDecided>
    /** Gives an approved step that has not run a new expiry, for the same input: journaled `APPROVED`. */
    readonly renewApproval: (
      sagaId: string,
      stepId: string,
      options: RenewApprovalOptions
    ) => Effect.Effect<void, CommandError | RenewError>
    /** Rejects a step awaiting approval: journaled `REJECTED`, then the saga compensates. */
    readonly reject: (
      sagaId: string,
      stepId: string,
      options: RejectOptions
    ) => Effect.Effect<CompensationReport, CommandError | ApprovalNotFound | AlreadyDecided>
    /**
     * Settles a step whose outcome is unknown as applied (journaled `EXECUTED`) or not (`FAILED`).
     * `applied` is refused once compensation undid a step that ran before it. Given the id of an
     * explicit undo's run that answered `unknown`, settles that undo as done (`applied`) or not.
     * In a saga `compensation_failed`, settles the undo of an executed step that compensation left
     * `failed`, `partial`, `unknown` or `unavailable`: `applied` (no result) journals `COMPENSATED`
     * (`resolved as undone by WHO`), `not-applied` (an `unknown` undo only) `COMPENSATION_FAILED`;
     * the next `compensate` counts it undone without running it.
     */
    readonly resolve: (sagaId: string, stepId: string, resolution: Resolution) => Effect.Effect<void, CommandError>
    /** A saga's status, revision, digest and steps, read from the journal. */
    readonly status: (
      sagaId: string
    ) => Effect.Effect<SagaStatus, SagaNotFound | JournalError | JournalCorrupted | InvalidIdentifier>
    /** Saga rows matching `filter`, each with its `tampered` mark (every listed saga's chain is verified). */
    readonly list: (filter?: ListFilter) => Effect.Effect<ReadonlyArray<SagaSummary>, JournalError>
    /**
     * Makes tools' undos available to `compensate` in this process (toolkits do this for you). Each
     * undo runs in the context `register` ran in, so it needs what the undos need
     * (`Compensable.UndoRequirements`, since 0.5.0: it needed nothing, and an undo whose service was
     * missing failed when an operator's compensation ran it), as `Toolkit.layer` does. A different
     * tool under a name already registered marks the name shared (a warning is logged): an operator's
     * compensation reports a step under it `unavailable`, since the journal cannot tell whose it is.
     */
    readonly register: <Tool extends Compensable.Any>(
      tools: Iterable<Tool>
    ) => Effect.Effect<void, never, Compensable.UndoRequirements<Tool>>
  }
>() {}

/**
 * The saga service over the `Journal` and `Approval` in context, as a worker with the given name
 * and lease length. Runs and operators' commands live in the layer's scope: when it closes, the
 * runs in flight are interrupted and left `Suspended` (resumable), the commands in flight are
 * waited for (an undo runs to its end, unless `withInterruptibleUndos`), and then the worker's
 * leases are dropped. A run or command still waiting for its saga's lock then never starts: it ends
 * interrupted, having written nothing.
 *
 * NOTE: building it reads the receipt keys (`EFFECT_SAGA_RECEIPT_KEYS`, see `Keys`): a key list that
 * cannot be used fails it with `KeyError` before anything is read or written, and an option it
 * cannot work with (a `leaseTtl` that is not positive and finite, …) with `InvalidWorkerOptions`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (
  options: WorkerOptions
): Layer.Layer<Saga, KeyError | InvalidWorkerOptions, Journal | Approval> =>
  // From JavaScript, `null` takes the defaults, as no options do.
  Layer.scoped(Saga, internal.makeSaga(options ?? {}))

/**
 * The saga service over the `Journal` and `Approval` in context, as a worker with a fresh name and
 * 30-second leases.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Saga, KeyError, Journal | Approval> = Layer.scoped(
  Saga,
  // The defaults are options it can work with.
  Effect.catchTag(internal.makeSaga({}), "InvalidWorkerOptions", Effect.die)
)

/**
 * `body`, taking the program second (`f(sagaId, program, options?)`) or last
 * (`program.pipe(f(sagaId, options?))`): the second argument says which, an Effect or not.
 */
const programFirstOrLast =
  <Out>(body: (sagaId: string, program: Effect.Effect<any, any, any>, options?: RunOptions) => Out) =>
  (sagaId: string, second?: Effect.Effect<any, any, any> | RunOptions, options?: RunOptions) =>
    Effect.isEffect(second)
      ? body(sagaId, second, options)
      : (program: Effect.Effect<any, any, any>) => body(sagaId, program, second as RunOptions | undefined)

/**
 * Runs `program` as saga `sagaId`: `Saga.run(sagaId, program, options?)`, or data-last,
 * `program.pipe(Saga.run(sagaId, options?))` (since 0.5.0).
 *
 * NOTE: a run of `sagaId` from inside its own run (its program, a tool it calls, or a saga it runs,
 * at any depth) would wait for itself: it dies at once, naming the saga; nothing runs.
 *
 * @since 0.1.0
 * @category accessors
 */
export const run: {
  <A, E, R>(
    sagaId: string,
    program: Effect.Effect<A, E, R>,
    options?: RunOptions
  ): Effect.Effect<SagaResult<A, E>, RunError, Saga | Exclude<R, CurrentSaga>>
  (
    sagaId: string,
    options?: RunOptions
  ): <A, E, R>(
    program: Effect.Effect<A, E, R>
  ) => Effect.Effect<SagaResult<A, E>, RunError, Saga | Exclude<R, CurrentSaga>>
} = programFirstOrLast((sagaId, program, options) =>
  Effect.flatMap(Saga, (saga) => saga.run(sagaId, program, options))
) as any

/**
 * Runs a definition's program as saga `sagaId`, recoverable by `Recovery`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const start = <I, A, E, R>(
  definition: SagaDefinition<I, A, E, R>,
  sagaId: string,
  input: I,
  options?: RunOptions
): Effect.Effect<SagaResult<A, E>, RunError | InvalidSagaInput, Saga | Exclude<R, CurrentSaga>> =>
  Effect.flatMap(Saga, (saga) => saga.start(definition, sagaId, input, options))

/**
 * Resumes an existing saga by replaying `program` over its journal: `Saga.resume(sagaId, program,
 * options?)`, or data-last, `program.pipe(Saga.resume(sagaId, options?))` (since 0.5.0).
 *
 * NOTE: a saga that stopped, or that another worker left running (a takeover), is journaled
 * `SAGA_RESUMED` with the run's first write; a run that writes nothing writes no marker.
 *
 * @since 0.1.0
 * @category accessors
 */
export const resume: {
  <A, E, R>(
    sagaId: string,
    program: Effect.Effect<A, E, R>,
    options?: RunOptions
  ): Effect.Effect<SagaResult<A, E>, RunError | SagaNotFound, Saga | Exclude<R, CurrentSaga>>
  (
    sagaId: string,
    options?: RunOptions
  ): <A, E, R>(
    program: Effect.Effect<A, E, R>
  ) => Effect.Effect<SagaResult<A, E>, RunError | SagaNotFound, Saga | Exclude<R, CurrentSaga>>
} = programFirstOrLast((sagaId, program, options) =>
  Effect.flatMap(Saga, (saga) => saga.resume(sagaId, program, options))
) as any

/**
 * Undoes a saga on an operator's request: every executed step not undone yet, in reverse order.
 * An approval request still pending is withdrawn (journaled `REJECTED` by `effect-saga`, rejected
 * in the `Approval` service): nothing runs forward in a saga that began to compensate. The saga's
 * lease is held, and renewed as a run's is, until the last undo returns. The same
 * command asked again at the `seen` position it began the compensation from answers the report
 * from the journal and undoes nothing again; at any other position the saga moved on from,
 * `ConcurrencyConflict`. Its report is journaled (`SAGA_COMPENSATED`, `SAGA_COMPENSATION_FAILED`)
 * when the status changes or the report differs from the one the journal holds last (an undo that
 * was `unavailable` ran now, a step was resolved since): the journal's last report is never stale.
 *
 * @since 0.1.0
 * @category accessors
 */
export const compensate = (sagaId: string, seen?: Seen): Effect.Effect<CompensationReport, CommandError, Saga> =>
  Effect.flatMap(Saga, (saga) => saga.compensate(sagaId, seen))

/**
 * The id of the saga the program runs as. A program that runs a saga of its own (a nested
 * `Saga.run`) derives that saga's id from it, so that a replay runs the same saga again.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Saga } from "effect-saga"
 *
 * declare const hotel: Effect.Effect<string, never, Saga.CurrentSaga>
 *
 * const trip = Effect.gen(function* () {
 *   const sagaId = yield* Saga.currentSagaId
 *   return yield* Saga.run(`${sagaId}/hotel`, hotel)
 * })
 * ```
 *
 * @since 0.5.0
 * @category context
 */
export const currentSagaId: Effect.Effect<string, never, CurrentSaga> = Effect.map(CurrentSaga, (saga) => saga.sagaId)

/**
 * Runs `effect` so that interrupting it interrupts the undo an operator's command in it is running
 * (`compensate`, `reject`, `compensateEffect`): the undo's outcome is journaled as an interrupted
 * undo's is (`COMPENSATION_UNKNOWN`, "the undo was interrupted", unless its answer reached the
 * library before the interruption did), no further undo starts, the lease is dropped and the command ends interrupted; the saga stays
 * `compensating` for `Recovery` or the same command to go on. Outside it, an undo runs to its end
 * whoever interrupts the caller. The CLI runs its undos so: SIGINT and SIGTERM stop them.
 *
 * An undo that is itself uninterruptible (`Effect.uninterruptible(...)`) runs to its end here too,
 * yet is journaled `COMPENSATION_UNKNOWN`: Effect discards an uninterruptible region's value when
 * it ends with an interruption pending, so its answer never reaches the library. Make such an undo
 * idempotent by its key, so that whether it ran is one question to the provider.
 *
 * @since 0.4.0
 * @category combinators
 */
export const withInterruptibleUndos = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, undosStopWithCaller, true)

/**
 * Undoes one applied effect on request. The saga's lease and the undo run's are held, and renewed
 * as a run's is, until the undo returns.
 *
 * @since 0.1.0
 * @category commands
 */
export const compensateEffect = (
  effectId: string
): Effect.Effect<EffectCompensation, CommandError | EffectNotFound, Saga> =>
  Effect.flatMap(Saga, (saga) => saga.compensateEffect(effectId))

/**
 * Reads a saga's status from the journal.
 *
 * NOTE: the status of an explicit undo's run (`compensateEffect`) lists the step it undoes, also
 * when the run journaled no entry of it (`unavailable`): its `undo` is then the run's answer.
 *
 * @since 0.1.0
 * @category accessors
 */
export const status = (
  sagaId: string
): Effect.Effect<SagaStatus, SagaNotFound | JournalError | JournalCorrupted | InvalidIdentifier, Saga> =>
  Effect.flatMap(Saga, (saga) => saga.status(sagaId))

/**
 * Lists saga rows, least recently updated first, then created first, then by saga id in code-point
 * order (on every store, whatever a PostgreSQL database's collation). A saga pruned between the
 * listing of its row and the read of its journal is passed over.
 *
 * @since 0.1.0
 * @category accessors
 */
export const list = (filter?: ListFilter): Effect.Effect<ReadonlyArray<SagaSummary>, JournalError, Saga> =>
  Effect.flatMap(Saga, (saga) => saga.list(filter))

/**
 * Which sagas `listPage` lists (every filter given must pass), and which page of them.
 *
 * @since 0.5.0
 * @category models
 */
export interface ListPageQuery extends ListFilter {
  /** Only sagas whose id holds this text (case-sensitive). */
  readonly search?: string | undefined
  /**
   * `"urgency"` (the default): what needs a person first, as `listPage` says; `"updatedAt"`: least
   * recently updated first, then created first, then by saga id (code-point order), as `list`
   * orders them (since 0.5.0).
   */
  readonly order?: "urgency" | "updatedAt" | undefined
  /** How many sagas to step over: a whole number from 0 (anything else fails with `JournalError`). */
  readonly offset: number
  /** How many sagas at most: a whole number from 1 (anything else fails with `JournalError`). */
  readonly limit: number
}

/**
 * A page of sagas, each with its `tampered` mark, and how many sagas the query selects in all.
 *
 * @since 0.5.0
 * @category models
 */
export interface ListPage {
  readonly sagas: ReadonlyArray<SagaSummary>
  readonly total: number
}

/**
 * One page of the sagas `query` selects, what needs a person first by the status its row holds
 * (`compensation_failed`, `needs_attention`, `awaiting_approval`, then every other), then the most
 * recently updated, then by saga id (code-point order), and the count of all it selects. The store
 * filters, orders, slices and counts (the SQL stores in their query); only the page's sagas are
 * read and verified, so a saga tampered with outside the page costs nothing and is not marked.
 * `order: "updatedAt"` pages in `list`'s order instead (least recently updated first, then created
 * first, then by saga id in code-point order, on every store).
 * A `search` holding a control character or a lone surrogate, which no saga id holds, answers the
 * empty page without asking the store. A saga pruned between the read of the page's rows and that
 * of its journal is passed over (`total` still counts it).
 *
 * @since 0.5.0
 * @category accessors
 */
export const listPage = (query: ListPageQuery): Effect.Effect<ListPage, JournalError, Saga> =>
  Effect.flatMap(Saga, (saga) => {
    const problem = pageProblem(query)
    if (problem !== undefined) return Effect.fail(new JournalError({ operation: "list", reason: problem }))
    if (query.search !== undefined && identifier.holdsNoIdentifierText(query.search)) {
      return Effect.succeed<ListPage>({ sagas: [], total: 0 })
    }
    const own = sagaPages.get(saga.list)
    if (own !== undefined) return own(query)
    // A service not built by this module's layers: its list, paged here.
    return Effect.map(saga.list(query), (listed) => {
      const selected = listed.filter((summary) => summary.sagaId.includes(query.search ?? ""))
      if (query.order !== "updatedAt") selected.sort(byUrgency)
      return { sagas: selected.slice(query.offset, query.offset + query.limit), total: selected.length }
    })
  })

/**
 * Approves a step that awaits approval; resume the saga to run it.
 *
 * @since 0.1.0
 * @category commands
 */
export const approve = (
  sagaId: string,
  stepId: string,
  options: ApproveOptions
): Effect.Effect<void, CommandError | ApprovalNotFound | AlreadyDecided, Saga> =>
  Effect.flatMap(Saga, (saga) => saga.approve(sagaId, stepId, options))

/**
 * Renews the approval of a step that has not run: a new expiry for the same input digest.
 *
 * @since 0.1.0
 * @category commands
 */
export const renewApproval = (
  sagaId: string,
  stepId: string,
  options: RenewApprovalOptions
): Effect.Effect<void, CommandError | RenewError, Saga> =>
  Effect.flatMap(Saga, (saga) => saga.renewApproval(sagaId, stepId, options))

/**
 * Rejects a step that awaits approval; the saga compensates, its lease held and renewed as a run's
 * is until the last undo returns.
 *
 * @since 0.1.0
 * @category commands
 */
export const reject = (
  sagaId: string,
  stepId: string,
  options: RejectOptions
): Effect.Effect<CompensationReport, CommandError | ApprovalNotFound | AlreadyDecided, Saga> =>
  Effect.flatMap(Saga, (saga) => saga.reject(sagaId, stepId, options))

/**
 * Settles a step whose outcome is unknown; resume the saga to go on or compensate. As `applied`,
 * refused (`CommandRefused`) once compensation undid a step that ran before it: its undo would come
 * out of reverse order; undo the effect by hand, then resolve it `applied` with `undone: true`
 * (`EXECUTED` and `COMPENSATED` at once: a compensation counts it undone). Given the id of an explicit undo's run (`${effectId}/compensate-effect`)
 * whose undo answered `unknown`, settles that undo: `applied` (it happened: the run answers
 * `completed`) or `not-applied` (it did not: `failed`). Given one that ended `compensation_failed`
 * (its undo failed, was rejected or expired, `partial` or `unavailable`), closes it: `applied` once
 * the effect is undone (by hand, or by the saga's compensation since: the run answers `completed`),
 * `not-applied` to keep the effect as it is (the run keeps its answer; refused for `partial`). Either
 * way the run ends `completed`.
 *
 * In a saga `compensation_failed`, settles the undo of an executed step that the compensation left
 * not undone (its undo `failed`, `partial`, `unknown`, or `unavailable`), once the operator cleaned
 * up by hand or found that the undo happened: `applied` (no `result` or `receipt`: the effect is
 * undone now) journals `COMPENSATED` with the reason `resolved as undone by WHO`; `not-applied`, for
 * an `unknown` undo only (refused for the others: they are known not undone), journals
 * `COMPENSATION_FAILED` (`resolved as not undone by WHO`: undo it by hand, then resolve it
 * `applied`, a new resolution). The saga stays `compensation_failed`, `Saga.status` shows the step's
 * undo so at once, and the next `compensate` counts it undone without running its undo again,
 * ending the saga `compensated` when nothing else is dirty. The same resolution again writes
 * nothing; another is a `CommandConflict`.
 *
 * @since 0.1.0
 * @category commands
 */
export const resolve = (
  sagaId: string,
  stepId: string,
  resolution: Resolution
): Effect.Effect<void, CommandError, Saga> => Effect.flatMap(Saga, (saga) => saga.resolve(sagaId, stepId, resolution))

/**
 * Runs `commands` and answers their value with how many journal entries the operator's commands
 * among them (`approve`, `renewApproval`, `reject`, `resolve`, `compensate`, of `Saga.layer`'s
 * service, and `compensateEffect` in its run's journal) wrote themselves: 0 when each was the same
 * command asked again, or found the saga already so. Whether a command wrote is whether `written`
 * is above 0.
 *
 * NOTE: the saga's revision before and after cannot say it: the same command sent twice at once
 * (two clicks, a retry, two servers) writes once, and the other finds that write and writes nothing.
 * A `withWrites` (or `withWrittenRevisions`) inside another is counted by both.
 *
 * @since 0.4.0
 * @category commands
 */
export const withWrites: <A, E, R>(
  commands: Effect.Effect<A, E, R>
) => Effect.Effect<{ readonly value: A; readonly written: number }, E, R> = Written.withWrites

/**
 * As `withWrites`, answering the revisions of the journal entries the operator's commands wrote
 * themselves (in the order they wrote them; none when each found its work done): what a caller
 * needs to say which of the entries after it are its own, such as a `reject` sent again that only
 * finished the compensation an earlier, interrupted one began (it wrote no `REJECTED`).
 *
 * @since 0.4.0
 * @category commands
 */
export const withWrittenRevisions: <A, E, R>(
  commands: Effect.Effect<A, E, R>
) => Effect.Effect<{ readonly value: A; readonly revisions: ReadonlyArray<number> }, E, R> =
  Written.withWrittenRevisions

/**
 * A journal entry an operator's command wrote itself: the saga it is in (for `compensateEffect`,
 * its run, `${effectId}/compensate-effect`) and its revision (its `seq`).
 *
 * @since 0.4.0
 * @category models
 */
export interface WrittenEntry {
  readonly sagaId: string
  readonly revision: number
}

/**
 * Runs `commands`, then `written` with the journal entries the operator's commands among them (as
 * `withWrites` counts them) wrote themselves, in the order written, however the commands ended:
 * done, failed or interrupted. What a caller that may be interrupted mid-command needs to say what
 * it left journaled: the CLI reads an undo interrupted by SIGINT (`withInterruptibleUndos`) from
 * them. `written` runs uninterrupted, as a finalizer does.
 *
 * @since 0.4.0
 * @category commands
 */
export const onWritten: {
  <X, R2>(
    written: (entries: ReadonlyArray<WrittenEntry>) => Effect.Effect<X, never, R2>
  ): <A, E, R>(commands: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R | R2>
  <A, E, R, X, R2>(
    commands: Effect.Effect<A, E, R>,
    written: (entries: ReadonlyArray<WrittenEntry>) => Effect.Effect<X, never, R2>
  ): Effect.Effect<A, E, R | R2>
} = Written.onWritten
