// What the browser tests (test/e2e) and bench/sdk-banner-time.ts share: the real service on
// http://localhost:<port>, a customer's site on another origin (http://127.0.0.1:<port2>) that includes the
// SDK with one script tag, a project set up through the operator REST API, and headless Debian Chromium.
// No vitest imports here, so the bench can use it too.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { BROWSER_ENDPOINT_VARIABLE, SHARED_BROWSER_ARGS } from '../helpers/browser-server.js';
import { CHROMIUM_ARGS, chromiumMissingMessage, findChromium } from '../helpers/chromium.js';
import type { StartOptions } from '../../src/server.js';
import { startTestServer, type TestOverrides, type TestServer } from '../helpers/server.js';

/**
 * Headless Debian Chromium (test/helpers/chromium.ts finds it, and installs it under `npm test` as root);
 * a missing browser is an error with the fix, never a skip. Under vitest: a connection to the run's one browser
 * (test/helpers/browser-server.ts) when it has the flags asked for; `close()` then only disconnects. Elsewhere
 * (bench/) a browser of its own.
 */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error(chromiumMissingMessage());
  const shared = process.env[BROWSER_ENDPOINT_VARIABLE];
  if (shared && extraArgs.every((arg) => SHARED_BROWSER_ARGS.includes(arg))) return chromium.connect(shared);
  return chromium.launch({ executablePath, args: [...CHROMIUM_ARGS, ...extraArgs] });
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise((done) => probe.close(done));
  return port;
}

/**
 * The service with PUBLIC_BASE_URL matching where it listens (the hosted /preferences page calls the SDK API
 * from that origin), reached as `localhost` so that the site on 127.0.0.1 is a different origin.
 */
export async function startService(overrides: TestOverrides = {}, options: StartOptions = {}): Promise<{ server: TestServer; serviceUrl: string }> {
  const port = await freePort();
  const serviceUrl = `http://localhost:${port}`;
  const server = await startTestServer({ ...overrides, port, publicBaseUrl: serviceUrl }, options);
  return { server, serviceUrl };
}

export interface Site {
  origin: string;
  /** The page address for a key; `module` loads consent.mjs instead of consent.js. */
  page(key: string, options?: { module?: boolean; hostileCss?: boolean }): string;
  close(): Promise<void>;
}

// Page CSS that would wreck the banner if it reached into the shadow root.
const HOSTILE_CSS = `button{background:#c00!important;color:#ff0!important;font:30px Georgia,serif!important;border-radius:0!important}
*{box-sizing:content-box!important}p{font-size:40px!important}h2{display:none!important}`;

/**
 * A customer's page: some content, the SDK from the service with one tag, and `init` recording what the
 * page sees: `window.sdkEvents` (onReady with the consent state at that moment, onError codes),
 * `window.sdkSettled` ('ready' or 'rejected:<code>') and `window.consent` (the client).
 */
