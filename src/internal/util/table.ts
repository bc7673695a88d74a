import { printable } from "./printable.js"

/**
 * Rows as columns aligned under their titles, two spaces apart; the last column is not padded.
 * Each cell is shown `printable`: a value cannot break its line or reach the terminal raw.
 */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const cells = [header, ...rows].map((row) => row.map(printable))
  const widths = header.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? "").length)))
  const line = (row: ReadonlyArray<string>) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join("  ")
      .trimEnd()
  return cells.map(line).join("\n")
}
