/**
 * Commits that may return before their flush: a transaction that holds only steps' `EXECUTED`
 * entries, on a client opened to allow it. The next flushed commit (the next `INTENT`, the saga's
 * end) makes them durable with it. See docs/storage.md, "EXECUTED without waiting for its flush".
 */
import * as FiberRef from "effect/FiberRef"
import type { Draft } from "../../Journal.js"

const allowing = new WeakSet<object>()

/** Marks `client` (the `SqlClient` a store layer opened) as allowing unflushed commits. */
export const allow = (client: object): void => {
  allowing.add(client)
}

/** Whether `client` was opened to allow unflushed commits (a client of the user's own never is). */
export const isAllowed = (client: object): boolean => allowing.has(client)

/** `true` around a transaction that may commit unflushed; the SQLite client's transaction reads it. */
export const currentCommitUnflushed: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/**
 * Whether an append of `drafts` may commit unflushed: it holds only steps' `EXECUTED` entries of a
 * tool's run. An operator's resolution (an `EXECUTED` with `resolvedBy`) is flushed, as is every
 * other phase. A result that happens to hold the text `"resolvedBy":` is flushed too (safe side).
 */
export const mayCommitUnflushed = (drafts: ReadonlyArray<Pick<Draft, "phase" | "stepId" | "payload">>): boolean =>
  drafts.length > 0 &&
  drafts.every(
    (draft) => draft.phase === "EXECUTED" && draft.stepId !== null && draft.payload?.includes(`"resolvedBy":`) !== true
  )
