// IAB TCF in the browser (extensions.md section 11, docs/tcf.md): stub.js, tcf.js and the core in real headless
// Chromium, called as ad tags call them: `__tcfapi` before any SDK code has loaded (queued by the stub), after
// tcf.js took over, and from a cross-origin iframe through the `__tcfapiLocator` frame and postMessage. Every TC
// string is decoded with the IAB's own @iabtechlabtcf/core.
//
// The service's TCF side (the `tcf` experience, the vendor-list route) is built on another branch: this file plays
// the service on loopback with exactly the published shapes (the v2 config with `experience.tcf`, `GET
// /api/sdk/v2/tcf/vendor-list`, the consent POST), from the shared GVL fixture in test/fixtures/tcf/.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GppModel } from '@iabgpp/cmpapi';
import { TCString } from '@iabtechlabtcf/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromiumForSites } from './site-v2.js';

const DIST = new URL('../../sdk/dist/v2/', import.meta.url);
const fixture = (version: 1 | 2) => JSON.parse(readFileSync(new URL(`../fixtures/tcf/vendor-list-v${version}.json`, import.meta.url), 'utf8'));
const CMP_ID = 123;
const ATPS = [{ id: 39, name: 'Fixture Retargeting', policyUrl: 'https://atp39.example/privacy', domains: ['atp39.example'] }, { id: 89, name: 'Fixture Audience, Inc.', policyUrl: 'https://atp89.example/privacy', domains: ['atp89.example'] }];

/** What the test's service publishes; each test sets it before its visit. */
interface Published {
  vendorListVersion: 1 | 2;
  vendors: number[];
  jurisdiction: { code: string; rule: string } | null;
  mode: 'opt-in' | 'opt-out';
  publisher: boolean;
}
let published: Published;
let receipts: Record<string, unknown>[];
let server: Server;
let serviceUrl: string;
let siteOrigin: string;
let adsOrigin: string;
let browser: Browser;
let context: BrowserContext | undefined;
let page: Page;
let pageErrors: string[];

const purpose = (key: string, required: boolean, sortOrder: number) => ({ id: key, key, name: key, description: `The ${key} purpose.`, required, categoryId: '', sortOrder });

function config() {
  return {
    projectId: 'prj_tcf',
    version: { id: 'ver_1', number: 1, publishedAt: '2026-11-27T00:00:00Z', contentHash: 'c' + published.vendorListVersion, consentHash: 'h1' },
    locale: 'en',
    locales: ['en'],
    dir: 'ltr',
    config: {
      purposes: [purpose('essential', true, 0), purpose('ads', false, 1), purpose('measurement', false, 2), purpose('chat', false, 3)],
      categories: [],
      notice: { title: 'Your privacy at Acme', description: 'We and our partners use cookies.', acceptLabel: '', rejectLabel: '', manageLabel: '', companyName: 'Acme', logoUrl: '', primaryColor: '#1f4fd1' },
    },
    ui: { acceptAll: 'Accept all', rejectAll: 'Reject all', manage: 'Manage choices', saveChoices: 'Save choices', close: 'Close', alwaysOn: 'Always on', privacyPolicy: 'Privacy policy', saveFailed: 'Could not be saved', noticeOk: 'OK', doNotSell: 'Do Not Sell or Share My Personal Information', optOutHonored: 'Opt-Out Request Honored', gpcNote: '' },
    experience: {
      privacyPolicyUrl: 'https://www.acme.test/privacy',
      reconsentAfterDays: 0,
      gpc: { optOutPurposes: [] },
      googleConsentMode: { enabled: true, signals: { ad_storage: ['ads'], ad_user_data: ['ads'], ad_personalization: ['ads'], analytics_storage: ['measurement'] } },
      cookies: {},
      theme: { colorScheme: 'light' },
      tcf: {
        enabled: true,
        cmpId: CMP_ID,
        cmpVersion: 3,
        publisherCountryCode: 'DE',
        vendors: published.vendors,
        googleAtps: [39, 89],
        specialFeatures: [1],
        // Vendor 1 declares purpose 7 as legitimate interest, flexible: the operator requires consent.
        restrictions: [{ purposeId: 7, vendorIds: [1], type: 'requireConsent' }],
        publisher: published.publisher ? { purposes: [1, 3], legitimateInterests: [7] } : null,
        purposeMap: { ads: [1, 3, 4], measurement: [1, 8] },
        vendorListVersion: published.vendorListVersion,
      },
    },
    jurisdiction: published.jurisdiction,
    mode: published.mode,
  };
}

