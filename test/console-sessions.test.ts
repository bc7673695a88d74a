import { describe, expect, it } from "@effect/vitest"
import * as Redacted from "effect/Redacted"
import {
  MAX_SESSIONS,
  MAX_SESSIONS_PER_TOKEN,
  SESSION_TTL_MILLIS,
  Sessions
} from "../src/internal/http/console/sessions.js"

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
    const tokens = Array.from({ length: MAX_SESSIONS / MAX_SESSIONS_PER_TOKEN }, (_, i) => Redacted.make(`t-${i}`))
    const ids = tokens.flatMap((each) => Array.from({ length: MAX_SESSIONS_PER_TOKEN }, () => sessions.signIn(each, 0)))
    expect(new Set(ids).size).toBe(MAX_SESSIONS)
    const newest = sessions.signIn(token, 1)
    expect(sessions.tokenOf(ids[0], 1)).toBeUndefined()
    expect(sessions.tokenOf(ids[1], 1)).toBe(tokens[0])
    expect(sessions.tokenOf(newest, 1)).toBe(token)
  })

  it("one token signing in again and again ends only its own oldest sessions, never another's", () => {
    const sessions = new Sessions()
    const bob = sessions.signIn(Redacted.make("bob-token"), 0)
    const alice = Array.from({ length: MAX_SESSIONS + 5 }, () => sessions.signIn(token, 0))
    expect(sessions.tokenOf(bob, 0)).toEqual(Redacted.make("bob-token"))
    const kept = alice.filter((id) => sessions.tokenOf(id, 0) !== undefined)
    expect(kept).toEqual(alice.slice(-MAX_SESSIONS_PER_TOKEN))
  })
})
