import { createHash } from "node:crypto"

/** The digest an empty journal chains from. */
export const GENESIS = "0".repeat(64)

/** SHA-256 of a string, as lowercase hex. */
export const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/**
 * Hashes `fields` chained to `previous`: SHA-256 over `previous`, then every field as
 * `<UTF-8 byte length>:<text>` (`null` as `-1:`), so no two lists of fields share a byte stream.
 */
export const chain = (previous: string, fields: ReadonlyArray<string | number | null>): string => {
  let text = previous
  for (const field of fields) {
    if (field === null) {
      text += "-1:"
    } else {
      const value = String(field)
      text += `${Buffer.byteLength(value, "utf8")}:${value}`
    }
  }
  return sha256(text)
}
