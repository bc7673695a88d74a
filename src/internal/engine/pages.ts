/**
 * A page of sagas as `Saga.list` lists them (each with its `tampered` mark), most urgent first,
 * and how many the query selects: the saga service's twin of `list` that reads and verifies only
 * the page's sagas (`GET /api/sagas`, the console). Found by the service's `list` function.
 */
import type * as Effect from "effect/Effect"
import type { JournalError } from "../../Journal.js"
import type { Saga, SagaSummary } from "../../Saga.js"
import type { PageQuery } from "../journal/pagedRows.js"

/** A page of verified sagas and the count of all the query selects. */
export interface SagaPage {
  readonly sagas: ReadonlyArray<SagaSummary>
  readonly total: number
}

/** The page function of a saga service built by `makeSaga`, by its `list` function. */
export const sagaPages = new WeakMap<
  Saga["Type"]["list"],
  (query: PageQuery) => Effect.Effect<SagaPage, JournalError>
>()
