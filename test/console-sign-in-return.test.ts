/**
 * Sign-in leads back to the console page the person asked for (a saga's page opened from an alert
 * while signed out), carried through the sign-in form as `next`: only a path of this console, read
 * as written, is followed; anything else (another site, a path out of `/console`, a backslash, an
 * encoded `..`) leads to the inbox. No open redirect.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { answered, fields, postForm } from "./fixtures/console-forms.js"
import { freshDb, serveOn, tokens } from "./fixtures/http-saga.js"

/** A page asked for while signed out: where the server sends the person. */
const signedOut = (baseUrl: string, path: string) =>
  Effect.promise(() => fetch(`${baseUrl}${path}`, { redirect: "manual" }).then(answered))

/** The sign-in form posted as alice, with `next` as the form carries it. */
const signIn = (baseUrl: string, next: string, token: string = tokens.alice) =>
  postForm(baseUrl, "/console/login", fields({ token, next }), { cookie: "" })

/** Where a page leads: nothing but `/console` and the paths under it, on this server. */
const refused = [
  "//evil.example/console",
  "///evil.example",
  "http://evil.example/console",
  "https:/console",
  "/\\evil.example",
  "\\\\evil.example",
  "/console\\..\\api",
  "/console/../api/sagas",
  "/console/%2e%2e/api/sagas",
  "/console/sagas/%2E%2E/%2E%2E/api",
  "/%2e/console",
  "/console/\tsagas",
  "/console/sagas/x\r\nSet-Cookie: a=b",
  "/consolex",
  "/api/sagas",
  "javascript:alert(1)",
  "/console/login",
  "console/sagas",
  ""
]

describe("the console's sign-in returns to the page asked for", () => {
  it.scopedLive("a saga's page asked for while signed out: sign-in leads back to it, with its query", () =>
    Effect.gen(function* () {
      const baseUrl = yield* serveOn(freshDb("console-return"))
      const asked = "/console/sagas/payout%2F1?offset=0"
      const away = yield* signedOut(baseUrl, asked)
      expect([away.status, away.location]).toEqual([303, `/console/login?next=${encodeURIComponent(asked)}`])
      const form = yield* Effect.promise(() => fetch(`${baseUrl}${away.location}`).then(answered))
      expect(form.text).toContain(`<input type="hidden" name="next" value="${asked}">`)
      const wrong = yield* signIn(baseUrl, asked, "not-a-token")
      expect(wrong.status).toBe(401)
      expect(wrong.text).toContain(`<input type="hidden" name="next" value="${asked}">`)
      const back = yield* signIn(baseUrl, asked)
      expect([back.status, back.location]).toEqual([303, asked])
      // The inbox asks for nothing more: its sign-in is as it was.
      expect((yield* signedOut(baseUrl, "/console")).location).toBe("/console/login")
      expect((yield* signIn(baseUrl, "")).location).toBe("/console")
    })
  )

  it.scopedLive("a path that is not this console's, or is read otherwise than written, leads to the inbox", () =>
    Effect.gen(function* () {
      const baseUrl = yield* serveOn(freshDb("console-return-refused"))
      for (const next of refused) {
        const answer = yield* signIn(baseUrl, next)
        expect([next, answer.status, answer.location]).toEqual([next, 303, "/console"])
        const form = yield* Effect.promise(() =>
          fetch(`${baseUrl}/console/login?next=${encodeURIComponent(next)}`).then(answered)
        )
        expect([next, form.text.includes('name="next"')]).toEqual([next, false])
      }
    })
  )
})
