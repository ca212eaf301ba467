// One visit of one page in a fresh browser context: before any decision, or after the visitor clicked
// "Reject all" or "Accept all" in the project's own banner (sdk/src/v2/ui.ts: `[data-consent="banner"]`
// with `[data-consent="reject-all"]` and `[data-consent="accept-all"]`, in the SDK's open shadow root,
// which Playwright's locators pierce). Records what the browser tells: cookies with who set them,
// storage keys, requests to other sites with their initiator, the SDK and its banner.
import type { Browser, BrowserContext, Frame, Request, Response, Route } from 'playwright-core';
import { uuidv7 } from 'uuidv7';
import { siteOf } from './catalogue.js';
import type { TrackerList } from './trackers.js';
import { screenshotOf, type VisitEvidence } from './artifacts.js';
import { installCookieHook } from './cookie-hook.js';
import { CLOSE_GRACE_MS, closeContext, Deadline, DeadlinePassed, settleWithin } from './deadline.js';
import { startGuardProxy, type AddressPolicy, type RefusedRequest } from './guard-proxy.js';
import { linksAndFormsOf, readLinksAndForms, type PageLinksAndForms } from './links.js';
import { watchWebSockets, type VisitWebSockets } from './websockets.js';

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
  /** A frame's storage of another origin than the page's (an ad or widget frame); absent: the page's own. */
  origin?: string;
  /** With `origin`: whether that origin is the page's site (first) or another (third). */
  party?: 'first' | 'third';
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
  /** The EasyPrivacy rule that names the request (its full URL) as tracking; null when none does (trackers.ts). */
  tracker: string | null;
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
  /** How many of each were seen but not kept (the caps in VISIT_CAPS); all 0 when nothing was cut. */
  cut: { storageKeys: number; cookies: number; requests: number; links: number };
  /** Same-site links on the page (before visits only). */
  links: string[];
  /** Before visits: the page's links to other sites and to its policies, and its forms over plain http (links.ts); moved to the page in the report. */
  linksAndForms?: PageLinksAndForms;
  /** The WebSockets the page opened, with their frames counted and previewed (websockets.ts); absent in reports made before. */
  websockets?: VisitWebSockets;
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
  /** Names requests to other sites as tracking (EasyPrivacy); absent, none is named. */
  trackers?: TrackerList;
  /** Where the visit's HAR and (before visits) screenshot go (artifacts.ts); absent, none are made. */
  evidence?: VisitEvidence;
}

const SDK_CONFIG_PATH = /\/api\/sdk\/v[12]\/config$/;
/**
 * How long a frame of another origin may take to list its storage keys before it is left out: long enough for a
 * loaded machine (a busy renderer answers a one-line evaluation within a second or two), short enough that a frame
 * stuck in a loop costs a visit seconds, not its whole deadline (the frames are asked together).
 */
