/** Building a saga's journal entries and row, the same in every store. */
import type * as Journal from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"
import { ENTRY_DOMAIN, sign } from "../util/crypto.js"
import { hashEntry } from "./hash.js"
import { statusAfter } from "./status.js"

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

/** Formats epoch millis as ISO-8601 UTC, sharing one string among the entries of one millisecond. */
export const isoClock = () => {
  let lastMillis = Number.NaN
  let lastText = ""
  return (millis: number): string => {
    if (millis !== lastMillis) {
      lastMillis = millis
      lastText = new Date(millis).toISOString()
    }
    return lastText
  }
}
