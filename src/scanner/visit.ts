// One visit of one page in a fresh browser context: before any decision, or after the visitor clicked
// "Reject all" or "Accept all" in the project's own banner (sdk/src/v2/ui.ts: `[data-consent="banner"]`
// with `[data-consent="reject-all"]` and `[data-consent="accept-all"]`, in the SDK's open shadow root,
// which Playwright's locators pierce). Records what the browser tells: cookies with who set them,
// storage keys, requests to other sites with their initiator, the SDK and its banner.
import type { Browser, BrowserContext, Page, Request, Response, Route } from 'playwright-core';
import { uuidv7 } from 'uuidv7';
import { siteOf } from './catalogue.js';
import { startGuardProxy, type AddressPolicy, type RefusedRequest } from './guard-proxy.js';

export const VISIT_KINDS = ['before', 'reject', 'accept'] as const;
export type VisitKind = (typeof VISIT_KINDS)[number];

export interface CookieSetter {
  /** `response`: a Set-Cookie header of that request; `script`: a `document.cookie` (or storage) write by that script. */
  type: 'response' | 'script';
  url: string;
  /** Present (true) when the writing script was inline (in the page, or released by the SDK): `url` is then the page. */
  inline?: true;
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
  /** Sent after the visitor's decision (reject and accept visits; false in before visits). */
  afterDecision: boolean;
}

/** The loads of a visit: the page, then (reject and accept) the page again and one more same-site page. */
export type LoadPhase = 'first' | 'reload' | 'next';

export interface PageLoad {
  phase: LoadPhase;
  url: string;
  finalUrl: string | null;
  status: number | null;
  error: string | null;
  /** Milliseconds after the visit started. */
  startedAtMs: number;
}

/** A cookie or storage write as it happened (the browser's jar at the end misses what was written and removed). */
export interface ObservedWrite {
  type: 'cookie' | 'storage';
  name: string;
  /** Storage writes: which area; null for cookies. */
  area: 'local' | 'session' | null;
  /** Cookies: the attributes as written, without the value (`path=/; max-age=63072000`); null for storage. */
  attributes: string | null;
  /** The cookie's domain (its Domain attribute, else the host that wrote it); storage: the origin's host. */
  domain: string;
  party: 'first' | 'third';
  setBy: CookieSetter | null;
  /** Which load of the visit it happened in, and when: milliseconds after that load started. */
  load: LoadPhase;
  atMs: number;
  afterDecision: boolean;
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
  /** Milliseconds after the visit started that the decision was clicked; null when it was not. */
  decidedAtMs: number | null;
  /** The SDK's consent requests answered inside the browser (never sent: a scan's clicks are not receipts). */
  consentRequestsAnswered: number;
  /** Every load of the page in this visit, in order. */
  loads: PageLoad[];
  /** The browser's cookie jar at the end of the visit. */
  cookies: ObservedCookie[];
  /** Storage keys present after each judged load (the before load; the reload and next page after a decision). */
  storage: ObservedStorage[];
  /** Cookie and storage writes as they happened, in order. */
  writes: ObservedWrite[];
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
  /** How long writes are watched after network idle on each judged load. */
  dwellMs: number;
  /** Reject and accept visits load this same-site page after the reload, with the decision stored. */
  nextUrl?: string | null;
  /** Accept any TLS certificate (tests' self-signed https hosts only; never from the environment). */
  ignoreHttpsErrors?: boolean;
  /** Whether a publishable key (from the SDK's Authorization header) is one of this project's keys. */
  isProjectKey(key: string): boolean;
}

const SDK_CONFIG_PATH = /\/api\/sdk\/v[12]\/config$/;
/** Where the SDK (v1 and v2) sends a decision to become a receipt. */
const SDK_CONSENT_PATH = /\/api\/sdk\/v[12]\/consent$/;
const MAX_REQUESTS = 300;
const MAX_WRITES = 500;
const MAX_LINKS = 200;
const BINDING = '__consentScannerWrite';

