import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { AppendError, Draft, Entry, Holder, JournalCorrupted } from "../../Journal.js"
import { isActive } from "../../Journal.js"
import { observeAppended } from "../observability/metrics.js"
import { Mutex } from "../util/mutex.js"
import { ownPayloadOf } from "./drafts.js"
import type { Recorded } from "./payloads.js"
import { decodeOwnEntry } from "./payloads.js"
import { appendsAtOnce } from "./synchronous.js"
import type { VerifiedJournal } from "./verified.js"
import type { JournalView } from "./view.js"
import { viewOf } from "./view.js"

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
 * The one path by which a saga's entries reach the journal: appends are serialized, each names the
 * position the writer last saw and the worker's lease, and the view follows every append.
 */
export class Writer {
  private readonly lock = new Mutex()
  private prefix: ReadonlyArray<Draft> = []
  /** Whether the store may still record this worker's lease on the saga (an append that halts the saga drops it). */
  holdsLease = false

  constructor(
    readonly sagaId: string,
    private readonly journal: VerifiedJournal,
    readonly view: JournalView,
    private readonly holder: Holder | undefined
  ) {}

  /** Entries to write in front of the next append (a resume marker travels with the first real write). */
  prepend(drafts: ReadonlyArray<Draft>): void {
    this.prefix = drafts
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
    const atOnce = appendsAtOnce.get(this.journal.append)
    if (atOnce === undefined) return this.appendLocked(drafts, refused, next)
    // Nothing can come between the steps of an append done at once: it needs the lock only to wait
    // for an append already under way (one that took the other path).
    return Effect.clockWith((clock) => {
      if (!this.lock.idle) return this.appendLocked(drafts, refused, next)
      const batch = this.batchOf(drafts)
      const appended = atOnce(this.sagaId, this.view.position, batch, this.holder, clock.unsafeCurrentTimeMillis())
      if (appended === undefined) return this.appendLocked(drafts, refused, next)
      if (Either.isLeft(appended)) return refused(appended.left)
      const defect = this.follow(appended.right, batch)
      return defect === undefined ? next() : Effect.dieMessage(defect)
    })
  }

  private appendLocked<A, E1, E2>(
    drafts: ReadonlyArray<Draft>,
    refused: (error: AppendError) => Effect.Effect<never, E1>,
    next: () => Effect.Effect<A, E2>
  ): Effect.Effect<A, E1 | E2> {
    const appended = this.lock.withLockUninterruptible(
      Effect.suspend(() => {
        const batch = this.batchOf(drafts)
        return Effect.flatMap(this.journal.append(this.sagaId, this.view.position, batch, this.holder), (entries) => {
          const defect = this.follow(entries, batch)
          return defect === undefined ? Effect.void : Effect.dieMessage(defect)
        })
      })
    )
    return Effect.matchEffect(appended, { onFailure: refused, onSuccess: next })
  }

  private batchOf(drafts: ReadonlyArray<Draft>): ReadonlyArray<Draft> {
    return this.prefix.length === 0 ? drafts : [...this.prefix, ...drafts]
  }

  /** The view follows the entries just appended for `batch`; or the defect that stops it. */
  private follow(appended: ReadonlyArray<Entry>, batch: ReadonlyArray<Draft>): string | undefined {
    // An entry just drafted that does not decode is a defect of the code that drafted it.
    const entries = decodeAppended(appended, batch)
    if (Either.isLeft(entries)) return `effect-saga: an entry just drafted does not decode: ${entries.left.reason}`
    this.prefix = []
    for (const entry of entries.right) this.view.apply(entry)
    observeAppended(this.view, entries.right)
    this.holdsLease = this.holder !== undefined && isActive(this.view.status)
    return undefined
  }

  /**
   * Drops the lease if this writer may still hold it when the effect runs (not when it is built: an
   * append in between, such as the saga's last, may have dropped it already): the worker no longer
   * drives the saga.
   */
  release(): Effect.Effect<void> {
    return Effect.suspend(() =>
      this.holder === undefined || !this.holdsLease
        ? Effect.void
        : Effect.catchAll(this.journal.release(this.holder.owner, this.sagaId), (error) =>
            Effect.logWarning(`effect-saga: the lease of saga ${this.sagaId} was not released; it will lapse`, error)
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
  Effect.gen(function* () {
    const entries = yield* journal.read(sagaId)
    const loaded = yield* viewOf(entries)
    if (entries.length === 0) return new Writer(sagaId, journal, loaded, holder)
    const claimed = yield* journal.claim(sagaId, holder)
    const last = entries[entries.length - 1]
    const unchanged = Option.match(claimed, {
      onNone: () => last === undefined,
      onSome: (record) => record.revision === (last?.seq ?? 0) && record.digest === last?.hash
    })
    const view = unchanged ? loaded : yield* Effect.flatMap(journal.read(sagaId), viewOf)
    const writer = new Writer(sagaId, journal, view, holder)
    writer.holdsLease = Option.isSome(claimed)
    return writer
  })
