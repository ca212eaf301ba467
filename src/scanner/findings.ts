// What a scan's observations mean for the operator (extensions.md section 7, docs/scanner.md "Findings").
import type { Catalogue, Category, Classification } from './catalogue.js';
import type { TransportReport } from './transport.js';
import { CONSENT_TYPES, type GoogleTagHit } from './consent-mode.js';
import type { LoadPhase, ObservedCookie, ObservedRequest, ObservedStorage, ObservedWrite, VisitResult } from './visit.js';
import type { PageForms, PageLinks } from './links.js';

export const FINDING_TYPES = [
  'before_consent',
  'after_reject',
  'unclassified_request',
  'unmapped',
  'sdk_missing',
  'banner_missing',
  'insecure_form',
  'no_https_redirect',
  'tls_invalid',
  'gcm_missing_default',
  'gcm_granted_before_decision',
  'gcm_granted_after_reject',
  'gcm_not_updated_after_accept',
] as const;
export type FindingType = (typeof FINDING_TYPES)[number];

/** Categories that need consent: only these are violations before a decision or after Reject all. */
const NEEDS_CONSENT: readonly Category[] = ['analytics', 'marketing'];

export interface Finding {
  type: FindingType;
  pageUrl: string;
  /** What the finding is about: a cookie, a storage key, a request host, or the page itself. */
  subject: { kind: 'cookie' | 'storage' | 'request' | 'page'; name: string };
  category: Category | null;
  vendor: string | null;
  description: string | null;
  /** unmapped cookies: the draft purpose their category suggests (null when none fits or unknown). */
  suggestedPurposeKey: string | null;
  /** What was seen: the visit, and the cookie, key or request as the browser reported it. */
  evidence: Record<string, unknown>;
}

export interface ScannedPage {
  url: string;
  depth: number;
  visits: VisitResult[];
  /** From the before visit (links.ts); absent in reports made before they were read, or when that visit failed early. */
  links?: PageLinks;
  forms?: PageForms;
}

export interface DraftPurpose {
  key: string;
  name: string;
  required: boolean;
  categoryName: string;
}

export interface FindingContext {
  catalogue: Catalogue;
  /** Cookie names or prefixes (`_ga_*`) the draft's purposes list in the experience's `cookies`. */
  mappedCookies: string[];
  purposes: DraftPurpose[];
}

const SUGGESTION_WORDS: Partial<Record<Category, string[]>> = {
  necessary: ['necessary', 'essential', 'strict', 'required'],
  functional: ['functional', 'preference', 'personali'],
  analytics: ['analytics', 'statistic', 'performance', 'measure'],
  marketing: ['marketing', 'advertis', 'ads', 'targeting'],
};

/** The purpose whose key, name or category names the category's words; necessary may fall back to a required one. */
export function suggestPurpose(category: Category, purposes: DraftPurpose[]): string | null {
  const words = SUGGESTION_WORDS[category];
  if (!words) return null;
  const fits = purposes.find((p) => words.some((word) => `${p.key} ${p.name} ${p.categoryName}`.toLowerCase().includes(word)));
  if (fits) return fits.key;
  return category === 'necessary' ? (purposes.find((p) => p.required)?.key ?? null) : null;
}

export function isMapped(name: string, patterns: string[]): boolean {
  return patterns.some((pattern) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern));
}

type Item = (
  | { kind: 'cookie'; name: string; seen: ObservedCookie | null; write: ObservedWrite | null; class: Classification }
  | { kind: 'storage'; name: string; seen: ObservedStorage | null; write: ObservedWrite | null; class: Classification }
  | { kind: 'request'; name: string; seen: ObservedRequest; write: null; class: Classification }
) & { pageUrl: string };

/** The page a load of the visit went to: the next page's observations are that page's, not the visit's. */
export const pageOfLoad = (visit: Pick<VisitResult, 'url' | 'loads'>, load: LoadPhase | undefined) => (load && visit.loads.find((entry) => entry.phase === load)?.url) || visit.url;

/**
 * What a visit shows, to be judged: in a before visit everything; after a decision, what the browser still
 * holds at the end (cookie jar, storage keys), what was written and requested once the decision was made
 * (the reload and the next page included), so a tag that sets `_ga` again on every page view is seen even
 * when the SDK removes it a moment later. A cookie or key both held and written carries both as evidence.
 * Each item names the page where it happened: the load of its (first judged) write or request; an item only
 * held at the end, the page the visit started from.
 */
