/**
 * A saga's lease as the CLI's `list` and `show` and the HTTP console print it: who drives the saga
 * and until when, that the lease lapsed (the worker holding it died or stopped renewing), or that no
 * worker drives a saga that is running or compensating; and whether a step with no outcome is in
 * flight (a live lease drives its saga) or unknown.
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
 * The lease of the worker driving the saga at `now`: held and not lapsed, whatever the status (a
 * command on the saga is refused while it holds, `LeaseHeld`); `undefined` when none is live.
 *
 * @since 0.4.0
 * @category leases
 */
export const liveLease = (record: Leased, now: number): NonNullable<SagaRecord["lease"]> | undefined =>
  record.lease !== null && !isLapsed(record.lease, now) ? record.lease : undefined

/**
 * Whether a step of the saga with `INTENT` and no outcome is in flight at `now`: the saga is running
 * and a live lease drives it, so its worker is running the step and journals its outcome when it
 * answers. Only once that lease lapsed (or there is none) is its outcome unknown, to be resolved.
 *
 * @since 0.4.0
 * @category leases
 */
export const isInFlight = (record: Leased, now: number): boolean =>
  record.status === "running" && liveLease(record, now) !== undefined

/**
 * What an operator is told of a step in flight (`isInFlight`): who runs it, until when.
 *
 * @since 0.4.0
 * @category leases
 */
export const inFlight = (lease: NonNullable<SagaRecord["lease"]>): string =>
  `running now, by ${lease.owner}, lease until ${lease.expiresAt}`

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
