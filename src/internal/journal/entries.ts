/** Building a saga's journal entries and row, the same in every store. */
import type * as Journal from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"
import { ENTRY_DOMAIN, sign } from "../util/crypto.js"
import { unstorable } from "../util/identifier.js"
import { lastMillis } from "../util/isoTime.js"
import { JournalError } from "./errors.js"
import { hashEntry } from "./hash.js"
import { isPhase } from "./payloads.js"
import { statusAfter } from "./status.js"

/** The text fields of an entry (or of a draft, which has no `at`, `hash` or `mac`). */
interface Texts {
  readonly sagaId?: string | undefined
  readonly phase?: string
  readonly stepId: string | null
  readonly toolName: string | null
  readonly input: string | null
  readonly payload: string | null
  readonly at?: string | undefined
  readonly hash?: string | undefined
  readonly mac?: string | undefined
}

/**
 * The `JournalError` that refuses an append or an import whose text cannot be stored as written,
 * if it must: a field that is not well-formed Unicode. No store keeps a lone surrogate as it was
 * written (SQLite reads it back as U+FFFD, PostgreSQL stores U+FFFD), so the entry's hash would not
 * verify and two saga ids differing only there would meet in one row.
 */
export const refuseUnstorable = (
  operation: "append" | "import",
  sagaId: string | undefined,
  entries: ReadonlyArray<Texts>
): JournalError | undefined => {
  const unstorableField = operation === "append" ? unstorableDraftField : unstorableEntryField
  let found = unstorableIn("sagaId", sagaId)
  for (let i = 0; found === undefined && i < entries.length; i++) found = unstorableField(entries[i]!)
  return found === undefined ? undefined : new JournalError({ operation, reason: found })
}

/** The `JournalError` that refuses an import, if it must: no entries at all, or text no store keeps as written. */
export const refuseImport = (entries: ReadonlyArray<Texts>): JournalError | undefined =>
  entries.length === 0
    ? new JournalError({ operation: "import", reason: "there are no entries to import" })
    : refuseUnstorable("import", undefined, entries)

const unstorableIn = (field: string, text: string | null | undefined): string | undefined => {
  const reason = unstorable(text)
  return reason === undefined ? undefined : `the field ${field}: ${reason}`
}

/** Why the first text field of a draft that is not well-formed Unicode cannot be stored, if one is not. */
const unstorableDraftField = (draft: Texts): string | undefined =>
  unknownPhase(draft.phase) ??
  unstorableIn("stepId", draft.stepId) ??
  unstorableIn("toolName", draft.toolName) ??
  unstorableIn("input", draft.input) ??
  unstorableIn("payload", draft.payload)

/** A phase no reader would decode: written, it would be read back as `JournalCorrupted`. */
const unknownPhase = (phase: string | undefined): string | undefined =>
  phase === undefined || isPhase(phase)
    ? undefined
    : `the phase ${JSON.stringify(phase).slice(0, 80)} is not a journal phase`

/** The same for an entry to import, which has its saga id, time, hash and MAC too. */
const unstorableEntryField = (entry: Texts): string | undefined =>
  unstorableIn("sagaId", entry.sagaId) ??
  unstorableDraftField(entry) ??
  unstorableIn("at", entry.at) ??
  unstorableIn("hash", entry.hash) ??
  unstorableIn("mac", entry.mac)

/** Builds the entries for `drafts`, chained after `expected`, each signed when the store has a journal key. */
export const buildEntries = (
  sagaId: string,
  expected: Journal.Expected,
  drafts: ReadonlyArray<Journal.Draft>,
  at: string,
  keys: KeyRing | undefined
): Array<Journal.Entry> => {
  const entries: Array<Journal.Entry> = []
  let previous = expected.digest
  let seq = expected.revision
  for (const draft of drafts) {
    const entry: { -readonly [K in keyof Journal.Entry]: Journal.Entry[K] } = {
      sagaId,
      seq: ++seq,
      stepId: draft.stepId,
      toolName: draft.toolName,
      phase: draft.phase,
      input: draft.input,
      payload: draft.payload,
      at,
      hash: ""
    }
    entry.hash = previous = hashEntry(previous, entry)
    if (keys !== undefined) entry.mac = sign(keys, ENTRY_DOMAIN, entry.hash)
    entries.push(entry)
  }
  return entries
}

/** The saga row that a whole, non-empty list of one saga's entries implies (for an import). */
export const recordOf = (entries: ReadonlyArray<Journal.Entry>): Journal.SagaRecord => {
  const first = entries[0]!
  const last = entries[entries.length - 1]!
  return {
    sagaId: first.sagaId,
    status: statusAfter("running", entries),
    revision: last.seq,
    digest: last.hash,
    createdAt: first.at,
    updatedAt: last.at,
    lease: null
  }
}

/**
 * Formats epoch millis as ISO-8601 UTC, sharing one string among the entries of one millisecond; a
 * time past year 9999 as its last millisecond, the last a store can hold (storedTime.ts: nothing is
 * written at such a time, but a prune or a lease check may still read the clock).
 */
export const isoClock = () => {
  let previous = Number.NaN
  let previousText = ""
  return (millis: number): string => {
    if (millis !== previous) {
      previous = millis
      previousText = new Date(Math.min(millis, lastMillis)).toISOString()
    }
    return previousText
  }
}
