import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type { AppendError, Draft, Entry, Holder, JournalCorrupted, JournalError, Phase } from "../../Journal.js"
import { ConcurrencyConflict, LeaseHeld } from "../../Journal.js"
import { observeAppended } from "../observability/metrics.js"
import { liveLease } from "../util/lease.js"
import { Mutex } from "../util/mutex.js"
import { unlikeAppended } from "./answered.js"
import { ownPayloadOf } from "./drafts.js"
import * as HeldBack from "./heldBack.js"
import type { Recorded } from "./payloads.js"
import { decodeOwnEntry } from "./payloads.js"
import { keepsLease } from "./status.js"
import { appendsAtOnce } from "./synchronous.js"
import type { VerifiedJournal } from "./verified.js"
import { JournalView, viewOf } from "./view.js"

/** No entries to write in front of the next append: one array for every writer. */
const noDrafts: ReadonlyArray<Draft> = []

/** The entry appended for `draft`, decoded: with the payload its draft was built from, if it kept one. */
const decodeOwn = (entry: Entry, draft: Draft | undefined) => {
  const payload = draft === undefined ? undefined : ownPayloadOf(draft)
  return payload === undefined ? decodeOwnEntry(entry) : Either.right({ ...entry, payload } as Recorded)
}

/** Entries this writer just appended for `drafts`, decoded, or why one does not. */
const decodeAppended = (
  entries: ReadonlyArray<Entry>,
  drafts: ReadonlyArray<Draft>
): Either.Either<Array<Recorded>, JournalCorrupted> => {
  const decoded: Array<Recorded> = []
  for (let i = 0; i < entries.length; i++) {
    const entry = decodeOwn(entries[i]!, drafts[i])
    if (Either.isLeft(entry)) return Either.left(entry.left)
    decoded.push(entry.right)
  }
  return Either.right(decoded)
}

/**
 * The phases only a step of the running program writes, moving it forward (not `REJECTED`: how a
 * run ends withdraws requests with it).
 */
const forwardPhases: ReadonlySet<Phase> = new Set<Phase>([
  "INTENT",
  "EXECUTED",
  "FAILED",
  "AWAITING_APPROVAL",
  "APPROVED",
  "EXPIRED"
])

/**
 * Why `drafts` cannot be journaled once the run's program ended, if one moves a step forward: a
 * call from a fiber that outlived the program (one forked with `Effect.forkDaemon`, or into an
 * outer scope) would land after the run's end, or after the saga's final entry.
 */
const lateStep = (sagaId: string, drafts: ReadonlyArray<Draft>): string | undefined => {
  const draft = drafts.find((draft) => forwardPhases.has(draft.phase))
  if (draft === undefined) return undefined
  return `effect-saga: ${draft.phase} of step ${draft.stepId} (tool ${draft.toolName}) of saga ${sagaId} was not journaled: the saga's run had ended (a call from a fiber that outlived the saga's program)`
}

/**
 * The one path by which a saga's entries reach the journal: appends are serialized, each names the
 * position the writer last saw and the worker's lease, and the view follows every append.
 *
 * Where the store allows it (`heldBack.ts`), a step's `EXECUTED` is held back and travels with the
 * saga's next append; if the program waits for something else first, it is written alone as soon
 * as the program's fiber yields. The view does not hold a held-back entry until it is written:
 * `flush` writes them, and whoever decides from the view how the saga stands flushes first.
 */
export class Writer {
  private readonly lock = new Mutex()
  private prefix: ReadonlyArray<Draft> = noDrafts
  /** Steps' `EXECUTED` entries not written yet, oldest first (not `[]`: see the NOTE on V8's pretenuring in engine/run.ts). */
  private readonly held: Array<Draft> = Array.of()
  /** How many of `held` the append under way carries (0 when none is under way). */
  private taken = 0
  /** Whether a look at `held` is scheduled for when the program's fiber yields. */
  private lookScheduled = false
  /**
   * Whether the program ended: how the run ends writes what is held back (`flush`), no look does,
   * and no step moves forward any more (`lateStep`).
   */
  private programEnded = false
  private readonly holdsBack: boolean
  /** Whether the store may still record this worker's lease on the saga (an append that halts the saga drops it). */
  holdsLease = false
  /** How the store broke its contract answering an append (`unlikeAppended`): no append follows it. */
  private brokenContract: string | undefined = undefined

