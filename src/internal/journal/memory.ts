import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Journal from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"
import { byCodePoints } from "../util/codePoints.js"
import { cutoff } from "./cutoff.js"
import { buildEntries, isoClock, recordOf, refuseImport, refuseUnstorable } from "./entries.js"
import { ConcurrencyConflict, JournalError, LeaseHeld } from "./errors.js"
import { GENESIS, hashEntry } from "./hash.js"
import * as HeldBack from "./heldBack.js"
import { runIdOf, stepKey } from "./ids.js"
import type { Pruning as PruningOf } from "./pruning.js"
import * as Pruning from "./pruning.js"
import * as Signing from "./signing.js"
import { isActive, isFinished, isPrunable, keepsLease, noneOpen, statusAfter } from "./status.js"
import { atStorableTime, leaseEnd, pastStoredTime } from "./storedTime.js"
import { appendsAtOnce } from "./synchronous.js"

/**
 * An entry as kept: what its saga cannot tell. Its saga id and seq (its place) are the saga's, and
 * its hash, where this journal chained it, is chained again on read: a saga's entries cost a third
 * less of the heap that way.
 */
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
  /** The hashes of an imported saga's entries, as they came (a tampered import must not verify). */
  readonly imported?: ReadonlyArray<string> | undefined
}

const keep = ({ at, input, mac, payload, phase, stepId, toolName }: Journal.Entry): Kept =>
  mac === undefined
    ? { stepId, toolName, phase, input, payload, at }
    : { stepId, toolName, phase, input, payload, at, mac }

/** A saga's entries as they were appended or imported: seq by place, each hash chained again (or as imported). */
const entriesOf = (sagaId: string, stored: Stored): Array<Journal.Entry> => {
  const entries: Array<Journal.Entry> = []
  let previous = GENESIS
  for (let i = 0; i < stored.entries.length; i++) {
    const { at, input, mac, payload, phase, stepId, toolName } = stored.entries[i]!
    const unsigned = { sagaId, seq: i + 1, stepId, toolName, phase, input, payload, at }
    const hash = stored.imported?.[i] ?? hashEntry(previous, unsigned)
    entries.push(mac === undefined ? { ...unsigned, hash } : { ...unsigned, hash, mac })
    previous = hash
  }
  return entries
}

/** Whether `lease` stops anyone but `owner` (absent: anyone at all) from writing at `now`. */
const blocks = (lease: Journal.Lease | null, owner: string | undefined, now: string): lease is Journal.Lease =>
  lease !== null && lease.owner !== owner && lease.expiresAt > now

/** Whether a saga with this row was left behind: active with no live lease, or suspended. */
const isLapsed = (record: Journal.SagaRecord, now: string): boolean =>
  (isActive(record.status) || record.status === "suspended") && !blocks(record.lease, undefined, now)

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Least recently updated first, then created first, then saga id in code-point order: as the SQL
 * stores order `list` (times are ASCII text, so `<` is code-point order for them).
 */
const byUpdate = ({ record: a }: Stored, { record: b }: Stored) =>
  byText(a.updatedAt, b.updatedAt) || byText(a.createdAt, b.createdAt) || byCodePoints(a.sagaId, b.sagaId)

const sorted = (stored: Array<Stored>) => stored.sort(byUpdate)

