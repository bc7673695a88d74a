/** The keyed primitives behind journal MACs and sealed receipts (node:crypto, no dependency). */
import * as crypto from "node:crypto"
import * as Redacted from "effect/Redacted"
import type { KeyRing } from "../../Keys.js"

/** How a MAC or a seal checks out against a key ring. */
export type Check = "ok" | "unknown-key" | "mismatch" | "malformed"

const hmacHex = (key: Buffer, domain: string, text: string): string =>
  crypto.createHmac("sha256", key).update(domain).update("\n").update(text, "utf8").digest("hex")

/**
 * `<key id>:<HMAC-SHA-256 hex>` of `text` under the ring's first key; `domain` keeps a MAC made for
 * one purpose (an entry, an approval decision) from being accepted for another.
 */
export const sign = (ring: KeyRing, domain: string, text: string): string => {
  const key = ring.keys[0]!
  return `${key.id}:${hmacHex(Redacted.value(key.material), domain, text)}`
}

/** A key id as `Keys` accepts one: what a MAC's id may be printed as (anything else may be an attacker's text). */
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/

/** The key a MAC names, for a message: `key k1`, or `a key id that is not one` for anything else. */
export const namedKey = (mac: string): string => {
  const id = mac.slice(0, Math.max(0, mac.lastIndexOf(":")))
  return KEY_ID.test(id) ? `key ${id}` : "a key id that is not one"
}

/**
 * Why `mac` names a key this process lacks: the MAC's key, and the ways that comes about. `signed`:
 * what the key signed (entries, decisions).
 */
export const unknownKeyReason = (mac: string, signed: string): string =>
  `its MAC names ${namedKey(mac)}, which is not configured here (EFFECT_SAGA_JOURNAL_KEYS): another process signs with a key this one was not given (a rotation begun on one host first), the key was removed while ${signed} it signed are kept, or the MAC was forged`

/** Whether `mac` is a MAC of `text` under one of the ring's keys (constant-time comparison). */
export const verifyMac = (ring: KeyRing, domain: string, text: string, mac: string): Check => {
  const colon = mac.lastIndexOf(":")
  if (colon <= 0) return "malformed"
  const id = mac.slice(0, colon)
  const key = ring.keys.find((candidate) => candidate.id === id)
  if (key === undefined) return "unknown-key"
  const expected = Buffer.from(hmacHex(Redacted.value(key.material), domain, text), "utf8")
  const given = Buffer.from(mac.slice(colon + 1), "utf8")
  return given.length === expected.length && crypto.timingSafeEqual(given, expected) ? "ok" : "mismatch"
}

/** A sealed value at rest: AES-256-GCM ciphertext, its nonce and tag, and the id of the key that sealed it. */
export interface Sealed {
  readonly sealed: "aes-256-gcm"
  readonly kid: string
  readonly iv: string
  readonly data: string
  readonly tag: string
}

/** Seals `plaintext` under the ring's first key, bound to `associated` (it opens only with the same). */
export const seal = (ring: KeyRing, plaintext: string, associated: string): Sealed => {
  const key = ring.keys[0]!
  const iv = crypto.randomBytes(12)
  const cipher = crypto.createCipheriv("aes-256-gcm", Redacted.value(key.material), iv)
  cipher.setAAD(Buffer.from(associated, "utf8"))
  const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  return {
    sealed: "aes-256-gcm",
    kid: key.id,
    iv: iv.toString("base64"),
    data: data.toString("base64"),
    tag: cipher.getAuthTag().toString("base64")
  }
}

/** Opens a sealed value, or says why it cannot be opened (no such key, or it does not authenticate). */
export const open = (
  ring: KeyRing | undefined,
  sealed: Sealed,
  associated: string
):
  | { readonly _tag: "Opened"; readonly plaintext: string }
  | { readonly _tag: "Unopenable"; readonly reason: string } => {
  const key = ring?.keys.find((candidate) => candidate.id === sealed.kid)
  if (key === undefined) {
    return { _tag: "Unopenable", reason: `it is sealed with key ${sealed.kid}, which is not configured here` }
  }
  try {
    const decipher = crypto.createDecipheriv(
      "aes-256-gcm",
      Redacted.value(key.material),
      Buffer.from(sealed.iv, "base64")
    )
    decipher.setAAD(Buffer.from(associated, "utf8"))
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"))
    const plaintext = Buffer.concat([decipher.update(Buffer.from(sealed.data, "base64")), decipher.final()])
    return { _tag: "Opened", plaintext: plaintext.toString("utf8") }
  } catch {
    return {
      _tag: "Unopenable",
      reason: `it does not open with key ${sealed.kid}: a wrong key, or it was sealed for another step`
    }
  }
}

/** The domain of an entry's MAC (over its hash, which covers its content and its predecessor). */
export const ENTRY_DOMAIN = "effect-saga/entry/v1"

/** The domain of an approval decision's MAC. */
export const DECISION_DOMAIN = "effect-saga/decision/v1"
