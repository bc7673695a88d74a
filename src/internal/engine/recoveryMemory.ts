/**
 * What a worker's recovery remembers from one pass to the next: the sagas it found it cannot
 * resume (`Recovery.Unrecoverable`), whose program no longer replays their journal
 * (`NonDeterminism`) or whose journal does not verify (`JournalTampered`), each at the journal
 * position it found it at. Nothing a later pass of the same worker could do would change that
 * answer while the journal stays where it was (the worker has the same definitions and programs),
 * so a later pass does not try again: without this, such a saga was claimed, failed and logged on
 * every pass, for ever.
 */
import type { SagaRecord } from "../../Journal.js"
import type { RecoveryError } from "../../Recovery.js"

/**
 * How many sagas a worker remembers at most; past it, the one remembered longest is forgotten
 * (and tried again once, by the next pass that claims it).
 */
export const MAX_REMEMBERED = 10_000

/**
 * Where a saga's journal stands, as its row says: written to by anyone (a resume, a `resolve`, a
 * `compensate`), it moves on; so does a tampered one whose row is edited or written again.
 */
const positionOf = (record: SagaRecord): string => `${record.revision}/${record.digest}`

/**
 * Whether a saga that failed recovery with `error` fails it again while its journal stays where it
 * is: it cannot be resumed here, its program diverges from the journal, its entries do not decode
 * with the program's schemas, or the journal does not verify. Anything else (a lease held, a store that could not be reached) may pass by itself.
 */
export const answersAgainWhereItIs = (error: RecoveryError): boolean => {
  switch (error._tag) {
    case "Unrecoverable":
    case "NonDeterminism":
    case "JournalTampered":
    case "JournalCorrupted":
      return true
    default:
      return false
  }
}

/** The sagas a worker found it cannot resume, and where their journals stood. */
export interface Unresumable {
  /** Whether this worker found it cannot resume `record`'s saga with its journal where it is now. */
  readonly knows: (record: SagaRecord) => boolean
  /** Remembers that `record`'s saga cannot be resumed here, at its position. */
  readonly remember: (record: SagaRecord) => void
  /** Forgets the sagas a pass did not claim: driven by someone, or ended, they are no longer left behind. */
  readonly keepOnly: (claimed: ReadonlySet<string>) => void
}

/** An empty memory of at most `capacity` sagas. */
export const make = (capacity: number = MAX_REMEMBERED): Unresumable => {
  const positions = new Map<string, string>()
  return {
    knows: (record) => positions.get(record.sagaId) === positionOf(record),
    remember: (record) => {
      positions.delete(record.sagaId)
      positions.set(record.sagaId, positionOf(record))
      for (const oldest of positions.keys()) {
        if (positions.size <= capacity) break
        positions.delete(oldest)
      }
    },
    keepOnly: (claimed) => {
      for (const sagaId of positions.keys()) if (!claimed.has(sagaId)) positions.delete(sagaId)
    }
  }
}
