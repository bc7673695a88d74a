import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { AppendError, Draft, Holder } from "../../Journal.js"
import { isActive } from "../../Journal.js"
import { Mutex } from "../util/mutex.js"
import type { VerifiedJournal } from "./verified.js"
import { JournalView } from "./view.js"

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
    return this.lock.withLock(
      Effect.suspend(() => {
        const batch = this.prefix.length === 0 ? drafts : [...this.prefix, ...drafts]
        return Effect.map(this.journal.append(this.sagaId, this.view.position, batch, this.holder), (entries) => {
          this.prefix = []
          for (const entry of entries) this.view.apply(entry)
          this.holdsLease = this.holder !== undefined && isActive(this.view.status)
        })
      })
    )
  }

  /** Drops the lease if this writer may still hold it: the worker no longer drives the saga. */
  release(): Effect.Effect<void> {
    return this.holder === undefined || !this.holdsLease
      ? Effect.void
      : Effect.catchAll(this.journal.release(this.holder.owner, this.sagaId), (error) =>
          Effect.logWarning(`effect-saga: the lease of saga ${this.sagaId} was not released; it will lapse`, error)
        )
  }
}

/**
 * Loads a saga's journal into a writer that writes under `holder`'s lease, once its entries verify
 * against the saga's row (`JournalTampered` otherwise: nothing acts on a journal that does not).
 */
export const load = (journal: VerifiedJournal, sagaId: string, holder?: Holder) =>
  Effect.map(journal.read(sagaId), (entries) => new Writer(sagaId, journal, new JournalView(entries), holder))

/**
 * Loads a saga's journal and takes its lease for `holder` (a saga that does not exist yet gets the
 * lease with its first write). The journal is verified before the lease is taken, so that a
 * tampered saga is refused with nothing written, not even a lease; it is read again only if it
 * moved on in between.
 */
export const claimAndLoad = (journal: VerifiedJournal, sagaId: string, holder: Holder) =>
  Effect.gen(function* () {
    const entries = yield* journal.read(sagaId)
    const claimed = yield* journal.claim(sagaId, holder)
    const last = entries[entries.length - 1]
    const unchanged = Option.match(claimed, {
      onNone: () => last === undefined,
      onSome: (record) => record.revision === (last?.seq ?? 0) && record.digest === last?.hash
    })
    const current = unchanged ? entries : yield* journal.read(sagaId)
    const writer = new Writer(sagaId, journal, new JournalView(current), holder)
    writer.holdsLease = Option.isSome(claimed)
    return writer
  })
