// What a page visit hands its collectors (docs/scanner.md, "Collectors"): the browser context, page and CDP
// session, the visit's clock (which load is going on, whether the decision was made) and its deadline. Each kind
// of evidence (cookies and storage, requests, links and forms, WebSockets, Consent Mode, artifacts) is a collector
// that attaches to the session, watches, and writes its part of the visit's result when asked; the visit itself
// (visit.ts) is the short sequence of steps a visitor takes.
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { siteOf } from './catalogue.js';
import type { Deadline } from './deadline.js';
import type { LoadPhase, VisitKind, VisitOptions, VisitResult } from './visit.js';

/**
 * What one visit keeps, so a page cannot make its report (and the scan answer) as big as it likes: the page's
 * own evaluation returns at most this many storage keys per area and links, names and URLs are cut to a length,
 * and the visit says how many were left out (`cut`). Writes are capped too (the hook reports at most 500 per
 * document, cookie-hook.ts), without a count.
 */
export const VISIT_CAPS = { storageFrames: 20, storageKeysPerArea: 500, cookies: 300, requests: 300, writes: 500, links: 200, linksLooked: 1000, nameChars: 200, urlChars: 2000 };

/** Where the visit is when something is observed: stamped on every observation. */
export interface Moment {
  load: LoadPhase;
  /** The URL of that load (the reload's is the page's, the next page's its own). */
  pageUrl: string;
  /** Milliseconds after that load started. */
  atMs: number;
  /** Milliseconds after the visit started. */
  visitMs: number;
  afterDecision: boolean;
}

export interface Collector {
  /** Before visits, once the first load settled and the banner had its chance: what the visitor first sees. */
  pageShown?(): Promise<void>;
  /** After each judged load's dwell window (and after the one load of a visit without a decision). */
  afterLoad?(): Promise<void>;
  /** The visit is over (the page may be stuck; the context is still open): write this collector's part into the result. */
  finish?(): Promise<void>;
}

export class VisitSession {
  readonly pageSite: string;
  readonly started = Date.now();
  /** Which load is going on, its URL and when it started. */
  private loadNow: { phase: LoadPhase; url: string; startedAt: number };
  /** Set just before the click, so what the click itself sets off counts as after the decision. */
  afterDecision = false;
  /** When (Date.now()) the visit started each navigation, the last one leaving the page for about:blank. */
  readonly navigations: { at: number; load: LoadPhase | null; url?: string }[] = [];
  /** When the decision was clicked (Date.now()); null before. */
  decidedAt: number | null = null;
  /** Work begun by browser events (reading a response's headers, say) that results wait for. */
  private readonly pending: Promise<unknown>[] = [];

  constructor(
    readonly url: string,
    readonly kind: VisitKind,
    readonly options: VisitOptions,
    readonly result: VisitResult,
    readonly deadline: Deadline,
    readonly context: BrowserContext,
    readonly page: Page,
    readonly cdp: CDPSession,
  ) {
    this.pageSite = siteOf(new URL(url).hostname);
    this.loadNow = { phase: 'first', url, startedAt: this.started };
  }

  /** Every browser and CDP call races the visit's deadline: a page can keep its renderer busy for good. */
  within<T>(work: Promise<T>): Promise<T> {
    return this.deadline.race(work);
  }

  left(cap?: number): number {
    return this.deadline.left(cap);
  }

  partyOf(domain: string): 'first' | 'third' {
    return siteOf(domain) === this.pageSite ? 'first' : 'third';
  }

  startLoad(phase: LoadPhase, url: string): void {
    this.loadNow = { phase, url, startedAt: Date.now() };
    this.navigations.push({ at: this.loadNow.startedAt, load: phase, url });
  }

  /**
   * The load a main-frame document at `documentUrl` belongs to: until the next load commits, the page being
   * navigated away from still sends requests, and they are its own (the next page's URL is another).
   */
  loadOfDocument(documentUrl: string): { load: LoadPhase; pageUrl: string } {
    const current = this.loadNow;
    if (withoutQuery(documentUrl) === withoutQuery(current.url)) return { load: current.phase, pageUrl: current.url };
    const previous = [...this.navigations].reverse().find((entry) => entry.load && entry.url && withoutQuery(entry.url) === withoutQuery(documentUrl));
    return previous ? { load: previous.load!, pageUrl: previous.url! } : { load: current.phase, pageUrl: current.url };
  }

  /** The visitor leaves the last page: what it sends on its way out (pagehide, unload) is still its own. */
  startLeaving(): void {
    this.navigations.push({ at: Date.now(), load: null });
  }

  /**
   * The load whose document was being left at `at`: a request the browser's events never showed (a beacon, a
   * keepalive fetch, an image ping from pagehide) comes from a document on its way out, which is the load before
   * the last navigation started by then (the first load when none was left yet).
   */
  loadLeftAt(at: number): LoadPhase {
    let index = -1;
    for (let i = 0; i < this.navigations.length; i++) if (this.navigations[i]!.at <= at) index = i;
    return this.navigations[Math.max(0, index - 1)]?.load ?? 'first';
  }

  get load(): LoadPhase {
    return this.loadNow.phase;
  }

  now(): Moment {
    const at = Date.now();
    return { load: this.loadNow.phase, pageUrl: this.loadNow.url, atMs: at - this.loadNow.startedAt, visitMs: at - this.started, afterDecision: this.afterDecision };
  }

  track(work: Promise<unknown>): void {
    this.pending.push(work.catch(() => {}));
  }

  /** Waits for the event work begun so far. */
  settle(): Promise<unknown> {
    return Promise.allSettled(this.pending.splice(0));
  }
}

/** A URL without its query string (it may carry identifiers), cut to `chars`. */
export const withoutQuery = (url: string, chars = 2000) => {
  try {
    const parsed = new URL(url);
    return (parsed.origin + parsed.pathname).slice(0, chars);
  } catch {
    return url.slice(0, 200);
  }
};

export const hostOf = (url: string) => {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
};
