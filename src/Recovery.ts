/**
 * Finding the sagas a worker left behind and resuming them: sagas that were running or
 * compensating when their worker's lease lapsed (it crashed, or stopped renewing), and sagas left
 * suspended by a shutdown. A saga is resumed by replaying the program of the definition it was
 * started from (`Saga.start`); the journal decides what has run.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { Principal } from "./Authority.js"
import { withPrincipal } from "./Authority.js"
import { readFirst } from "./internal/engine/context.js"
import { effectIdOf } from "./internal/engine/explicitUndo.js"
import { withRecoverSpan } from "./internal/engine/recoverSpan.js"
import { logPass } from "./internal/engine/recoveryLog.js"
import * as RecoveryMemory from "./internal/engine/recoveryMemory.js"
import type { InvalidRecoveryOptions } from "./internal/engine/recoveryOptions.js"
import * as recoveryOptions from "./internal/engine/recoveryOptions.js"
import { ErrorTypeId } from "./internal/engine/recoveryOptions.js"
import { originOf } from "./internal/engine/saga.js"
import { makeUnclaimableLog } from "./internal/engine/unclaimableLog.js"
import * as UnrecoverableReason from "./internal/engine/unrecoverable.js"
import { viewOf } from "./internal/journal/view.js"
import { observeRecoveryClaimed, observeRecoveryPass } from "./internal/observability/metrics.js"
import { withoutParentSpan, withoutSpan } from "./internal/observability/spans.js"
import { decodeJson } from "./internal/util/codec.js"
import type { JournalError, SagaRecord } from "./Journal.js"
import { Journal, JournalTampered, SagaNotFound } from "./Journal.js"
import type { CommandError, EffectCompensation, RunError } from "./Saga.js"
import { Saga } from "./Saga.js"
import type * as SagaDefinition from "./SagaDefinition.js"
import type { EffectNotFound, InvalidSagaInput } from "./SagaError.js"
import type { SagaResult } from "./SagaResult.js"

export { ErrorTypeId } from "./internal/engine/recoveryOptions.js"

/**
 * A saga left behind that this worker cannot resume: it was not started from a definition, or
 * from one this worker was not given, or its journaled input no longer decodes.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unrecoverable extends Schema.TaggedError<Unrecoverable>("effect-saga/Unrecoverable")("Unrecoverable", {
  sagaId: Schema.String,
  reason: Schema.String
}) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `saga ${this.sagaId} cannot be recovered here: ${this.reason}`
  }
}

/**
 * Whether a value is one of recovery's errors (`Unrecoverable`, `InvalidRecoveryOptions`), by its
 * `ErrorTypeId`.
 *
 * @since 0.4.0
 * @category guards
 */
export const isRecoveryError = (u: unknown): u is Unrecoverable | InvalidRecoveryOptions =>
  Predicate.hasProperty(u, ErrorTypeId)

/**
 * Whether a value is an `Unrecoverable`, by its `ErrorTypeId` (and its `_tag` among recovery's errors).
 *
 * @since 0.2.0
 * @category guards
 */
export const isUnrecoverable = (u: unknown): u is Unrecoverable => isRecoveryError(u) && u._tag === "Unrecoverable"

export { InvalidRecoveryOptions } from "./internal/engine/recoveryOptions.js"

/**
 * Whether a value is an `InvalidRecoveryOptions`, by its `ErrorTypeId` (and its `_tag` among
 * recovery's errors).
 *
 * @since 0.4.0
 * @category guards
 */
export const isInvalidRecoveryOptions = (u: unknown): u is InvalidRecoveryOptions =>
  isRecoveryError(u) && u._tag === "InvalidRecoveryOptions"

/**
 * Why a saga was not resumed.
 *
 * @since 0.1.0
 * @category errors
 */
export type RecoveryError = Unrecoverable | SagaNotFound | InvalidSagaInput | RunError | CommandError | EffectNotFound

/**
 * What became of one saga a recovery pass claimed.
 *
 * @since 0.1.0
 * @category models
 */
