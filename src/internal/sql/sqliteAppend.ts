/**
 * SQLite on the store's own connection: an append done at once, in the caller's fiber (the
 * journal's synchronous twin, journal/synchronous.ts), while nothing else uses the connection and
 * appends arrive one at a time. Otherwise it is left to group commit, whose batches a flush per
 * append would lose when many sagas append together.
 */
import * as Cause from "effect/Cause"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { AppendError, Draft, Entry, Expected, Holder } from "../../Journal.js"
import type { AppendAtOnce } from "../journal/synchronous.js"
import type { Direct } from "./sqliteDriver.js"

/** Of this many appends in a row that could be done at once, the last goes through group commit. */
export const PROBE_EVERY = 16

/**
 * Whether appends arrive one at a time: group commit's last batch held one append. While they do,
 * appends are done at once, and every `PROBE_EVERY`th goes through group commit all the same, so
 * that a batch says again whether others arrive with it.
 */
export class Pace {
  private alone = false
  private sinceProbe = 0

  /** Group commit cut a batch of `size` appends. */
  observe(size: number): void {
    this.alone = size === 1
    this.sinceProbe = 0
  }

  /** Whether the next append may be done at once (else it goes through group commit). */
  mayGoAtOnce(): boolean {
    if (!this.alone) return false
    this.sinceProbe++
    return this.sinceProbe < PROBE_EVERY
  }
}

/** What the journal gives the twin: its connection, its group commit, and how it writes an append. */
export interface Store<Request> {
  readonly direct: Direct
  /** Whether group commit has no batch forming or being written. */
  readonly groupIdle: () => boolean
  readonly pace: Pace
  /** The append's request, its entries built (seq, time, hashes), or why it cannot be stored. */
  readonly prepare: (
    sagaId: string,
    expected: Expected,
    drafts: ReadonlyArray<Draft>,
    holder: Holder | undefined,
    millis: number
  ) => Either.Either<Request, AppendError>
  /** Writes `request` in a transaction of its own, synchronously; throws on a store failure, rolled back. */
  readonly write: (request: Request) => Exit.Exit<ReadonlyArray<Entry>, AppendError>
  /** The typed error for a store failure of `request`'s transaction. */
  readonly failed: (request: Request, error: unknown) => AppendError
}

/**
 * The twin of the journal's `append`: `undefined` (nothing written) unless group commit is idle,
 * the connection is idle (no transaction open, nobody holding or waiting for it: an append inside
 * the caller's own transaction takes `append`, which writes it there) and appends arrive one at a
 * time. Synchronous from the first statement to `COMMIT`, so nothing can interrupt it half-way.
 */
export const atOnce =
  <Request>(store: Store<Request>): AppendAtOnce =>
  (sagaId, expected, drafts, holder, millis) => {
    if (!store.groupIdle() || !store.direct.idle() || !store.pace.mayGoAtOnce()) return undefined
    const request = store.prepare(sagaId, expected, drafts, holder, millis)
    if (Either.isLeft(request)) return Either.left(request.left)
    let outcome: Exit.Exit<ReadonlyArray<Entry>, AppendError>
    try {
      outcome = store.write(request.right)
    } catch (error) {
      return Either.left(store.failed(request.right, error))
    }
    if (Exit.isSuccess(outcome)) return Either.right(outcome.value)
    return Either.left(Option.getOrThrow(Cause.failureOption(outcome.cause)))
  }
