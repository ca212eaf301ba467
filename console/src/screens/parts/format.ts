// How the console writes times, counts and shares: one place, so every screen reads the same.

const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const day = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' });

/** "23 Nov 2026, 14:05 UTC"; times are UTC everywhere in the console, as in the exports. */
export const formatDateTime = (iso: string | null | undefined): string => (iso ? `${dateTime.format(new Date(iso))} UTC` : '—');

/** "23 Nov 2026" of a YYYY-MM-DD day or a timestamp. */
export const formatDay = (value: string): string => day.format(new Date(value.length === 10 ? `${value}T00:00:00Z` : value));

export const formatCount = (n: number): string => n.toLocaleString('en-GB');

/** A share as a percentage with one decimal ("–" when there is nothing to share). */
export const formatShare = (part: number, whole: number): string => (whole ? `${((part / whole) * 100).toFixed(1)}%` : '–');

/** USD cents as "$49" or "$49.50". */
export const formatPrice = (cents: number): string =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: cents % 100 ? 2 : 0 }).format(cents / 100);

/** Today (UTC) as YYYY-MM-DD, and `days` before or after it. */
export function utcDay(offsetDays = 0, from: Date = new Date()): string {
  const d = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate() + offsetDays));
  return d.toISOString().slice(0, 10);
}

/** The day after a YYYY-MM-DD day, as the ISO timestamp of its start (an exclusive `to`). */
export const dayAfterStart = (dayText: string): string => new Date(Date.parse(`${dayText}T00:00:00Z`) + 86_400_000).toISOString();
export const dayStart = (dayText: string): string => `${dayText}T00:00:00.000Z`;
