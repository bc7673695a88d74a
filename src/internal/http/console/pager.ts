/**
 * The links between the pages of a console list (the inbox, the sagas): the page before and the
 * page after, each keeping the list's other query parameters.
 */
import { attribute } from "./html.js"

/**
 * Where a list stands: how many it selects in all, and the page shown.
 *
 * @since 0.5.0
 * @category views
 */
export interface Position {
  readonly total: number
  readonly offset: number
  readonly limit: number
}

const hrefOf = (path: string, query: Readonly<Record<string, string>>, offset: number): string => {
  const params = new URLSearchParams(Object.entries(query).filter(([, value]) => value !== ""))
  if (offset > 0) params.set("offset", String(offset))
  const search = params.toString()
  return attribute(search === "" ? path : `${path}?${search}`)
}

/**
 * Whether the page starts past the list's last item (an `offset` of 301 with 301 in all), so it
 * shows none of them.
 *
 * @since 0.5.0
 * @category views
 */
export const isPastEnd = (position: Position): boolean => position.offset > 0 && position.offset >= position.total

/** The offset of the list's last page, as the "next" links step through them from 0 (0 when the list is empty). */
const lastPageOf = ({ total, limit }: Position): number => (total === 0 ? 0 : Math.floor((total - 1) / limit) * limit)

/** The link back from a page past the end: to the last page, or to the first when there is none. */
const backLink = (path: string, position: Position, query: Readonly<Record<string, string>>): string =>
  `<a rel="prev" href="${hrefOf(path, query, lastPageOf(position))}">${position.total === 0 ? "first page" : "last page"}</a>`

/**
 * The "previous" and "next" links of a list at `path` (none when it fits on one page). A page past
 * the end links back to the last page (the first, when the list is empty), not to one more page
 * past the end.
 *
 * @since 0.5.0
 * @category views
 */
export const pager = (path: string, position: Position, query: Readonly<Record<string, string>> = {}): string => {
  const { total, offset, limit } = position
  const links = [
    isPastEnd(position)
      ? backLink(path, position, query)
      : offset > 0
        ? `<a rel="prev" href="${hrefOf(path, query, Math.max(0, offset - limit))}">previous ${limit}</a>`
        : "",
    offset + limit < total ? `<a rel="next" href="${hrefOf(path, query, offset + limit)}">next ${limit}</a>` : ""
  ].filter((link) => link !== "")
  return links.length === 0 ? "" : `<nav class="actions" aria-label="pages">${links.join(" ")}</nav>`
}
