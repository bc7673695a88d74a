/**
 * Prints a bench table: the first column padded on the right, the others on the left, columns
 * split by `|`, and a rule under the header.
 */
export const printTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): void => {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(" | ")
  console.log(line(header))
  console.log(widths.map((width) => "-".repeat(width)).join("-|-"))
  for (const row of rows) console.log(line(row))
}
