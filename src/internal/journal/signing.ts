/**
 * The journal key each of the library's stores signs its entries with, so that a `Saga` layer
 * given other keys than its store is refused when it is built, before a tool runs: a worker that
 * verifies with keys its store does not sign with (or the other way round) would run a saga's first
 * steps, then refuse its own journal as tampered. A journal is found by its `append` function, as
 * in `heldBack.ts`; a journal of the user's own is not listed, and not checked. The readers that
 * verify a journal outside a `Saga` layer (`Journal.verify`, `Journal.inspect`, the export and
 * import, `Approval.inbox`) verify with the keys its store was built with (`keysOf`).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { Journal } from "../../Journal.js"
import type { KeyError, KeyRing } from "../../Keys.js"
import { journalKeys } from "../../Keys.js"

const signers = new WeakMap<Journal["Type"]["append"], KeyRing | null>()

/** Records that the store whose `append` this is signs with the first key of `keys` (none: it does not sign). */
export const signsWith = (append: Journal["Type"]["append"], keys: KeyRing | undefined): void => {
  signers.set(append, keys ?? null)
}

/**
 * Why a worker that verifies with `keys` cannot use the store whose `append` this is, if it cannot:
 * one has journal keys and the other none, or the store signs with a key `keys` does not hold.
 */
export const keyMismatch = (append: Journal["Type"]["append"], keys: KeyRing | undefined): string | undefined => {
  const store = signers.get(append)
  if (store === undefined) return undefined
  if (store === null) {
    return keys === undefined
      ? undefined
      : "the Saga layer has journal keys, but its journal store was built without them: it would write entries the layer refuses as unsigned. Give both layers the same keys"
  }
  if (keys === undefined) {
    return "the journal store signs its entries, but the Saga layer was built without journal keys: it could not check them. Give both layers the same keys"
  }
  const signing = store.keys[0]
  const held = keys.keys.find((key) => key.id === signing.id)
  return held !== undefined && Redacted.value(held.material).equals(Redacted.value(signing.material))
    ? undefined
    : `the journal store signs with key ${signing.id}, which the Saga layer's keys do not hold as the same key: the layer would refuse every entry the store writes. Give both layers the same keys`
}

/**
 * The journal keys to verify `journal` with: those its store was built with, when it is one of the
 * library's (none: `undefined`), so that a key variable changed after the layers were built changes
 * nothing; else, for a journal of the user's own, the configuration as this call reads it
 * (`EFFECT_SAGA_JOURNAL_KEYS`, through the `ConfigProvider` in effect).
 */
export const keysOf = (journal: Journal["Type"]): Effect.Effect<KeyRing | undefined, KeyError> => {
  const store = signers.get(journal.append)
  if (store !== undefined) return Effect.succeed(store ?? undefined)
  return Effect.map(journalKeys, Option.getOrUndefined)
}
