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
 * what it was started from: one a worker drives, or that is halted or finished, costs nothing.
 *
 * @since 0.5.0
 * @category stuck
 */
export const stuckAmong = (rows: ReadonlyArray<Row>, now: number) =>
  Effect.flatMap(Journal, (journal) =>
    Effect.map(
      Effect.forEach(
        rows.filter((row) => isLeftBehind(row, now)),
        (row) =>
          journal.read(row.sagaId).pipe(
            Effect.map((entries) => (isStuck(row, originOf(entries), now) ? [row.sagaId] : [])),
            // A journal that does not decode says nothing of its origin: that saga is marked tampered.
            Effect.catchTag("JournalCorrupted", () => Effect.succeed([]))
          )
      ),
      (found): ReadonlySet<string> => new Set(found.flat())
    )
  )
