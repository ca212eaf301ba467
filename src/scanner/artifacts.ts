// What a scan keeps besides its observations, as the EDPS Website Evidence Collector keeps them (docs/scanner.md
// "Artifacts"): a JPEG screenshot of each page as the visitor first saw it (the before visit, banner included, at
// the visit's viewport) and a HAR file of each visit. A hostile page chooses what they hold, so each is capped in
// bytes, and so is their sum per scan; one over its cap is left out with a note in the report. They are stored in
// `scan_artifacts` in the transaction that stores the finished report, which lists each one's sha256, so the
// report's hash covers them.
import { createHash } from 'node:crypto';
import type { BrowserContext, Page, Request, Response } from 'playwright-core';
import type { Prisma } from '../generated/prisma/client.js';
import type { VisitKind } from './visit.js';
import type { Collector, VisitSession } from './visit-session.js';

/** Bytes each artifact, and all of a scan's together, may take (config.scanner.artifacts; docs/scanner.md). */
export interface ArtifactCaps {
  screenshotBytes: number;
  harBytes: number;
  scanBytes: number;
}

export const ARTIFACT_CAPS: ArtifactCaps = { screenshotBytes: 2 * 1024 * 1024, harBytes: 5 * 1024 * 1024, scanBytes: 20 * 1024 * 1024 };

/** JPEG quality of the screenshot: legible text and banner, a 1280×720 page in tens to a few hundred KB. */
export const SCREENSHOT_QUALITY = 70;
/** How long the screenshot may take (a busy renderer does not answer: the visit goes on without one). */
const SCREENSHOT_MS = 5000;
/**
 * Entries one HAR keeps: each is about a kilobyte (headers, timings, no bodies), so a page's thousands of requests
 * stop here, counted in the log's `_cut`, long before the byte cap.
 */
export const HAR_MAX_ENTRIES = 2000;
/** Header values are cut to this length, and headers to this many per message (a page can send itself any). */
const HEADER_VALUE_CHARS = 1000;
const HEADERS_KEPT = 50;
const URL_CHARS = 8000;

export interface ArtifactEntry {
  /** Unique per scan: `page-<n>-before.jpg`, `page-<n>-<visit>.har`; the route's `:name`. */
  name: string;
  contentType: string;
  size: number;
  /** Lowercase hex SHA-256 of the bytes (the route's ETag). */
  sha256: string;
  pageUrl: string;
  visit: VisitKind;
}

export interface SkippedArtifact {
  name: string;
  pageUrl: string;
  visit: VisitKind;
  reason: string;
}

/** What one visit hands over: filled by visitPage (`VisitOptions.evidence`), read by the collector. */
export interface VisitEvidence {
  /** Only the before visit takes one. */
  screenshot: Buffer | null;
  /** Why there is no screenshot, where one was asked for. */
  screenshotNote: string | null;
  har: HarRecorder;
}

export const artifactNames = (pageNumber: number, visit: VisitKind) => ({ screenshot: `page-${pageNumber}-${visit}.jpg`, har: `page-${pageNumber}-${visit}.har` });

export const CONTENT_TYPES = { screenshot: 'image/jpeg', har: 'application/json' } as const;

const urlLength = (value: string | undefined) => Math.min(value?.length ?? 0, URL_CHARS);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * The screenshot of what the visitor sees: the viewport only. Never `fullPage`: Chromium's capture beyond the
 * viewport resizes the page, which a page's ResizeObservers can answer for ever (it hung 30 s in CI).
 */
export async function screenshotOf(page: Page, evidence: VisitEvidence, timeoutMs: number): Promise<void> {
  const ms = Math.max(1, Math.min(timeoutMs, SCREENSHOT_MS));
  try {
    evidence.screenshot = await page.screenshot({ type: 'jpeg', quality: SCREENSHOT_QUALITY, fullPage: false, timeout: ms });
  } catch (error) {
    evidence.screenshotNote = `No screenshot: ${((error as Error).message ?? String(error)).split('\n')[0]!.slice(0, 200)}`;
  }
}

/** The scan's artifacts as its visits hand them over, within the caps; what did not fit is listed with a reason. */
export class ArtifactCollector {
  readonly entries: ArtifactEntry[] = [];
  readonly skipped: SkippedArtifact[] = [];
  private readonly bytes = new Map<string, Buffer>();
  private total = 0;

  constructor(readonly caps: ArtifactCaps) {}

  /** A fresh hand-over for one visit (its HAR is capped at the HAR cap as it grows). */
  evidenceFor(): VisitEvidence {
    return { screenshot: null, screenshotNote: null, har: new HarRecorder(this.caps.harBytes) };
  }

