/** Reading a saga's journal so that nothing acts on entries that do not verify. */
import * as Effect from "effect/Effect"
import type { Entry, Journal, JournalError, Verification } from "../../Journal.js"
import { JournalTampered } from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"
import type { Tamper } from "../../Saga.js"
import { holdsNothing, type Inspected, inspect } from "./inspect.js"

export { holdsNothing, type Inspected, inspect }

/** The tamper mark of a verification, if it broke. */
export const tamperOf = (verification: Verification): Tamper | undefined =>
  verification._tag === "Broken"
    ? { seq: verification.seq, problem: verification.problem, reason: verification.reason }
    : undefined

/** The entries before the first one that does not verify: what a read may still show as facts. */
export const trustedPrefix = (inspected: Inspected): ReadonlyArray<Entry> =>
  inspected.verification._tag === "Intact"
    ? inspected.entries
    : inspected.entries.filter((entry) => entry.seq < (inspected.verification as { readonly seq: number }).seq)

/**
 * Whether loads verify. Only the benchmark turns it off, to measure what verifying costs: this is
 * not an option, and nothing else may touch it.
 */
export const loadChecks = { enabled: true }

/**
 * A saga's entries, refused with `JournalTampered` unless their chain (and MACs, with `keys`)
 * verifies and ends exactly at the saga row's revision and digest. No entries for a saga that
 * does not exist.
 */
export const readVerified = (
  journal: Journal["Type"],
  sagaId: string,
  keys: KeyRing | undefined
): Effect.Effect<ReadonlyArray<Entry>, JournalError | JournalTampered> =>
  !loadChecks.enabled
    ? Effect.orDie(journal.read(sagaId))
    : Effect.flatMap(inspect(journal, sagaId, keys), ({ entries, verification }) =>
        verification._tag === "Intact"
          ? Effect.succeed(entries)
          : Effect.fail(
              new JournalTampered({
                sagaId,
                seq: verification.seq,
                problem: verification.problem,
                reason: verification.reason
              })
            )
      )

/** A journal whose `read` verifies: what the engine acts on. */
export interface VerifiedJournal extends Omit<Journal["Type"], "read"> {
  readonly read: (sagaId: string) => Effect.Effect<ReadonlyArray<Entry>, JournalError | JournalTampered>
}

/** `journal`, with every read verified under `keys` (see `readVerified`). */
export const verifying = (journal: Journal["Type"], keys: KeyRing | undefined): VerifiedJournal => ({
  ...journal,
  read: (sagaId) => readVerified(journal, sagaId, keys)
})
