/**
 * An identifier as one word of a shell command a person pastes (`effect-saga approve SAGA STEP …`):
 * as it is when the shell reads it so, single-quoted when it holds what the shell acts on (a space,
 * `$(…)`, a quote), and in ANSI-C quotes (`$'…'`, bash and zsh) with escapes when it holds what a
 * terminal acts on (a bidi override, a line separator), so that the line is safe to show and names
 * the very saga or step when pasted.
 */

/** What a shell reads as part of a plain word wherever it stands. */
const plain = /^[A-Za-z0-9_@%+=:,./-][A-Za-z0-9_@%+=:,./#-]*$/

/** What a terminal acts on (see printable.ts); identifiers hold no control character or lone surrogate. */
const unprintable = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069\p{Cs}]/u
const unprintableAll = new RegExp(unprintable.source, "gu")

const ansiEscaped = (char: string): string =>
  char === "\\" || char === "'" ? `\\${char}` : `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`

/** `text` as one word of a command that a shell reads back as `text`. */
export const shellWord = (text: string): string => {
  if (plain.test(text)) return text
  if (!unprintable.test(text)) return `'${text.replace(/'/g, `'\\''`)}'`
  return `$'${text.replace(new RegExp(`[\\\\']|${unprintableAll.source}`, "gu"), ansiEscaped)}'`
}