  add(pageNumber: number, pageUrl: string, visit: VisitKind, evidence: VisitEvidence, browserVersion: string): void {
    const names = artifactNames(pageNumber, visit);
    if (visit === 'before') {
      if (evidence.screenshot) this.keep(names.screenshot, CONTENT_TYPES.screenshot, evidence.screenshot, this.caps.screenshotBytes, pageUrl, visit);
      else this.skipped.push({ name: names.screenshot, pageUrl, visit, reason: evidence.screenshotNote ?? 'No screenshot: the visit ended before the page was shown' });
    }
    this.keep(names.har, CONTENT_TYPES.har, evidence.har.bytes(browserVersion), this.caps.harBytes, pageUrl, visit);
  }

  private keep(name: string, contentType: string, bytes: Buffer, cap: number, pageUrl: string, visit: VisitKind): void {
    if (bytes.length > cap) return void this.skipped.push({ name, pageUrl, visit, reason: `${bytes.length} bytes, over the cap of ${cap} per file` });
    if (this.total + bytes.length > this.caps.scanBytes) {
      return void this.skipped.push({ name, pageUrl, visit, reason: `${bytes.length} bytes would pass the scan's cap of ${this.caps.scanBytes} for all its files` });
    }
    this.total += bytes.length;
    this.bytes.set(name, bytes);
    this.entries.push({ name, contentType, size: bytes.length, sha256: sha256(bytes), pageUrl, visit });
  }

  /** Written with the finished report, in its transaction (worker.ts finishScan). */
  async store(tx: Prisma.TransactionClient, scanId: string, now: Date): Promise<void> {
    if (!this.entries.length) return;
    await tx.scanArtifact.createMany({
      data: this.entries.map((entry) => ({ scanId, name: entry.name, contentType: entry.contentType, bytes: new Uint8Array(this.bytes.get(entry.name)!), sha256: entry.sha256, size: entry.size, createdAt: now })),
    });
  }

  /** What the report says about them (covered by its hash). */
  summary() {
    return { limits: this.caps, files: this.entries, skipped: this.skipped };
  }
}

interface HarEntry {
  startedDateTime: string;
  time: number;
  request: { method: string; url: string; httpVersion: string; cookies: []; headers: { name: string; value: string }[]; queryString: { name: string; value: string }[]; headersSize: -1; bodySize: number };
  response: { status: number; statusText: string; httpVersion: string; cookies: []; headers: { name: string; value: string }[]; content: { size: -1; mimeType: string; comment?: string }; redirectURL: string; headersSize: -1; bodySize: -1 };
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number; blocked?: number; dns?: number; connect?: number; ssl?: number };
  serverIPAddress?: string;
  _resourceType: string;
  _error?: string;
}

const headersOf = (headers: Record<string, string>) =>
  Object.entries(headers)
    .slice(0, HEADERS_KEPT)
    .map(([name, value]) => ({ name: name.slice(0, 200), value: String(value).slice(0, HEADER_VALUE_CHARS) }));
/** About what a list of headers adds to the HAR's JSON. */
const sizeOf = (headers: { name: string; value: string }[]) => headers.reduce((sum, h) => sum + h.name.length + h.value.length + 24, 0);

function queryOf(url: string) {
  try {
    return [...new URL(url).searchParams].slice(0, HEADERS_KEPT).map(([name, value]) => ({ name: name.slice(0, 200), value: value.slice(0, HEADER_VALUE_CHARS) }));
  } catch {
    return [];
  }
}

/**
 * A HAR 1.2 log of one visit, built from the browser's network events the visit listens to anyway, without bodies
 * (`content.size` -1, `comment` says so). Not Playwright's `recordHar`: that writes the file only when the context
 * closes, so a page whose renderer is stuck (the context is killed at the deadline) would leave none, and it keeps
 * every entry in memory without a limit. Here entries stop at HAR_MAX_ENTRIES, or when the log would pass
 * `maxBytes` (`_cut` counts the requests left out), and a visit past its deadline still has its HAR. Headers are Playwright's (`request.headers()`, `response.headers()`:
 * without Cookie and Set-Cookie, which the report's observations hold).
 */
export class HarRecorder {
  private readonly entries = new Map<Request, HarEntry>();
  private readonly started = new Map<Request, number>();
  private cut = 0;
  private pageRef: { startedDateTime: string; title: string } | null = null;
  /** About the log's size so far (each entry's fixed part, URLs, headers, query strings). */
  private size = 1000;

  /** `maxBytes`: the HAR cap; the log stops growing near it (the collector still checks the real size). */
  constructor(private readonly maxBytes: number) {}

