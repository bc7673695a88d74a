import { describe, expect, it } from "@effect/vitest"
import * as Redacted from "effect/Redacted"
import { MAX_SESSIONS, SESSION_TTL_MILLIS, Sessions } from "../src/internal/http/console/sessions.js"

const token = Redacted.make("alice-token")

describe("the console's sign-in sessions", () => {
  it("a session holds its token until it lapses, 12 hours after sign-in", () => {
    const sessions = new Sessions()
    const id = sessions.signIn(token, 1_000)
    expect(id).toMatch(/^[\w-]{43}$/)
    expect(sessions.tokenOf(id, 1_000 + SESSION_TTL_MILLIS - 1)).toBe(token)
    expect(sessions.tokenOf(id, 1_000 + SESSION_TTL_MILLIS)).toBeUndefined()
    expect(sessions.tokenOf(id, 1_000)).toBeUndefined()
  })

  it("an unknown id, none, or a signed-out session names no token", () => {
    const sessions = new Sessions()
    const id = sessions.signIn(token, 0)
    expect(sessions.tokenOf(undefined, 0)).toBeUndefined()
    expect(sessions.tokenOf("alice-token", 0)).toBeUndefined()
    sessions.signOut(id)
    expect(sessions.tokenOf(id, 0)).toBeUndefined()
    sessions.signOut(undefined)
  })

  it("each sign-in is a session of its own; past the limit, a sign-in ends the oldest", () => {
    const sessions = new Sessions()
    const ids = Array.from({ length: MAX_SESSIONS }, () => sessions.signIn(token, 0))
    expect(new Set(ids).size).toBe(MAX_SESSIONS)
    const newest = sessions.signIn(token, 1)
    expect(sessions.tokenOf(ids[0], 1)).toBeUndefined()
    expect(sessions.tokenOf(ids[1], 1)).toBe(token)
    expect(sessions.tokenOf(newest, 1)).toBe(token)
  })
})
