// The TCF screen's model: the experience's `tcf` object (src/tcf/settings.ts) with its defaults, and where the
// service's validation messages (details paths such as tcf.vendors.3) go in the form.
import { errorMessages } from '../components/states';
import type { Experience } from './consent-model';

export const RESTRICTION_TYPES = [
  ['requireConsent', 'Require consent'],
  ['requireLegitimateInterest', 'Require legitimate interest'],
  ['notAllowed', 'Not allowed'],
] as const;
export type RestrictionType = (typeof RESTRICTION_TYPES)[number][0];

export interface TcfSettings {
  enabled: boolean;
  cmpId: number | null;
  cmpVersion: number;
  publisherCountryCode: string;
  vendors: number[];
  googleAtps: number[];
  specialFeatures: number[];
  restrictions: { purposeId: number; vendorIds: number[]; type: RestrictionType }[];
  publisher: { purposes: number[]; legitimateInterests: number[] } | null;
  purposeMap: Record<string, number[]>;
}

/** The service's defaults (src/tcf/settings.ts), for an experience without `tcf`. */
export const DEFAULT_TCF: TcfSettings = {
  enabled: false,
  cmpId: null,
  cmpVersion: 1,
  publisherCountryCode: 'AA',
  vendors: [],
  googleAtps: [],
  specialFeatures: [],
  restrictions: [],
  publisher: null,
  purposeMap: {},
};

export const tcfOf = (experience: Experience): TcfSettings => ({ ...DEFAULT_TCF, ...((experience.tcf as Partial<TcfSettings> | undefined) ?? {}) });

/** A set of ids with one toggled, in ascending order (the order the SDK and the string use). */
export const toggled = (ids: number[], id: number, on: boolean) => (on ? [...new Set([...ids, id])].sort((a, b) => a - b) : ids.filter((x) => x !== id));

export interface Issue {
  path: readonly string[];
  message: string;
}

/** validation_failed details of a failed save, as issues. */
export function issuesOf(error: unknown): Issue[] {
  const graphQLErrors = (error as { graphQLErrors?: { extensions?: { details?: unknown } }[] } | null)?.graphQLErrors ?? [];
  return graphQLErrors.flatMap((e) =>
    Array.isArray(e.extensions?.details)
      ? (e.extensions.details as { path?: (string | number)[]; message: string }[]).map((d) => ({ path: (d.path ?? []).map(String), message: d.message }))
      : [],
  );
}

/** The messages at a path or under it (`tcf.vendors` gets tcf.vendors.3's). */
export function messagesAt(issues: Issue[], ...path: string[]): string[] {
  const at = path.join('.');
  return issues.filter((issue) => { const p = issue.path.join('.'); return p === at || p.startsWith(at + '.'); }).map((issue) => issue.message);
}

/** Every message of a failed save that is not a field's (shown once in the save bar). */
export const otherMessages = (error: unknown) => (issuesOf(error).length ? [] : errorMessages(error));

const DAY_MS = 86_400_000;

/** How old a vendor list is, from its `lastUpdated`: "today", "yesterday", "12 days ago" (the browser's Intl). */
export function listAge(lastUpdated: string, now = Date.now()): string {
  const days = Math.max(0, Math.floor((now - Date.parse(lastUpdated)) / DAY_MS));
  return new Intl.RelativeTimeFormat('en', { numeric: 'auto' }).format(-days, 'day');
}