function vendorList() {
  const gvl = fixture(published.vendorListVersion);
  const { vendorListVersion, tcfPolicyVersion, purposes, specialPurposes, features, specialFeatures, stacks, dataCategories } = gvl;
  const vendors = Object.fromEntries(published.vendors.map((id) => [String(id), gvl.vendors[id]]));
  return { vendorListVersion, tcfPolicyVersion, language: 'en', purposes, specialPurposes, features, specialFeatures, stacks, dataCategories, vendors, googleAtps: ATPS };
}

// An ad tag in the page's <head>, before consent.js: listens, pings and keeps what it hears.
const AD_TAG = `window.tcfEvents = [];
__tcfapi('ping', 2, function (p) { window.stubPing = p; });
__tcfapi('addEventListener', 2, function (d, ok) { tcfEvents.push({ ok: ok, eventStatus: d.eventStatus, cmpStatus: d.cmpStatus, gdprApplies: d.gdprApplies, listenerId: d.listenerId, tcString: d.tcString, addtlConsent: d.addtlConsent }); });
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
window.found = !!cmp; window.frameEvents = [];
tcfapi('ping', function (p) { window.framePing = p; });
tcfapi('addEventListener', function (d, ok) { frameEvents.push({ ok: ok, eventStatus: d.eventStatus, tcString: d.tcString }); });
</script>`;

function sitePage() {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme news</title>
<script src="${serviceUrl}/sdk/v2/stub.js" data-tcf></script>
<script>${AD_TAG}</script>
<script src="${serviceUrl}/sdk/v2/consent.js"></script>
<script>ConsentSDK.init({ publicKey: 'pk_live_tcf', apiBaseUrl: '${serviceUrl}', onError: function (e) { (window.sdkErrors = window.sdkErrors || []).push(e.code); } }).then(function (c) { window.consent = c; });</script>
</head><body><h1>News</h1><iframe title="Ad" src="${adsOrigin}/frame" width="300" height="100"></iframe></body></html>`;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const host = req.headers.host ?? '';
    const cors = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Headers': 'Authorization, Content-Type', 'Access-Control-Allow-Methods': 'GET, POST' };
    const json = (status: number, body: unknown) => res.writeHead(status, { ...cors, 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (host.startsWith('www.acme.test')) return void res.writeHead(200, { 'Content-Type': 'text/html' }).end(sitePage());
    if (host.startsWith('ads.acme.test')) return void res.writeHead(200, { 'Content-Type': 'text/html' }).end(FRAME);
    if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
    if (url.pathname.startsWith('/sdk/v2/')) {
      return void res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(readFileSync(new URL(url.pathname.slice('/sdk/v2/'.length), DIST)));
    }
    if (url.pathname === '/api/sdk/v2/config') return json(200, config());
    if (url.pathname === '/api/sdk/v2/tcf/vendor-list') return json(200, vendorList());
    if (url.pathname === '/api/sdk/v1/consent' && req.method === 'POST') {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        receipts.push(JSON.parse(body));
        json(201, { receiptId: 'rcp_' + receipts.length, createdAt: new Date().toISOString() });
      });
      return;
    }
    json(404, { error: 'not found', code: 'not_found' });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  serviceUrl = `http://127.0.0.1:${port}`;
  siteOrigin = `http://www.acme.test:${port}`;
  adsOrigin = `http://ads.acme.test:${port}`;
  browser = await launchChromiumForSites();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((done) => server?.close(done));
});
beforeEach(async () => {
  published = { vendorListVersion: 1, vendors: [1, 2, 3], jurisdiction: { code: 'DE', rule: 'eea' }, mode: 'opt-in', publisher: true };
  receipts = [];
  pageErrors = [];
  context = await browser.newContext();
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
});
afterEach(async () => {
  await context?.close();
  context = undefined;
  expect(pageErrors).toEqual([]);
});

const events = () => page.evaluate(() => (window as unknown as { tcfEvents: { eventStatus: string; tcString: string; addtlConsent: string; ok: boolean; gdprApplies: boolean; listenerId: number }[] }).tcfEvents);
const waitForEvent = (status: string) => page.waitForFunction((s) => (window as unknown as { tcfEvents: { eventStatus: string }[] }).tcfEvents.some((e) => e.eventStatus === s), status);
const ids = (vector: { has(id: number): boolean }, upTo = 12) => Array.from({ length: upTo }, (_, i) => i + 1).filter((id) => vector.has(id));

