// One visit of one page in a fresh browser context: before any decision, or after the visitor clicked
// "Reject all" or "Accept all" in the project's own banner (sdk/src/v2/ui.ts: `[data-consent="banner"]`
// with `[data-consent="reject-all"]` and `[data-consent="accept-all"]`, in the SDK's open shadow root,
// which Playwright's locators pierce). Records what the browser tells: cookies with who set them,
// storage keys, requests to other sites with their initiator, the SDK and its banner.
import type { Browser, BrowserContext, Request, Response } from 'playwright-core';
import { siteOf } from './catalogue.js';
import { installCookieHook } from './cookie-hook.js';
import { CLOSE_GRACE_MS, closeContext, Deadline, settleWithin } from './deadline.js';
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
  /** How many of each were seen but not kept (the caps in VISIT_CAPS); all 0 when nothing was cut. */
  cut: { storageKeys: number; cookies: number; requests: number; links: number };
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
/**
 * What one visit keeps, so a page cannot make its report (and the scan answer) as big as it likes: the page's
 * own evaluation returns at most this many storage keys per area and links, names and URLs are cut to a length,
 * and the visit says how many were left out (`cut`).
 */
export const VISIT_CAPS = { storageKeysPerArea: 500, cookies: 300, requests: 300, links: 200, linksLooked: 1000, nameChars: 200, urlChars: 2000 };

const withoutQuery = (url: string) => {
  try {
    const parsed = new URL(url);
    return (parsed.origin + parsed.pathname).slice(0, VISIT_CAPS.urlChars);
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
    cut: { storageKeys: 0, cookies: 0, requests: 0, links: 0 },
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
  // Every browser and CDP call races the visit's deadline: a page can keep its renderer busy for good.
  const deadline = new Deadline(options.timeoutMs);
  const left = (cap?: number) => deadline.left(cap);
  const within = deadline.race.bind(deadline);
  try {
    // Service workers are blocked (their requests would escape page-level observation); every connection,
    // WebSockets included, goes through the guard proxy.
    context = await within(browser.newContext({ proxy: { server: proxy.url }, serviceWorkers: 'block', acceptDownloads: false }));
    const cookieHook = await within(installCookieHook(context));
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
      if (seen.has(key)) return;
      if (result.requests.length >= VISIT_CAPS.requests) return void result.cut.requests++;
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
    const page = await within(context.newPage());
    const cdp = await within(context.newCDPSession(page));
    await within(cookieHook.listen(cdp, (write) => setters.add(write.name, { type: 'script', url: write.scriptUrl ?? page.url() })));
    cdp.on('Network.requestWillBeSent', (event) => {
      // The script on top of the (async) stack, else the parser's document; a CORS preflight names itself.
      let stack = event.initiator.stack;
      while (stack && !stack.callFrames.some((frame) => frame.url)) stack = stack.parent;
      const script = stack?.callFrames.find((frame) => frame.url)?.url ?? (event.initiator.type === 'preflight' ? undefined : event.initiator.url);
      if (script && !scriptInitiators.has(event.request.url)) scriptInitiators.set(event.request.url, withoutQuery(script));
    });
    await within(cdp.send('Network.enable'));
    const response = await within(page.goto(url, { waitUntil: 'load', timeout: left() }));
    result.status = response?.status() ?? null;
    result.finalUrl = page.url();
    await within(page.waitForLoadState('networkidle', { timeout: left(3000) }).catch(() => {}));
    await within(Promise.allSettled(pending.splice(0)));
    // The SDK fetches its config first: wait for the banner only where the SDK is on the page.
    const banner = page.locator('[data-consent="banner"]');
    result.bannerShown = await within(
      banner.waitFor({ state: 'visible', timeout: left(result.sdk.loaded ? 5000 : 300) }).then(
        () => true,
        () => false,
      ),
    );
    if (kind !== 'before' && result.bannerShown) {
      await within(banner.locator(`[data-consent="${kind === 'reject' ? 'reject-all' : 'accept-all'}"]`).click({ timeout: left(5000) }));
      result.decided = true;
      // What the page does once the decision is made: scripts unblocked, cookies removed.
      await within(banner.waitFor({ state: 'hidden', timeout: left(5000) }).catch(() => {}));
      await within(page.waitForLoadState('networkidle', { timeout: left(3000) }).catch(() => {}));
      await within(page.waitForTimeout(left(300)));
    }
    result.finalUrl = page.url();
    // Counted and capped inside the page: 25,000 keys never leave it (Storage.key walks without a copy).
    const storage = await within(
      page.evaluate(({ max, chars }) => {
        const keys = (area: () => Storage) => {
          try {
            const store = area();
            const kept: string[] = [];
            for (let i = 0; i < store.length && kept.length < max; i++) kept.push(String(store.key(i)).slice(0, chars));
            return { kept, total: store.length };
          } catch {
            return { kept: [], total: 0 };
          }
        };
        return { local: keys(() => window.localStorage), session: keys(() => window.sessionStorage) };
      }, { max: VISIT_CAPS.storageKeysPerArea, chars: VISIT_CAPS.nameChars }),
    );
    for (const area of ['local', 'session'] as const) {
      // The page answered this: checked again here (it can replace the builtins the evaluation used).
      const { kept, total } = storage?.[area] ?? { kept: [], total: 0 };
      const keys = (Array.isArray(kept) ? kept : []).slice(0, VISIT_CAPS.storageKeysPerArea).map((key) => String(key).slice(0, VISIT_CAPS.nameChars));
      result.storage.push(...keys.map((key) => ({ area, key })));
      result.cut.storageKeys += Math.max(0, (Number(total) || 0) - keys.length);
    }
    if (kind === 'before') {
      const anchors = await within(
        page.evaluate(({ max, chars }) => {
          const all = document.querySelectorAll('a[href]');
          const hrefs: string[] = [];
          for (let i = 0; i < all.length && i < max; i++) {
            const href = (all[i] as HTMLAnchorElement).href;
            if (typeof href === 'string' && href.length <= chars) hrefs.push(href);
          }
          return { hrefs, total: all.length };
        }, { max: VISIT_CAPS.linksLooked, chars: VISIT_CAPS.urlChars }),
      );
      const hrefs = (Array.isArray(anchors?.hrefs) ? anchors.hrefs : []).slice(0, VISIT_CAPS.linksLooked).map((href) => String(href).slice(0, VISIT_CAPS.urlChars));
      const sameSiteLinks = [...new Set(hrefs.map((href) => href.split('#')[0]!).filter((href) => sameSite(href, pageSite)))];
      result.links = sameSiteLinks.slice(0, VISIT_CAPS.links);
      result.cut.links = Math.max(0, (Number(anchors?.total) || 0) - hrefs.length) + (sameSiteLinks.length - result.links.length);
    }
  } catch (error) {
    result.error = describe(error, proxy.overLimit);
  } finally {
    await settleWithin(Promise.allSettled(pending), CLOSE_GRACE_MS, undefined);
    if (context) {
      // Cookies live in the browser process: they answer even while the page's renderer is stuck.
      const cookies = await settleWithin(context.cookies(), CLOSE_GRACE_MS, []);
      result.cut.cookies = Math.max(0, cookies.length - VISIT_CAPS.cookies);
      result.cookies = cookies.slice(0, VISIT_CAPS.cookies).map((cookie) => ({
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
      // Past the deadline this is what stops the page: its renderer goes with the context (or the browser).
      if (await closeContext(context, browser)) result.error ??= 'The browser did not close the page; it was restarted';
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
