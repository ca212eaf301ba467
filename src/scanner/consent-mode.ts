// The Consent Mode collector (docs/scanner.md, "Consent Mode"): Google's tags write the consent state they saw
// into each request they send, `gcs` (ad_storage and analytics_storage) and `gcd` (those two, ad_user_data and
// ad_personalization, each with its default and its update). Every request that carries them is recorded,
// whatever its host: Google's tag gateway serves tags and their hits from the operator's own domain. Findings
// (findings.ts) judge them against what the visitor did.
import type { Request } from 'playwright-core';
import { withoutQuery, type Collector, type VisitSession } from './visit-session.js';
import type { LoadPhase } from './visit.js';

export const CONSENT_TYPES = ['ad_storage', 'analytics_storage', 'ad_user_data', 'ad_personalization'] as const;
export type ConsentType = (typeof CONSENT_TYPES)[number];
/** `unset`: no default (or no update) was given for that type. */
export type ConsentState = 'granted' | 'denied' | 'unset';

export interface ConsentSignal {
  /** The default the page set before the tag ran, and the update after it (the visitor's choice). */
  default: ConsentState;
  update: ConsentState;
}

export interface GoogleTagHit {
  /** Without the query (it carries identifiers). */
  url: string;
  host: string;
  /** The tag's id (`tid`: G-…, AW-…, DC-…); null when the request names none. */
  tid: string | null;
  gcs: string | null;
  gcd: string | null;
  /** `gcs` read: ad_storage and analytics_storage as the tag applied them; null without `gcs`. */
  status: Partial<Record<'ad_storage' | 'analytics_storage', 'granted' | 'denied' | 'unset'>> | null;
  /** `gcd` read: each type's default and update; null without a readable `gcd`. */
  signals: Partial<Record<ConsentType, ConsentSignal>> | null;
  load: LoadPhase;
  afterDecision: boolean;
}

export interface VisitConsentMode {
  hits: GoogleTagHit[];
  cut: number;
}

export const CONSENT_MODE_CAPS = { hits: 100, paramChars: 64 };

const GCS_STATE: Record<string, 'granted' | 'denied' | 'unset'> = { '1': 'granted', '0': 'denied', '-': 'unset' };
/** base64url's alphabet: each `gcd` letter is one of its characters, read as bits (see decodeGcdLetter). */
const BASE64URL = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_';
const TWO_BITS: Record<number, ConsentState | undefined> = { 1: 'unset', 2: 'denied', 3: 'granted' };

/** `gcs=G1xy`: x is ad_storage, y analytics_storage; 1 granted, 0 denied, `-` not set. */
export function decodeGcs(gcs: string): GoogleTagHit['status'] {
  const match = /^G1([01-])([01-])$/.exec(gcs);
  return match ? { ad_storage: GCS_STATE[match[1]!]!, analytics_storage: GCS_STATE[match[2]!]! } : null;
}

/**
 * One `gcd` letter: its index in base64url's alphabet holds the default in bits 2-3 and the update in bits 0-1,
 * each 1 (not set), 2 (denied) or 3 (granted): `l` none set, `p` denied by default, `q` denied by default and by
 * update, `t` granted by default, `r` denied by default then granted, `m` only denied by update, `n` only granted
 * by update, `u` granted by default then denied, `v` granted by both. Null for a letter that is none of these.
 */
export function decodeGcdLetter(letter: string): ConsentSignal | null {
  const value = BASE64URL.indexOf(letter);
  const defaultState = TWO_BITS[(value >> 2) & 3];
  const update = TWO_BITS[value & 3];
  return value >= 16 && defaultState && update ? { default: defaultState, update } : null;
}

/** `gcd=13p3p3p3p5`: after the leading digit, a digit and a letter per type, in CONSENT_TYPES order. */
export function decodeGcd(gcd: string): GoogleTagHit['signals'] {
  const match = /^\d\d([A-Za-z])\d([A-Za-z])\d([A-Za-z])\d([A-Za-z])/.exec(gcd);
  if (!match) return null;
  const signals: GoogleTagHit['signals'] = {};
  for (const [index, type] of CONSENT_TYPES.entries()) {
    const signal = decodeGcdLetter(match[index + 1]!);
    if (!signal) return null;
    signals[type] = signal;
  }
  return signals;
}

/** The Google tag parameters of a request, from its query (and, for a POST, from each line of its body). */
function tagParameters(request: Request): URLSearchParams[] {
  const found: URLSearchParams[] = [];
  try {
    const query = new URL(request.url()).searchParams;
    if (query.has('gcs') || query.has('gcd')) found.push(query);
    // GA4 batches hits in a POST body, one query string per line; the shared parameters stay in the URL.
    const body = request.method() === 'POST' ? request.postData() : null;
    for (const line of (body ?? '').slice(0, 16_384).split('\n')) {
      const params = new URLSearchParams(line);
      if (params.has('gcs') || params.has('gcd')) found.push(new URLSearchParams({ ...Object.fromEntries(query), ...Object.fromEntries(params) }));
    }
  } catch {
    // Not a URL we can read: no tag parameters.
  }
  return found;
}

export function collectConsentMode(session: VisitSession): Collector {
  const record: VisitConsentMode = { hits: [], cut: 0 };
  session.result.consentMode = record;
  const seen = new Set<string>();
  session.context.on('request', (request: Request) => {
    for (const params of tagParameters(request)) {
      const cap = (name: string) => params.get(name)?.slice(0, CONSENT_MODE_CAPS.paramChars) ?? null;
      const { load, afterDecision } = session.now();
      const hit: GoogleTagHit = { url: withoutQuery(request.url()), host: new URL(request.url()).hostname, tid: cap('tid'), gcs: cap('gcs'), gcd: cap('gcd'), status: null, signals: null, load, afterDecision };
      hit.status = hit.gcs === null ? null : decodeGcs(hit.gcs);
      hit.signals = hit.gcd === null ? null : decodeGcd(hit.gcd);
      // Once per tag, consent state and load: a page's tenth hit with the same state says nothing new.
      const key = `${hit.url} ${hit.tid} ${hit.gcs} ${hit.gcd} ${load} ${afterDecision}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (record.hits.length >= CONSENT_MODE_CAPS.hits) record.cut++;
      else record.hits.push(hit);
    }
  });
  return {};
}