export type Recovered =
  | { readonly _tag: "Resumed"; readonly sagaId: string; readonly result: SagaResult<unknown, unknown> }
  | { readonly _tag: "Settled"; readonly sagaId: string; readonly result: EffectCompensation }
  | { readonly _tag: "Failed"; readonly sagaId: string; readonly error: RecoveryError }

/**
 * The sagas one recovery pass claimed, and what became of each.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecoveryReport {
  readonly sagas: ReadonlyArray<Recovered>
}

/**
 * The recovery service.
 *
 * @since 0.1.0
 * @category services
 */
export class Recovery extends Context.Tag("effect-saga/Recovery")<
  Recovery,
  {
    /**
     * Claims every saga left behind (in batches) and resumes each; returns what became of them.
     * Sagas another worker drives, or is recovering, are not touched. A saga an earlier pass of
     * this service found `Unrecoverable`, or failed with `NonDeterminism`, `JournalCorrupted` or `JournalTampered`, is
     * not tried (nor reported) again while its journal stays where it was: it is claimed and given
     * back at the pass's end. A claim the store fails ends the pass with that error (after giving
     * its claims back): what it resumed before is in no report, but it is counted in the metrics.
     */
    readonly recoverAll: Effect.Effect<RecoveryReport, JournalError>
    /**
     * Resumes one saga from the definition it was started from, whatever its state. Each saga
     * either tries is in an `effect-saga.recover` span, an error when it was not resumed, whose
     * message never quotes the saga's input (see docs/observability.md).
     */
    readonly resume: (sagaId: string) => Effect.Effect<SagaResult<unknown, unknown> | EffectCompensation, RecoveryError>
  }
>() {}

/**
 * How a worker recovers. An option it does not know, or a value outside what each accepts, fails
 * `make` and `layer` with `InvalidRecoveryOptions`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Definitions extends ReadonlyArray<SagaDefinition.Any>> {
  /** The definitions this worker can resume, by name: each name once (two of one name are refused). */
  readonly definitions: Definitions
  /**
   * How many sagas are resumed at once, across the service's passes: a whole number, 1 or more
   * (default 10). The layer starts no pass while this many are being resumed.
   */
  readonly concurrency?: number | undefined
  /** How many sagas one claim takes: a whole number, 1 or more (default 100). */
  readonly batchSize?: number | undefined
  /**
   * Who recovery resumes sagas as, for the `Authority` (default `{ id: "effect-saga/recovery" }`): its
   * `id` as an operator's `by` must be (text, not blank, no control character, at most `Saga.MAX_PRINCIPAL_BYTES`).
   */
  readonly principal?: Principal | undefined
  /**
   * How often the layer looks for sagas left behind: a positive duration (default: the worker's lease
   * length); `"startup"` looks once.
   */
  readonly every?: Duration.DurationInput | "startup" | undefined
}

/**
 * The recovery service for the worker of the `Saga` in context; `InvalidRecoveryOptions` for options
 * it cannot work with, before anything is read.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const Definitions extends ReadonlyArray<SagaDefinition.Any>>(
  options: Options<Definitions>
): Effect.Effect<
  Recovery["Type"],
  InvalidRecoveryOptions,
  Saga | Journal | SagaDefinition.Context<Definitions[number]>
> => Effect.map(build(options), ({ recovery }) => recovery)

/** What a pass did, and the store's error that stopped it part-way, if one did. */
interface Pass {
  readonly report: RecoveryReport
  readonly failure: Option.Option<JournalError>
}