const FRAME_STORAGE_MS = 3000;
/** An http(s) document's origin; null for about:blank, data: and the like (they have no storage of their own). */
const originOf = (url: string) => (/^https?:\/\//.test(url) ? new URL(url).origin : null);
/** Where the SDK (v1 and v2) sends a decision to become a receipt. */
const SDK_CONSENT_PATH = /\/api\/sdk\/v[12]\/consent$/;
/**
 * What one visit keeps, so a page cannot make its report (and the scan answer) as big as it likes: the page's
 * own evaluation returns at most this many storage keys per area and links, names and URLs are cut to a length,
 * and the visit says how many were left out (`cut`). Writes are capped too (the hook reports at most 500 per
 * document, cookie-hook.ts), without a count.
 */
export const VISIT_CAPS = { storageFrames: 20, storageKeysPerArea: 500, cookies: 300, requests: 300, writes: 500, links: 200, linksLooked: 1000, nameChars: 200, urlChars: 2000 };

const withoutQuery = (url: string) => {
  try {
    const parsed = new URL(url);
    return (parsed.origin + parsed.pathname).slice(0, VISIT_CAPS.urlChars);
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
    cut: { storageKeys: 0, cookies: 0, requests: 0, links: 0 },
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
  // Every browser and CDP call races the visit's deadline: a page can keep its renderer busy for good.
  const deadline = new Deadline(options.timeoutMs);
  const left = (cap?: number) => deadline.left(cap);
  const within = deadline.race.bind(deadline);
  const visitStarted = Date.now();
  // Which load is going on, since when, and whether the decision was made: every observation is stamped with it.
  let phase: LoadPhase = 'first';
  let loadStarted = visitStarted;
  // Set just before the click, so what the click itself sets off counts as after the decision.
  let afterDecision = false;
  const recordWrite = (write: Omit<ObservedWrite, 'load' | 'atMs' | 'afterDecision' | 'party'>) => {
    if (result.writes.length >= VISIT_CAPS.writes) return;
    result.writes.push({ ...write, party: partyOf(write.domain), load: phase, atMs: Date.now() - loadStarted, afterDecision });
  };
  // Storage keys seen after the judged loads, per area (capped; `cut.storageKeys` counts what was left out).
  const storageKeys = { local: new Set<string>(), session: new Set<string>() };
  const storageCut = { local: 0, session: 0 };
  // Frames of other origins have storage of their own (ads, widgets): `${origin} ${key}`, capped per area in all.
  const frameKeys = { local: new Set<string>(), session: new Set<string>() };
  const frameCut = new Map<string, number>();
  // The SDK's config answer: the banner is waited for from then on (a busy service may take long to answer).
  let configAnswered = () => {};
  const configAnswer = new Promise<void>((resolve) => (configAnswered = resolve));
  try {
    // Service workers are blocked (their requests would escape page-level observation); every connection,
    // WebSockets included, goes through the guard proxy.
    context = await within(
      browser.newContext({ proxy: { server: proxy.url }, serviceWorkers: 'block', acceptDownloads: false, ignoreHTTPSErrors: options.ignoreHttpsErrors === true }),
    );
    // The scan's decisions never reach the service: the SDK's consent POST is answered here (docs/scanner.md).
    await within(context.route((target) => SDK_CONSENT_PATH.test(target.pathname), (route) => answerConsentLocally(route, result)));
    // Cookie and storage writes, with who made them, through a binding the page cannot call (cookie-hook.ts).
    const writeHook = await within(installCookieHook(context));
    // The visit's HAR, from the same network events (artifacts.ts): kept even when the page holds its renderer.
    options.evidence?.har.listen(context);
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
      const entry = { host: parsed.hostname, url: withoutQuery(requestUrl), resourceType: request.resourceType(), initiator: initiatorOf(request), afterDecision, tracker: null as string | null };
      const key = `${entry.url} ${entry.resourceType} ${entry.afterDecision}`;
      if (seen.has(key)) return;
      entry.tracker = options.trackers?.match(requestUrl, url, entry.resourceType) ?? null;
      if (result.requests.length >= VISIT_CAPS.requests) return void result.cut.requests++;
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
              if (!stored.has(name) || /max-age=(0|-)|expires=thu, 01 jan 1970/i.test(attributes) || result.writes.length >= VISIT_CAPS.writes) continue;
              const domain = domainAttribute(attributes) ?? hostOf(response.url());
              result.writes.push({ type: 'cookie', name, area: null, attributes, domain, party: partyOf(domain), setBy, load: stamp.phase, atMs: stamp.at - loadStarted, afterDecision: stamp.afterDecision });
            }
          })
          .catch(() => {}),
      );
    });
    const page = await within(context.newPage());
    const cdp = await within(context.newCDPSession(page));
    // WebSockets: recorded with their frames; one to another site is also a request (websockets.ts).
    result.websockets = watchWebSockets(page, cdp, {
      pageUrl: url,
      pageSite,
      trackers: options.trackers,
      now: () => ({ load: phase, atMs: Date.now() - visitStarted, afterDecision }),
      request: (entry) => (result.requests.length >= VISIT_CAPS.requests ? void result.cut.requests++ : void result.requests.push(entry)),
    });
    await within(
      writeHook.listen(cdp, (write) => {
        const documentUrl = withoutQuery(write.documentUrl || page.url());
        const script = write.scriptUrl ? withoutQuery(write.scriptUrl) : null;
        // A caller without a URL, or at the document's own URL, is an inline script; a stack the page kept from
        // the hook names nobody (never a guess).
        const setBy: CookieSetter | null = !write.stackRead ? null : script && script !== documentUrl ? { type: 'script', url: script } : { type: 'script', url: documentUrl, inline: true };
        const frameHost = hostOf(write.documentUrl || page.url());
        if (write.type === 'cookie') {
          if (setBy) setters.add(write.name, setBy);
          recordWrite({ type: 'cookie', name: write.name, area: null, attributes: write.attributes, domain: domainAttribute(write.attributes ?? '') ?? frameHost, setBy });
        } else {
          recordWrite({ type: 'storage', name: write.name, area: write.area, attributes: null, domain: frameHost, setBy });
        }
      }),
    );
    cdp.on('Network.requestWillBeSent', (event) => {
      // The script on top of the (async) stack, else the parser's document; a CORS preflight names itself.
      let stack = event.initiator.stack;
      while (stack && !stack.callFrames.some((frame) => frame.url)) stack = stack.parent;
      const script = stack?.callFrames.find((frame) => frame.url)?.url ?? (event.initiator.type === 'preflight' ? undefined : event.initiator.url);
      if (script && !scriptInitiators.has(event.request.url)) scriptInitiators.set(event.request.url, withoutQuery(script));
    });
    await within(cdp.send('Network.enable'));

    /** Loads a page of the visit and waits for the network to settle; a failed reload or next page is recorded, not fatal. */
    const load = async (target: string, loadPhase: LoadPhase) => {
      phase = loadPhase;
      loadStarted = Date.now();
      const entry: PageLoad = { phase: loadPhase, url: target, finalUrl: null, status: null, error: null, startedAtMs: loadStarted - visitStarted };
      result.loads.push(entry);
      try {
        const response = await within(page.goto(target, { waitUntil: 'load', timeout: left() }));
        entry.status = response?.status() ?? null;
      } catch (error) {
        entry.error = describe(error, proxy.overLimit);
        if (loadPhase === 'first' || error instanceof DeadlinePassed) throw error;
      }
      entry.finalUrl = page.url();
      await within(page.waitForLoadState('networkidle', { timeout: left(3000) }).catch(() => {}));
      return entry;
    };
    /** Storage keys of one document, counted and capped inside it (25,000 keys never leave it). */
    const storageOf = (frame: Frame) =>
      frame.evaluate(
        ({ max, chars }) => {
          const keys = (area: () => Storage) => {
            try {
              const store = area();
              const kept: string[] = [];
              // Storage.key walks without a copy.
              for (let i = 0; i < store.length && kept.length < max; i++) kept.push(String(store.key(i)).slice(0, chars));
              return { kept, total: store.length };
            } catch {
              return { kept: [], total: 0 };
            }
          };
          return { local: keys(() => window.localStorage), session: keys(() => window.sessionStorage) };
        },
        { max: VISIT_CAPS.storageKeysPerArea, chars: VISIT_CAPS.nameChars },
      );
    /** What a document answered, checked again here (it can replace the builtins the evaluation used). */
    const keysOf = (storage: Awaited<ReturnType<typeof storageOf>> | null, area: 'local' | 'session') => {
      const { kept, total } = storage?.[area] ?? { kept: [], total: 0 };
      const keys = (Array.isArray(kept) ? kept : []).slice(0, VISIT_CAPS.storageKeysPerArea).map((key) => String(key).slice(0, VISIT_CAPS.nameChars));
      return { keys, left: Math.max(0, (Number(total) || 0) - keys.length) };
    };
    /** Notes the page's storage keys, then those of its frames of other origins (as the EDPS collector does). */
    const readStorage = async () => {
      const storage = await within(storageOf(page.mainFrame()));
      for (const area of ['local', 'session'] as const) {
        const { keys, left: notKept } = keysOf(storage, area);
        storageCut[area] = Math.max(storageCut[area], notKept);
        for (const key of keys) {
          if (storageKeys[area].has(key)) continue;
          if (storageKeys[area].size >= VISIT_CAPS.storageKeysPerArea) storageCut[area]++;
          else storageKeys[area].add(key);
        }
      }
      const pageOrigin = originOf(page.url());
      // One frame per origin, at most storageFrames, asked together: a frame that does not answer within
      // FRAME_STORAGE_MS (busy, or gone) is left out and never holds the visit up.
      const frames = new Map<string, Frame>();
      for (const frame of page.frames()) {
        const origin = originOf(frame.url());
        if (origin && origin !== pageOrigin && !frames.has(origin) && frames.size < VISIT_CAPS.storageFrames) frames.set(origin, frame);
      }
      const answers = await within(Promise.all([...frames].map(async ([origin, frame]) => ({ origin, answer: await settleWithin(storageOf(frame), FRAME_STORAGE_MS, null) }))));
      for (const { origin, answer } of answers) {
        for (const area of ['local', 'session'] as const) {
          const { keys, left: notKept } = keysOf(answer, area);
          frameCut.set(`${origin} ${area}`, Math.max(frameCut.get(`${origin} ${area}`) ?? 0, notKept));
          for (const key of keys) {
            const entry = `${origin} ${key}`;
            if (frameKeys[area].has(entry)) continue;
            if (frameKeys[area].size >= VISIT_CAPS.storageKeysPerArea) storageCut[area]++;
            else frameKeys[area].add(entry);
          }
        }
      }
    };
    /** Watches what the page writes until `dwellMs` after `idleAt` (tags that write late), then notes its storage keys. */
    const dwell = async (idleAt: number) => {
      const rest = options.dwellMs - (Date.now() - idleAt);
      if (rest > 0) await within(page.waitForTimeout(left(rest)));
      await readStorage();
    };

    const first = await load(url, 'first');
    const idleAt = Date.now();
    result.status = first.status;
    result.finalUrl = first.finalUrl;
    await within(Promise.allSettled(pending.splice(0)));
    // The SDK fetches its config first: wait for the banner only where the SDK is on the page, from its config
    // answer on (a slow service is no missing banner), then up to 5 s for the SDK to show it.
    const banner = page.locator('[data-consent="banner"]');
    if (result.sdk.loaded) await within(configAnswer).catch(() => {});
    result.bannerShown = await within(
      banner.waitFor({ state: 'visible', timeout: left(result.sdk.loaded ? 5000 : 300) }).then(
        () => true,
        () => false,
      ),
    );
    // What the visitor first sees, banner included: the viewport, never the full page (artifacts.ts).
    if (kind === 'before' && options.evidence) await within(screenshotOf(page, options.evidence, left()));
    if (kind === 'before') {
      const anchors = await within(
        page.evaluate(
          ({ max, chars }) => {
            const all = document.querySelectorAll('a[href]');
            const hrefs: string[] = [];
            for (let i = 0; i < all.length && i < max; i++) {
              const href = (all[i] as HTMLAnchorElement).href;
              if (typeof href === 'string' && href.length <= chars) hrefs.push(href);
            }
            return { hrefs, total: all.length };
          },
          { max: VISIT_CAPS.linksLooked, chars: VISIT_CAPS.urlChars },
        ),
      );
      const hrefs = (Array.isArray(anchors?.hrefs) ? anchors.hrefs : []).slice(0, VISIT_CAPS.linksLooked).map((href) => String(href).slice(0, VISIT_CAPS.urlChars));
      const sameSiteLinks = [...new Set(hrefs.map((href) => href.split('#')[0]!).filter((href) => sameSite(href, pageSite)))];
      result.links = sameSiteLinks.slice(0, VISIT_CAPS.links);
      result.cut.links = Math.max(0, (Number(anchors?.total) || 0) - hrefs.length) + (sameSiteLinks.length - result.links.length);
      result.linksAndForms = linksAndFormsOf(await within(readLinksAndForms(page).catch(() => null)), pageSite, page.url());
      await dwell(idleAt);
    } else if (result.bannerShown) {
      afterDecision = true;
      await within(banner.locator(`[data-consent="${kind === 'reject' ? 'reject-all' : 'accept-all'}"]`).click({ timeout: left(5000) }));
      result.decided = true;
      result.decidedAtMs = Date.now() - visitStarted;
      // What the page does once the decision is made: scripts unblocked, cookies removed.
      await within(banner.waitFor({ state: 'hidden', timeout: left(5000) }).catch(() => {}));
      await within(page.waitForLoadState('networkidle', { timeout: left(3000) }).catch(() => {}));
      // Then what the site does on every page view with the decision stored: the page again, and one more
      // same-site page where there is one (a tag that ignores the decision sets its cookies again here).
      await load(url, 'reload');
      await dwell(Date.now());
      if (options.nextUrl) {
        await load(options.nextUrl, 'next');
        await dwell(Date.now());
      }
    } else {
      // No banner to decide in: what the page holds after its one load (no dwell: nothing is judged after a decision).
      await readStorage();
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
        party: partyOf(cookie.domain),
        setBy: setters.setters.get(cookie.name) ?? null,
      }));
      // Past the deadline this is what stops the page: its renderer goes with the context (or the browser).
      if (await closeContext(context, browser)) result.error ??= 'The browser did not close the page; it was restarted';
    }
    result.storage = (['local', 'session'] as const).flatMap((area) => [
      ...[...storageKeys[area]].map((key): ObservedStorage => ({ area, key })),
      ...[...frameKeys[area]].map((entry): ObservedStorage => {
        const origin = entry.slice(0, entry.indexOf(' '));
        return { area, key: entry.slice(origin.length + 1), origin, party: partyOf(new URL(origin).hostname) };
      }),
    ]);
    result.cut.storageKeys = storageCut.local + storageCut.session + [...frameCut.values()].reduce((a, b) => a + b, 0);
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