/** The in-memory journal behind `Journal.layerMemory`; with `keys`, every entry is signed. */
export const makeMemoryJournal = (keys?: KeyRing | undefined) => {
  const sagas = new Map<string, Stored>()
  const clock = isoClock()
  const expiryClock = isoClock()
  /** The lease `holder` has from `millis` on. */
  const leaseFrom = (holder: Journal.Holder, millis: number): Journal.Lease => ({
    owner: holder.owner,
    expiresAt: expiryClock(leaseEnd(millis, holder.ttlMillis))
  })

  /** An append at `millis`, done at once: the entries appended, or why not. */
  const appendAt = (
    sagaId: string,
    expected: Journal.Expected,
    drafts: ReadonlyArray<Journal.Draft>,
    holder: Journal.Holder | undefined,
    millis: number
  ): Either.Either<Array<Journal.Entry>, Journal.AppendError> => {
    const unstorable = refuseUnstorable("append", sagaId, drafts) ?? pastStoredTime("append", millis)
    if (unstorable !== undefined) return Either.left(unstorable)
    const stored = sagas.get(sagaId)
    const revision = stored?.record.revision ?? 0
    const digest = stored?.record.digest
    if (revision !== expected.revision || (stored !== undefined && digest !== expected.digest)) {
      return Either.left(
        new ConcurrencyConflict({ sagaId, expectedRevision: expected.revision, actualRevision: revision })
      )
    }
    const at = clock(millis)
    const lease = stored?.record.lease ?? null
    if (blocks(lease, holder?.owner, at)) return Either.left(new LeaseHeld({ sagaId, ...lease }))
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
      lease: !keepsLease(drafts) ? null : holder === undefined ? lease : leaseFrom(holder, millis)
    }
    if (stored === undefined) sagas.set(sagaId, { record, entries: entries.map(keep) })
    else {
      stored.record = record
      for (const entry of entries) stored.entries.push(keep(entry))
    }
    return Either.right(entries)
  }

  const append: Journal.Journal["Type"]["append"] = (sagaId, expected, drafts, holder) =>
    Effect.clockWith((time) => appendAt(sagaId, expected, drafts, holder, time.unsafeCurrentTimeMillis()))
  appendsAtOnce.set(append, appendAt)
  HeldBack.allow(append)
  Signing.signsWith(append, keys)

  const importSaga = (entries: ReadonlyArray<Journal.Entry>) =>
    Effect.suspend((): Effect.Effect<Journal.SagaRecord, Journal.ConcurrencyConflict | Journal.JournalError> => {
      const refused = refuseImport(entries)
      if (refused !== undefined) return Effect.fail(refused)
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

  /** Whether a saga is finished by its row and by its journal (a record edited to a finished status is not). */
  const isDone = (stored: Stored): boolean =>
    isFinished(stored.record.status) && isFinished(statusAfter("running", stored.entries))

  /** Whether `prune` may delete a saga: by its row and by its journal, not `compensation_failed` (an effect may be live). */
  const isPrunableNow = (stored: Stored): boolean =>
    isPrunable(stored.record.status) && isPrunable(statusAfter("running", stored.entries))

  /** What `prune` reads and deletes here, for the cutoff `at` at the time `now` (a saga whose lease is held is not prunable). */
  const pruningAt = (at: string, now: string): PruningOf<never> => ({
    finishedBefore: Effect.sync(() =>
      Array.from(sagas)
        .filter(
          ([, stored]) =>
            isPrunableNow(stored) && stored.record.updatedAt < at && !blocks(stored.record.lease, undefined, now)
        )
        .map(([sagaId]) => sagaId)
    ),
    runsOf: (sagaIds) =>
      Effect.sync(() =>
        sagaIds.flatMap((sagaId) => {
          const stepIds = new Set<string>()
          for (const { stepId } of sagas.get(sagaId)?.entries ?? []) if (stepId !== null) stepIds.add(stepId)
          return Array.from(stepIds, (stepId) => runIdOf(stepKey(sagaId, stepId))).flatMap((runId) => {
            const run = sagas.get(runId)
            return run === undefined ? [] : [{ sagaId, runId, finished: isDone(run) }]
          })
        })
      ),
    journaled: (addresses) =>
      Effect.sync(() =>
        addresses.filter(({ sagaId, stepId }) => sagas.get(sagaId)?.entries.some((entry) => entry.stepId === stepId))
      ),
    remove: (sagaIds) =>
      Effect.sync(() => {
        for (const sagaId of sagaIds) sagas.delete(sagaId)
      })
  })

  const pruneOrList = (before: string, dryRun: boolean) =>
    Either.match(cutoff(before), {
      onLeft: (reason) => Effect.fail(new JournalError({ operation: "prune", reason })),
      // At once, as every change here is: no append comes between what is read and what is deleted.
      onRight: (at) =>
        Effect.map(Clock.currentTimeMillis, (millis) =>
          Effect.runSync(Pruning.prune(pruningAt(at, clock(millis)), { dryRun }))
        )
    })

  const claim = (sagaId: string, holder: Journal.Holder) =>
    atStorableTime("claim", (millis) => {
      const stored = sagas.get(sagaId)
      if (stored === undefined) return Effect.succeed(Option.none())
      const lease = stored.record.lease
      if (blocks(lease, holder.owner, clock(millis))) return Effect.fail(new LeaseHeld({ sagaId, ...lease }))
      stored.record = { ...stored.record, lease: leaseFrom(holder, millis) }
      return Effect.succeed(Option.some(stored.record))
    })

  const claimLapsed = (holder: Journal.Holder, limit: number) =>
    atStorableTime("claim", (millis) =>
      Effect.sync(() => {
        const now = clock(millis)
        const lapsed = sorted(Array.from(sagas.values()).filter((stored) => isLapsed(stored.record, now)))
        return lapsed.slice(0, Math.max(0, limit)).map((stored) => {
          stored.record = { ...stored.record, lease: leaseFrom(holder, millis) }
          return stored.record
        })
      })
    )

  const leasesOf = (owner: string, sagaId?: string) => {
    const candidates = sagaId === undefined ? Array.from(sagas.values()) : [sagas.get(sagaId)]
    return candidates.filter((stored): stored is Stored => stored?.record.lease?.owner === owner)
  }

  const renew = (holder: Journal.Holder) =>
    atStorableTime("renew", (millis) =>
      Effect.sync(() => {
        const held = leasesOf(holder.owner)
        for (const stored of held) stored.record = { ...stored.record, lease: leaseFrom(holder, millis) }
        return held.length
      })
    )

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
    prune: (before: string) => pruneOrList(before, false),
    prunable: (before: string) => pruneOrList(before, true),
    read: (sagaId: string) =>
      Effect.sync(() => {
        const stored = sagas.get(sagaId)
        return stored === undefined ? [] : entriesOf(sagaId, stored)
      }),
    get: (sagaId: string) => Effect.sync(() => Option.fromNullable(sagas.get(sagaId)?.record)),
    list: (filter?: Journal.ListFilter) => {
      const before = filter?.updatedBefore === undefined ? Either.right(undefined) : cutoff(filter.updatedBefore)
      if (Either.isLeft(before)) return Effect.fail(new JournalError({ operation: "list", reason: before.left }))
      return Effect.sync(() =>
        sorted(
          Array.from(sagas.values()).filter(
            ({ record }) =>
              (filter?.status === undefined || filter.status.includes(record.status)) &&
              (before.right === undefined || record.updatedAt < before.right)
          )
        ).map((stored) => stored.record)
      )
    }
  }
}
