/**
 * The journal key each of the library's stores signs its entries with, so that a `Saga` layer
 * given other keys than its store is refused when it is built, before a tool runs: a worker that
 * verifies with keys its store does not sign with (or the other way round) would run a saga's first
 * steps, then refuse its own journal as tampered. A journal is found by its `append` function, as
 * in `heldBack.ts`; a journal of the user's own is not listed, and not checked.
 */
import * as Redacted from "effect/Redacted"
import type { Journal } from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"

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
