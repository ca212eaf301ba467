// A news site with ads on IAB TCF, and the consent service it uses, on one loopback server
// (test/e2e/sdk-v2-tcf.test.ts, bench/sdk-tcf.ts). The service's TCF side is another branch's (docs/tcf.md): this
// plays it with exactly the published shapes — the v2 config with `experience.tcf`, `GET
// /api/sdk/v2/tcf/vendor-list`, the consent POST — from the shared GVL fixture in test/fixtures/tcf/, and serves
// the built SDK files. Hosts (Chromium maps *.acme.test to 127.0.0.1, see site-v2.ts):
//   http://127.0.0.1:<port>          the service (/sdk/v2/*, /api/sdk/*)
//   http://www.acme.test:<port>/     the site's page: stub.js with data-tcf, an ad tag in <head>, consent.js, an ad frame
//   http://ads.acme.test:<port>/     the ad in a cross-origin iframe, calling __tcfapi by postMessage
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const DIST = new URL('../../sdk/dist/v2/', import.meta.url);
const fixture = (version: 1 | 2) => JSON.parse(readFileSync(new URL(`../fixtures/tcf/vendor-list-v${version}.json`, import.meta.url), 'utf8'));
export const CMP_ID = 123;
const ATPS = [
  { id: 39, name: 'Fixture Retargeting', policyUrl: 'https://atp39.example/privacy', domains: ['atp39.example'] },
  { id: 89, name: 'Fixture Audience, Inc.', policyUrl: 'https://atp89.example/privacy', domains: ['atp89.example'] },
];

/** What the service publishes; a test sets it before a visit. `tcf: false`: the same project without TCF, and no stub on the page. */
export interface Published {
  tcf: boolean;
  vendorListVersion: 1 | 2;
  vendors: number[];
  jurisdiction: { code: string; rule: string } | null;
  mode: 'opt-in' | 'opt-out';
  publisher: boolean;
  /** The special features the operator asks for (default [1]). */
  specialFeatures?: number[];
  /** The site's page refuses inline styles (`Content-Security-Policy: style-src 'self'`), as strict sites do. */
  styleCsp?: boolean;
}
export const defaultPublished = (): Published => ({ tcf: true, vendorListVersion: 1, vendors: [1, 2, 3], jurisdiction: { code: 'DE', rule: 'eea' }, mode: 'opt-in', publisher: true });

export interface TcfSite {
  serviceUrl: string;
  siteOrigin: string;
  adsOrigin: string;
  published: Published;
  /** Bodies of the consent POSTs, in order. */
  receipts: Record<string, unknown>[];
  close(): Promise<void>;
}

const purpose = (key: string, required: boolean, sortOrder: number) => ({ id: key, key, name: key, description: `The ${key} purpose.`, required, categoryId: '', sortOrder });

function config(p: Published) {
  return {
    projectId: 'prj_tcf',
    version: { id: 'ver_1', number: 1, publishedAt: '2026-11-27T00:00:00Z', contentHash: 'c' + p.vendorListVersion, consentHash: 'h1' },
    locale: 'en',
    locales: ['en'],
    dir: 'ltr',
    config: {
      purposes: [purpose('essential', true, 0), purpose('ads', false, 1), purpose('measurement', false, 2), purpose('chat', false, 3)],
      categories: [],
      notice: { title: 'Your privacy at Acme', description: 'We and our partners use cookies.', acceptLabel: '', rejectLabel: '', manageLabel: '', companyName: 'Acme', logoUrl: '', primaryColor: '#1f4fd1' },
    },
    ui: { acceptAll: 'Accept all', rejectAll: 'Reject all', manage: 'Manage choices', saveChoices: 'Save choices', close: 'Close', alwaysOn: 'Always on', privacyPolicy: 'Privacy policy', saveFailed: 'Could not be saved', noticeOk: 'OK', doNotSell: 'Do Not Sell or Share My Personal Information', optOutHonored: 'Opt-Out Request Honored', gpcNote: '', signedInScope: 'You are signed in: your choice applies on every device where you are signed in to your account.' },
    experience: {
      privacyPolicyUrl: 'https://www.acme.test/privacy',
      reconsentAfterDays: 0,
      gpc: { optOutPurposes: [] },
      googleConsentMode: { enabled: true, signals: { ad_storage: ['ads'], ad_user_data: ['ads'], ad_personalization: ['ads'], analytics_storage: ['measurement'] } },
      cookies: {},
      theme: { colorScheme: 'light' },
      ...(p.tcf && {
        tcf: {
          enabled: true,
          cmpId: CMP_ID,
          cmpVersion: 3,
          publisherCountryCode: 'DE',
          vendors: p.vendors,
          googleAtps: [39, 89],
          specialFeatures: p.specialFeatures ?? [1],
          // Vendor 1 declares purpose 7 as legitimate interest, flexible: the operator requires consent.
          restrictions: [{ purposeId: 7, vendorIds: [1], type: 'requireConsent' }],
          publisher: p.publisher ? { purposes: [1, 3], legitimateInterests: [7] } : null,
          purposeMap: { ads: [1, 3, 4], measurement: [1, 8] },
          vendorListVersion: p.vendorListVersion,
        },
      }),
    },
    jurisdiction: p.jurisdiction,
    mode: p.mode,
  };
}

function vendorList(p: Published) {
  const gvl = fixture(p.vendorListVersion);
  const { vendorListVersion, tcfPolicyVersion, purposes, specialPurposes, features, specialFeatures, stacks, dataCategories, standardTexts } = gvl;
  const vendors = Object.fromEntries(p.vendors.map((id) => [String(id), gvl.vendors[id]]));
  return { vendorListVersion, tcfPolicyVersion, language: 'en', purposes, specialPurposes, features, specialFeatures, stacks, dataCategories, standardTexts, vendors, googleAtps: ATPS };
}

