/**
 * A prototype of `src/internal/journal/memory.ts` (issue 18: the in-memory journal's heap a saga),
 * measured by `node --expose-gc --import tsx bench/memoryJournalPrototype.ts <memory|prototype> [count]`.
 * The same journal, but an entry is kept without what the saga already knows: its saga id, its seq
 * (its place) and, for the entries this journal chained itself, its hash, which `read` chains again
 * (an imported saga keeps the hashes it came with, so that a tampered import still fails to verify).
 * Everything else (conflicts, leases, listing) is `memory.ts` unchanged.
 */
import { Effect as E, Layer } from "effect"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Approval, Journal as JournalModule, Saga } from "../src/index.js"
import { buildEntries, isoClock, recordOf, refuseUnstorable } from "../src/internal/journal/entries.js"
import { ConcurrencyConflict, LeaseHeld } from "../src/internal/journal/errors.js"
import { hashEntry } from "../src/internal/journal/hash.js"
import { isActive, isFinished, noneOpen, statusAfter } from "../src/internal/journal/status.js"
import type * as Journal from "../src/Journal.js"
import type { KeyRing } from "../src/Keys.js"
import { saga } from "./contenders.js"

/** An entry as kept: the fields its saga cannot tell. */
interface Kept {
  readonly stepId: string | null
  readonly toolName: string | null
  readonly phase: Journal.Phase
  readonly input: string | null
  readonly payload: string | null
  readonly at: string
  readonly mac?: string | undefined
}

interface Stored {
  record: Journal.SagaRecord
  readonly entries: Array<Kept>
  /** The hashes of an imported saga, as they came. */
  readonly imported?: ReadonlyArray<string> | undefined
}

const keep = (entry: Journal.Entry): Kept => {
  const { stepId, toolName, phase, input, payload, at, mac } = entry
  return mac === undefined
    ? { stepId, toolName, phase, input, payload, at }
    : { stepId, toolName, phase, input, payload, at, mac }
}

/** A saga's entries as `Journal.Entry` values again: seq by place, each hash chained (or as imported). */
const entriesOf = (sagaId: string, stored: Stored): Array<Journal.Entry> => {
  const out: Array<Journal.Entry> = []
  let previous = JournalModule.empty.digest
  for (const [i, kept] of stored.entries.entries()) {
    const base = { sagaId, seq: i + 1, ...kept }
    const { mac: _mac, ...unsigned } = base
    const hash = stored.imported?.[i] ?? hashEntry(previous, unsigned)
    out.push({ ...base, hash })
    previous = hash
  }
  return out
}

/** Whether `lease` stops anyone but `owner` (absent: anyone at all) from writing at `now`. */
const blocks = (lease: Journal.Lease | null, owner: string | undefined, now: string): lease is Journal.Lease =>
  lease !== null && lease.owner !== owner && lease.expiresAt > now

/** Whether a saga with this row was left behind: active with no live lease, or suspended. */
const isLapsed = (record: Journal.SagaRecord, now: string): boolean =>
  (isActive(record.status) || record.status === "suspended") && !blocks(record.lease, undefined, now)

const byUpdate = (a: Stored, b: Stored) =>
  a.record.updatedAt < b.record.updatedAt ? -1 : a.record.updatedAt > b.record.updatedAt ? 1 : 0

const sorted = (stored: Array<Stored>) => stored.sort(byUpdate)

/** The in-memory journal behind `Journal.layerMemory`; with `keys`, every entry is signed. */
export const makePrototypeJournal = (keys?: KeyRing | undefined) => {
  const sagas = new Map<string, Stored>()
  const clock = isoClock()
  const expiryClock = isoClock()
  /** The lease `holder` has from `millis` on. */
  const leaseFrom = (holder: Journal.Holder, millis: number): Journal.Lease => ({
    owner: holder.owner,
    expiresAt: expiryClock(millis + holder.ttlMillis)
  })

  const append = (
    sagaId: string,
    expected: Journal.Expected,
    drafts: ReadonlyArray<Journal.Draft>,
    holder?: Journal.Holder
  ) =>
    Effect.flatMap(Clock.currentTimeMillis, (millis): Effect.Effect<Array<Journal.Entry>, Journal.AppendError> => {
      const unstorable = refuseUnstorable("append", sagaId, drafts)
      if (unstorable !== undefined) return Effect.fail(unstorable)
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
      const entries = buildEntries(sagaId, expected, drafts, at, keys)
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
      if (stored === undefined) sagas.set(sagaId, { record, entries: entries.map(keep) })
      else {
        stored.record = record
        for (const entry of entries) stored.entries.push(keep(entry))
      }
      return Effect.succeed(entries)
    })

  const importSaga = (entries: ReadonlyArray<Journal.Entry>) =>
    Effect.suspend((): Effect.Effect<Journal.SagaRecord, Journal.ConcurrencyConflict | Journal.JournalError> => {
      const unstorable = refuseUnstorable("import", undefined, entries)
      if (unstorable !== undefined) return Effect.fail(unstorable)
      const sagaId = entries[0]!.sagaId
      const existing = sagas.get(sagaId)
      if (existing !== undefined) {
        return Effect.fail(
          new ConcurrencyConflict({ sagaId, expectedRevision: 0, actualRevision: existing.record.revision })
        )
      }
      const record = recordOf(entries)
      sagas.set(sagaId, { record, entries: entries.map(keep), imported: entries.map((entry) => entry.hash) })
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

  const leasesOf = (owner: string, sagaId?: string) => {
    const candidates = sagaId === undefined ? Array.from(sagas.values()) : [sagas.get(sagaId)]
    return candidates.filter((stored): stored is Stored => stored?.record.lease?.owner === owner)
  }

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

  const countOpen = () =>
    Effect.sync(() => {
      const counts: Record<Journal.OpenStatus, number> = { ...noneOpen }
      for (const { record } of sagas.values())
        if (record.status in counts) counts[record.status as Journal.OpenStatus]++
      return counts as Journal.OpenCounts
    })

  return {
    append,
    countOpen,
    claim,
    claimLapsed,
    renew,
    release,
    importSaga,
    prune,
    read: (sagaId: string) =>
      Effect.sync(() => {
        const stored = sagas.get(sagaId)
        return stored === undefined ? [] : entriesOf(sagaId, stored)
      }),
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

const which = process.argv[2] ?? "prototype"
const count = Number(process.argv[3] ?? "10000")
const journal =
  which === "memory"
    ? JournalModule.layerMemory
    : Layer.succeed(JournalModule.Journal, JournalModule.Journal.of(makePrototypeJournal()))
const layer = Saga.layer.pipe(Layer.provideMerge(Layer.merge(journal, Approval.layerMemory)))
const MB = 1024 * 1024
const program = E.gen(function* () {
  const start = performance.now()
  yield* E.forEach(
    Array.from({ length: count }, (_, n) => n),
    saga,
    { discard: true }
  )
  const usPerSaga = ((performance.now() - start) * 1000) / count
  const j = yield* JournalModule.Journal
  // Not vacuous: a saga reads back whole and verifies against its row.
  const verification = yield* JournalModule.verify("saga-0")
  const entries = yield* j.read("saga-0")
  // Measured while the journal is alive: the layer is released when the program ends.
  globalThis.gc?.()
  const usage = process.memoryUsage()
  return { verification: verification._tag, entries: entries.length, heapUsedMB: usage.heapUsed / MB, usPerSaga }
})
console.log(JSON.stringify({ journal: which, count, ...(await E.runPromise(E.provide(program, layer))) }))
