/**
 * Which sagas are stuck: no worker drives them and no `Recovery` ever will, so a person must act.
 * One rule for the CLI (`list` exits 1, `stuck: true`) and the HTTP API (`stuck`, `needsHuman`).
 *
 * @since 0.5.0
 */
import * as Effect from "effect/Effect"
import type { SagaRecord } from "../../Journal.js"
import { Journal } from "../../Journal.js"
import * as Lease from "./lease.js"
import { type Origin, originOf } from "./origin.js"

/** What the rule reads of a saga: a journal's row, or the HTTP API's copy of it. */
type Row = Pick<SagaRecord, "sagaId" | "status" | "lease">

/** What `stuckAmong` reads of a saga: its row, with when it was created. */
type ListedRow = Pick<SagaRecord, "sagaId" | "status" | "lease" | "createdAt">

/**
 * What the sagas left behind were started from, by journal, then by saga and the time its row was
 * created (a saga pruned and started again under its id is another): a saga's `SAGA_STARTED` never
 * changes, so a list read again (the console refreshed during an incident) reads no journal twice.
 * At most `MAX_REMEMBERED` a journal; past that it starts over.
 */
const origins = new WeakMap<Journal["Type"], Map<string, Origin>>()
const MAX_REMEMBERED = 100_000

const rememberedOf = (journal: Journal["Type"]): Map<string, Origin> => {
  let remembered = origins.get(journal)
  if (remembered === undefined) {
    remembered = new Map()
    origins.set(journal, remembered)
  }
  return remembered
}

/** What the saga of `row` was started from: remembered, or read from its journal (`undefined`: unreadable). */
const originRead = (journal: Journal["Type"], row: ListedRow) => {
  const remembered = rememberedOf(journal)
  const key = `${row.sagaId}\u0000${row.createdAt}`
  const known = remembered.get(key)
  if (known !== undefined) return Effect.succeed(known)
  return Effect.map(journal.read(row.sagaId), (entries) => {
    const origin = originOf(entries)
    if (origin !== undefined) {
      if (remembered.size >= MAX_REMEMBERED) remembered.clear()
      remembered.set(key, origin)
    }
    return origin
  })
}

/**
 * Whether no worker drives the saga and one should: running or compensating without a live lease
 * (`Lease.isUndriven`), or suspended by a shutdown and not taken since.
 *
 * @since 0.4.0
 * @category stuck
 */
export const isLeftBehind = (record: Omit<Row, "sagaId">, now: number): boolean =>
  Lease.isUndriven(record, now) ||
  (record.status === "suspended" && (record.lease === null || Lease.isLapsed(record.lease, now)))

/**
 * Whether a saga is stuck at `now`: left behind (`isLeftBehind`: `running` or `compensating` with no
 * live lease — none, or one that lapsed: its worker died —, or `suspended` by a shutdown and not
 * taken since) and started with `Saga.run`, so that no `Recovery` can resume it; it goes on only
 * when someone runs its program again or compensates it. A saga started from a definition (or an
 * explicit undo's run) in that state is between workers, not stuck: a `Recovery` pass takes it.
 *
 * @since 0.4.0
 * @category stuck
 */
export const isStuck = (record: Omit<Row, "sagaId">, origin: Origin | undefined, now: number): boolean =>
  origin?._tag === "Program" && isLeftBehind(record, now)

/**
 * The ids of the sagas among `rows` stuck at `now` (`isStuck`). Only a saga left behind is read, for
 * what it was started from, once (`originRead`): one a worker drives, or that is halted or finished,
 * costs nothing.
 *
 * @since 0.5.0
 * @category stuck
 */
export const stuckAmong = (rows: ReadonlyArray<ListedRow>, now: number) =>
  Effect.flatMap(Journal, (journal) =>
    Effect.map(
      Effect.forEach(
        rows.filter((row) => isLeftBehind(row, now)),
        (row) =>
          originRead(journal, row).pipe(
            Effect.map((origin) => (isStuck(row, origin, now) ? [row.sagaId] : [])),
            // A journal that does not decode says nothing of its origin: that saga is marked tampered.
            Effect.catchTag("JournalCorrupted", () => Effect.succeed([]))
          )
      ),
      (found): ReadonlySet<string> => new Set(found.flat())
    )
  )