// Runs in every frame before the page's scripts: reports each cookie write (document.cookie, cookieStore.set)
// and storage write (setItem) with the script that made it: the frame of the caller, the one just below our
// hook on the stack (`depth` frames down: our own functions are above it). A caller without a URL (`<anonymous>`: an inline script the SDK released by inserting a
// copy) or at the document's own URL is an inline script, reported as such. Deletions are not writes.
const WRITE_HOOK = `(() => {
  const report = (type, name, area, attributes, depth) => {
    try {
      const send = window[${JSON.stringify(BINDING)}];
      if (!send) return;
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 8;
      const stack = String(new Error().stack || '');
      Error.stackTraceLimit = limit;
      const caller = stack.split('\\n').slice(1).filter((line) => /^\\s*at /.test(line))[depth] || '';
      const url = (caller.match(/https?:\\/\\/[^\\s()]+?:\\d+:\\d+/) || [''])[0].replace(/:\\d+:\\d+$/, '');
      send(type, String(name), area, attributes, url || null, String(location.href));
    } catch (e) {}
  };
  const cookieWrite = (text) => {
    if (/expires=thu, 01 jan 1970|max-age=(0|-)/i.test(text)) return;
    const cut = text.indexOf(';');
    report('cookie', text.split('=')[0].trim(), null, cut < 0 ? '' : text.slice(cut + 1).trim(), 3);
  };
  const d = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie');
  if (d && d.set) {
    Object.defineProperty(Document.prototype, 'cookie', {
      configurable: true, enumerable: d.enumerable,
      get() { return d.get.call(this); },
      set(value) { cookieWrite(String(value)); return d.set.call(this, value); },
    });
  }
  if (typeof CookieStore !== 'undefined' && CookieStore.prototype.set) {
    const set = CookieStore.prototype.set;
    CookieStore.prototype.set = function (a, b) {
      const o = typeof a === 'string' ? { name: a } : a || {};
      report('cookie', o.name, null, [o.domain && 'domain=' + o.domain, o.path && 'path=' + o.path, o.expires && 'expires=' + new Date(o.expires).toUTCString()].filter(Boolean).join('; '), 2);
      return set.apply(this, arguments);
    };
  }
  const setItem = Storage.prototype.setItem;
  Storage.prototype.setItem = function (key, value) {
    let area = 'session';
    try { if (this === window.localStorage) area = 'local'; } catch (e) {}
    report('storage', key, area, null, 2);
    return setItem.apply(this, arguments);
  };
})();`;

const withoutQuery = (url: string) => {
  try {
    const parsed = new URL(url);
    return parsed.origin + parsed.pathname;
  } catch {
    return url.slice(0, 200);
  }
};

const hostOf = (url: string) => {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
};

/** The Domain attribute of a cookie line's attributes (without its leading dot), if any. */
const domainAttribute = (attributes: string) => /(?:^|;)\s*domain=\.?([^;\s]+)/i.exec(attributes)?.[1]?.toLowerCase() ?? null;

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

