import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Journal from "../Journal.js"
import { ConcurrencyConflict, hashEntry, isFinished, statusAfter } from "../Journal.js"

interface Stored {
  record: Journal.SagaRecord
  readonly entries: Array<Journal.Entry>
}

/** Builds the entries for `drafts`, chained after `expected`. */
export const buildEntries = (
  sagaId: string,
  expected: Journal.Expected,
  drafts: ReadonlyArray<Journal.Draft>,
  at: string
): Array<Journal.Entry> => {
  const entries: Array<Journal.Entry> = []
  let previous = expected.digest
  let seq = expected.revision
  for (const draft of drafts) {
    const entry = {
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
    updatedAt: last.at
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

/** The in-memory journal behind `Journal.layerMemory`. */
export const makeMemoryJournal = () => {
  const sagas = new Map<string, Stored>()
  const clock = isoClock()

  const append = (sagaId: string, expected: Journal.Expected, drafts: ReadonlyArray<Journal.Draft>) =>
    Effect.flatMap(Clock.currentTimeMillis, (millis) => {
      const stored = sagas.get(sagaId)
      const revision = stored?.record.revision ?? 0
      const digest = stored?.record.digest
      if (revision !== expected.revision || (stored !== undefined && digest !== expected.digest)) {
        return Effect.fail(
          new ConcurrencyConflict({ sagaId, expectedRevision: expected.revision, actualRevision: revision })
        )
      }
      const at = clock(millis)
      const entries = buildEntries(sagaId, expected, drafts, at)
      const last = entries[entries.length - 1]
      const record: Journal.SagaRecord = {
        sagaId,
        status: statusAfter(stored?.record.status ?? "running", drafts),
        revision: last?.seq ?? revision,
        digest: last?.hash ?? expected.digest,
        createdAt: stored?.record.createdAt ?? at,
        updatedAt: at
      }
      if (stored === undefined) sagas.set(sagaId, { record, entries })
      else {
        stored.record = record
        for (const entry of entries) stored.entries.push(entry)
      }
      return Effect.succeed(entries)
    })

  const importSaga = (entries: ReadonlyArray<Journal.Entry>) =>
    Effect.suspend(() => {
      const sagaId = entries[0]!.sagaId
      const existing = sagas.get(sagaId)
      if (existing !== undefined) {
        return Effect.fail(
          new ConcurrencyConflict({ sagaId, expectedRevision: 0, actualRevision: existing.record.revision })
        )
      }
      const record = recordOf(entries)
      sagas.set(sagaId, { record, entries: entries.slice() })
      return Effect.succeed(record)
    })

  const prune = (before: string) =>
    Effect.sync(() => {
      const pruned: Array<string> = []
      for (const [sagaId, stored] of sagas) {
        if (isFinished(stored.record.status) && stored.record.updatedAt < before) {
          sagas.delete(sagaId)
          pruned.push(sagaId)
        }
      }
      return pruned
    })

  return {
    append,
    importSaga,
    prune,
    read: (sagaId: string) => Effect.sync(() => sagas.get(sagaId)?.entries.slice() ?? []),
    get: (sagaId: string) => Effect.sync(() => Option.fromNullable(sagas.get(sagaId)?.record)),
    list: (filter?: Journal.ListFilter) =>
      Effect.sync(() =>
        Array.from(sagas.values(), (stored) => stored.record)
          .filter(
            (record) =>
              (filter?.status === undefined || filter.status.includes(record.status)) &&
              (filter?.updatedBefore === undefined || record.updatedAt < filter.updatedBefore)
          )
          .sort((a, b) => (a.updatedAt < b.updatedAt ? -1 : a.updatedAt > b.updatedAt ? 1 : 0))
      )
  }
}
