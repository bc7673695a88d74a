/**
 * Appends a store can do at once, with no `Effect` around them: the in-memory journal's, and the
 * SQLite store's on its own connection while nothing else uses it (sql/sqliteAppend.ts). The
 * writer takes that path when nobody else holds its lock, which saves most of what an append costs
 * the engine. A store is found by its `append` function itself, so that a journal wrapped by
 * replacing `append` (a test's fault injection, a user's decorator) is always called as wrapped.
 */
import type * as Either from "effect/Either"
import type { AppendError, Draft, Entry, Expected, Holder, Journal } from "../../Journal.js"

/**
 * An append done at once at the time `millis`: the entries appended, or why not; `undefined` when
 * the store cannot do it at once right now (nothing was written: the caller takes `append`).
 */
export type AppendAtOnce = (
  sagaId: string,
  expected: Expected,
  drafts: ReadonlyArray<Draft>,
  holder: Holder | undefined,
  millis: number
) => Either.Either<ReadonlyArray<Entry>, AppendError> | undefined

/** The synchronous twin of each `append` that has one. */
export const appendsAtOnce = new WeakMap<Journal["Type"]["append"], AppendAtOnce>()
