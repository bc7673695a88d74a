import { createHash } from "node:crypto"

/** The digest an empty journal chains from. */
export const GENESIS = "0".repeat(64)

/** SHA-256 of a string, as lowercase hex. */
export const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/**
 * Hashes `fields` chained to `previous`. Every field is length-prefixed (`null` as `-1:`), so no
 * two different lists of fields can produce the same byte stream.
 */
export const chain = (previous: string, fields: ReadonlyArray<string | number | null>): string => {
  const hash = createHash("sha256").update(previous, "utf8")
  for (const field of fields) {
    if (field === null) {
      hash.update("-1:", "utf8")
    } else {
      const text = String(field)
      hash.update(`${Buffer.byteLength(text, "utf8")}:`, "utf8").update(text, "utf8")
    }
  }
  return hash.digest("hex")
}
