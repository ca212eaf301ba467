// One visit of one page in a fresh browser context: before any decision, or after the visitor clicked
// "Reject all" or "Accept all" in the project's own banner (sdk/src/v2/ui.ts: `[data-consent="banner"]`
// with `[data-consent="reject-all"]` and `[data-consent="accept-all"]`, in the SDK's open shadow root,
// which Playwright's locators pierce). Records what the browser tells: cookies with who set them,
// storage keys, requests to other sites with their initiator, the SDK and its banner.
import type { Browser, BrowserContext } from 'playwright-core';
import type { TrackerList } from './trackers.js';
import { collectArtifacts, type VisitEvidence } from './artifacts.js';
import { collectConsentMode, type VisitConsentMode } from './consent-mode.js';
import { collectCookiesAndStorage } from './cookies-storage.js';
import { closeContext, Deadline, DeadlinePassed } from './deadline.js';
import { startGuardProxy, type AddressPolicy, type GuardProxy, type RefusedRequest } from './guard-proxy.js';
import { collectLinks, type PageLinksAndForms } from './links.js';
import { collectRequests } from './requests.js';
import { watchSdk } from './sdk-on-page.js';
import { VisitSession, type Collector } from './visit-session.js';
import { collectWebSockets, type VisitWebSockets } from './websockets.js';

export { VISIT_CAPS } from './visit-session.js';

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
  /** Which load of the visit sent it (its page is that load's URL); absent in reports made before. */
  load?: LoadPhase;
  /** The EasyPrivacy rule that names the request (its full URL) as tracking; null when none does (trackers.ts). */
  tracker: string | null;
  /**
   * Present (true) when only the guard proxy saw it: sent by a page being left (sendBeacon, a keepalive fetch, an
   * image ping on pagehide or unload), which the browser's events do not show. Over https only its host is known.
   */
  leaving?: true;
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
  /** Google tag requests carrying Consent Mode's `gcs`/`gcd`, read (consent-mode.ts); absent in reports made before. */
  consentMode?: VisitConsentMode;
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


/** How long the visit waits, after leaving its last page, for what that page sends on its way out. */
const LEAVE_MS = 1500;
const LEAVE_QUIET_MS = 250;
/** Leaving is skipped when less than this is left of the visit's deadline. */
const LEAVE_ROOM_MS = 5000;

const emptyResult = (kind: VisitKind, url: string): VisitResult => ({
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
});

export async function visitPage(browser: Browser, url: string, kind: VisitKind, options: VisitOptions): Promise<VisitResult> {
  const proxy = await startGuardProxy(options.policy, options.maxBytes);
  const result = emptyResult(kind, url);
  const deadline = new Deadline(options.timeoutMs);
  let context: BrowserContext | undefined;
  let collectors: Collector[] = [];
  try {
    // Service workers are blocked (their requests would escape page-level observation); every connection,
    // WebSockets included, goes through the guard proxy.
    context = await deadline.race(
      browser.newContext({ proxy: { server: proxy.url }, serviceWorkers: 'block', acceptDownloads: false, ignoreHTTPSErrors: options.ignoreHttpsErrors === true }),
    );
    const page = await deadline.race(context.newPage());
    const session = new VisitSession(url, kind, options, result, deadline, context, page, await deadline.race(context.newCDPSession(page)));
    const sdk = await watchSdk(session);
    collectors = [
      await collectCookiesAndStorage(session),
      collectRequests(session, proxy),
      collectWebSockets(session),
      collectConsentMode(session),
      // The screenshot first: what the visitor sees before anything else is read.
      ...(options.evidence ? [collectArtifacts(session, options.evidence)] : []),
      ...(kind === 'before' ? [collectLinks(session)] : []),
    ];
    await session.within(session.cdp.send('Network.enable'));
    await visitSteps(session, proxy, collectors, sdk.configAnswered);
  } catch (error) {
    result.error = describe(error, proxy.overLimit);
  } finally {
    for (const collector of collectors) await collector.finish?.();
    // Past the deadline this is what stops the page: its renderer goes with the context (or the browser).
    if (context && (await closeContext(context, browser))) result.error ??= 'The browser did not close the page; it was restarted';
    result.refused = proxy.refused;
    result.bytes = proxy.bytes;
    result.truncated = proxy.overLimit;
    await proxy.close();
  }
  return result;
}