export async function startSite(serviceUrl: string): Promise<Site> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    if (url.pathname !== '/') {
      res.writeHead(404).end();
      return;
    }
    const key = url.searchParams.get('key') ?? '';
    const module = url.searchParams.get('module') === '1';
    const json = (value: unknown) => JSON.stringify(value).replaceAll('<', '\\u003c');
    const start = `
window.sdkEvents = [];
window.initStartedAt = performance.now();
init({
  publicKey: ${json(key)},
  apiBaseUrl: ${json(serviceUrl)},
  onReady: function (c) {
    window.readyAt = performance.now();
    // The banner is in the DOM before onReady; the next frame is the first that paints it.
    requestAnimationFrame(function () { window.bannerFrameAt = performance.now(); });
    sdkEvents.push({ type: 'ready', state: c.getConsent(), analytics: c.hasConsent('analytics') });
  },
  onError: function (e) { sdkEvents.push({ type: 'error', code: e.code, status: e.status }); },
}).then(function (c) { window.consent = c; window.sdkSettled = 'ready'; }, function (e) { window.sdkSettled = 'rejected:' + e.code; });`;
    const script = module
      ? `<script type="module">import { init } from ${json(`${serviceUrl}/sdk/v1/consent.mjs`)};${start}</script>`
      : `<script src="${serviceUrl}/sdk/v1/consent.js"></script>\n<script>var init = ConsentSDK.init;${start}</script>`;
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme shop</title>
<style>
body{margin:0;font:16px/1.5 Georgia,serif;color:#222;background:#fafaf7}
header{display:flex;gap:16px;align-items:center;padding:16px 24px;background:#1f4e79;color:#fff}
header a{color:#fff}
main{max-width:720px;margin:0 auto;padding:24px}
${url.searchParams.get('hostile') === '1' ? HOSTILE_CSS : ''}
</style>
</head>
<body>
<header><a id="home" href="#">Acme shop</a><a href="#products">Products</a></header>
<main id="content">
<h1>Handmade mugs</h1>
<p>Stoneware mugs, thrown and glazed in our workshop. Each one holds about 350 ml and is safe in the dishwasher.</p>
<p>Free shipping on orders over 50 euros. Returns within 30 days.</p>
<button id="page-button" type="button">Add to cart</button>
</main>
${script}
</body>
</html>`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    page: (key, options = {}) => `${origin}/?key=${encodeURIComponent(key)}${options.module ? '&module=1' : ''}${options.hostileCss ? '&hostile=1' : ''}`,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

export const NOTICE = {
  title: 'We value your privacy',
  description: 'We use cookies to run the shop and, with your consent, to measure visits and show relevant ads.',
  acceptLabel: 'Accept all',
  rejectLabel: 'Reject all',
  manageLabel: 'Manage choices',
  companyName: 'Acme GmbH',
  logoUrl: '',
  primaryColor: '#1f4e79',
};

export interface Draft {
  purposes: { key: string; name: string; description: string; required: boolean; categoryId: string; sortOrder: number }[];
  notice: typeof NOTICE;
}

/** One required and two optional purposes in two categories. */
export function sampleDraft(): Draft {
  return {
    purposes: [
      { key: 'necessary', name: 'Necessary', description: 'Keeps the shop and your basket working.', required: true, categoryId: 'essential', sortOrder: 0 },
      { key: 'analytics', name: 'Analytics', description: 'Counts visits so we know which pages help.', required: false, categoryId: 'marketing', sortOrder: 1 },
      { key: 'ads', name: 'Advertising', description: 'Shows ads that match your interests.', required: false, categoryId: 'marketing', sortOrder: 2 },
    ],
    notice: { ...NOTICE },
  };
}

async function call(server: TestServer, method: string, path: string, token: string | undefined, body: unknown, expected: number) {
  const res = await server.request(method, path, { token, body });
  if (res.status !== expected) throw new Error(`${method} ${path}: expected ${expected}, got ${res.status} ${res.text}`);
  return res.body;
}

export interface SiteProject {
  projectId: string;
  ownerToken: string;
  key: string;
  version: { id: string; number: number; consentHash: string; contentHash: string };
  /** Replaces the draft (categories and purposes recreated) and publishes it. */
  publish(draft: Draft): Promise<SiteProject['version']>;
  /** Receipts through the operator API, newest first. */
  receipts(): Promise<{ id: string; versionNumber: number; consentHash: string; choices: Record<string, boolean>; installationId: string; sdkVersion: string }[]>;
}

/**
 * An operator, organization and project, set up through the operator REST API: draft, publish, key, and
 * the allowed origins (`origins`; none keeps the default of enforcement with an empty list).
 */
export async function setupProject(server: TestServer, origins: string[] = [], draft: Draft = sampleDraft()): Promise<SiteProject> {
  const email = `owner-${randomBytes(6).toString('hex')}@example.com`;
  const password = 'correct horse battery staple';
  await call(server, 'POST', '/api/platform/auth/register', undefined, { email, password, name: 'Owner' }, 201);
  const { token } = await call(server, 'POST', '/api/platform/auth/login', undefined, { email, password }, 200);
  const { organization } = await call(server, 'POST', '/api/platform/orgs', token, { name: 'Acme' }, 201);
  const { project } = await call(server, 'POST', `/api/platform/orgs/${organization.id}/projects`, token, { name: 'Shop' }, 201);
  const base = `/api/platform/projects/${project.id}`;
  const publish = async (d: Draft) => {
    const categories = [
      { ref: 'essential', name: 'Essential', sortOrder: 0 },
      { ref: 'marketing', name: 'Marketing', sortOrder: 1 },
    ];
    await call(server, 'PUT', `${base}/consent`, token, { categories, purposes: d.purposes, notice: d.notice }, 200);
    return (await call(server, 'POST', `${base}/consent/publish`, token, undefined, 201)).version;
  };
  const version = await publish(draft);
  const { secret } = await call(server, 'POST', `${base}/api-keys`, token, { name: 'site' }, 201);
  if (origins.length) await call(server, 'PUT', `${base}/allowed-origins`, token, { origins }, 200);
  return {
    projectId: project.id,
    ownerToken: token,
    key: secret,
    version,
    publish,
    receipts: async () => (await call(server, 'GET', `${base}/receipts?limit=200`, token, undefined, 200)).receipts,
  };
}
