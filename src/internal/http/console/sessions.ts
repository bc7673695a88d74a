/**
 * The console's sign-in sessions. The cookie names a session, never the API token: browsers send a
 * host's cookies to every port of it, so another web app on the same host reads the cookie; a
 * session id is worth only this server's console, until it is signed out, it lapses, or the
 * server stops. The token stays in this process, and is checked again on every request, so a
 * token the `Authentication` layer no longer accepts ends its sessions.
 */
import { randomBytes } from "node:crypto"
import * as Redacted from "effect/Redacted"

/** How long a session lasts from its sign-in. */
export const SESSION_TTL_MILLIS = 12 * 60 * 60 * 1000

/**
 * The most sessions kept at once; a sign-in past it ends the oldest. Sessions lapse in the order
 * they began, so the oldest is the first to lapse anyway; one that lapsed is dropped when it is next
 * presented.
 */
export const MAX_SESSIONS = 10_000

/**
 * The most sessions one token keeps at once; its sign-in past it ends its own oldest. So one token's
 * holder, signing in again and again, cannot end the sessions of others by filling `MAX_SESSIONS`.
 */
export const MAX_SESSIONS_PER_TOKEN = 20

interface Session {
  readonly token: Redacted.Redacted<string>
  readonly expiresAt: number
}

/** The sessions of one console: signed in, looked up, signed out. */
export class Sessions {
  private readonly open = new Map<string, Session>()
  /** Each token's sessions, oldest first, by the token's text: a sign-in counts them without a scan. */
  private readonly byToken = new Map<string, Array<string>>()

  /** A new session for `token`, from `now` on: its id, for the cookie. */
  signIn(token: Redacted.Redacted<string>, now: number): string {
    const own = this.byToken.get(Redacted.value(token)) ?? []
    if (own.length >= MAX_SESSIONS_PER_TOKEN) this.signOut(own[0])
    else if (this.open.size >= MAX_SESSIONS) this.signOut(this.open.keys().next().value)
    const id = randomBytes(32).toString("base64url")
    this.open.set(id, { token, expiresAt: now + SESSION_TTL_MILLIS })
    const ids = this.byToken.get(Redacted.value(token))
    if (ids === undefined) this.byToken.set(Redacted.value(token), [id])
    else ids.push(id)
    return id
  }

  /** The token of the session `id` names at `now`; `undefined` for none, or one that has lapsed. */
  tokenOf(id: string | undefined, now: number): Redacted.Redacted<string> | undefined {
    if (id === undefined) return undefined
    const session = this.open.get(id)
    if (session === undefined) return undefined
    if (session.expiresAt > now) return session.token
    this.signOut(id)
    return undefined
  }

  /** Ends the session `id` names, if any. */
  signOut(id: string | undefined): void {
    if (id === undefined) return
    const session = this.open.get(id)
    if (session === undefined) return
    this.open.delete(id)
    const value = Redacted.value(session.token)
    const ids = this.byToken.get(value)!
    ids.splice(ids.indexOf(id), 1)
    if (ids.length === 0) this.byToken.delete(value)
  }
}
