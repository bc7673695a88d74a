import * as crypto from "node:crypto"
import type { Entry } from "../../Journal.js"

/** The digest an empty journal chains from. */
export const GENESIS = "0".repeat(64)

/** SHA-256 of a string's UTF-8 bytes, as lowercase hex. */
export const sha256 = (text: string): string => crypto.hash("sha256", text, "hex")

/**
 * Hashes `fields` chained to `previous`: SHA-256 over `previous`, then every field as
 * `<UTF-8 byte length>:<text>` (`null` as `-1:`), so no two lists of fields share a byte stream.
 *
 * NOTE: the bytes hashed are the UTF-8 bytes a store keeps only for well-formed text; a lone
 * surrogate has no UTF-8 form (it is hashed as U+FFFD, and stores keep it differently), so every
 * store refuses such text before it is hashed (`refuseUnstorable` in `entries.ts`).
 */
export const chain = (previous: string, fields: ReadonlyArray<string | number | null>): string => {
  let framed = previous
  for (const field of fields) {
    if (field === null) {
      framed += "-1:"
      continue
    }
    const text = typeof field === "string" ? field : String(field)
    framed += `${nonAscii.test(text) ? Buffer.byteLength(text, "utf8") : text.length}:${text}`
  }
  return sha256(framed)
}

/** A character outside ASCII: where a text's UTF-8 length differs from its length. */
const nonAscii = /[^\p{ASCII}]/u

/** The hash of an entry given the previous entry's hash (`Journal.hashEntry`). */
export const hashEntry = (previous: string, entry: Omit<Entry, "hash" | "mac">): string =>
  chain(previous, [
    entry.sagaId,
    entry.seq,
    entry.stepId,
    entry.toolName,
    entry.phase,
    entry.input,
    entry.payload,
    entry.at
  ])
