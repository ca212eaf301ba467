// One scan: the pages breadth first (the given URLs, then same-site links up to `followLinks` more pages),
// each visited three times in fresh contexts; then the findings and the hashed report.
import type { Browser } from 'playwright-core';
import { packageHash } from '../evidence/package.js';
import type { ArtifactCollector } from './artifacts.js';
import type { Catalogue } from './catalogue.js';
import type { TrackerList } from './trackers.js';
import type { Deadline } from './deadline.js';
import { findingsOf, summarize, transportFindingsOf, type FindingContext, type ScannedPage } from './findings.js';
import { inventoryOf } from './inventory.js';
import type { TransportReport } from './transport.js';
import type { AddressPolicy } from './guard-proxy.js';
import { VISIT_CAPS, VISIT_KINDS, visitPage, type VisitResult } from './visit.js';
import { LINK_CAPS, type PageLinks } from './links.js';
import { WEBSOCKET_CAPS } from './websockets.js';

export interface ScanJob {
  id: string;
  projectId: string;
  trigger: string;
  urls: string[];
  followLinks: number;
  startedAt: Date;
}

export interface ScanEnvironment {
  browser: Browser;
  catalogue: Catalogue;
  /** Names requests to other sites as tracking (EasyPrivacy, trackers.ts). */
  trackers: TrackerList;
  policy: AddressPolicy;
  visitTimeoutMs: number;
  maxPageBytes: number;
  /** Writes are watched this long after network idle on each judged load (SCANNER_DWELL_MS). */
  dwellMs: number;
  ignoreHttpsErrors?: boolean;
  /** The scan's wall-clock budget: no visit runs past it, and a scan that reaches it fails (not retried). */
  budget: Deadline;
  maxReportBytes: number;
  isProjectKey(key: string): boolean;
  findings: Omit<FindingContext, 'catalogue'>;
  versionNumber: number | null;
  now(): Date;
  /** Called between visits: false when the scan's lease was lost (another instance took it), which stops the scan. */
  stillOurs(): Promise<boolean>;
  /** Collects each page's screenshot and each visit's HAR within their caps (artifacts.ts); absent, none are made. */
  artifacts?: ArtifactCollector;
}

export class LeaseLostError extends Error {}
/** The scan spent its wall-clock budget: failed without a retry (the next run would spend it again). */
export class ScanBudgetSpent extends Error {}

const normalize = (url: string) => url.split('#')[0]!;

export async function scanPages(job: ScanJob, env: ScanEnvironment): Promise<ScannedPage[]> {
  const maxPages = job.urls.length + job.followLinks;
  const queue = [...new Set(job.urls.map(normalize))].map((url) => ({ url, depth: 0 }));
  const queued = new Set(queue.map((page) => page.url));
  const pages: ScannedPage[] = [];
  while (queue.length && pages.length < maxPages) {
    const next = queue.shift()!;
    const visits: VisitResult[] = [];
    for (const kind of VISIT_KINDS) {
      if (!(await env.stillOurs())) throw new LeaseLostError(`scan ${job.id}: lease lost`);
      if (env.budget.passed) throw budgetSpent(env.budget, next.url);
      const evidence = env.artifacts?.evidenceFor();
      visits.push(
        await visitPage(env.browser, next.url, kind, {
          policy: env.policy,
          timeoutMs: env.budget.left(env.visitTimeoutMs),
          maxBytes: env.maxPageBytes,
          dwellMs: env.dwellMs,
          ignoreHttpsErrors: env.ignoreHttpsErrors,
          // After the decision the visit also loads one more same-site page (the first link of the before visit).
          nextUrl: visits[0]?.links.find((link) => normalize(link) !== next.url) ?? null,
          isProjectKey: env.isProjectKey,
          trackers: env.trackers,
          evidence,
        }),
      );
      if (evidence) env.artifacts!.add(pages.length + 1, next.url, kind, evidence, env.browser.version());
    }
    if (env.budget.passed) throw budgetSpent(env.budget, next.url);
    // The before visit's links and forms belong to the page (one read, not one per visit).
    const linksAndForms = visits[0]!.linksAndForms;
    pages.push({ url: next.url, depth: next.depth, visits: visits.map(({ links: _links, linksAndForms: _read, ...visit }) => ({ ...visit, links: [] })), ...linksAndForms });
    // Breadth first: links of this page wait behind every page already queued.
    for (const link of visits[0]!.links) {
      const url = normalize(link);
      if (queued.has(url) || queued.size >= maxPages) continue;
      queued.add(url);
      queue.push({ url, depth: next.depth + 1 });
    }
  }
  return pages;
}

const budgetSpent = (budget: Deadline, url: string) =>
  new ScanBudgetSpent(`The scan spent its budget of ${Math.round(budget.ms / 1000)} s (SCANNER_SCAN_BUDGET_MS) while visiting ${url.slice(0, 300)}; it was not tried again`);

