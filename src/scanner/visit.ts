// One visit of one page in a fresh browser context: before any decision, or after the visitor clicked
// "Reject all" or "Accept all" in the project's own banner (sdk/src/v2/ui.ts: `[data-consent="banner"]`
// with `[data-consent="reject-all"]` and `[data-consent="accept-all"]`, in the SDK's open shadow root,
// which Playwright's locators pierce). Records what the browser tells: cookies with who set them,
// storage keys, requests to other sites with their initiator, the SDK and its banner.
import type { Browser, BrowserContext, Request, Response } from 'playwright-core';
import { siteOf } from './catalogue.js';
import { startGuardProxy, type AddressPolicy, type RefusedRequest } from './guard-proxy.js';

export const VISIT_KINDS = ['before', 'reject', 'accept'] as const;
export type VisitKind = (typeof VISIT_KINDS)[number];

export interface CookieSetter {
  /** `response`: a Set-Cookie header of that request; `script`: a `document.cookie` write by that script. */
  type: 'response' | 'script';
  url: string;
}

export interface ObservedCookie {
  name: string;
  domain: string;
  path: string;
  /** ISO time; null for a session cookie. */
  expires: string | null;
  session: boolean;
  httpOnly: boolean;
  secure: boolean;
  sameSite: string;
  party: 'first' | 'third';
  setBy: CookieSetter | null;
}

export interface ObservedStorage {
  area: 'local' | 'session';
  key: string;
}

export interface ObservedRequest {
  host: string;
  /** Without the query string (it may carry identifiers). */
  url: string;
  resourceType: string;
  /** The script or document that caused it, where the browser tells. */
  initiator: string | null;
}

export interface VisitResult {
  kind: VisitKind;
  url: string;
  finalUrl: string | null;
  status: number | null;
  error: string | null;
  sdk: { loaded: boolean; keyPrefix: string | null; projectKey: boolean };
  bannerShown: boolean;
  /** The decision button was clicked (reject and accept visits). */
  decided: boolean;
  cookies: ObservedCookie[];
  storage: ObservedStorage[];
  requests: ObservedRequest[];
  refused: RefusedRequest[];
  bytes: number;
  truncated: boolean;
  /** Same-site links on the page (before visits only). */
  links: string[];
}

export interface VisitOptions {
  policy: AddressPolicy;
  timeoutMs: number;
  maxBytes: number;
  /** Whether a publishable key (from the SDK's Authorization header) is one of this project's keys. */
  isProjectKey(key: string): boolean;
}

const SDK_CONFIG_PATH = /\/api\/sdk\/v[12]\/config$/;
const MAX_REQUESTS = 300;
const MAX_LINKS = 200;
const BINDING = '__consentScannerCookie';

// Runs in every frame before the page's scripts: reports each document.cookie write with the URL of the
// script on top of the stack (an inline script reports its page's URL). Deletions are not setters.
const COOKIE_HOOK = `(() => {
  const d = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie');
  if (!d || !d.set) return;
  Object.defineProperty(Document.prototype, 'cookie', {
    configurable: true, enumerable: d.enumerable,
    get() { return d.get.call(this); },
    set(value) {
      try {
        const text = String(value);
        if (!/expires=thu, 01 jan 1970|max-age=(0|-)/i.test(text)) {
          const frames = (new Error().stack || '').match(/https?:\\/\\/[^\\s()]+?:\\d+:\\d+/g) || [];
          const report = window[${JSON.stringify(BINDING)}];
          if (report) report(text.split('=')[0].trim(), frames.length ? frames[0].replace(/:\\d+:\\d+$/, '') : null);
        }
      } catch (e) {}
      return d.set.call(this, value);
    },
  });
})();`;

const withoutQuery = (url: string) => {
  try {
    const parsed = new URL(url);
    return parsed.origin + parsed.pathname;
  } catch {
    return url.slice(0, 200);
  }
};

