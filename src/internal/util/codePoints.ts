/**
 * Text in code-point order, as the SQL stores order saga ids (SQLite's default, PostgreSQL's "C").
 *
 * @since 0.5.0
 */

/**
 * Code-point order: JavaScript's `<` compares UTF-16 units, which puts a character past U+FFFF
 * before U+E000–U+FFFF.
 *
 * @since 0.5.0
 * @category ordering
 */
export const byCodePoints = (a: string, b: string): number => {
  const length = Math.min(a.length, b.length)
  for (let at = 0; at < length; at++) {
    const left = a.codePointAt(at)!
    const right = b.codePointAt(at)!
    if (left !== right) return left - right
    if (left > 0xffff) at++
  }
  return a.length - b.length
}
