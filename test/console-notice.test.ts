/**
 * The console's notice of a command, carried to the next page in a signed cookie: shown only in the
 * session it was set in and within its minute, so a notice captured (another app on this host
 * receives the console's cookies: cookies are not kept apart by port) and sent again is not shown.
 */
import * as Cookies from "@effect/platform/Cookies"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { describe, expect, it } from "@effect/vitest"
import * as Flash from "../src/internal/http/console/flash.js"

const approved = { kind: "ok", text: "Step wire:1 of saga p1: approved by alice" } as const

/** The notice cookie a redirect sets for `session` at `now`, as a browser sends it back. */
const cookieOf = (session: string | undefined, now: number): string => {
  const response = Flash.set(HttpServerResponse.empty({ status: 303 }), approved, session, now)
  const [setCookie] = Cookies.toSetCookieHeaders(response.cookies)
  return setCookie!.split(";")[0]!
}

const requestWith = (cookie: string) =>
  HttpServerRequest.fromWeb(new Request("http://localhost/console", { headers: { cookie } }))

/** The `Set-Cookie` header a redirect with `notice` carries. */
const setCookieOf = (text: string): string => {
  const response = Flash.set(HttpServerResponse.empty({ status: 303 }), { kind: "conflict", text }, "session-a", 1_000)
  return Cookies.toSetCookieHeaders(response.cookies)[0]!
}

describe("a console notice", () => {
  it("stays under a browser's 4 KB cookie, however its text escapes in JSON: a longer text is cut with …", () => {
    for (const char of ['"', "\\", "\u0001", "é", "😀", "a"]) {
      const text = `The run's answer: rejected: ${char.repeat(3000)}`
      const header = setCookieOf(text)
      expect([char, Buffer.byteLength(header, "utf8") < 3584]).toEqual([char, true])
      const shown = Flash.of(requestWith(header.split(";")[0]!), "session-a", 1_000)
      expect(shown?.text.startsWith("The run's answer: rejected: ")).toBe(true)
      expect(shown?.text.endsWith("…")).toBe(true)
    }
    // A short one is carried whole.
    const whole = `rejected: ${'"'.repeat(500)}`
    expect(Flash.of(requestWith(setCookieOf(whole).split(";")[0]!), "session-a", 1_000)?.text).toBe(whole)
  })

  it("is shown in the session it was set in, until a minute after its command", () => {
    const cookie = cookieOf("session-a", 1_000)
    expect(Flash.of(requestWith(cookie), "session-a", 1_000)).toEqual(approved)
    expect(Flash.of(requestWith(cookie), "session-a", 61_000)).toEqual(approved)
    expect(Flash.of(requestWith(cookie), "session-a", 61_001)).toBeUndefined()
  })

  it("is not shown in another session, nor without one, and holds no session id", () => {
    const cookie = cookieOf("session-a", 1_000)
    expect(Flash.of(requestWith(cookie), "session-b", 1_000)).toBeUndefined()
    expect(Flash.of(requestWith(cookie), undefined, 1_000)).toBeUndefined()
    expect(Buffer.from(cookie.split("=")[1]!.split(".")[0]!, "base64url").toString("utf8")).not.toContain("session-a")
    // A server without sessions (insecure, on loopback) shows its own notices.
    expect(Flash.of(requestWith(cookieOf(undefined, 1_000)), undefined, 2_000)).toEqual(approved)
  })
})
