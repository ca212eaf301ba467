/**
 * OWASP CSV injection: a cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab or CR
 * first) gets a leading apostrophe. The same rule as src/evidence/csv.ts; kept here until the
 * shared src/csv.ts (harden-auth's branch) reaches main, then this file should import it.
 */
export function neutralizeFormula(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}
