/** Text as a terminal shows it: what would move the cursor, end a line or reorder it, escaped visibly. */

/**
 * What a terminal would act on instead of showing: a control character (C0, DEL, C1: a newline, a
 * tab, an escape sequence's ESC), a line or paragraph separator (U+2028, U+2029), a bidi control
 * (the marks U+061C, U+200E, U+200F; the embeddings, overrides and isolates U+202A–U+202E and
 * U+2066–U+2069, which reorder what follows), and a lone surrogate (which no terminal can show).
 */
const unprintable = /[\p{Cc}\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069\p{Cs}]/gu

/** The same, but tabs and line ends: what a page shows as space. */
const unprintableButLineEnds = new RegExp(`(?![\\t\\n\\r])${unprintable.source}`, "gu")

const short: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" }

const escaped = (char: string): string => short[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`

/**
 * `text` with each character a terminal would act on written as its escape, as JSON writes it
 * (`\n`, `\t`, `\u001b`, `\u202e`): a value journaled from outside (a reason, a name, an undo's
 * detail) stays on its line and cannot set the title, the colours or the order of what follows.
 * Everything else, a backslash included, is left as it is.
 */
export const printable = (text: string): string => text.replace(unprintable, escaped)

/** `text` as `printable` writes it, but tabs and line ends kept: for a page, where they show as space. */
export const printableButLineEnds = (text: string): string => text.replace(unprintableButLineEnds, escaped)

/** What a value that should have been text is, in words: `null`, `undefined`, `a number`, `an object`. */
export const typeName = (value: unknown): string =>
  value === null || value === undefined
    ? String(value)
    : `${/^[aeiou]/.test(typeof value) ? "an" : "a"} ${typeof value}`

/** How a message shows an identifier: quoted, escaped, at most 64 characters of it. */
export const preview = (text: string): string => {
  if (typeof text !== "string") return typeName(text)
  const head = Array.from(text.slice(0, 130)).slice(0, 64).join("")
  return printable(head.length < text.length ? `${JSON.stringify(head)}…` : JSON.stringify(text))
}

/** A value as it was given, for a message: a number as written, text as `preview` shows it, else its type. */
export const given = (value: unknown): string =>
  typeof value === "number" ? String(value) : typeof value === "string" ? preview(value) : typeName(value)

/**
 * How a message names an identifier that may be long or hold what a terminal acts on (a bidi
 * override passes the identifier checks): as it is when it is short and printable, else as
 * `preview` shows it.
 */
export const named = (text: string): string =>
  text !== "" && text.length <= 64 && printable(text) === text ? text : preview(text)

/** `text` cut to at most `max` characters, the last an ellipsis (`…`) when anything was cut. */
export const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text)