/** The report as stored and downloaded; `hashes.reportHash` covers everything else in it (canonical JSON, like evidence). */
export function buildReport(job: ScanJob, env: Pick<ScanEnvironment, 'catalogue' | 'versionNumber' | 'visitTimeoutMs' | 'maxPageBytes' | 'maxReportBytes' | 'dwellMs' | 'findings'> & Partial<Pick<ScanEnvironment, 'trackers' | 'artifacts'>>, pages: ScannedPage[], meta: { browserVersion: string; finishedAt: Date; transport?: TransportReport }) {
  const findings = [...findingsOf(pages, { ...env.findings, catalogue: env.catalogue }), ...transportFindingsOf(meta.transport)];
  const report = {
    scan: {
      id: job.id,
      projectId: job.projectId,
      trigger: job.trigger,
      urls: job.urls,
      followLinks: job.followLinks,
      startedAt: job.startedAt.toISOString(),
      finishedAt: meta.finishedAt.toISOString(),
    },
    versionNumber: env.versionNumber,
    browser: { name: 'Chromium', version: meta.browserVersion },
    catalogue: env.catalogue.snapshot,
    trackerList: env.trackers?.snapshot ?? null,
    limits: { pages: job.urls.length + job.followLinks, visitTimeoutMs: env.visitTimeoutMs, maxPageBytes: env.maxPageBytes, dwellMs: env.dwellMs, maxReportBytes: env.maxReportBytes, visit: { ...VISIT_CAPS, ...LINK_CAPS, ...WEBSOCKET_CAPS } },
    pages: pages.map((page) => ({ ...page, visits: page.visits.map(({ links: _links, ...visit }) => visit) })),
    findings,
    inventory: inventoryOf(pages, { catalogue: env.catalogue, startedAt: job.startedAt }),
    /** Each origin's HTTPS redirect, TLS and HSTS (transport.ts); absent in reports made before the check. */
    ...(meta.transport ? { transport: meta.transport } : {}),
    summary: summarize(pages, findings),
    /** Screenshots and HAR files with their sha256 (the hash covers them), and those left out over a cap; null: none made. */
    artifacts: env.artifacts?.summary() ?? null,
    /** What was left out to keep the report under maxReportBytes (null: nothing). */
    cut: null as ReportCut | null,
  };
  report.cut = fitToBytes(report, env.maxReportBytes);
  return { ...report, hashes: { reportHash: packageHash(report) } };
}

export interface ReportCut {
  /** Visits (from the last page back) whose observation lists were emptied; their `cut.report` is true. */
  visitsEmptied: number;
  /** Findings left off the end of the list (the summary still counts them). */
  findingsDropped: number;
  /** Pages (from the last back) whose lists of third-party and keyword links were emptied first; their `links.cut.report` is true. */
  linksEmptied: number;
}

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * Keeps the report under `maxBytes`: first the pages' link lists, then the observation lists of visits, last page
 * first (the findings keep their evidence), then findings from the end. Each visit is already capped (VISIT_CAPS); this bounds the sum.
 */
function fitToBytes(
  report: { pages: { links?: PageLinks & { cut: PageLinks['cut'] & { report?: boolean } }; visits: (Omit<VisitResult, 'links'> & { cut: VisitResult['cut'] & { report?: boolean } })[] }[]; findings: unknown[] },
  maxBytes: number,
): ReportCut | null {
  const room = maxBytes - 1000; // the cut record and hashes
  let size = bytesOf(report);
  if (size <= room) return null;
  const cut: ReportCut = { visitsEmptied: 0, findingsDropped: 0, linksEmptied: 0 };
  // Links weigh less than what was set and sent: their lists go first (the counts and kinds found stay).
  for (const page of [...report.pages].reverse()) {
    if (size <= room) break;
    if (!page.links || (!page.links.thirdParty.length && !page.links.keywords.length)) continue;
    const before = bytesOf(page.links);
    page.links = { ...page.links, thirdParty: [], keywords: [], cut: { ...page.links.cut, report: true } };
    size -= before - bytesOf(page.links);
    cut.linksEmptied++;
  }
  for (const page of [...report.pages].reverse()) {
    for (const visit of [...page.visits].reverse()) {
      if (size <= room) break;
      const before = bytesOf(visit);
      Object.assign(visit, { cookies: [], storage: [], writes: [], requests: [], refused: [] });
      if (visit.websockets) visit.websockets = { ...visit.websockets, sockets: [] };
      if (visit.consentMode) visit.consentMode = { ...visit.consentMode, hits: [] };
      visit.cut = { ...visit.cut, report: true };
      size -= before - bytesOf(visit);
      cut.visitsEmptied++;
    }
  }
  while (size > room && report.findings.length) {
    size -= bytesOf(report.findings.pop()) + 1;
    cut.findingsDropped++;
  }
  return cut;
}
export type ScanReport = ReturnType<typeof buildReport>;