async function visit() {
  await page.goto(siteOrigin + '/');
  await page.waitForFunction(() => (window as unknown as { consent?: unknown }).consent);
}

describe('IAB TCF in the browser', () => {
  it('a first visit: the stub answers and queues before any SDK code, the first layer shows, Accept all gives a TC string the IAB decodes, in the page and in a frame', async () => {
    await visit();
    // The stub was there for the ad tag in <head>: ping answered at once, the locator frame existed.
    expect(await page.evaluate(() => (window as unknown as { stubPing: unknown }).stubPing)).toMatchObject({ cmpLoaded: false, cmpStatus: 'stub' });
    expect(await page.evaluate(() => (window as unknown as { locatorAtStart: boolean }).locatorAtStart)).toBe(true);
    await waitForEvent('cmpuishown');
    const banner = page.locator('[data-tcf="first-layer"]');
    await expect.poll(() => banner.isVisible()).toBe(true);
    expect(await banner.locator('[data-tcf="purposes"] li').count()).toBe(11);
    expect(await banner.textContent()).toContain('our 3 partners');
    // While the banner shows: legitimate interests established, no consent.
    const shown = TCString.decode((await events()).find((e) => e.eventStatus === 'cmpuishown')!.tcString);
    expect(ids(shown.purposeConsents)).toEqual([]);
    expect(ids(shown.purposeLegitimateInterests)).toEqual([2, 7, 8, 9, 10, 11]);

    await banner.locator('[data-consent="accept-all"]').click();
    await waitForEvent('useractioncomplete');
    const done = (await events()).find((e) => e.eventStatus === 'useractioncomplete')!;
    expect(done).toMatchObject({ ok: true, gdprApplies: true, addtlConsent: '2~39.89~dv.' });
    // One listener, the same id throughout, registered through the stub's queue.
    expect(new Set((await events()).map((e) => e.listenerId)).size).toBe(1);

    const tc = TCString.decode(done.tcString);
    expect(tc.cmpId).toBe(CMP_ID);
    expect(tc.cmpVersion).toBe(3);
    expect(tc.isServiceSpecific).toBe(true);
    expect(tc.vendorListVersion).toBe(1);
    expect(tc.policyVersion).toBe(5);
    expect(tc.publisherCountryCode).toBe('DE');
    expect(ids(tc.vendorsDisclosed)).toEqual([1, 2, 3]);
    expect(ids(tc.purposeConsents)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(ids(tc.vendorConsents)).toEqual([1, 2]);
    expect(ids(tc.specialFeatureOptins)).toEqual([1]);
    expect(ids(tc.publisherConsents)).toEqual([1, 3]);
    expect(ids(tc.publisherLegitimateInterests)).toEqual([7]);
    expect(tc.publisherRestrictions.getVendors()).toEqual([1]);
    expect(tc.publisherRestrictions.getRestrictions(1)).toMatchObject([{ purposeId: 7, restrictionType: 1 }]);
    expect(done.tcString.split('.')).toHaveLength(3);

    // The receipt carries both strings; the site's own purposes follow purposeMap (chat: unmapped, Accept all).
    expect(receipts).toHaveLength(1);
    expect(receipts[0]).toMatchObject({ action: 'accept_all', choices: { essential: true, ads: true, measurement: true, chat: true }, tcf: { tcString: done.tcString, addtlConsent: '2~39.89~dv.' } });
    // Google Consent Mode's update from purposeMap.
    const update = await page.evaluate(() => ((window as unknown as { dataLayer: unknown[][] }).dataLayer || []).filter((a) => a[0] === 'consent' && a[1] === 'update').map((a) => a[2]));
    expect(update.at(-1)).toMatchObject({ ad_storage: 'granted', analytics_storage: 'granted' });

    // `__gpp` on the TCF page: the tcfeuv2 section holds the same decision (decoded by the IAB's GPP library).
    const gppPing = async () =>
      page.evaluate(() => new Promise<{ gppString?: string; signalStatus?: string; applicableSections?: number[] } | null>((done) => {
        const gpp = (window as unknown as { __gpp?: (c: string, cb: (p: unknown) => void) => void }).__gpp;
        if (!gpp) return done(null);
        gpp('ping', (p) => done(p as { gppString: string }));
      }));
    await expect.poll(async () => (await gppPing())?.gppString?.length ?? 0).toBeGreaterThan(0);
    await expect.poll(async () => {
      const gpp = new GppModel((await gppPing())!.gppString!);
      return gpp.getFieldValue('tcfeuv2', 'PurposeConsents')?.filter(Boolean).length;
    }).toBe(11);
    const ping = (await gppPing())!;
    expect(ping).toMatchObject({ signalStatus: 'ready', applicableSections: [2] });
    const gppModel = new GppModel(ping.gppString!);
    expect(gppModel.getFieldValue('tcfeuv2', 'CmpId')).toBe(CMP_ID);
    expect(gppModel.getFieldValue('tcfeuv2', 'VendorListVersion')).toBe(1);
    expect(gppModel.getFieldValue('tcfeuv2', 'VendorsDisclosed')).toEqual([1, 2, 3]);

    // The ad in a cross-origin iframe reached the CMP through the locator frame, before and after the decision.
    const frame = page.frames().find((f) => f.url().startsWith(adsOrigin))!;
    await frame.waitForFunction(() => (window as unknown as { frameEvents: { eventStatus: string }[] }).frameEvents.some((e) => e.eventStatus === 'useractioncomplete'));
    const inFrame = await frame.evaluate(() => ({ found: (window as unknown as { found: boolean }).found, ping: (window as unknown as { framePing: unknown }).framePing, events: (window as unknown as { frameEvents: { tcString: string; eventStatus: string }[] }).frameEvents }));
    expect(inFrame.found).toBe(true);
    expect(inFrame.ping).toMatchObject({ apiVersion: expect.any(String) });
    expect(inFrame.events.at(-1)!.tcString).toBe(done.tcString);
  });

  it('a returning visitor: tcloaded with the stored string, no banner; getTCData and getVendorList after tcf.js took over', async () => {
    await visit();
    await waitForEvent('cmpuishown');
    await page.locator('[data-consent="accept-all"]').click();
    await waitForEvent('useractioncomplete');
    const stored = (await events()).at(-1)!.tcString;

    await visit();
    await waitForEvent('tcloaded');
    const loaded = await events();
    expect(loaded.map((e) => e.eventStatus)).toEqual(['tcloaded']);
    expect(loaded[0]!.tcString).toBe(stored);
    expect(await page.locator('[data-tcf="first-layer"]').count()).toBe(0);
    const after = await page.evaluate(
      () =>
        new Promise<unknown[]>((done) => {
          const out: unknown[] = [];
          const api = (window as unknown as { __tcfapi: (...a: unknown[]) => void }).__tcfapi;
          api('ping', 2, (p: unknown) => out.push(p));
          api('getTCData', 2, (d: { tcString: string; addtlConsent: string }, ok: boolean) => out.push({ ok, tcString: d.tcString, addtlConsent: d.addtlConsent }));
          api('getVendorList', 2, (gvl: { vendorListVersion: number; vendors: Record<string, unknown> } | null, ok: boolean) => {
            out.push({ ok, version: gvl?.vendorListVersion, vendors: Object.keys(gvl?.vendors || {}) });
            api('getVendorList', 2, (none: unknown, ok2: boolean) => done([...out, { ok: ok2, none }]), 7);
          });
        }),
    );
    expect(after[0]).toMatchObject({ cmpLoaded: true, cmpStatus: 'loaded', gdprApplies: true, cmpId: CMP_ID, gvlVersion: 1 });
    expect(after[1]).toEqual({ ok: true, tcString: stored, addtlConsent: '2~39.89~dv.' });
    expect(after[2]).toEqual({ ok: true, version: 1, vendors: ['1', '2', '3'] });
    expect(after[3]).toEqual({ ok: false, none: null });
    // No second receipt for a visit without a decision.
    expect(receipts).toHaveLength(1);
  });

  it('Reject all refuses every consent and objects to every legitimate interest', async () => {
    await visit();
    await waitForEvent('cmpuishown');
    await page.locator('[data-consent="reject-all"]').click();
    await waitForEvent('useractioncomplete');
    const done = (await events()).at(-1)!;
    const tc = TCString.decode(done.tcString);
    expect(ids(tc.vendorsDisclosed)).toEqual([1, 2, 3]);
    for (const vector of [tc.purposeConsents, tc.purposeLegitimateInterests, tc.vendorConsents, tc.vendorLegitimateInterests, tc.specialFeatureOptins, tc.publisherConsents, tc.publisherLegitimateInterests]) {
      expect(ids(vector)).toEqual([]);
    }
    expect(done.addtlConsent).toBe('2~~dv.39.89');
    expect(receipts[0]).toMatchObject({ action: 'reject_all', choices: { essential: true, ads: false, measurement: false, chat: false } });
  });

  it('the second layer: purposes, legitimate interests with the right to object, vendors with their disclosures; Save choices', async () => {
    await visit();
    await waitForEvent('cmpuishown');
    await page.locator('[data-consent="manage"]').click();
    const layer = page.locator('[data-tcf="second-layer"]');
    await expect.poll(() => layer.isVisible()).toBe(true);
    const vendor1 = layer.locator('[data-tcf-vendor="1"]');
    await vendor1.locator('summary').click();
    const text = await vendor1.textContent();
    expect(text).toContain('Retention: 365 days');
    expect(text).toContain('Cookie lifetime: 365 days');
    expect(await vendor1.locator('a[href="https://vendor1.example/privacy"]').count()).toBe(1);
    // Consent to purposes 1 and 8 only (measurement), object to purpose 7's legitimate interest.
    for (const id of [1, 8]) await layer.locator(`input[name=purpose][value="${id}"]`).check();
    await layer.locator('input[name=purposeLegInt][value="7"]').uncheck();
    await layer.locator('[data-tcf-vendor="2"] summary').click();
    await layer.locator('input[name=vendor][value="2"]').check();
    await layer.locator('[data-consent="save"]').click();
    await waitForEvent('useractioncomplete');
    const tc = TCString.decode((await events()).at(-1)!.tcString);
    expect(ids(tc.purposeConsents)).toEqual([1, 8]);
    // Only purposes some vendor claims a legitimate interest for have the switch (here 7, 9, 10; 7 objected).
    expect(ids(tc.purposeLegitimateInterests)).toEqual([9, 10]);
    expect(ids(tc.vendorConsents)).toEqual([2]);
    expect(receipts[0]).toMatchObject({ action: 'custom', choices: { ads: false, measurement: true, chat: false } });
  });

  it('the banner comes back when a new version discloses a vendor the stored string did not', async () => {
    await visit();
    await waitForEvent('cmpuishown');
    await page.locator('[data-consent="accept-all"]').click();
    await waitForEvent('useractioncomplete');

    published = { ...published, vendorListVersion: 2, vendors: [1, 2, 3, 4] };
    await visit();
    await waitForEvent('cmpuishown');
    expect((await events()).map((e) => e.eventStatus)).toEqual(['cmpuishown']);
    await expect.poll(() => page.locator('[data-tcf="first-layer"]').isVisible()).toBe(true);
    await page.locator('[data-consent="accept-all"]').click();
    await waitForEvent('useractioncomplete');
    const tc = TCString.decode((await events()).at(-1)!.tcString);
    expect(tc.vendorListVersion).toBe(2);
    expect(ids(tc.vendorsDisclosed)).toEqual([1, 2, 3, 4]);
  });

  it('outside the EEA, the UK and Switzerland: gdprApplies false, the project\u2019s normal banner', async () => {
    published = { ...published, jurisdiction: { code: 'BR', rule: 'rest' } };
    await visit();
    await page.waitForFunction(() => (window as unknown as { tcfEvents: unknown[] }).tcfEvents.length > 0);
    expect((await events())[0]).toMatchObject({ ok: true, gdprApplies: false });
    expect((await events())[0]!.tcString).toBeUndefined();
    expect(await page.locator('[data-consent="banner"]:not([data-tcf])').count()).toBe(1);
    await page.locator('[data-consent="accept-all"]').click();
    await expect.poll(() => receipts.length).toBe(1);
    expect(receipts[0]!.tcf).toBeUndefined();
  });

  it('an unknown location counts as GDPR applying', async () => {
    published = { ...published, jurisdiction: null };
    await visit();
    await waitForEvent('cmpuishown');
    expect((await events())[0]).toMatchObject({ gdprApplies: true });
  });
});