/** The SDK's consent POST answered as the service would (201 `{ ok, id, createdAt }`, contract 4.9), never sent. */
async function answerConsentLocally(route: Route, result: VisitResult): Promise<void> {
  const request = route.request();
  const origin = await request.headerValue('origin');
  const cors = { 'access-control-allow-origin': origin ?? '*', 'access-control-allow-headers': 'authorization, content-type', 'access-control-allow-methods': 'POST, OPTIONS', vary: 'Origin' };
  if (request.method() === 'OPTIONS') return route.fulfill({ status: 204, headers: cors });
  if (request.method() !== 'POST') return route.continue();
  result.consentRequestsAnswered++;
  await route.fulfill({
    status: 201,
    headers: { ...cors, 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ ok: true, id: uuidv7(), createdAt: new Date().toISOString() }),
  });
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
    decidedAtMs: null,
    consentRequestsAnswered: 0,
    loads: [],
    cookies: [],
    storage: [],
    writes: [],
    requests: [],
    refused: [],
    bytes: 0,
    truncated: false,
    links: [],
  };
  let context: BrowserContext | undefined;
  const pageSite = siteOf(new URL(url).hostname);
  const partyOf = (domain: string) => (siteOf(domain) === pageSite ? 'first' : 'third');
  const setters = setterLog();
  const seen = new Set<string>();
  // The script behind each request, from Chromium's own network events (Playwright does not expose it).
  const scriptInitiators = new Map<string, string>();
  const requested: { entry: ObservedRequest; rawUrl: string }[] = [];
  const pending: Promise<unknown>[] = [];
  const visitStarted = Date.now();
  const deadline = visitStarted + options.timeoutMs;
  const left = (cap = options.timeoutMs) => Math.max(1, Math.min(cap, deadline - Date.now()));
  // Which load is going on, since when, and whether the decision was made: every observation is stamped with it.
  let phase: LoadPhase = 'first';
  let loadStarted = visitStarted;
  // Set just before the click, so what the click itself sets off counts as after the decision.
  let afterDecision = false;
  const recordWrite = (write: Omit<ObservedWrite, 'load' | 'atMs' | 'afterDecision' | 'party'>) => {
    if (result.writes.length >= MAX_WRITES) return;
    result.writes.push({ ...write, party: partyOf(write.domain), load: phase, atMs: Date.now() - loadStarted, afterDecision });
  };
  const storageKeys = new Set<string>();
  // The SDK's config answer: the banner is waited for from then on (a busy service may take long to answer).
  let configAnswered = () => {};
  const configAnswer = new Promise<void>((resolve) => (configAnswered = resolve));
  try {
    // Service workers are blocked (their requests would escape page-level observation); every connection,
    // WebSockets included, goes through the guard proxy.
    context = await browser.newContext({
      proxy: { server: proxy.url },
      serviceWorkers: 'block',
      acceptDownloads: false,
      ignoreHTTPSErrors: options.ignoreHttpsErrors === true,
    });
    // The scan's decisions never reach the service: the SDK's consent POST is answered here (docs/scanner.md).
    await context.route((target) => SDK_CONSENT_PATH.test(target.pathname), (route) => answerConsentLocally(route, result));
    await context.exposeBinding(BINDING, (source, type: string, name: string, area: string | null, attributes: string | null, scriptUrl: string | null, frameUrl: string) => {
      const documentUrl = withoutQuery(frameUrl || source.frame.url());
      const script = scriptUrl ? withoutQuery(scriptUrl) : null;
      const setBy: CookieSetter = script && script !== documentUrl ? { type: 'script', url: script } : { type: 'script', url: documentUrl, inline: true };
      const frameHost = hostOf(frameUrl || source.frame.url());
      if (type === 'cookie') {
        const text = String(attributes ?? '');
        setters.add(String(name), setBy);
        recordWrite({ type: 'cookie', name: String(name), area: null, attributes: text, domain: domainAttribute(text) ?? frameHost, setBy });
      } else {
        recordWrite({ type: 'storage', name: String(name), area: area === 'local' ? 'local' : 'session', attributes: null, domain: frameHost, setBy });
      }
    });
    await context.addInitScript(WRITE_HOOK);
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
      const entry = { host: parsed.hostname, url: withoutQuery(requestUrl), resourceType: request.resourceType(), initiator: initiatorOf(request), afterDecision };
      const key = `${entry.url} ${entry.resourceType} ${entry.afterDecision}`;
      if (seen.has(key) || result.requests.length >= MAX_REQUESTS) return;
      seen.add(key);
      result.requests.push(entry);
      requested.push({ entry, rawUrl: requestUrl });
    });
    context.on('response', (response: Response) => {
      if (SDK_CONFIG_PATH.test(withoutQuery(response.url()))) configAnswered();
      const stamp = { phase, at: Date.now(), afterDecision };
      pending.push(
        response
          .headerValues('set-cookie')
          .then(async (values) => {
            const lines = values.flatMap((v) => v.split('\n')).filter((line) => line.includes('='));
            if (!lines.length) return;
            const setBy: CookieSetter = { type: 'response', url: withoutQuery(response.url()) };
            // What the browser kept (a Secure cookie over http, say, is refused): only those are writes.
            const stored = new Set((await context!.cookies(response.url()).catch(() => [])).map((cookie) => cookie.name));
            for (const line of lines) {
              const name = line.split('=')[0]!.trim();
              setters.add(name, setBy);
              const cut = line.indexOf(';');
              const attributes = cut < 0 ? '' : line.slice(cut + 1).trim();
              if (!stored.has(name) || /max-age=(0|-)|expires=thu, 01 jan 1970/i.test(attributes) || result.writes.length >= MAX_WRITES) continue;
              const domain = domainAttribute(attributes) ?? hostOf(response.url());
              result.writes.push({ type: 'cookie', name, area: null, attributes, domain, party: partyOf(domain), setBy, load: stamp.phase, atMs: stamp.at - loadStarted, afterDecision: stamp.afterDecision });
            }
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

    /** Loads a page of the visit and waits for the network to settle; a failed reload or next page is recorded, not fatal. */
    const load = async (target: string, loadPhase: LoadPhase) => {
      phase = loadPhase;
      loadStarted = Date.now();
      const entry: PageLoad = { phase: loadPhase, url: target, finalUrl: null, status: null, error: null, startedAtMs: loadStarted - visitStarted };
      result.loads.push(entry);
      try {
        const response = await page.goto(target, { waitUntil: 'load', timeout: left() });
        entry.status = response?.status() ?? null;
      } catch (error) {
        entry.error = describe(error, proxy.overLimit);
        if (loadPhase === 'first') throw error;
      }
      entry.finalUrl = page.url();
      await page.waitForLoadState('networkidle', { timeout: left(3000) }).catch(() => {});
      return entry;
    };
    /** Watches what the page writes until `dwellMs` after `idleAt` (tags that write late), then notes its storage keys. */
    const dwell = async (idleAt: number) => {
      const rest = options.dwellMs - (Date.now() - idleAt);
      if (rest > 0) await page.waitForTimeout(left(rest));
      for (const item of await readStorage(page)) storageKeys.add(`${item.area} ${item.key}`);
    };

    const first = await load(url, 'first');
    const idleAt = Date.now();
    result.status = first.status;
    result.finalUrl = first.finalUrl;
    await Promise.allSettled(pending.splice(0));
    // The SDK fetches its config first: wait for the banner only where the SDK is on the page, from its config
    // answer on (a slow service is no missing banner), then up to 5 s for the SDK to show it.
    const banner = page.locator('[data-consent="banner"]');
    if (result.sdk.loaded) await Promise.race([configAnswer, new Promise((resolve) => setTimeout(resolve, left()).unref())]);
    result.bannerShown = await banner.waitFor({ state: 'visible', timeout: left(result.sdk.loaded ? 5000 : 300) }).then(
      () => true,
      () => false,
    );
    if (kind === 'before') {
      const hrefs = await page.evaluate(() => Array.from(document.querySelectorAll('a[href]'), (a) => (a as HTMLAnchorElement).href));
      result.links = [...new Set(hrefs.map((href) => href.split('#')[0]!).filter((href) => sameSite(href, pageSite)))].slice(0, MAX_LINKS);
      await dwell(idleAt);
    } else if (result.bannerShown) {
      afterDecision = true;
      await banner.locator(`[data-consent="${kind === 'reject' ? 'reject-all' : 'accept-all'}"]`).click({ timeout: left(5000) });
      result.decided = true;
      result.decidedAtMs = Date.now() - visitStarted;
      // What the page does once the decision is made: scripts unblocked, cookies removed.
      await banner.waitFor({ state: 'hidden', timeout: left(5000) }).catch(() => {});
      await page.waitForLoadState('networkidle', { timeout: left(3000) }).catch(() => {});
      // Then what the site does on every page view with the decision stored: the page again, and one more
      // same-site page where there is one (a tag that ignores the decision sets its cookies again here).
      await load(url, 'reload');
      await dwell(Date.now());
      if (options.nextUrl) {
        await load(options.nextUrl, 'next');
        await dwell(Date.now());
      }
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
        party: partyOf(cookie.domain),
        setBy: setters.setters.get(cookie.name) ?? null,
      }));
      await context.close().catch(() => {});
    }
    result.storage = [...storageKeys].map((item) => {
      const [area, ...key] = item.split(' ');
      return { area: area as 'local' | 'session', key: key.join(' ') };
    });
    for (const { entry, rawUrl } of requested) entry.initiator = scriptInitiators.get(rawUrl) ?? entry.initiator;
    result.refused = proxy.refused;
    result.bytes = proxy.bytes;
    result.truncated = proxy.overLimit;
    await proxy.close();
  }
  return result;
}

/** The keys of the page's localStorage and sessionStorage (none where storage is blocked). */
async function readStorage(page: Page): Promise<ObservedStorage[]> {
  const storage = await page
    .evaluate(() => {
      const keys = (area: () => Storage | undefined) => {
        try {
          const storage = area();
          return storage ? Object.keys(storage) : [];
        } catch {
          return [];
        }
      };
      return { local: keys(() => window.localStorage), session: keys(() => window.sessionStorage) };
    })
    .catch(() => ({ local: [] as string[], session: [] as string[] }));
  return [...storage.local.map((key) => ({ area: 'local' as const, key })), ...storage.session.map((key) => ({ area: 'session' as const, key }))];
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