/** Cookie name → who set it first; a cookie's domain attribute is not known here, so keyed by name. */
function setterLog() {
  const setters = new Map<string, CookieSetter>();
  return {
    setters,
    add(name: string, setter: CookieSetter) {
      if (name && !setters.has(name)) setters.set(name, setter);
    },
  };
}

export async function visitPage(browser: Browser, url: string, kind: VisitKind, options: VisitOptions): Promise<VisitResult> {
  const proxy = await startGuardProxy(options.policy, options.maxBytes);
  const result: VisitResult = {
    kind,
    url,
    finalUrl: null,
    status: null,
    error: null,
    sdk: { loaded: false, keyPrefix: null, projectKey: false },
    bannerShown: false,
    decided: false,
    cookies: [],
    storage: [],
    requests: [],
    refused: [],
    bytes: 0,
    truncated: false,
    links: [],
  };
  let context: BrowserContext | undefined;
  const pageSite = siteOf(new URL(url).hostname);
  const setters = setterLog();
  const seen = new Set<string>();
  // The script behind each request, from Chromium's own network events (Playwright does not expose it).
  const scriptInitiators = new Map<string, string>();
  const requested: { entry: ObservedRequest; rawUrl: string }[] = [];
  const pending: Promise<unknown>[] = [];
  const deadline = Date.now() + options.timeoutMs;
  const left = (cap = options.timeoutMs) => Math.max(1, Math.min(cap, deadline - Date.now()));
  try {
    // Service workers are blocked (their requests would escape page-level observation); every connection,
    // WebSockets included, goes through the guard proxy.
    context = await browser.newContext({ proxy: { server: proxy.url }, serviceWorkers: 'block', acceptDownloads: false });
    await context.exposeBinding(BINDING, (_source, name: string, scriptUrl: string | null) =>
      setters.add(String(name), { type: 'script', url: scriptUrl ?? _source.frame.url() }),
    );
    await context.addInitScript(COOKIE_HOOK);
    context.on('request', (request: Request) => {
      const requestUrl = request.url();
      let parsed: URL;
      try {
        parsed = new URL(requestUrl);
      } catch {
        return;
      }
      if (SDK_CONFIG_PATH.test(parsed.pathname)) {
        pending.push(
          request.headerValue('authorization').then((auth) => {
            const key = /^Bearer (pk_live_\w+)$/.exec(auth ?? '')?.[1];
            if (!key) return;
            result.sdk.loaded = true;
            result.sdk.keyPrefix ??= key.slice(0, 14);
            if (options.isProjectKey(key)) {
              result.sdk.projectKey = true;
              result.sdk.keyPrefix = key.slice(0, 14);
            }
          }),
        );
      }
      if (!/^(https?|wss?):$/.test(parsed.protocol) || siteOf(parsed.hostname) === pageSite) return;
      const entry = { host: parsed.hostname, url: withoutQuery(requestUrl), resourceType: request.resourceType(), initiator: initiatorOf(request) };
      const key = `${entry.url} ${entry.resourceType}`;
      if (seen.has(key) || result.requests.length >= MAX_REQUESTS) return;
      seen.add(key);
      result.requests.push(entry);
      requested.push({ entry, rawUrl: requestUrl });
    });
    context.on('response', (response: Response) => {
      pending.push(
        response
          .headerValues('set-cookie')
          .then((values) => {
            for (const value of values.flatMap((v) => v.split('\n'))) setters.add(value.split('=')[0]!.trim(), { type: 'response', url: withoutQuery(response.url()) });
          })
          .catch(() => {}),
      );
    });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    cdp.on('Network.requestWillBeSent', (event) => {
      // The script on top of the (async) stack, else the parser's document; a CORS preflight names itself.
      let stack = event.initiator.stack;
      while (stack && !stack.callFrames.some((frame) => frame.url)) stack = stack.parent;
      const script = stack?.callFrames.find((frame) => frame.url)?.url ?? (event.initiator.type === 'preflight' ? undefined : event.initiator.url);
      if (script && !scriptInitiators.has(event.request.url)) scriptInitiators.set(event.request.url, withoutQuery(script));
    });
    await cdp.send('Network.enable');
    const response = await page.goto(url, { waitUntil: 'load', timeout: left() });
    result.status = response?.status() ?? null;
    result.finalUrl = page.url();
    await page.waitForLoadState('networkidle', { timeout: left(3000) }).catch(() => {});
    await Promise.allSettled(pending.splice(0));
    // The SDK fetches its config first: wait for the banner only where the SDK is on the page.
    const banner = page.locator('[data-consent="banner"]');
    result.bannerShown = await banner.waitFor({ state: 'visible', timeout: left(result.sdk.loaded ? 5000 : 300) }).then(
      () => true,
      () => false,
    );
    if (kind !== 'before' && result.bannerShown) {
      await banner.locator(`[data-consent="${kind === 'reject' ? 'reject-all' : 'accept-all'}"]`).click({ timeout: left(5000) });
      result.decided = true;
      // What the page does once the decision is made: scripts unblocked, cookies removed.
      await banner.waitFor({ state: 'hidden', timeout: left(5000) }).catch(() => {});
      await page.waitForLoadState('networkidle', { timeout: left(3000) }).catch(() => {});
      await page.waitForTimeout(left(300));
    }
    result.finalUrl = page.url();
    const storage = await page.evaluate(() => {
      const keys = (area: Storage | undefined) => {
        try {
          return area ? Object.keys(area) : [];
        } catch {
          return [];
        }
      };
      return { local: keys(window.localStorage), session: keys(window.sessionStorage) };
    });
    result.storage = [
      ...storage.local.map((key) => ({ area: 'local' as const, key })),
      ...storage.session.map((key) => ({ area: 'session' as const, key })),
    ];
    if (kind === 'before') {
      const hrefs = await page.evaluate(() => Array.from(document.querySelectorAll('a[href]'), (a) => (a as HTMLAnchorElement).href));
      result.links = [...new Set(hrefs.map((href) => href.split('#')[0]!).filter((href) => sameSite(href, pageSite)))].slice(0, MAX_LINKS);
    }
  } catch (error) {
    result.error = describe(error, proxy.overLimit);
  } finally {
    await Promise.allSettled(pending);
    if (context) {
      const cookies = await context.cookies().catch(() => []);
      result.cookies = cookies.map((cookie) => ({
        name: cookie.name,
        domain: cookie.domain,
        path: cookie.path,
        expires: cookie.expires > 0 ? new Date(cookie.expires * 1000).toISOString() : null,
        session: !(cookie.expires > 0),
        httpOnly: cookie.httpOnly,
        secure: cookie.secure,
        sameSite: cookie.sameSite,
        party: siteOf(cookie.domain) === pageSite ? 'first' : 'third',
        setBy: setters.setters.get(cookie.name) ?? null,
      }));
      await context.close().catch(() => {});
    }
    for (const { entry, rawUrl } of requested) entry.initiator = scriptInitiators.get(rawUrl) ?? entry.initiator;
    result.refused = proxy.refused;
    result.bytes = proxy.bytes;
    result.truncated = proxy.overLimit;
    await proxy.close();
  }
  return result;
}

function sameSite(href: string, site: string): boolean {
  try {
    const url = new URL(href);
    return (url.protocol === 'http:' || url.protocol === 'https:') && siteOf(url.hostname) === site;
  } catch {
    return false;
  }
}

/** The frame that made a request (its document's URL), or for a redirect the request it came from. */
function initiatorOf(request: Request): string | null {
  const previous = request.redirectedFrom();
  if (previous) return withoutQuery(previous.url());
  try {
    const frameUrl = request.frame().url();
    return frameUrl ? withoutQuery(frameUrl) : null;
  } catch {
    return null; // a worker's request has no frame
  }
}

function describe(error: unknown, overLimit: boolean): string {
  if (overLimit) return 'The page went over the byte limit; the visit was cut short';
  const message = (error as Error).message ?? String(error);
  return message.split('\n')[0]!.slice(0, 300);
}
