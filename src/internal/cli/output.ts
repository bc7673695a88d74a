/**
 * What commands print: aligned tables for people, JSON for scripts. Everything goes to stdout;
 * errors and log lines go to stderr.
 *
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import type * as Effect from "effect/Effect"

/**
 * Rows as columns aligned under their titles, two spaces apart; the last column is not padded.
 *
 * @since 0.1.0
 * @category formatting
 */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

/**
 * Prints text, followed by a newline.
 *
 * @since 0.1.0
 * @category printing
 */
export const print = (text: string): Effect.Effect<void> => Console.log(text)

/**
 * Prints a value as JSON, two spaces indented.
 *
 * @since 0.1.0
 * @category printing
 */
export const printJson = (value: unknown): Effect.Effect<void> => Console.log(JSON.stringify(value, null, 2))
