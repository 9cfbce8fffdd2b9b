/**
 * Aligns rows as Go's tabwriter does with minwidth 0, flags 0 and a space pad: every cell but a
 * line's last is padded to its column's widest cell plus `padding` spaces. Scripts that cut the
 * reference's tables by column keep working on ours.
 */
export function formatTable(rows: readonly (readonly string[])[], padding: number): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.slice(0, -1).forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)));
  }
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + padding + cell.length - [...cell].length))).join(''))
    .map((line) => `${line}\n`)
    .join('');
}
