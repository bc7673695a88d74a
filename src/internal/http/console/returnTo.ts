/**
 * Where sign-in leads a person: back to the console page they asked for before it (a saga's page
 * opened from an alert), carried through the sign-in form as `next`. Only a path of this console is
 * taken, exactly as a URL parser reads it: nothing that leaves the server (`//evil.example`,
 * `https://…`), steps out of `/console` (`/console/../api`, `/console/%2e%2e/api`) or is read
 * otherwise than it is written (a backslash, a tab, a line end, a character sent unencoded);
 * anything else leads to the inbox, `/console`. No open redirect.
 */

/**
 * The inbox: where sign-in leads when no page, or no page it takes, was asked for.
 *
 * @since 0.5.0
 * @category sign-in
 */
export const HOME = "/console"

const LOGIN = "/console/login"

/** A base no request names: a path that parses to another origin left this one. */
const BASE = "http://console.invalid"

/** Whether a path names a page of the console (not the sign-in page, which would lead back to itself). */
const isConsolePage = (pathname: string): boolean =>
  (pathname === HOME || pathname.startsWith(`${HOME}/`)) && pathname !== LOGIN && !pathname.startsWith(`${LOGIN}/`)

/**
 * The page sign-in leads to for `asked` (a path with its query, as a request names it): `asked`
 * itself when it is a console page of this server, read as written; else `HOME`.
 *
 * @since 0.5.0
 * @category sign-in
 */
export const pageOf = (asked: string | null | undefined): string => {
  if (asked === null || asked === undefined || !asked.startsWith("/") || asked.includes("\\")) return HOME
  let url: URL
  try {
    url = new URL(asked, BASE)
  } catch {
    return HOME
  }
  // What a parser would change (`..`, `%2e`, a tab, a character sent unencoded) is refused, not followed.
  const read = `${url.pathname}${url.search}`
  return url.origin === BASE && read === asked && isConsolePage(url.pathname) ? read : HOME
}

/**
 * The sign-in page that leads back to `asked` once signed in (`HOME` needs no `next`).
 *
 * @since 0.5.0
 * @category sign-in
 */
export const loginFor = (asked: string): string => {
  const page = pageOf(asked)
  return page === HOME ? LOGIN : `${LOGIN}?next=${encodeURIComponent(page)}`
}

/**
 * The page a request asks for, as `pageOf` takes it: its path and query.
 *
 * @since 0.5.0
 * @category sign-in
 */
export const askedBy = (requestUrl: string): string => {
  try {
    const url = new URL(requestUrl, BASE)
    return url.origin === BASE ? `${url.pathname}${url.search}` : HOME
  } catch {
    return HOME
  }
}