  constructor(
    readonly sagaId: string,
    private readonly journal: VerifiedJournal,
    readonly view: JournalView,
    private readonly holder: Holder | undefined
  ) {
    this.holdsBack = HeldBack.allows(journal.append)
  }

  /** Entries to write in front of the next append (a resume marker travels with the first real write). */
  prepend(drafts: ReadonlyArray<Draft>): void {
    this.prefix = drafts
  }

  /** Whether a start or resume marker still waits for the run's first write: the run wrote nothing yet. */
  get markerPending(): boolean {
    return this.prefix.length > 0
  }

  append(drafts: ReadonlyArray<Draft>): Effect.Effect<void, AppendError> {
    return this.appendThen(drafts, Effect.fail, () => Effect.void)
  }

  /**
   * Appends `drafts`, then runs `next`; a refused append runs `refused` instead. One continuation
   * for both, so that a step's append costs no `catchAll` and `flatMap` of its own.
   */
  appendThen<A, E1, E2>(
    drafts: ReadonlyArray<Draft>,
    refused: (error: AppendError) => Effect.Effect<never, E1>,
    next: () => Effect.Effect<A, E2>
  ): Effect.Effect<A, E1 | E2> {
    if (this.programEnded) {
      const late = lateStep(this.sagaId, drafts)
      if (late !== undefined) return Effect.dieMessage(late)
    }
    if (this.brokenContract !== undefined) return Effect.dieMessage(this.brokenContract)
    const atOnce = appendsAtOnce.get(this.journal.append)
    if (atOnce === undefined) return this.appendLocked(drafts, refused, next)
    // Nothing can come between the steps of an append done at once: it needs the lock only to wait
    // for an append already under way (one that took the other path).
    return Effect.clockWith((clock) => {
      if (!this.lock.idle) return this.appendLocked(drafts, refused, next)
      const batch = this.batchOf(drafts)
      const appended = atOnce(this.sagaId, this.view.position, batch, this.holder, clock.unsafeCurrentTimeMillis())
      if (appended === undefined) return this.appendLocked(drafts, refused, next)
      if (Either.isLeft(appended)) {
        this.taken = 0
        return refused(appended.left)
      }
      const defect = this.follow(appended.right, batch)
      return defect === undefined ? next() : Effect.dieMessage(defect)
    })
  }

  /**
   * Journals a step's `EXECUTED`, then runs `next`: where the store allows it, the entry is held
   * back to travel with the saga's next append, and `next` runs at once.
   */
  appendExecuted<A, E1, E2>(
    draft: Draft,
    refused: (error: AppendError) => Effect.Effect<never, E1>,
    next: () => Effect.Effect<A, E2>
  ): Effect.Effect<A, E1 | E2> {
    if (!this.holdsBack || this.programEnded) return this.appendThen([draft], refused, next)
    return Effect.withFiberRuntime((fiber) => {
      this.held.push(draft)
      this.scheduleLook(fiber)
      return next()
    })
  }

  /** Whether the `EXECUTED` of `stepId` is held back, not written yet. */
  holds(stepId: string): boolean {
    return this.held.some((draft) => draft.stepId === stepId)
  }

  /** The program ended: from now on, what is held back waits for how the run ends. */
  programEnd(): void {
    this.programEnded = true
  }

  /** Whether the run's program ended: a call made now comes from a fiber that outlived it. */
  get programHasEnded(): boolean {
    return this.programEnded
  }

  /** Whether no append is under way. */
  get idle(): boolean {
    return this.lock.idle
  }

  /**
   * Writes the entries held back, once any append under way is done: the view then holds everything.
   * (Made when asked for, not kept by every writer while its saga is in flight.)
   */
  get flush(): Effect.Effect<void, AppendError> {
    return Effect.suspend(() =>
      this.held.length === 0 && this.lock.idle ? Effect.void : this.appendLocked([], Effect.fail, () => Effect.void)
    )
  }