// An ad tag in the page's <head>, right after the stub and before consent.js: listens, pings, keeps what it
// hears (each event with the page time it arrived at).
const AD_TAG = `window.tcfEvents = [];
__tcfapi('ping', 2, function (p) { window.stubPing = p; });
__tcfapi('addEventListener', 2, function (d, ok) { tcfEvents.push({ at: performance.now(), ok: ok, eventStatus: d.eventStatus, cmpStatus: d.cmpStatus, gdprApplies: d.gdprApplies, listenerId: d.listenerId, tcString: d.tcString, addtlConsent: d.addtlConsent }); });
window.locatorAtStart = !!window.frames.__tcfapiLocator;`;

// An ad in a cross-origin iframe, as the CMP API's own sample does it: find the frame named __tcfapiLocator
// up the tree and postMessage to it.
const FRAME = `<!doctype html><title>Ad</title><script>
var f = window, cmp;
while (f) { try { if (f.frames.__tcfapiLocator) { cmp = f; break; } } catch (e) {} if (f === top) break; f = f.parent; }
var callbacks = {}, n = 0;
function tcfapi(command, callback, parameter) {
  var callId = 'c' + ++n; callbacks[callId] = callback;
  cmp.postMessage({ __tcfapiCall: { command: command, version: 2, parameter: parameter, callId: callId } }, '*');
}
addEventListener('message', function (e) { var r = e.data && e.data.__tcfapiReturn; if (r && callbacks[r.callId]) callbacks[r.callId](r.returnValue, r.success); });
// A call as a JSON string gets its answer as one (CMP API v2, "Using postMessage"); messages that are no call
// (not JSON, null) are left alone.
// Every answer is kept by callId with the type it came as.
window.answers = {};
addEventListener('message', function (e) { var r = (typeof e.data == 'string' ? JSON.parse(e.data) : e.data || {}).__tcfapiReturn; if (r) answers[r.callId] = { as: typeof e.data, returnValue: r.returnValue }; });
addEventListener('message', function (e) { if (typeof e.data == 'string') { var r = JSON.parse(e.data).__tcfapiReturn; if (r && r.callId === 's1') window.stringPing = r.returnValue; } });
window.stringCall = function (command, callId) { cmp.postMessage(JSON.stringify({ __tcfapiCall: { command: command, version: 2, callId: callId } }), '*'); };
window.found = !!cmp; window.frameEvents = [];
if (cmp) {
  tcfapi('ping', function (p) { window.framePing = p; });
  cmp.postMessage('not json', '*'); cmp.postMessage(null, '*');
  cmp.postMessage(JSON.stringify({ __tcfapiCall: { command: 'ping', version: 2, callId: 's1' } }), '*');
  tcfapi('addEventListener', function (d, ok) { frameEvents.push({ ok: ok, eventStatus: d.eventStatus, tcString: d.tcString }); });
}
</script>`;

function sitePage(site: TcfSite) {
  const { serviceUrl, adsOrigin, published } = site;
  const tcf = published.tcf ? `<script src="${serviceUrl}/sdk/v2/stub.js" data-tcf></script>\n<script>${AD_TAG}</script>` : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme news</title>
${tcf}
<script src="${serviceUrl}/sdk/v2/consent.js"></script>
<script>ConsentSDK.init({ publicKey: 'pk_live_tcf', apiBaseUrl: '${serviceUrl}', onReady: function () { window.readyAt = performance.now(); }, onError: function (e) { (window.sdkErrors = window.sdkErrors || []).push(e.code); } }).then(function (c) { window.consent = c; });</script>
</head><body><h1>News</h1><iframe title="Ad" src="${adsOrigin}/frame" width="300" height="100"></iframe></body></html>`;
}

export async function startTcfSite(): Promise<TcfSite> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const host = req.headers.host ?? '';
    const cors = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Headers': 'Authorization, Content-Type', 'Access-Control-Allow-Methods': 'GET, POST' };
    const json = (status: number, body: unknown) => res.writeHead(status, { ...cors, 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (host.startsWith('www.acme.test')) {
      const csp = site.published.styleCsp ? { 'Content-Security-Policy': "style-src 'self'" } : {};
      return void res.writeHead(200, { 'Content-Type': 'text/html', 'Cache-Control': 'no-store', ...csp }).end(sitePage(site));
    }
    if (host.startsWith('ads.acme.test')) return void res.writeHead(200, { 'Content-Type': 'text/html' }).end(FRAME);
    if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
    if (url.pathname.startsWith('/sdk/v2/')) {
      return void res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(readFileSync(new URL(url.pathname.slice('/sdk/v2/'.length), DIST)));
    }
    if (url.pathname === '/api/sdk/v2/config') return json(200, config(site.published));
    if (url.pathname === '/api/sdk/v2/tcf/vendor-list') return json(200, vendorList(site.published));
    if (url.pathname === '/api/sdk/v1/consent' && req.method === 'POST') {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        site.receipts.push(JSON.parse(body));
        json(201, { receiptId: 'rcp_' + site.receipts.length, createdAt: new Date().toISOString() });
      });
      return;
    }
    json(404, { error: 'not found', code: 'not_found' });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  const site: TcfSite = {
    serviceUrl: `http://127.0.0.1:${port}`,
    siteOrigin: `http://www.acme.test:${port}`,
    adsOrigin: `http://ads.acme.test:${port}`,
    published: defaultPublished(),
    receipts: [],
    close: () => new Promise((done) => server.close(() => done())),
  };
  return site;
}
