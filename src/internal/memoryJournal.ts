import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Journal from "../Journal.js"
import { ConcurrencyConflict, hashEntry, isActive, isFinished, LeaseHeld, statusAfter } from "../Journal.js"

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
    updatedAt: last.at,
    lease: null
  }
}

/** Whether `lease` stops anyone but `owner` (absent: anyone at all) from writing at `now`. */
export const blocks = (lease: Journal.Lease | null, owner: string | undefined, now: string): lease is Journal.Lease =>
  lease !== null && lease.owner !== owner && lease.expiresAt > now

/** Whether a saga with this row was left behind: active with no live lease, or suspended. */
export const isLapsed = (record: Journal.SagaRecord, now: string): boolean =>
  (isActive(record.status) || record.status === "suspended") && !blocks(record.lease, undefined, now)

/** The lease `holder` has from `millis` on. */
export const leaseFrom = (holder: Journal.Holder, millis: number): Journal.Lease => ({
  owner: holder.owner,
  expiresAt: new Date(millis + holder.ttlMillis).toISOString()
})

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

const byUpdate = (a: Stored, b: Stored) =>
  a.record.updatedAt < b.record.updatedAt ? -1 : a.record.updatedAt > b.record.updatedAt ? 1 : 0

const sorted = (stored: Array<Stored>) => stored.sort(byUpdate)

/** The in-memory journal behind `Journal.layerMemory`. */
export const makeMemoryJournal = () => {
  const sagas = new Map<string, Stored>()
  const clock = isoClock()

  const append = (
    sagaId: string,
    expected: Journal.Expected,
    drafts: ReadonlyArray<Journal.Draft>,
    holder?: Journal.Holder
  ) =>
    Effect.flatMap(Clock.currentTimeMillis, (millis): Effect.Effect<Array<Journal.Entry>, Journal.AppendError> => {
      const stored = sagas.get(sagaId)
      const revision = stored?.record.revision ?? 0
      const digest = stored?.record.digest
      if (revision !== expected.revision || (stored !== undefined && digest !== expected.digest)) {
        return Effect.fail(
          new ConcurrencyConflict({ sagaId, expectedRevision: expected.revision, actualRevision: revision })
        )
      }
      const at = clock(millis)
      const lease = stored?.record.lease ?? null
      if (blocks(lease, holder?.owner, at)) return Effect.fail(new LeaseHeld({ sagaId, ...lease }))
      const entries = buildEntries(sagaId, expected, drafts, at)
      const last = entries[entries.length - 1]
      const status = statusAfter(stored?.record.status ?? "running", drafts)
      const record: Journal.SagaRecord = {
        sagaId,
        status,
        revision: last?.seq ?? revision,
        digest: last?.hash ?? expected.digest,
        createdAt: stored?.record.createdAt ?? at,
        updatedAt: at,
        lease: !isActive(status) ? null : holder === undefined ? lease : leaseFrom(holder, millis)
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

  const claim = (sagaId: string, holder: Journal.Holder) =>
    Effect.flatMap(Clock.currentTimeMillis, (millis) => {
      const stored = sagas.get(sagaId)
      if (stored === undefined) return Effect.succeed(Option.none())
      const lease = stored.record.lease
      if (blocks(lease, holder.owner, clock(millis))) return Effect.fail(new LeaseHeld({ sagaId, ...lease }))
      stored.record = { ...stored.record, lease: leaseFrom(holder, millis) }
      return Effect.succeed(Option.some(stored.record))
    })

  const claimLapsed = (holder: Journal.Holder, limit: number) =>
    Effect.map(Clock.currentTimeMillis, (millis) => {
      const now = clock(millis)
      const lapsed = sorted(Array.from(sagas.values()).filter((stored) => isLapsed(stored.record, now)))
      return lapsed.slice(0, Math.max(0, limit)).map((stored) => {
        stored.record = { ...stored.record, lease: leaseFrom(holder, millis) }
        return stored.record
      })
    })

  const leasesOf = (owner: string, sagaId?: string) =>
    Array.from(sagas.values()).filter(
      (stored) => stored.record.lease?.owner === owner && (sagaId === undefined || stored.record.sagaId === sagaId)
    )

  const renew = (holder: Journal.Holder) =>
    Effect.map(Clock.currentTimeMillis, (millis) => {
      const held = leasesOf(holder.owner)
      for (const stored of held) stored.record = { ...stored.record, lease: leaseFrom(holder, millis) }
      return held.length
    })

  const release = (owner: string, sagaId?: string) =>
    Effect.sync(() => {
      for (const stored of leasesOf(owner, sagaId)) stored.record = { ...stored.record, lease: null }
    })

  return {
    append,
    claim,
    claimLapsed,
    renew,
    release,
    importSaga,
    prune,
    read: (sagaId: string) => Effect.sync(() => sagas.get(sagaId)?.entries.slice() ?? []),
    get: (sagaId: string) => Effect.sync(() => Option.fromNullable(sagas.get(sagaId)?.record)),
    list: (filter?: Journal.ListFilter) =>
      Effect.sync(() =>
        sorted(
          Array.from(sagas.values()).filter(
            ({ record }) =>
              (filter?.status === undefined || filter.status.includes(record.status)) &&
              (filter?.updatedBefore === undefined || record.updatedAt < filter.updatedBefore)
          )
        ).map((stored) => stored.record)
      )
  }
}
