/**
 * The keys that make the journal trustworthy at rest: a journal key signs every entry and every
 * approval decision (HMAC-SHA-256), a receipt key seals every receipt (AES-256-GCM).
 *
 * Both are read with `Config.redacted` when a store or the `Saga` layer is built:
 * `EFFECT_SAGA_JOURNAL_KEYS` and `EFFECT_SAGA_RECEIPT_KEYS`, each one or more `id:base64key` pairs
 * (separated by commas or white space), every key 32 bytes. The first pair signs or seals; the
 * others still verify or open what older keys made, so a key can be rotated by putting a new one
 * first. Without a key, behaviour is as before: entries are hash-chained but not signed, receipts
 * are stored in plain text (see docs/security.md).
 *
 * @since 0.2.0
 */

import * as crypto from "node:crypto"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

/**
 * One key: its id (journaled beside what it signed or sealed) and its 32 bytes.
 *
 * @since 0.2.0
 * @category models
 */
export interface Key {
  readonly id: string
  readonly material: Redacted.Redacted<Buffer>
}

/**
 * One or more keys; the first signs or seals, every one verifies or opens.
 *
 * @since 0.2.0
 * @category models
 */
export interface KeyRing {
  readonly keys: readonly [Key, ...Array<Key>]
}

/**
 * The variable that holds the journal's signing keys.
 *
 * @since 0.2.0
 * @category config
 */
export const JOURNAL_KEYS = "EFFECT_SAGA_JOURNAL_KEYS"

/**
 * The variable that holds the keys receipts are sealed with.
 *
 * @since 0.2.0
 * @category config
 */
export const RECEIPT_KEYS = "EFFECT_SAGA_RECEIPT_KEYS"

/**
 * The type id key errors carry: `isKeyError` checks it, never a `_tag` that a plain
 * value could share.
 *
 * @since 0.2.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("effect-saga/KeyError")

/**
 * @since 0.2.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * A configured key list that cannot be used: a pair that is not `id:base64key`, a key that is not
 * 32 bytes, a repeated key id. Raised when the layer that reads it is built: nothing has run.
 *
 * @since 0.2.0
 * @category errors
 */
export class KeyError extends Schema.TaggedError<KeyError>("effect-saga/KeyError")("KeyError", {
  variable: Schema.String,
  reason: Schema.String
}) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `${this.variable}: ${this.reason}`
  }
}

/**
 * Whether a value is a `KeyError`, by its `ErrorTypeId`.
 *
 * @since 0.2.0
 * @category guards
 */
export const isKeyError = (u: unknown): u is KeyError => Predicate.hasProperty(u, ErrorTypeId)

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/**
 * Parses `id:base64key` pairs (separated by commas or white space) into a key ring, or says what is
 * wrong with them, naming `variable`. The key material never appears in an error.
 *
 * @since 0.2.0
 * @category constructors
 */
export const parse = (text: string, variable: string = JOURNAL_KEYS): Either.Either<KeyRing, KeyError> => {
  const fail = (reason: string) => Either.left(new KeyError({ variable, reason }))
  const pairs = text.split(/[\s,]+/).filter((pair) => pair !== "")
  if (pairs.length === 0) return fail("it is set but holds no key (expected one or more id:base64key pairs)")
  const keys: Array<Key> = []
  for (const [index, pair] of pairs.entries()) {
    const colon = pair.indexOf(":")
    const id = colon < 0 ? "" : pair.slice(0, colon)
    const encoded = colon < 0 ? "" : pair.slice(colon + 1)
    const position = `pair ${index + 1}`
    if (!KEY_ID.test(id)) {
      return fail(`${position} is not id:base64key (an id of 1 to 64 letters, digits, '.', '_' or '-')`)
    }
    // Named by position, not id: a pair written the wrong way round (base64key:id) has its key where the id goes.
    if (!BASE64.test(encoded)) return fail(`the key of ${position} is not base64`)
    const material = Buffer.from(encoded, "base64")
    if (material.length !== 32) return fail(`the key of ${position} is ${material.length} bytes, not 32`)
    if (keys.some((key) => key.id === id)) return fail(`key id ${id} appears twice (${position})`)
    keys.push({ id, material: Redacted.make(material) })
  }
  return Either.right({ keys: keys as unknown as KeyRing["keys"] })
}

/**
 * A key ring from `variable`, read with `Config.redacted`; `None` when the variable is not set.
 *
 * @since 0.2.0
 * @category config
 */
export const fromConfig = (variable: string): Effect.Effect<Option.Option<KeyRing>, KeyError> =>
  Config.option(Config.redacted(variable)).pipe(
    Effect.mapError((error) => new KeyError({ variable, reason: `it cannot be read: ${String(error)}` })),
    Effect.flatMap(
      Option.match({
        onNone: () => Effect.succeedNone,
        onSome: (text) => Effect.map(parse(Redacted.value(text), variable), Option.some)
      })
    )
  )

/**
 * The journal's signing keys (`EFFECT_SAGA_JOURNAL_KEYS`), if configured, as the configuration says
 * now. The library's stores and `Saga.layer` read them once, when they are built; `Journal.verify`,
 * `Journal.inspect`, the export and import and `Approval.inbox` verify with the keys the `Journal`
 * store was built with, and read this only for a journal of your own.
 *
 * @since 0.2.0
 * @category config
 */
export const journalKeys: Effect.Effect<Option.Option<KeyRing>, KeyError> = Effect.suspend(() =>
  fromConfig(JOURNAL_KEYS)
)

/**
 * The receipt sealing keys (`EFFECT_SAGA_RECEIPT_KEYS`), if configured.
 *
 * @since 0.2.0
 * @category config
 */
export const receiptKeys: Effect.Effect<Option.Option<KeyRing>, KeyError> = Effect.suspend(() =>
  fromConfig(RECEIPT_KEYS)
)

/**
 * A new `id:base64key` pair with 32 random bytes, to put in front of a key list.
 *
 * @since 0.2.0
 * @category constructors
 */
export const generate = (id: string): string => `${id}:${crypto.randomBytes(32).toString("base64")}`
