/**
 * CSV injection (OWASP): a spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (and tab
 * or CR, which some strip first) as a formula, so `=HYPERLINK(...)` from a visitor-supplied field
 * would be a live link in an operator's export. Such a text cell gets a leading `'`, which every
 * spreadsheet shows as text. Every CSV export writes its cells through here.
 */
export function neutralizeCell(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/** csv-stringify's `cast` for every export: text neutralised, booleans as `true`/`false`. */
export const CSV_CAST = { string: neutralizeCell, boolean: (value: boolean) => String(value) } as const;
