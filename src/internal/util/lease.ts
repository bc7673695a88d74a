/**
 * A saga's lease as the CLI's `list` and `show` and the HTTP console print it: who drives the saga
 * and until when, that the lease lapsed (the worker holding it died or stopped renewing), or that no
 * worker drives a saga that is running or compensating.
 *
 * @since 0.4.0
 */
import type { SagaRecord } from "../../Journal.js"

/** What the wording reads of a saga: a journal's row, or the HTTP API's copy of it. */
type Leased = Pick<SagaRecord, "status" | "lease">

/** The statuses in which a worker should be driving the saga: without a live lease, none is. */
const driven: ReadonlySet<SagaRecord["status"]> = new Set(["running", "compensating"])

/**
 * Whether the lease lapsed at `now` (epoch milliseconds): held, and ending at or before now.
 *
 * @since 0.4.0
 * @category leases
 */
export const isLapsed = (lease: NonNullable<SagaRecord["lease"]>, now: number): boolean =>
  Date.parse(lease.expiresAt) <= now

/**
 * Whether the saga is running or compensating and no worker drives it at `now`: it holds no lease,
 * or one that lapsed. It goes on only when a worker takes it (`Recovery` with its definition,
 * `Saga.resume`) or an operator compensates it.
 *
 * @since 0.4.0
 * @category leases
 */
export const isUndriven = (record: Leased, now: number): boolean =>
  driven.has(record.status) && (record.lease === null || isLapsed(record.lease, now))

/**
 * The lease as text: `w1 until T`, `w1 lapsed at T`, `none`; with `: no worker is driving it`
 * when the saga should be driven and is not.
 *
 * @since 0.4.0
 * @category leases
 */
export const describe = (record: Leased, now: number): string => {
  const lease = record.lease
  const held =
    lease === null ? "none" : `${lease.owner} ${isLapsed(lease, now) ? "lapsed at" : "until"} ${lease.expiresAt}`
  return isUndriven(record, now) ? `${held}: no worker is driving it` : held
}

/**
 * The lease as text (`describe`) when it is worth a reader's notice: it lapsed, or a saga that should
 * be driven holds none; `undefined` otherwise.
 *
 * @since 0.4.0
 * @category leases
 */
export const notice = (record: Leased, now: number): string | undefined =>
  (record.lease !== null && isLapsed(record.lease, now)) || isUndriven(record, now) ? describe(record, now) : undefined