function itemsOf(visit: VisitResult, catalogue: Catalogue): Item[] {
  const judged = visit.kind === 'before' ? () => true : (afterDecision: boolean) => afterDecision;
  const writes = visit.writes.filter((write) => judged(write.afterDecision));
  const writeOf = (type: ObservedWrite['type'], name: string) => writes.find((write) => write.type === type && write.name === name) ?? null;
  const held = new Set([...visit.cookies.map((c) => `cookie ${c.name}`), ...visit.storage.map((s) => `storage ${s.key}`)]);
  const on = (write: ObservedWrite | null) => pageOfLoad(visit, write?.load);
  return [
    ...visit.cookies.map((seen): Item => {
      const write = writeOf('cookie', seen.name);
      return { kind: 'cookie', name: seen.name, seen, write, class: catalogue.name(seen.name), pageUrl: on(write) };
    }),
    ...visit.storage.map((seen): Item => {
      const write = writeOf('storage', seen.key);
      return { kind: 'storage', name: seen.key, seen, write, class: catalogue.name(seen.key), pageUrl: on(write) };
    }),
    ...writes
      .filter((write) => !held.has(`${write.type} ${write.name}`))
      .map((write): Item => ({ kind: write.type, name: write.name, seen: null, write, class: catalogue.name(write.name), pageUrl: on(write) }) as Item),
    ...visit.requests
      .filter((seen) => judged(seen.afterDecision))
      .map((seen): Item => ({ kind: 'request', name: seen.host, seen, write: null, class: catalogue.request(seen), pageUrl: pageOfLoad(visit, seen.load) })),
  ];
}

export function findingsOf(pages: ScannedPage[], context: FindingContext): Finding[] {
  const findings: Finding[] = [];
  const keys = new Set<string>();
  const add = (finding: Finding) => {
    const key = `${finding.type} ${finding.subject.kind} ${finding.subject.name} ${finding.type === 'unmapped' ? '' : finding.pageUrl}`;
    if (keys.has(key)) return;
    keys.add(key);
    findings.push(finding);
  };
  for (const page of pages) {
    const before = page.visits.find((visit) => visit.kind === 'before');
    const reject = page.visits.find((visit) => visit.kind === 'reject');
    if (before && !before.error) {
      if (!page.visits.some((visit) => visit.sdk.projectKey)) {
        add(pageFinding('sdk_missing', page.url, { sdkLoaded: page.visits.some((v) => v.sdk.loaded), keyPrefix: before.sdk.keyPrefix, note: before.sdk.loaded ? "The SDK loads with a key that is not one of this project's" : 'No request for the SDK config with a publishable key' }));
      }
      if (!before.bannerShown) add(pageFinding('banner_missing', page.url, { sdkLoaded: before.sdk.loaded, projectKey: before.sdk.projectKey }));
      for (const item of itemsOf(before, context.catalogue)) {
        if (NEEDS_CONSENT.includes(item.class.category)) add(itemFinding('before_consent', item, 'before', page.url));
        // A host no catalogue knows may be an ad pixel or a font server: the operator judges, so it is listed apart.
        else if (item.kind === 'request' && item.class.category === 'unknown') add(itemFinding('unclassified_request', item, 'before', page.url));
      }
    }
    // What a visitor types into such a form travels in clear text (and can be changed on the way). Read in the
    // before visit, also when it failed later on.
    if (page.forms?.insecure.length) add(pageFinding('insecure_form', page.url, { visit: 'before', servedOverHttp: page.forms.servedOverHttp, forms: page.forms.insecure, formsCut: page.forms.cut }));
    if (reject?.decided) {
      for (const item of itemsOf(reject, context.catalogue)) {
        if (NEEDS_CONSENT.includes(item.class.category)) add(itemFinding('after_reject', item, 'reject', page.url));
      }
    }
    for (const finding of consentModeFindings(page)) add(finding);
    for (const visit of page.visits) {
      // Cookies held at the end, then those only seen written (set and removed within the visit).
      const cookies = [
        ...visit.cookies.map((cookie) => ({ name: cookie.name, seen: cookie, write: null, pageUrl: page.url })),
        ...visit.writes.filter((write) => write.type === 'cookie').map((write) => ({ name: write.name, seen: null, write, pageUrl: page.url })),
      ];
      for (const cookie of cookies) {
        if (isMapped(cookie.name, context.mappedCookies)) continue;
        const classification = context.catalogue.name(cookie.name);
        const finding = itemFinding('unmapped', { kind: 'cookie', ...cookie, class: classification }, visit.kind, page.url);
        finding.suggestedPurposeKey = suggestPurpose(classification.category, context.purposes);
        add(finding);
      }
    }
  }
  return findings;
}

/** Each Consent Mode type as the tag applied it: the update where one was given, else the default. */
function appliedStates(hit: GoogleTagHit): string[] {
  if (hit.signals) return CONSENT_TYPES.flatMap((type) => (hit.signals![type] ? [hit.signals![type]!.update !== 'unset' ? hit.signals![type]!.update : hit.signals![type]!.default] : []));
  return hit.status ? Object.values(hit.status) : [];
}

/**
 * What Google's tags said about the consent they applied (consent-mode.ts), judged against the visit: a hit with
 * no default for ad_storage or analytics_storage (the tag ran before the page set one), any type granted before
 * the decision or after Reject all, and ad or analytics storage not granted after Accept all.
 */
