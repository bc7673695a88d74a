/**
 * One page of saga rows, what needs a person first, and how many rows the query selects in all:
 * what `GET /api/sagas` and the console list. A store answers it with one query for the page and
 * one count (the SQL stores), so that a page reads, decodes and verifies only its own rows; any
 * other store's rows are filtered, ordered and sliced in memory, unverified.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Journal, SagaRecord, SagaStatus } from "../../Journal.js"
import { byCodePoints } from "../util/codePoints.js"
import { given } from "../util/printable.js"
import type { JournalError } from "./errors.js"
import { listRows, type UndecodableRow } from "./storedRows.js"

/** Which rows, and which page of them. */
export interface PageQuery {
  /** Only these statuses (none: no row). */
  readonly status?: ReadonlyArray<SagaStatus> | undefined
  /** Only rows last written before this time (as `ListFilter.updatedBefore`). */
  readonly updatedBefore?: string | undefined
  /** Only rows whose saga id holds this text (case-sensitive). */
  readonly search?: string | undefined
  /** Most urgent first (the default), or least recently updated first, as `list` orders rows. */
  readonly order?: "urgency" | "updatedAt" | undefined
  readonly offset: number
  readonly limit: number
}

/** A page of rows, each decoded or said why not, and how many the query selects without the page. */
export interface RowPage {
  readonly rows: ReadonlyArray<Either.Either<SagaRecord, UndecodableRow>>
  readonly total: number
}

/** The statuses in the order a person should look at them; every other status after them. */
export const urgency: ReadonlyArray<SagaStatus> = ["compensation_failed", "needs_attention", "awaiting_approval"]

const rank = (status: string): number => {
  const at = urgency.indexOf(status as SagaStatus)
  return at === -1 ? urgency.length : at
}

const isWhole = (value: unknown, least: number): boolean => Number.isSafeInteger(value) && (value as number) >= least

/**
 * Why `offset` and `limit` name no page, `undefined` when they do: whole numbers, `offset` from 0,
 * `limit` from 1 (a caller's `NaN` or `-1` is said as such, not left to each store to read).
 */
export const pageProblem = (page: { readonly offset: unknown; readonly limit: unknown }): string | undefined =>
  !isWhole(page.offset, 0)
    ? `offset must be a whole number of 0 or more, not ${given(page.offset)}`
    : !isWhole(page.limit, 1)
      ? `limit must be a whole number of 1 or more, not ${given(page.limit)}`
      : undefined

/** By urgency of the row's status, then the most recently updated, then saga id (code points). */
export const byUrgency = (a: SagaRecord, b: SagaRecord): number =>
  rank(a.status) - rank(b.status) || byCodePoints(b.updatedAt, a.updatedAt) || byCodePoints(a.sagaId, b.sagaId)

/** The page function of a store, found by its `list` function (as `storedRows.ts` finds its twins). */
export const rowPages = new WeakMap<
  Journal["Type"]["list"],
  (query: PageQuery) => Effect.Effect<RowPage, JournalError>
>()

/** The rows `query` selects, one page of them, in its order (most urgent first unless told); `Saga.listPage` checked its page. */
export const pageRows = (journal: Journal["Type"], query: PageQuery): Effect.Effect<RowPage, JournalError> => {
  const own = rowPages.get(journal.list)
  if (own !== undefined) return own(query)
  const search = query.search ?? ""
  return Effect.map(listRows(journal, { status: query.status, updatedBefore: query.updatedBefore }), (rows) => {
    // A store without a page of its own holds only rows that decode.
    const selected = rows
      .filter(Either.isRight)
      .map((row) => row.right)
      .filter((row) => row.sagaId.includes(search))
    // `list` gave them least recently updated first.
    if (query.order !== "updatedAt") selected.sort(byUrgency)
    return {
      rows: selected.slice(query.offset, query.offset + query.limit).map(Either.right),
      total: selected.length
    }
  })
}
