/**
 * Stores on which a step's `EXECUTED` may be held back to travel with the saga's next append (the
 * next step's `INTENT`, the saga's end), so that a step costs one commit instead of two: see
 * docs/storage.md, "EXECUTED with the saga's next entry". The in-memory journal allows it, and so
 * do the SQL store layers unless opened with `flushEveryEntry: true`; a journal or `SqlClient` of
 * the user's own never does. A journal is found by its `append` function, as in `synchronous.ts`.
 */
import type { Journal } from "../../Journal.js"

const journals = new WeakSet<Journal["Type"]["append"]>()
const clients = new WeakSet<object>()

/** Marks the store whose `append` this is as allowing a step's `EXECUTED` to be held back. */
export const allow = (append: Journal["Type"]["append"]): void => {
  journals.add(append)
}

/** Whether the store whose `append` this is allows a step's `EXECUTED` to be held back. */
export const allows = (append: Journal["Type"]["append"]): boolean => journals.has(append)

/** Marks `client` (the `SqlClient` a store layer opened) as allowing it for the journal made on it. */
export const allowOn = (client: object): void => {
  clients.add(client)
}

/** Whether `client` was opened to allow it. */
export const allowsOn = (client: object): boolean => clients.has(client)
