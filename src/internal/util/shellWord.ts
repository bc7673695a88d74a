/**
 * An identifier as one word of a shell command a person pastes (`effect-saga approve SAGA STEP …`):
 * as it is when the shell reads it so, single-quoted when it holds what the shell acts on (a space,
 * `$(…)`, a quote), and in ANSI-C quotes (`$'…'`, bash and zsh) with escapes when it holds what a
 * terminal acts on (a bidi override, a line separator), so that the line is safe to show and names
 * the very saga or step when pasted.
 */
import { printable } from "./printable.js"

/** What a shell reads as part of a plain word wherever it stands. */
const plain = /^[A-Za-z0-9_@%+=:,./-][A-Za-z0-9_@%+=:,./#-]*$/

/** `text` as one word of a command that a shell reads back as `text`. */
export const shellWord = (text: string): string => {
  if (plain.test(text)) return text
  if (printable(text) === text) return `'${text.replace(/'/g, `'\\''`)}'`
  // `printable`'s escapes (`\n`, `\u202e`) are ANSI-C escapes too; a backslash or quote is escaped first.
  return `$'${printable(text.replace(/[\\']/g, (char) => `\\${char}`))}'`
}