/** What a visitor does: load the page, see the banner, decide (or not), and go on with the decision stored. */
async function visitSteps(session: VisitSession, proxy: GuardProxy, collectors: Collector[], configAnswered: Promise<void>): Promise<void> {
  const { page, result, kind, options } = session;
  const each = async (step: 'pageShown' | 'afterLoad') => {
    for (const collector of collectors) await collector[step]?.();
  };

  /** Loads a page of the visit and waits for the network to settle; a failed reload or next page is recorded, not fatal. */
  const load = async (target: string, phase: LoadPhase) => {
    session.startLoad(phase, target);
    const entry: PageLoad = { phase, url: target, finalUrl: null, status: null, error: null, startedAtMs: session.now().visitMs };
    result.loads.push(entry);
    try {
      const response = await session.within(page.goto(target, { waitUntil: 'load', timeout: session.left() }));
      entry.status = response?.status() ?? null;
    } catch (error) {
      entry.error = describe(error, proxy.overLimit);
      if (phase === 'first' || error instanceof DeadlinePassed) throw error;
    }
    entry.finalUrl = page.url();
    await session.within(page.waitForLoadState('networkidle', { timeout: session.left(3000) }).catch(() => {}));
    return entry;
  };
  /** Watches what the page does until `dwellMs` after `idleAt` (tags that act late): the collectors record it as it happens. */
  const watch = async (idleAt: number) => {
    const rest = options.dwellMs - (Date.now() - idleAt);
    if (rest > 0) await session.within(page.waitForTimeout(session.left(rest)));
  };
  /**
   * Leaves the last judged page as a visitor does (to about:blank), so what it sends on pagehide and unload is
   * sent now, while the guard proxy still listens; then waits until the proxy saw nothing new for LEAVE_QUIET_MS
   * (at most LEAVE_MS). The browser's events never show these requests: the requests collector finds them in the
   * proxy's log.
   */
  const leave = async () => {
    // Near the deadline the visit keeps what it has (the page's last requests are then not seen; docs/scanner.md).
    if (session.left() < LEAVE_ROOM_MS) return;
    session.startLeaving();
    await session.within(page.goto('about:blank', { timeout: session.left(LEAVE_MS) }).catch(() => {}));
    const until = Date.now() + LEAVE_MS;
    let seen = -1;
    while (seen !== proxy.connections.length && Date.now() < until) {
      seen = proxy.connections.length;
      await session.within(new Promise((resolve) => setTimeout(resolve, LEAVE_QUIET_MS)));
    }
  };
  /** A judged load: watched for the dwell window, then the collectors read what the page holds. */
  const dwell = async (idleAt: number) => {
    await watch(idleAt);
    await each('afterLoad');
  };

  const first = await load(session.url, 'first');
  const idleAt = Date.now();
  result.status = first.status;
  result.finalUrl = first.finalUrl;
  await session.within(session.settle());
  // The SDK fetches its config first: wait for the banner only where the SDK is on the page, from its config
  // answer on (a slow service is no missing banner), then up to 5 s for the SDK to show it.
  const banner = page.locator('[data-consent="banner"]');
  if (result.sdk.loaded) await session.within(configAnswered).catch(() => {});
  result.bannerShown = await session.within(
    banner.waitFor({ state: 'visible', timeout: session.left(result.sdk.loaded ? 5000 : 300) }).then(
      () => true,
      () => false,
    ),
  );
  if (kind === 'before') {
    await each('pageShown');
    await dwell(idleAt);
    await leave();
  } else if (result.bannerShown) {
    session.afterDecision = true;
    session.decidedAt = Date.now();
    await session.within(banner.locator(`[data-consent="${kind === 'reject' ? 'reject-all' : 'accept-all'}"]`).click({ timeout: session.left(5000) }));
    result.decided = true;
    result.decidedAtMs = session.now().visitMs;
    // What the page does once the decision is made: scripts unblocked, cookies removed, and tags that act a
    // moment after the click. Network idle answers at once on a page that was idle already, so the page is
    // watched for the dwell window too before it is left.
    await session.within(banner.waitFor({ state: 'hidden', timeout: session.left(5000) }).catch(() => {}));
    await session.within(page.waitForLoadState('networkidle', { timeout: session.left(3000) }).catch(() => {}));
    await watch(Date.now());
    // Then what the site does on every page view with the decision stored: the page again, and one more
    // same-site page where there is one (a tag that ignores the decision sets its cookies again here).
    await load(session.url, 'reload');
    await dwell(Date.now());
    if (options.nextUrl) {
      await load(options.nextUrl, 'next');
      await dwell(Date.now());
    }
    await leave();
  } else {
    // No banner to decide in: what the page holds after its one load (no dwell: nothing is judged after a decision).
    await each('afterLoad');
  }
}

function describe(error: unknown, overLimit: boolean): string {
  if (overLimit) return 'The page went over the byte limit; the visit was cut short';
  const message = (error as Error).message ?? String(error);
  return message.split('\n')[0]!.slice(0, 300);
}
