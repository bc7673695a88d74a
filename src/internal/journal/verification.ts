/** Re-computing a saga's hash chain and MACs, and checking it against the saga's row. */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { Entry, SagaRecord, TamperProblem } from "../../Journal.js"
import type { KeyRing } from "../../Keys.js"
import { ENTRY_DOMAIN, namedKey, unknownKeyReason, verifyMac } from "../util/crypto.js"
import { GENESIS, hashEntry } from "./hash.js"
import { decodePayload } from "./payloads.js"
import { statusAfter } from "./status.js"
import type { StoredRow } from "./storedRows.js"

/**
 * The result of re-computing a saga's hash chain (and, with a journal key, its MACs).
 *
 * @since 0.1.0
 * @category models
 */
export type Verification =
  | { readonly _tag: "Intact"; readonly entries: number; readonly digest: string }
  | { readonly _tag: "Broken"; readonly seq: number; readonly problem: TamperProblem; readonly reason: string }

const broken = (seq: number, problem: TamperProblem, reason: string): Verification => ({
  _tag: "Broken",
  seq,
  problem,
  reason
})

/**
 * What a MAC check says about an entry, as a break; `undefined` when it verifies. Without keys, an
 * entry that carries a MAC cannot be checked: a signed journal is not taken on its chain alone
 * (whoever forged an entry would leave its MAC out, or keep an old one).
 */
const macProblem = (entry: Entry, keys: KeyRing | undefined): Verification | undefined => {
  if (keys === undefined) {
    return entry.mac === undefined
      ? undefined
      : broken(
          entry.seq,
          "signature",
          `the entry carries a MAC under ${namedKey(entry.mac)}, but this process has no journal key to check it (EFFECT_SAGA_JOURNAL_KEYS): give it the keys the journal was signed with`
        )
  }
  if (entry.mac === undefined) {
    return broken(entry.seq, "unsigned", "a journal key is configured, but the entry carries no MAC")
  }
  switch (verifyMac(keys, ENTRY_DOMAIN, entry.hash, entry.mac)) {
    case "ok":
      return undefined
    case "unknown-key":
      return broken(entry.seq, "signature", unknownKeyReason(entry.mac, "entries"))
    default:
      return broken(
        entry.seq,
        "signature",
        `its MAC does not verify under ${namedKey(entry.mac)} as configured here: the entry was forged, or the key of that id is another one`
      )
  }
}

/** Re-computes a saga's chain (and MACs with `keys`) and names the first entry that does not fit. */
export const verifyEntries = (entries: ReadonlyArray<Entry>, keys?: KeyRing | undefined): Verification => {
  let previous = GENESIS
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    if (entry.seq !== i + 1) {
      // A seq past the expected one follows a gap; one before it repeats an earlier entry's.
      const how = entry.seq > i + 1 ? "an entry was removed or moved" : "an entry was copied or moved"
      return broken(entry.seq, "sequence", `expected seq ${i + 1}, found ${entry.seq}: ${how}`)
    }
    if (hashEntry(previous, entry) !== entry.hash) {
      return broken(entry.seq, "hash", "hash does not match the entry's content and its predecessor")
    }
    const unsigned = macProblem(entry, keys)
    if (unsigned !== undefined) return unsigned
    // A chain re-computed over a payload out of shape verifies: what the entry says must decode too.
    const payload = decodePayload(entry.phase, entry.payload)
    if (Either.isLeft(payload)) {
      return broken(entry.seq, "undecodable", `its ${entry.phase} payload does not decode: ${payload.left}`)
    }
    previous = entry.hash
  }
  return { _tag: "Intact", entries: entries.length, digest: previous }
}

/** Verifies a saga's entries against its row: the chain must end exactly at its `revision` and `digest`. */
export const verifyAgainst = (
  entries: ReadonlyArray<Entry>,
  record: SagaRecord | undefined,
  keys?: KeyRing | undefined
): Verification => {
  const chain = verifyEntries(entries, keys)
  if (chain._tag === "Broken") return chain
  if (record === undefined) {
    return entries.length === 0
      ? chain
      : broken(1, "row", "the journal holds entries of a saga that has no row: the row was deleted")
  }
  const { digest, revision } = record
  if (revision === chain.entries && digest === chain.digest) return statusChecked(chain, entries, record)
  if (revision > chain.entries && digest !== chain.digest) {
    return broken(
      chain.entries + 1,
      "truncated",
      `the saga's row says it ends at seq ${revision}, but its journal ends at seq ${chain.entries}: entries were deleted`
    )
  }
  return broken(
    // The first entry past what the row says is trusted (a negative revision edited in trusts none).
    Math.max(1, Math.min(revision + 1, chain.entries)),
    "row",
    rowReason(entries, chain.entries, record)
  )
}

/** Why a row disagrees with an intact journal whose entries it does not outrun (none were deleted). */
const rowReason = (entries: ReadonlyArray<Entry>, last: number, record: SagaRecord): string => {
  const { revision } = record
  if (revision === last)
    return `the saga's row names another last hash than its journal's at seq ${revision}: the row was edited`
  if (revision > last) {
    return `the saga's row says it ends at seq ${revision}, but names the hash of the journal's last entry, at seq ${last}: the row was edited`
  }
  return `the saga's row says it ends at seq ${revision}, but its journal goes on to seq ${last}: ${shorterRow(entries, record)}`
}

/** Why a row ends before its journal: it names an entry the journal holds (entries added after it), or none (the row was edited). */
const shorterRow = (entries: ReadonlyArray<Entry>, { digest, revision }: SagaRecord): string =>
  entries.some((entry) => entry.seq === revision && entry.hash === digest)
    ? "entries were added behind the library's back, or the row was set back to an earlier entry"
    : `the row was edited (no entry at seq ${revision} has its hash)`

/**
 * Verifies a saga's entries against its row as stored: a row that does not decode anchors nothing,
 * so, like a deleted row, it breaks the chain at seq 1 (once the entries themselves verify).
 */
export const verifyAgainstStored = (
  entries: ReadonlyArray<Entry>,
  row: StoredRow,
  keys?: KeyRing | undefined
): Verification => {
  if (Either.isRight(row)) return verifyAgainst(entries, Option.getOrUndefined(row.right), keys)
  const chain = verifyEntries(entries, keys)
  return chain._tag === "Broken" ? chain : broken(1, "row", `${row.left}: the row was edited`)
}

/**
 * The row's status must be the one its entries set: a status edited in the row (a suspended saga
 * made `completed`) would hide it from recovery and hand it to `prune`.
 */
const statusChecked = (chain: Verification, entries: ReadonlyArray<Entry>, record: SagaRecord): Verification => {
  const journaled = statusAfter("running", entries)
  return record.status === journaled
    ? chain
    : broken(
        record.revision,
        "row",
        `the saga's row says it is ${record.status}, but its journal says ${journaled}: the row was edited`
      )
}
