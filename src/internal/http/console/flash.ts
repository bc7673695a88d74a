/**
 * The notice of the last command, carried from the form post to the page it leads to in a cookie
 * that lives a minute and is read once: no text in a link is ever shown as the console's own answer.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Notice, NoticeKind } from "./html.js"

const COOKIE = "effect_saga_notice"

const kinds: ReadonlyArray<string> = ["ok", "conflict", "forbidden", "error"]

/** A cookie holds about 4 KB: a longer notice (ids near their limit) is cut. */
const MAX_TEXT_BYTES = 2400

const clip = (text: string): string => {
  if (Buffer.byteLength(text, "utf8") <= MAX_TEXT_BYTES) return text
  let kept = ""
  for (const char of text) {
    if (Buffer.byteLength(kept + char, "utf8") > MAX_TEXT_BYTES - 3) break
    kept += char
  }
  return `${kept}…`
}

const options = { httpOnly: true, sameSite: "strict", path: "/console" } as const

/**
 * `response` (a redirect after a command) with `notice` for the next page.
 *
 * @since 0.2.0
 * @category notices
 */
export const set = (response: HttpServerResponse.HttpServerResponse, notice: Notice) =>
  HttpServerResponse.unsafeSetCookie(
    response,
    COOKIE,
    Buffer.from(JSON.stringify({ kind: notice.kind, text: clip(notice.text) }), "utf8").toString("base64url"),
    { ...options, maxAge: "60 seconds" }
  )

/**
 * The notice the request's cookie carries, if it holds one.
 *
 * @since 0.2.0
 * @category notices
 */
export const of = (request: HttpServerRequest.HttpServerRequest): Notice | undefined => {
  const value = request.cookies[COOKIE]
  if (value === undefined || value === "") return undefined
  try {
    const { kind, text } = JSON.parse(Buffer.from(value, "base64url").toString("utf8")) as Record<string, unknown>
    return typeof kind === "string" && kinds.includes(kind) && typeof text === "string"
      ? { kind: kind as NoticeKind, text }
      : undefined
  } catch {
    return undefined
  }
}

/**
 * `response` with the notice cookie gone: a notice is shown once.
 *
 * @since 0.2.0
 * @category notices
 */
export const clear = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.expireCookie(response, COOKIE, options)