  /**
   * Once the program's fiber yields (it waits for something other than the journal, or another
   * fiber's turn came), whatever is still held back is written alone, in a fiber of its own with the
   * program's services (its clock). A refusal is left to the run's next append, which meets it too.
   */
  private scheduleLook(fiber: Fiber.RuntimeFiber<unknown, unknown>): void {
    if (this.lookScheduled) return
    this.lookScheduled = true
    fiber.currentScheduler.scheduleTask(() => {
      this.lookScheduled = false
      if (this.programEnded || this.held.length === this.taken) return
      const runtime = Runtime.make({
        context: fiber.currentContext,
        fiberRefs: fiber.getFiberRefs(),
        runtimeFlags: Runtime.defaultRuntimeFlags
      })
      Runtime.runFork(runtime)(Effect.ignore(this.flush))
    }, 0)
  }

  private appendLocked<A, E1, E2>(
    drafts: ReadonlyArray<Draft>,
    refused: (error: AppendError) => Effect.Effect<never, E1>,
    next: () => Effect.Effect<A, E2>
  ): Effect.Effect<A, E1 | E2> {
    const appended = this.lock.withLockUninterruptible(
      Effect.suspend(() => {
        if (this.brokenContract !== undefined) return Effect.dieMessage(this.brokenContract)
        const batch = this.batchOf(drafts)
        if (batch.length === 0) return Effect.void
        return Effect.matchEffect(this.journal.append(this.sagaId, this.view.position, batch, this.holder), {
          onFailure: (error) => {
            this.taken = 0
            return Effect.fail(error)
          },
          onSuccess: (entries) => {
            const defect = this.follow(entries, batch)
            return defect === undefined ? Effect.void : Effect.dieMessage(defect)
          }
        })
      })
    )
    return Effect.matchEffect(appended, { onFailure: refused, onSuccess: next })
  }

  /**
   * What an append of `drafts` writes: the start or resume marker, then what is held back, then
   * `drafts` (nothing is written for no drafts unless something is held back).
   */
  private batchOf(drafts: ReadonlyArray<Draft>): ReadonlyArray<Draft> {
    this.taken = this.held.length
    if (this.taken === 0 && (drafts.length === 0 || this.prefix.length === 0)) return drafts
    return [...this.prefix, ...this.held, ...drafts]
  }

  /** The view follows the entries just appended for `batch`; or the defect that stops it. */
  private follow(appended: ReadonlyArray<Entry>, batch: ReadonlyArray<Draft>): string | undefined {
    const unlike = unlikeAppended(this.sagaId, this.view.position, batch.length, appended)
    if (unlike !== undefined) {
      this.taken = 0
      this.brokenContract = `effect-saga: the journal broke its contract: ${unlike}`
      return this.brokenContract
    }
    // An entry just drafted that does not decode is a defect of the code that drafted it.
    const entries = decodeAppended(appended, batch)
    if (Either.isLeft(entries)) {
      this.taken = 0
      return `effect-saga: an entry just drafted does not decode: ${entries.left.reason}`
    }
    this.prefix = noDrafts
    this.held.splice(0, this.taken)
    this.taken = 0
    const before = this.view.status
    for (const entry of entries.right) this.view.apply(entry)
    observeAppended(this.view, entries.right, before)
    // The store keeps the appender's lease unless the batch set a status that is not active.
    this.holdsLease = this.holder !== undefined && keepsLease(batch)
    return undefined
  }