/** The service, its passes as the layer runs them (a store's failure beside what was done), and how many sagas it is resuming now. */
const build = <const Definitions extends ReadonlyArray<SagaDefinition.Any>>(options: Options<Definitions>) =>
  Effect.gen(function* () {
    const { batchSize, concurrency, principal } = yield* recoveryOptions.checked(options)
    const saga = yield* Saga
    const journal = yield* Journal
    // The definitions' services, as they were given; not the span this was built in: a resumed run
    // is the child of its `effect-saga.recover` span.
    const context = withoutSpan(yield* Effect.context<SagaDefinition.Context<Definitions[number]>>())
    const byName = new Map(options.definitions.map((definition) => [definition.name, definition]))
    const holder = { owner: saga.worker.owner, ttlMillis: Duration.toMillis(saga.worker.leaseTtl) }

    const resume = (sagaId: string): Effect.Effect<SagaResult<unknown, unknown> | EffectCompensation, RecoveryError> =>
      Effect.gen(function* () {
        // What decides how to resume it (its definition, its input) is read only from a journal that verifies.
        const { tampered } = yield* saga.status(sagaId)
        if (tampered !== undefined) return yield* new JournalTampered({ sagaId, ...tampered })
        const view = yield* viewOf(yield* journal.read(sagaId))
        if (!view.exists) return yield* new SagaNotFound({ sagaId })
        // An explicit undo left behind is finished by asking for it again: what it journaled decides.
        const effectId = effectIdOf(view)
        if (effectId !== undefined) return yield* saga.compensateEffect(effectId).pipe(withPrincipal(principal))
        const origin = originOf(view)
        const unrecoverable = (reason: string) => new Unrecoverable({ sagaId, reason })
        if (origin === undefined) return yield* unrecoverable(UnrecoverableReason.notStartedFromDefinition)
        const definition = byName.get(origin.definition)
        if (definition === undefined) {
          return yield* unrecoverable(UnrecoverableReason.missingDefinition(origin.definition))
        }
        const input = decodeJson(definition.input, JSON.stringify(origin.input))
        if (input._tag === "Left") return yield* unrecoverable(UnrecoverableReason.undecodableInput(String(input.left)))
        // The definitions' services were captured when the layer was built.
        const started = saga.start(definition, sagaId, input.right) as Effect.Effect<
          SagaResult<unknown, unknown>,
          RecoveryError,
          SagaDefinition.Context<Definitions[number]>
        >
        // It exists: read first, on any store.
        return yield* Effect.provide(started, context).pipe(withPrincipal(principal), Effect.locally(readFirst, true))
      })

    const unresumable = RecoveryMemory.make()
    // Passes may overlap (the layer starts one on time while an earlier one still runs a long saga):
    // what they remember is pruned to what any of them claimed, once none is running.
    const overlapping = { passes: 0, claimed: new Set<string>(), complete: true }
    const passStarts = Effect.sync(() => {
      overlapping.passes++
    })
    const passEnds = (seen: ReadonlySet<string>, complete: boolean) =>
      Effect.sync(() => {
        for (const sagaId of seen) overlapping.claimed.add(sagaId)
        overlapping.complete &&= complete
        if (--overlapping.passes > 0) return
        if (overlapping.complete) unresumable.keepOnly(overlapping.claimed)
        overlapping.claimed = new Set()
        overlapping.complete = true
      })

    // `concurrency` bounds the sagas this service resumes at once, across its passes.
    const slots = Effect.unsafeMakeSemaphore(concurrency)
    let resuming = 0
    const inSlot = <A>(effect: Effect.Effect<A>): Effect.Effect<A> =>
      Effect.acquireUseRelease(
        Effect.sync(() => resuming++),
        () => slots.withPermits(1)(effect),
        () =>
          Effect.sync(() => {
            resuming--
          })
      )

    const recoverOne = (record: SagaRecord): Effect.Effect<Recovered> =>
      resume(record.sagaId).pipe(
        Effect.tapError((error) =>
          RecoveryMemory.answersAgainWhereItIs(error) ? Effect.sync(() => unresumable.remember(record)) : Effect.void
        ),
        // The span ends before the error becomes the report's: a saga not resumed is an error there.
        withRecoverSpan(record.sagaId),
        Effect.map(
          (result): Recovered =>
            "effectId" in result
              ? { _tag: "Settled", sagaId: record.sagaId, result }
              : { _tag: "Resumed", sagaId: record.sagaId, result }
        ),
        Effect.catchAll((error) => Effect.succeed<Recovered>({ _tag: "Failed", sagaId: record.sagaId, error }))
      )

    // A pass claims batch after batch until nothing new is left behind. A saga it could not resume
    // keeps this worker's lease until the pass ends (so that it is not claimed again), and is
    // then released for a worker that can. A saga this pass resumed that is left behind again (it
    // suspended once more) waits for the next pass: claimed again, it is held the same way and
    // given back when the pass ends (released at once, it would be claimed first again, being the
    // least recently updated, and a batch of them would hide the sagas behind). A saga an earlier
    // pass found Unrecoverable, diverging (NonDeterminism) or tampered, whose journal has not moved
    // since, is held and given back the same way, without being tried or reported again. However
    // the pass ends (interrupted, failed), every claim it holds is given back: one it had not
    // reached yet too, so that no saga waits for this worker's leases to lapse. A claim the store
    // fails stops the pass: what it did before is its report all the same, beside the failure.
    const pass: Effect.Effect<Pass> = saga.worker.renewing(
      Effect.suspend(() => {
        // The sagas this pass claimed and did not hand to a run that ended (a run gives its lease back itself).
        const holding = new Set<string>()
        const seen = new Set<string>()
        const reclaimed = new Set<string>()
        const giveBack = Effect.suspend(() =>
          Effect.forEach(holding, (sagaId) => Effect.ignore(journal.release(holder.owner, sagaId)), { discard: true })
        )
        const tried = (recovered: Recovered) =>
          Effect.sync(() => {
            if (recovered._tag !== "Failed") holding.delete(recovered.sagaId)
            return recovered
          })
        const resumed = (record: SagaRecord) => inSlot(Effect.flatMap(recoverOne(record), tried))
        const recovered: Array<Recovered> = []
        const claimAndResume = Effect.gen(function* () {
          while (true) {
            // Counted as held in the same uninterruptible step as the claim: none is lost in between.
            const claimed = yield* Effect.uninterruptible(
              Effect.tap(journal.claimLapsed(holder, batchSize), (records) =>
                Effect.sync(() => {
                  for (const record of records) holding.add(record.sagaId)
                })
              )
            )
            // One this pass tried is claimed again (it was left behind once more): it stays held until the
            // pass ends, so that the next claim reaches the sagas behind it instead of claiming it again.
            // (Only one whose lease lapsed meanwhile could come a third time: then nothing new is left.)
            const fresh = claimed.filter((record) => !seen.has(record.sagaId))
            if (fresh.length === 0) {
              if (claimed.length === 0 || claimed.every((record) => reclaimed.has(record.sagaId))) return
              for (const record of claimed) reclaimed.add(record.sagaId)
              continue
            }
            for (const record of fresh) seen.add(record.sagaId)
            const toTry = fresh.filter((record) => !unresumable.knows(record))
            // Counted as claimed now: a pass may run a long saga for hours before it ends.
            observeRecoveryClaimed(toTry.length)
            recovered.push(...(yield* Effect.forEach(toTry, resumed, { concurrency })))
          }
        })
        const done = Effect.map(Effect.option(Effect.flip(claimAndResume)), (failure): Pass => {
          observeRecoveryPass()
          return { report: { sagas: recovered }, failure }
        })
        return Effect.onExit(Effect.ensuring(Effect.zipRight(passStarts, done), giveBack), (exit) =>
          passEnds(seen, Exit.isSuccess(exit) && Option.isNone(exit.value.failure))
        )
      })
    )

    const recoverAll = Effect.flatMap(pass, ({ failure, report }) =>
      Option.match(failure, { onNone: () => Effect.succeed(report), onSome: Effect.fail })
    )

    const recovery = Recovery.of({ recoverAll, resume: (sagaId) => withRecoverSpan(sagaId)(resume(sagaId)) })
    return { recovery, pass, resuming: () => resuming, concurrency }
  })