  /** Records every request of the context (frames, workers, redirects, the consent POST answered in the browser). */
  listen(context: BrowserContext): void {
    context.on('request', (request) => this.request(request));
    context.on('response', (response) => this.response(response));
    context.on('requestfinished', (request) => this.finished(request));
    context.on('requestfailed', (request) => this.finished(request, request.failure()?.errorText ?? 'failed'));
  }

  request(request: Request): void {
    if (this.entries.size >= HAR_MAX_ENTRIES || this.size >= this.maxBytes * 0.9) return void this.cut++;
    const now = Date.now();
    this.pageRef ??= { startedDateTime: new Date(now).toISOString(), title: request.url().slice(0, URL_CHARS) };
    const url = request.url().slice(0, URL_CHARS);
    const postData = request.postDataBuffer();
    const headers = headersOf(request.headers());
    const queryString = queryOf(url);
    this.size += 900 + url.length * 2 + sizeOf(headers) + sizeOf(queryString);
    this.started.set(request, now);
    this.entries.set(request, {
      startedDateTime: new Date(now).toISOString(),
      time: -1,
      request: { method: request.method(), url, httpVersion: 'HTTP/1.1', cookies: [], headers, queryString, headersSize: -1, bodySize: postData ? postData.length : 0 },
      response: { status: 0, statusText: '', httpVersion: '', cookies: [], headers: [], content: { size: -1, mimeType: 'x-unknown', comment: 'body not recorded' }, redirectURL: '', headersSize: -1, bodySize: -1 },
      cache: {},
      timings: { send: -1, wait: -1, receive: -1 },
      _resourceType: request.resourceType(),
    });
  }

  response(response: Response): void {
    const entry = this.entries.get(response.request());
    if (!entry) return;
    const headers = response.headers();
    entry.response.status = response.status();
    entry.response.statusText = response.statusText().slice(0, 200);
    entry.response.httpVersion = 'HTTP/1.1';
    // Answers to requests already kept can still be big: past the cap their headers are left out (said so).
    if (this.size >= this.maxBytes) return void (entry.response.content.comment = 'body and headers not recorded (the HAR reached its size cap)');
    entry.response.headers = headersOf(headers);
    this.size += sizeOf(entry.response.headers) + 2 * urlLength(headers.location);
    entry.response.content.mimeType = (headers['content-type'] ?? 'x-unknown').slice(0, 200);
    entry.response.redirectURL = (headers.location ?? '').slice(0, URL_CHARS);
  }

  /** The request finished or failed: its timings (Chromium's, relative to the request's start) and its error. */
  finished(request: Request, failure?: string): void {
    const entry = this.entries.get(request);
    if (!entry) return;
    const timing = request.timing();
    const span = (from: number, to: number) => (from >= 0 && to >= 0 && to >= from ? to - from : -1);
    entry.timings = {
      blocked: -1,
      dns: span(timing.domainLookupStart, timing.domainLookupEnd),
      connect: span(timing.connectStart, timing.connectEnd),
      ssl: span(timing.secureConnectionStart, timing.connectEnd),
      send: 0,
      wait: span(Math.max(timing.connectEnd, 0), timing.responseStart),
      receive: span(timing.responseStart, timing.responseEnd),
    };
    entry.time = timing.responseEnd >= 0 ? timing.responseEnd : Date.now() - (this.started.get(request) ?? Date.now());
    if (failure) entry._error = failure.slice(0, 300);
  }

  bytes(browserVersion: string): Buffer {
    const log = {
      version: '1.2',
      creator: { name: 'consent-service site scanner', version: '1', comment: 'built from the browser\'s network events; no bodies (docs/scanner.md "Artifacts")' },
      browser: { name: 'Chromium', version: browserVersion },
      pages: this.pageRef ? [{ ...this.pageRef, id: 'page_1', pageTimings: {} }] : [],
      entries: [...this.entries.values()].map((entry) => ({ pageref: 'page_1', ...entry })),
      _cut: this.cut,
    };
    return Buffer.from(JSON.stringify({ log }));
  }
}

/** The artifacts collector: the visit's HAR from its network events, and (before visits) the screenshot of what the visitor first sees. */
export function collectArtifacts(session: VisitSession, evidence: VisitEvidence): Collector {
  // Listening from the start: the HAR is kept even when the page holds its renderer.
  evidence.har.listen(session.context);
  return {
    // The viewport, banner included, never the full page (screenshotOf).
    pageShown: () => session.within(screenshotOf(session.page, evidence, session.left())),
  };
}
