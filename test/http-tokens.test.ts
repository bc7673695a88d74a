import { describe, expect, it } from "@effect/vitest"
import { Config, ConfigError, Effect, Redacted } from "effect"
import type { Principal } from "../src/Authority.js"
import * as SagaApi from "../src/SagaApi.js"

/** The principal `SagaApi.layerTokens` over `pairs` names for `token`, or the layer's configuration error. */
const authenticate = (pairs: string, token: string) =>
  Effect.flatMap(
    SagaApi.Authentication,
    // A middleware may read the request it runs in; the token layer reads only the token.
    (authentication) => authentication.bearer(Redacted.make(token)) as Effect.Effect<Principal, SagaApi.Unauthenticated>
  ).pipe(Effect.provide(SagaApi.layerTokens(Config.succeed(Redacted.make(pairs)))))

describe("SagaApi.layerTokens", () => {
  it.effect("each principal's token authenticates as that principal", () =>
    Effect.gen(function* () {
      expect(yield* authenticate("alice=A-token, bob=B-token", "B-token")).toEqual({ id: "bob" })
      expect(yield* authenticate("alice=A-token\nalice=A-next", "A-next")).toEqual({ id: "alice" })
    })
  )

  it.effect("a token given twice is refused when the layer is built, and the error shows no token", () =>
    Effect.gen(function* () {
      for (const pairs of [
        "alice=T-secret,bob=T-secret",
        "alice=T-secret,alice=T-secret",
        "a=x, b=T-secret\nc=T-secret"
      ]) {
        const error = yield* Effect.flip(authenticate(pairs, "T-secret"))
        expect(ConfigError.isConfigError(error)).toBe(true)
        const text = String(error)
        expect(text).toMatch(/API tokens: pairs \d and \d give the same token: a token names one principal/)
        expect(text).not.toContain("T-secret")
      }
    })
  )

  it.effect("a principal the journal could not record as deciding is refused when the layer is built", () =>
    Effect.gen(function* () {
      for (const [pairs, reason] of [
        [
          "alice=A-token, b\tob=B-token",
          "pair 2 names a principal that cannot be one: it holds a control character (U+0009) at index 1"
        ],
        [
          `${"x".repeat(300)}=X-token`,
          "pair 1 names a principal that cannot be one: it is 300 UTF-8 bytes, over the limit of 256"
        ]
      ] as const) {
        const error = yield* Effect.flip(authenticate(pairs, "A-token"))
        expect(ConfigError.isConfigError(error)).toBe(true)
        expect(String(error)).toContain(`API tokens: ${reason}`)
        expect(String(error)).not.toMatch(/[ABX]-token/)
      }
    })
  )

  it.effect("a token no bearer header can carry is refused when the layer is built, and the error shows no token", () =>
    Effect.gen(function* () {
      for (const [pairs, pair] of [
        ["uml=tok€n-123456", 1],
        ["alice=A-token, bob=B tok", 2],
        ["alice=A-token\nbob=B-tok\u00e9", 2],
        ["alice=A-\u0007token", 1]
      ] as const) {
        const error = yield* Effect.flip(authenticate(pairs, "A-token"))
        expect(ConfigError.isConfigError(error)).toBe(true)
        expect(String(error)).toContain(
          `API tokens: pair ${pair} gives a token no Authorization header can carry: a token is visible ASCII (letters, digits, punctuation; no space, no other character)`
        )
        expect(String(error)).not.toMatch(/tok€n|[AB][- ]tok/)
      }
      // Every visible ASCII character but the comma (which separates pairs) may be in a token.
      const visible = Array.from({ length: 0x7e - 0x20 }, (_, i) => String.fromCharCode(0x21 + i))
        .filter((char) => char !== ",")
        .join("")
      expect(yield* authenticate(`alice=${visible}`, visible)).toEqual({ id: "alice" })
    })
  )
})
