/**
 * A request's target as the router reads it. The router (find-my-way) matches a path however it is
 * written: in any case (`/API/…`), with duplicate slashes (`//api/…`), in absolute form
 * (`http://host/api/…`), with percent-encoded letters (`/%61pi/…`), its path ended by `?`, `;` or
 * `#`. What the server decides about a request before the router sees it (whether to answer with
 * the API's JSON error body) reads the target the same way.
 */

/**
 * The longest path parameter the API routes, in characters as sent: a journal id at its limit
 * (`Saga.MAX_JOURNAL_ID_BYTES`, 1024 bytes), each byte percent-encoded.
 *
 * @since 0.2.0
 * @category limits
 */
export const MAX_PATH_PARAMETER_LENGTH = 3 * 1024

/** What the router takes off an absolute-form target (find-my-way's `FULL_PATH_REGEXP`). */
const ABSOLUTE_FORM = /^https?:\/\/.*?\//

/** The path of a target as sent: its absolute form's scheme and host taken off, its query cut. */
const sentPath = (url: string): string => {
  const path = url.charCodeAt(0) === 47 ? url : url.replace(ABSOLUTE_FORM, "/")
  const end = path.search(/[?;#]/)
  return end === -1 ? path : path.slice(0, end)
}

/**
 * The path the router matches for `url`: duplicate slashes collapsed, percent-encoding decoded
 * where it can be, lower-cased.
 */
const routedPath = (url: string): string => {
  const path = sentPath(url).replace(/\/\/+/g, "/")
  try {
    return decodeURI(path).toLowerCase()
  } catch {
    return path.toLowerCase()
  }
}

/**
 * Whether the router would take `url` for a path of the API (`/api` and below), however it is written.
 *
 * @since 0.3.0
 * @category targets
 */
export const isApiTarget = (url: string): boolean => {
  const path = routedPath(url)
  return path === "/api" || path.startsWith("/api/")
}

/** The path of `url` as sent, without its query: what a message may name (cut by its caller). */
export const pathOf = (url: string): string => sentPath(url)

/**
 * The length, in characters as sent (each percent-encoded byte three), of the longest segment of
 * `url`'s path: a path parameter is one segment (a `/` in an id is sent as `%2F`).
 *
 * @since 0.3.0
 * @category targets
 */
export const longestSegment = (url: string): number => {
  let longest = 0
  for (const segment of sentPath(url).split("/")) longest = Math.max(longest, segment.length)
  return longest
}