function consentModeFindings(page: ScannedPage): Finding[] {
  const findings: Finding[] = [];
  for (const visit of page.visits) {
    for (const hit of visit.consentMode?.hits ?? []) {
      const states = appliedStates(hit);
      const storage = hit.signals ? [hit.signals.ad_storage, hit.signals.analytics_storage] : null;
      const noDefault = storage ? storage.some((signal) => !signal || signal.default === 'unset') : Object.values(hit.status ?? {}).includes('unset');
      const granted = states.includes('granted');
      const storageGranted = storage
        ? storage.every((signal) => signal && (signal.update === 'granted' || (signal.update === 'unset' && signal.default === 'granted')))
        : hit.status?.ad_storage === 'granted' && hit.status.analytics_storage === 'granted';
      const found = (type: FindingType) => {
        const marketing = /^(AW|DC)-/.test(hit.tid ?? '');
        findings.push({
          type,
          pageUrl: pageOfLoad(visit, hit.load),
          subject: { kind: 'request', name: hit.tid ?? hit.host },
          category: marketing ? 'marketing' : 'analytics',
          vendor: 'Google',
          description: 'A Google tag (Consent Mode): the consent state it applied, from its gcs and gcd parameters',
          suggestedPurposeKey: null,
          evidence: { visit: visit.kind, tid: hit.tid, request: hit },
        });
      };
      if (noDefault) found('gcm_missing_default');
      if (!hit.afterDecision && granted) found('gcm_granted_before_decision');
      if (visit.kind === 'reject' && hit.afterDecision && granted) found('gcm_granted_after_reject');
      if (visit.kind === 'accept' && hit.afterDecision && !storageGranted) found('gcm_not_updated_after_accept');
    }
  }
  return findings;
}

function pageFinding(type: FindingType, pageUrl: string, evidence: Record<string, unknown>): Finding {
  return { type, pageUrl, subject: { kind: 'page', name: pageUrl }, category: null, vendor: null, description: null, suggestedPurposeKey: null, evidence };
}

/** `visitedPage`: the page whose visit saw it; the evidence names it when the item happened on another (the next page). */
function itemFinding(type: FindingType, item: Item, visit: VisitResult['kind'], visitedPage: string): Finding {
  return {
    type,
    pageUrl: item.pageUrl,
    subject: { kind: item.kind, name: item.name },
    category: item.class.category,
    vendor: item.class.vendor,
    description: item.class.description,
    suggestedPurposeKey: null,
    // The item as the browser holds it (when it does) and, when it was seen written, that write.
    evidence: { visit, ...(item.pageUrl !== visitedPage ? { visitOf: visitedPage } : {}), ...(item.seen ? { [item.kind]: item.seen } : {}), ...(item.write ? { write: item.write } : {}), matched: item.class.matched, source: item.class.source },
  };
}

/**
 * The transport check's findings, per origin (transport.ts): `no_https_redirect` when `http://<host>/` answers
 * without ending on https (also when an https step falls back to http), `tls_invalid` when the https origin's
 * certificate is untrusted, for another host, expired or not yet valid, or the site uses https and no TLS
 * connection was made. An origin that serves no plain http at all (nothing answers) needs no redirect.
 */
export function transportFindingsOf(transport: TransportReport | null | undefined): Finding[] {
  const findings: Finding[] = [];
  for (const origin of transport?.origins ?? []) {
    const { httpsRedirect: redirect, tls } = origin;
    if (typeof redirect.chain[0]?.status === 'number' && !redirect.redirectsToHttps) {
      const finding = pageFinding('no_https_redirect', origin.pageUrl, { origin: origin.origin, url: redirect.url, chain: redirect.chain, fallsBackToHttp: redirect.fallsBackToHttp, error: redirect.error });
      findings.push({ ...finding, subject: { kind: 'page', name: redirect.url } });
    }
    if (tls.problems.length) {
      const { url, problems, protocol, authorizationError, certificate, error } = tls;
      const finding = pageFinding('tls_invalid', origin.pageUrl, { origin: origin.origin, url, problems, protocol, authorizationError, certificate, error });
      findings.push({ ...finding, subject: { kind: 'page', name: url } });
    }
  }
  return findings;
}

export function summarize(pages: ScannedPage[], findings: Finding[]) {
  const cookieNames = new Set<string>();
  const hosts = new Set<string>();
  let refused = 0;
  for (const visit of pages.flatMap((page) => page.visits)) {
    for (const cookie of visit.cookies) cookieNames.add(cookie.name);
    for (const write of visit.writes) if (write.type === 'cookie') cookieNames.add(write.name);
    for (const request of visit.requests) hosts.add(request.host);
    refused += visit.refused.length;
  }
  return {
    pages: pages.length,
    visits: pages.reduce((sum, page) => sum + page.visits.length, 0),
    cookies: cookieNames.size,
    otherSites: hosts.size,
    refusedRequests: refused,
    findings: Object.fromEntries(FINDING_TYPES.map((type) => [type, findings.filter((finding) => finding.type === type).length])) as Record<FindingType, number>,
  };
}
export type ScanSummary = ReturnType<typeof summarize>;
