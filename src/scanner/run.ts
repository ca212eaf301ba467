// One scan: the pages breadth first (the given URLs, then same-site links up to `followLinks` more pages),
// each visited three times in fresh contexts; then the findings and the hashed report.
import type { Browser } from 'playwright-core';
import { packageHash } from '../evidence/package.js';
import type { Catalogue } from './catalogue.js';
import { findingsOf, summarize, type FindingContext, type ScannedPage } from './findings.js';
import { inventoryOf } from './inventory.js';
import type { AddressPolicy } from './guard-proxy.js';
import { VISIT_KINDS, visitPage, type VisitResult } from './visit.js';

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
  policy: AddressPolicy;
  visitTimeoutMs: number;
  maxPageBytes: number;
  /** Writes are watched this long after network idle on each judged load (SCANNER_DWELL_MS). */
  dwellMs: number;
  ignoreHttpsErrors?: boolean;
  isProjectKey(key: string): boolean;
  findings: Omit<FindingContext, 'catalogue'>;
  versionNumber: number | null;
  now(): Date;
  /** Called between visits: false when the scan's lease was lost (another instance took it), which stops the scan. */
  stillOurs(): Promise<boolean>;
}

export class LeaseLostError extends Error {}

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
      visits.push(
        await visitPage(env.browser, next.url, kind, {
          policy: env.policy,
          timeoutMs: env.visitTimeoutMs,
          maxBytes: env.maxPageBytes,
          dwellMs: env.dwellMs,
          ignoreHttpsErrors: env.ignoreHttpsErrors,
          // After the decision the visit also loads one more same-site page (the first link of the before visit).
          nextUrl: visits[0]?.links.find((link) => normalize(link) !== next.url) ?? null,
          isProjectKey: env.isProjectKey,
        }),
      );
    }
    pages.push({ url: next.url, depth: next.depth, visits: visits.map(({ links: _links, ...visit }) => ({ ...visit, links: [] })) });
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

/** The report as stored and downloaded; `hashes.reportHash` covers everything else in it (canonical JSON, like evidence). */
export function buildReport(job: ScanJob, env: Pick<ScanEnvironment, 'catalogue' | 'versionNumber' | 'visitTimeoutMs' | 'maxPageBytes' | 'dwellMs' | 'findings'>, pages: ScannedPage[], meta: { browserVersion: string; finishedAt: Date }) {
  const findings = findingsOf(pages, { ...env.findings, catalogue: env.catalogue });
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
    limits: { pages: job.urls.length + job.followLinks, visitTimeoutMs: env.visitTimeoutMs, maxPageBytes: env.maxPageBytes, dwellMs: env.dwellMs },
    pages: pages.map((page) => ({ ...page, visits: page.visits.map(({ links: _links, ...visit }) => visit) })),
    findings,
    inventory: inventoryOf(pages, { catalogue: env.catalogue, startedAt: job.startedAt }),
    summary: summarize(pages, findings),
  };
  return { ...report, hashes: { reportHash: packageHash(report) } };
}
export type ScanReport = ReturnType<typeof buildReport>;
