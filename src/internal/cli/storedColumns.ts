/**
 * A stored entry's columns as the CLI prints them when they do not all decode (`export`, `show`):
 * bytes in hex, never raw, since a column edited behind the library's back may hold anything.
 */

/** A column's value for JSON: bytes as `{"bytes": "<hex>"}`, anything else as it is. */
export const jsonValue = (value: unknown): unknown =>
  value instanceof Uint8Array ? { bytes: Buffer.from(value).toString("hex") } : value

/** A column's value as a table cell: bytes as `bytes <hex>`, `NULL` as nothing, anything else as text. */
export const cellValue = (value: unknown): string =>
  value === null || value === undefined
    ? ""
    : value instanceof Uint8Array
      ? `bytes ${Buffer.from(value).toString("hex")}`
      : String(value)