  /**
   * Drops the lease if this writer may still hold it when the effect runs (not when it is built: an
   * append in between, such as the saga's last, may have dropped it already): the worker no longer
   * drives the saga.
   */
  /**
   * Why this writer's view of the saga is stale, read from the saga's row now: another worker or an
   * operator wrote since (`ConcurrencyConflict`, as this writer's next append would meet), or another
   * holds the saga's lease (`LeaseHeld`: an operator's command between its writes); `undefined` while
   * the view is the saga's. For a run that finds something the journal it read does not explain.
   */
  staleness(): Effect.Effect<ConcurrencyConflict | LeaseHeld | undefined, JournalError> {
    return Effect.flatMap(this.journal.get(this.sagaId), (found) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        if (Option.isNone(found)) return undefined
        const { sagaId, view } = this
        const { revision, digest } = view.position
        if (found.value.revision !== revision || found.value.digest !== digest) {
          return new ConcurrencyConflict({ sagaId, expectedRevision: revision, actualRevision: found.value.revision })
        }
        const lease = liveLease(found.value, now)
        return lease === undefined || lease.owner === this.holder?.owner
          ? undefined
          : new LeaseHeld({ sagaId, owner: lease.owner, expiresAt: lease.expiresAt })
      })
    )
  }

  release(): Effect.Effect<void> {
    return Effect.suspend(() =>
      this.holder === undefined || !this.holdsLease
        ? Effect.void
        : Effect.catchAll(this.journal.release(this.holder.owner, this.sagaId), (error) =>
            Effect.logWarning(
              `effect-saga: the lease of saga ${this.sagaId} was not released; the worker's next renewal drops it (a process that ends first, as a CLI command does, leaves it to lapse when it expires): ${error.message}`
            )
          )
    )
  }
}

/**
 * Loads a saga's journal into a writer that writes under `holder`'s lease, once its entries verify
 * against the saga's row (`JournalTampered` otherwise: nothing acts on a journal that does not) and
 * their payloads decode (`JournalCorrupted` otherwise).
 */
export const load = (journal: VerifiedJournal, sagaId: string, holder?: Holder) =>
  Effect.map(Effect.flatMap(journal.read(sagaId), viewOf), (view) => new Writer(sagaId, journal, view, holder))

/**
 * Loads a saga's journal and takes its lease for `holder` (a saga that does not exist yet gets the
 * lease with its first write, so nothing is claimed for it: a saga another worker creates in
 * between makes that write a `ConcurrencyConflict`). The journal is verified and decoded before
 * the lease is taken, so that a tampered or corrupted saga is refused with nothing written, not
 * even a lease; it is read again only if it moved on in between.
 */
export const claimAndLoad = (journal: VerifiedJournal, sagaId: string, holder: Holder) =>
  loadThenClaim(journal, sagaId, holder, () => true)

/**
 * `claimAndLoad` for a run of a saga's program: a completed or compensated saga is only replayed
 * (nothing runs forward in it, nothing is left to undo, its end is journaled), so no lease is
 * taken for it and the replay writes nothing, not even a lease, whatever its program does now
 * (engine/ending.ts: a completed saga's program that now fails meets `NonDeterminism`).
 */
export const loadForRun = (journal: VerifiedJournal, sagaId: string, holder: Holder) =>
  loadThenClaim(journal, sagaId, holder, (view) => view.status !== "completed" && view.status !== "compensated")

const loadThenClaim = (
  journal: VerifiedJournal,
  sagaId: string,
  holder: Holder,
  claims: (loaded: JournalView) => boolean
) =>
  Effect.flatMap(journal.read(sagaId), (entries) =>
    Effect.flatMap(viewOf(entries), (loaded) => {
      if (entries.length === 0 || !claims(loaded)) return Effect.succeed(new Writer(sagaId, journal, loaded, holder))
      return Effect.flatMap(journal.claim(sagaId, holder), (claimed) => {
        const last = entries[entries.length - 1]
        const unchanged = Option.match(claimed, {
          onNone: () => last === undefined,
          onSome: (record) => record.revision === (last?.seq ?? 0) && record.digest === last?.hash
        })
        const view = unchanged ? Effect.succeed(loaded) : Effect.flatMap(journal.read(sagaId), viewOf)
        return Effect.map(view, (view) => {
          const writer = new Writer(sagaId, journal, view, holder)
          writer.holdsLease = Option.isSome(claimed)
          return writer
        })
      })
    })
  )

/**
 * A writer for a saga assumed new, on a store that starts new sagas unread (`unreadStart.ts`):
 * nothing is read, and the first append (at revision 0) takes the lease, or finds the saga there.
 */
export const unread = (journal: VerifiedJournal, sagaId: string, holder: Holder) =>
  new Writer(sagaId, journal, new JournalView(), holder)