/**
 * A worker's recovery: at start-up, and then every `every`, it claims the sagas left behind and
 * resumes them in the background, logging what it found: a line per pass that took any (how many,
 * what became of them, at `Info`), and one for each saga it did not resume, naming the saga, its
 * error's `_tag` and message (for an `Unrecoverable` one, what to do), at `Warning` (`Error` for a
 * journal that does not verify): once for a saga that fails the same way while its journal stays
 * where it is (see `Recovery.recoverAll`). A pass starts on time while earlier ones still run the
 * sagas they resumed (a long one holds back no other), unless `concurrency` sagas are being resumed
 * already. A pass the store fails part-way logs what it did, then the failure. After a pass, it names
 * at `Error` each saga left behind that no claim takes because its row was edited (a lease whose end
 * is not a time, a status that is no status, among the rows that hold a lease), once while its row
 * stays so. Each pass's
 * `effect-saga.recover` spans are root spans, whatever span the layer was built in. The `Saga`
 * service renews the leases while it lives. Options it cannot work with fail the layer with
 * `InvalidRecoveryOptions` before anything is claimed.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <const Definitions extends ReadonlyArray<SagaDefinition.Any>>(
  options: Options<Definitions>
): Layer.Layer<Recovery, InvalidRecoveryOptions, Saga | Journal | SagaDefinition.Context<Definitions[number]>> =>
  Layer.scoped(
    Recovery,
    Effect.gen(function* () {
      const { every: given } = yield* recoveryOptions.checked(options)
      const { concurrency, pass, recovery, resuming } = yield* build(options)
      const saga = yield* Saga
      const unreadable = (error: JournalError) =>
        Effect.logWarning(`effect-saga: recovery could not read the journal: ${error.message}`)
      const unclaimable = Effect.catchAll(makeUnclaimableLog(yield* Journal), unreadable)
      // A background pass is nobody's child: its spans are roots, whatever span the layer was built in.
      const logged = withoutParentSpan(
        Effect.flatMap(pass, ({ failure, report }) =>
          Effect.zipRight(
            logPass(report, summary(report)),
            Option.match(failure, { onNone: () => unclaimable, onSome: unreadable })
          )
        )
      )
      const every = given ?? saga.worker.leaseTtl
      if (every === "startup") {
        yield* Effect.forkScoped(logged)
        return recovery
      }
      // Each pass in a fiber of its own: the next starts on time, whatever the last still runs.
      const scope = yield* Effect.scope
      const onTime = Effect.suspend(() => (resuming() >= concurrency ? Effect.void : Effect.forkIn(logged, scope)))
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(onTime, Effect.sleep(every))))
      return recovery
    })
  )

const keyOf = (recovered: Recovered): string => {
  switch (recovered._tag) {
    case "Resumed":
      return recovered.result._tag
    case "Settled":
      return `effect ${recovered.result._tag === "Settled" ? recovered.result.outcome : "awaiting approval"}`
    case "Failed":
      return "Failed"
  }
}

/**
 * How many sagas of a report ended in each state, the states in code-point order of their names
 * (`Completed` before `Failed`), whatever order the sagas ended in.
 *
 * @since 0.1.0
 * @category formatting
 */
export const summary = (report: RecoveryReport): Record<string, number> => {
  const counts = new Map<string, number>()
  for (const recovered of report.sagas) {
    const key = keyOf(recovered)
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  // In one order whatever order the sagas ended in, so that two passes' lines read alike.
  return Object.fromEntries([...counts].sort(([a], [b]) => (a < b ? -1 : 1)))
}

/**
 * Claims every saga left behind and resumes each.
 *
 * @since 0.1.0
 * @category accessors
 */
export const recoverAll: Effect.Effect<RecoveryReport, JournalError, Recovery> = Effect.flatMap(
  Recovery,
  (recovery) => recovery.recoverAll
)

/**
 * Resumes one saga from the definition it was started from.
 *
 * @since 0.1.0
 * @category accessors
 */
export const resume = (
  sagaId: string
): Effect.Effect<SagaResult<unknown, unknown> | EffectCompensation, RecoveryError, Recovery> =>
  Effect.flatMap(Recovery, (recovery) => recovery.resume(sagaId))
