/**
 * The notice of the last command, carried from the form post to the page it leads to in a cookie
 * that lives a minute and is read once: no text in a link is ever shown as the console's own answer.
 * The cookie is signed with a key of this process: cookies are not kept apart by port, so another
 * web app on the same host can set one, and a notice this server did not set is not shown. The
 * signed notice holds its end and the session it was set in (a MAC of the session's id, never the
 * id): one captured and sent again is not shown after its minute, nor in another session.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Notice, NoticeKind } from "./html.js"

const COOKIE = "effect_saga_notice"

const kinds: ReadonlyArray<string> = ["ok", "conflict", "forbidden", "error"]

/**
 * A browser drops a cookie over about 4 KB: a notice whose text takes more than this in the
 * cookie's JSON (ids near their limit, a reason of quotes, each escaped) is cut, so that the
 * cookie, its text in base64url beside its end, session and MAC, stays under 3.5 KB.
 */
const MAX_TEXT_BYTES = 2400

/** The UTF-8 bytes `text` takes inside a JSON string: a quote, backslash or control takes two or six. */
const jsonBytes = (text: string): number => Buffer.byteLength(JSON.stringify(text), "utf8") - 2

const clip = (text: string): string => {
  if (jsonBytes(text) <= MAX_TEXT_BYTES) return text
  let kept = ""
  let bytes = 0
  for (const char of text) {
    bytes += jsonBytes(char)
    if (bytes > MAX_TEXT_BYTES - 3) break
    kept += char
  }
  return `${kept}…`
}

const options = { httpOnly: true, sameSite: "strict", path: "/console" } as const

/** How long a notice may be shown after its command. */
const NOTICE_MILLIS = 60_000

const signingKey = randomBytes(32)

const macOf = (body: string): Buffer => createHmac("sha256", signingKey).update(body).digest()

/** Which session a notice is for: a MAC of the session's id (none: `""`), so the notice never holds the id. */
const sessionTag = (session: string | undefined): string => macOf(`session\n${session ?? ""}`).toString("base64url")

/** The notice's text in base64url, then `.` and its MAC. */
const signed = (body: string): string => `${body}.${macOf(body).toString("base64url")}`

/** The body of a value this process signed; `undefined` for any other. */
const verified = (value: string): string | undefined => {
  const [body, mac, ...more] = value.split(".")
  if (body === undefined || mac === undefined || more.length > 0) return undefined
  const given = Buffer.from(mac, "base64url")
  const expected = macOf(body)
  return given.length === expected.length && timingSafeEqual(given, expected) ? body : undefined
}

/**
 * `response` (a redirect after a command) with `notice` for the next page of `session` (the id in
 * the session cookie, if any), shown until a minute after `now`.
 *
 * @since 0.2.0
 * @category notices
 */
export const set = (
  response: HttpServerResponse.HttpServerResponse,
  notice: Notice,
  session: string | undefined,
  now: number
) => {
  const body = { kind: notice.kind, text: clip(notice.text), until: now + NOTICE_MILLIS, for: sessionTag(session) }
  return HttpServerResponse.unsafeSetCookie(
    response,
    COOKIE,
    signed(Buffer.from(JSON.stringify(body), "utf8").toString("base64url")),
    { ...options, maxAge: "60 seconds" }
  )
}

/**
 * The notice the request's cookie carries, if it holds one this process signed for `session` (the
 * id in the request's session cookie, if any) whose minute has not passed at `now`.
 *
 * @since 0.2.0
 * @category notices
 */
export const of = (
  request: HttpServerRequest.HttpServerRequest,
  session: string | undefined,
  now: number
): Notice | undefined => {
  const value = request.cookies[COOKIE]
  const body = value === undefined ? undefined : verified(value)
  if (body === undefined) return undefined
  try {
    const {
      kind,
      text,
      until,
      for: owner
    } = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Record<string, unknown>
    const current = typeof until === "number" && now <= until && owner === sessionTag(session)
    return current && typeof kind === "string" && kinds.includes(kind) && typeof text === "string"
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
