import * as Effect from "effect/Effect"
import type { ConcurrencyConflict, Draft, Journal, JournalError } from "../Journal.js"
import { Mutex } from "./mutex.js"
import { JournalView } from "./view.js"

/**
 * The one path by which a saga's entries reach the journal: appends are serialized, each names the
 * position the writer last saw, and the view follows every append.
 */
export class Writer {
  private readonly lock = new Mutex()
  private prefix: ReadonlyArray<Draft> = []

  constructor(
    readonly sagaId: string,
    private readonly journal: Journal["Type"],
    readonly view: JournalView
  ) {}

  /** Entries to write in front of the next append (a resume marker travels with the first real write). */
  prepend(drafts: ReadonlyArray<Draft>): void {
    this.prefix = drafts
  }

  append(drafts: ReadonlyArray<Draft>): Effect.Effect<void, ConcurrencyConflict | JournalError> {
    return this.lock.withLock(
      Effect.suspend(() => {
        const batch = this.prefix.length === 0 ? drafts : [...this.prefix, ...drafts]
        return Effect.map(this.journal.append(this.sagaId, this.view.position, batch), (entries) => {
          this.prefix = []
          for (const entry of entries) this.view.apply(entry)
        })
      })
    )
  }
}

/** Loads a saga's journal into a writer. */
export const load = (journal: Journal["Type"], sagaId: string) =>
  Effect.map(journal.read(sagaId), (entries) => new Writer(sagaId, journal, new JournalView(entries)))
