// A customer's page for SDK v2 (test/e2e/sdk-v2.test.ts, bench/sdk-banner-time.ts): served as
// http://www.acme.test:<port> (Chromium maps *.acme.test to 127.0.0.1, so cookies can be set for the parent
// domain acme.test), another origin than the service. It loads /sdk/v2/consent.js first, then a Google tag
// snippet, then a stand-in for gtag.js that consumes `dataLayer` in order, as the real library does, and logs
// what each tag would see (`window.gtagLog`); a blocked analytics script, a blocked ads iframe.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { SITE_HOSTS_ARG } from '../helpers/chromium.js';
import { launchChromium } from './harness.js';

export const SITE_HOST = 'www.acme.test';

/** Headless Chromium resolving *.acme.test to loopback. */
export function launchChromiumForSites(): Promise<Browser> {
  return launchChromium([SITE_HOSTS_ARG]);
}

export interface PageOptions {
  lang?: string;
  module?: boolean;
  /** v1 instead of v2 (the banner-time bench compares them on the same page). */
  v1?: boolean;
  /** The value of `data-google-consent-mode` on the SDK's script tag (undefined: no attribute). */
  consentModeAttribute?: string;
  /** `googleConsentMode: true` among the init options (the module form's way to declare it). */
  consentModeOption?: boolean;
  /**
   * A tag right after the SDK's that registers a `__gpp` listener at once (before gpp.js can have loaded) and
   * keeps what it hears in `window.gppEvents`, each marked `sync` when the callback ran inside the call.
   */
  gppListener?: boolean;
}

export interface SiteV2 {
  origin: string;
  page(key: string, options?: PageOptions): string;
  close(): Promise<void>;
}

// What gtag.js does with the queue, reduced to what the tests assert: commands in order, consent state kept,
// and each `config`/`event` logged with the analytics_storage it saw.
const GTAG_CONSUMER = `(function () {
  var state = {};
  window.gtagLog = [];
  function handle(a) {
    a = Array.prototype.slice.call(a);
    if (a[0] === 'consent') { for (var k in a[2]) state[k] = a[2][k]; gtagLog.push('consent ' + a[1] + ' analytics_storage=' + a[2].analytics_storage); }
    else if (a[0] === 'config' || a[0] === 'event') gtagLog.push(a[0] + ' ' + a[1] + ' analytics_storage=' + state.analytics_storage);
  }
  var dl = (window.dataLayer = window.dataLayer || []);
  dl.forEach(handle);
  var push = dl.push;
  dl.push = function () { for (var i = 0; i < arguments.length; i++) handle(arguments[i]); return push.apply(dl, arguments); };
})();`;

// A GPP reader as ad tags write it: one listener, registered as early as the page allows.
const GPP_LISTENER = `window.gppEvents = [];
var gppSync = true;
__gpp('addEventListener', function (e, ok) {
  gppEvents.push({ sync: gppSync, ok: ok, eventName: e.eventName, listenerId: e.listenerId, data: e.data, cmpStatus: e.pingData.cmpStatus, signalStatus: e.pingData.signalStatus });
});
gppSync = false;`;

export async function startSiteV2(serviceUrl: string): Promise<SiteV2> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    if (url.pathname === '/frame') {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>Video</title><p id="video">video player</p>');
      return;
    }
    if (url.pathname !== '/') return void res.writeHead(404).end();
    const json = (value: unknown) => JSON.stringify(value).replaceAll('<', '\\u003c');
    const key = url.searchParams.get('key') ?? '';
    const lang = url.searchParams.get('lang') ?? 'en';
    const v1 = url.searchParams.get('v1') === '1';
    const module = url.searchParams.get('module') === '1';
    const attribute = url.searchParams.get('gcm');
    const tagAttributes = attribute === null ? '' : ` data-google-consent-mode="${attribute.replace(/[^a-z]/gi, '')}"`;
    const consentModeOption = url.searchParams.get('gcmOption') === '1' ? 'googleConsentMode: true,' : '';
    const gppListener = url.searchParams.get('gpp') === '1' ? `\n<script>${GPP_LISTENER}</script>` : '';
    const sdk = `${serviceUrl}/sdk/${v1 ? 'v1' : 'v2'}/consent.${module ? 'mjs' : 'js'}`;
    const start = `
window.sdkEvents = [];
window.changes = [];
window.initStartedAt = performance.now();
addEventListener('consent:change', function (e) { changes.push(e.detail.choices); });
init({
  publicKey: ${json(key)},
  apiBaseUrl: ${json(serviceUrl)},${consentModeOption}
  onReady: function (c) {
    window.readyAt = performance.now();
    requestAnimationFrame(function () { window.bannerFrameAt = performance.now(); });
    sdkEvents.push({ type: 'ready', state: c.getConsent() });
  },
  onError: function (e) { sdkEvents.push({ type: 'error', code: e.code, status: e.status }); },
}).then(function (c) { window.consent = c; window.sdkSettled = 'ready'; }, function (e) { window.sdkSettled = 'rejected:' + e.code; });
// What a tag running right after init() sees of Consent Mode (the module form has no earlier moment).
window.consentAfterInit = (window.dataLayer || []).filter(function (a) { return a[0] === 'consent'; }).map(function (a) { return a[1]; });`;
    const script = module
      ? `<script type="module"${tagAttributes}>import { init } from ${json(sdk)};${start}</script>`
      : `<script src="${sdk}"${tagAttributes}></script>${gppListener}\n<script>var init = ConsentSDK.init;${start}</script>`;
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(`<!doctype html>
<html lang="${lang.replace(/[^A-Za-z-]/g, '')}"${/^(ar|he|fa|ur)\b/.test(lang) ? ' dir="rtl"' : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme shop</title>
${script}
<script>window.dataLayer = window.dataLayer || []; function gtag(){ dataLayer.push(arguments); } gtag('js', new Date()); gtag('config', 'G-TEST');</script>
<script>${GTAG_CONSUMER}</script>
<script type="text/plain" data-consent="analytics">window.analyticsRan = (window.analyticsRan || 0) + 1; gtag('event', 'page_view');</script>
<style>
body{margin:0;font:16px/1.5 Georgia,serif;color:#222;background:#fafaf7}
header{display:flex;gap:16px;align-items:center;padding:16px 24px;background:#1f4e79;color:#fff}
header a{color:#fff}
main{max-width:720px;margin:0 auto;padding:24px}
</style>
</head>
<body>
<header><a id="home" href="#">Acme shop</a><a id="products" href="#products">Products</a></header>
<main id="content">
<h1>Handmade mugs</h1>
<p>Stoneware mugs, thrown and glazed in our workshop. Each one holds about 350 ml and is safe in the dishwasher.</p>
<button id="page-button" type="button">Add to cart</button>
<button id="settings" type="button">Cookie settings</button>
<iframe id="video" title="Video" data-consent="ads" data-consent-src="/frame" width="300" height="80"></iframe>
</main>
<script>document.getElementById('settings').onclick = function () { window.consent.showPreferences(); };</script>
</body>
</html>`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const origin = `http://${SITE_HOST}:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    page: (key, o = {}) =>
      `${origin}/?key=${encodeURIComponent(key)}&lang=${o.lang ?? 'en'}${o.module ? '&module=1' : ''}${o.v1 ? '&v1=1' : ''}` +
      `${o.consentModeAttribute === undefined ? '' : `&gcm=${encodeURIComponent(o.consentModeAttribute)}`}${o.consentModeOption ? '&gcmOption=1' : ''}${o.gppListener ? '&gpp=1' : ''}`,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
