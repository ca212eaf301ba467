// SDK v2 by jurisdiction (extensions.md section 6) in real headless Chromium: the same customer's page
// (site-v2.ts) visited from Germany, California with and without Global Privacy Control, Texas, Brazil and an
// unknown place. The service reads the location the way it would behind a CDN (GEO_COUNTRY_HEADER
// cf-ipcountry, GEO_REGION_HEADER cf-region-code); the test plays the CDN by adding those headers to the
// page's requests to the service. Asserted: the banner's mode, Consent Mode signals, the `__gpp` API's answers
// with the GPP string decoded by the IAB's own library, and the receipts the service recorded.
// Screenshots of the opt-out notice and of "Opt-Out Request Honored" go to test-artifacts/sdk-v2/.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { GppModel } from '@iabgpp/cmpapi';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { setupProject, startService, type SiteProject } from './harness.js';
import { launchChromiumForSites, startSiteV2, type PageOptions, type SiteV2 } from './site-v2.js';

const ARTIFACTS = 'test-artifacts/sdk-v2';
const GEO = { countryHeader: 'cf-ipcountry', regionHeader: 'cf-region-code' };
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let server: TestServer;
let serviceUrl: string;
let site: SiteV2;
let browser: Browser;
let context: BrowserContext | undefined;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  browser = await launchChromiumForSites();
  ({ server, serviceUrl } = await startService({ geo: GEO }));
  site = await startSiteV2(serviceUrl);
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});
afterEach(async () => {
  await context?.close();
  context = undefined;
  expect(pageErrors).toEqual([]);
});

/** Gives the project the experience the page needs, with `over` (jurisdictions, gpp) on top, and publishes. */
async function project(over: Record<string, unknown> = {}): Promise<SiteProject> {
  const p = await setupProject(server, [site.origin]);
  const base = `/api/platform/projects/${p.projectId}/consent`;
  const experience = {
    privacyPolicyUrl: 'https://www.acme.test/privacy',
    gpc: { optOutPurposes: ['ads'] },
    googleConsentMode: {
      enabled: true,
      signals: { ad_storage: ['ads'], ad_user_data: ['ads'], ad_personalization: ['ads'], analytics_storage: ['analytics'], functionality_storage: [], personalization_storage: [], security_storage: [] },
    },
    cookies: { analytics: ['_ga'], ads: ['_gcl_au'] },
    ...over,
  };
  const put = await server.request('PUT', `${base}/experience`, { token: p.ownerToken, body: experience });
  if (put.status !== 200) throw new Error(`PUT experience: ${put.status} ${put.text}`);
  const published = await server.request('POST', `${base}/publish`, { token: p.ownerToken });
  if (published.status !== 201) throw new Error(`publish: ${published.status} ${published.text}`);
  return p;
}

/**
 * A fresh browser context for a visitor from `where` (`DE`, `US-CA`; undefined: no location header), the
 * CDN's headers added to every request to the service; `gpc` makes the browser send Global Privacy Control.
 */
async function visitor(where: string | undefined, options: { gpc?: boolean } = {}) {
  pageErrors = [];
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  if (options.gpc) await context.addInitScript(() => Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true, configurable: true }));
  const [country, region] = (where ?? '').split('-');
  await context.route(`${serviceUrl}/**`, (route) => {
    const headers = { ...route.request().headers() };
    if (country) headers['cf-ipcountry'] = country;
    if (region) headers['cf-region-code'] = region;
    return route.continue({ headers });
  });
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  page.on('console', (msg) => msg.type() === 'error' && !/Failed to load resource/.test(msg.text()) && pageErrors.push(msg.text()));
}

async function open(p: SiteProject, options: PageOptions = {}) {
  await page.goto(site.page(p.key, options));
  expect(await page.waitForFunction(() => (window as any).sdkSettled).then((h) => h.jsonValue())).toBe('ready');
}

const hook = (name: string) => `#consent-sdk-root [data-consent="${name}"]`;
const state = () => page.evaluate(() => (window as any).consent.getConsent());
const bannerButtons = () => page.locator(`${hook('banner')} button`).evaluateAll((els) => els.map((e) => e.getAttribute('data-consent')));
/** Every Consent Mode command on the page: [default|update, ad_storage, analytics_storage]. */
const consentMode = () =>
  page.evaluate(() => (window as any).dataLayer.map((a: IArguments) => Array.from(a)).filter((a: any[]) => a[0] === 'consent').map((a: any[]) => [a[1], a[2].ad_storage, a[2].analytics_storage]));
/** `__gpp(command, callback, parameter)` in the page, answered through its callback. */
const gpp = (command: string, parameter?: string | number) =>
  page.evaluate(([c, p]) => new Promise<any>((resolve) => (window as any).__gpp(c, (data: unknown, ok: boolean) => resolve({ data, ok }), p)), [command, parameter] as const);
const hasGpp = () => page.evaluate(() => typeof (window as any).__gpp === 'function');
const gppReady = () => expect.poll(async () => (await gpp('ping')).data.signalStatus).toBe('ready');
const field = (gppString: string, name: string) => new GppModel(gppString).getFieldValue(name.split('.')[0]!, name.split('.')[1]!);
const receipts = async (p: SiteProject) => (await p.receipts()) as unknown as { jurisdiction?: string; action?: string; gpp?: string; gpc?: boolean; choices: Record<string, boolean> }[];

/** axe-core over the page and the SDK's open shadow root: serious and critical violations. */
async function axeViolations(): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  return page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical').map((v: any) => `${v.id}: ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
  });
}

async function screenshot(name: string) {
  await page.evaluate(() => Promise.all(document.getElementById('consent-sdk-root')!.shadowRoot!.getAnimations().map((a) => a.finished)));
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width > 400 ? 800 : 700 });
    await page.screenshot({ path: `${ARTIFACTS}/${name}-${width}.png` });
  }
}

describe('one page, visitors from six places (default jurisdiction rules)', () => {
  let shop: SiteProject;
  beforeAll(async () => {
    shop = await project({ gpp: { mspaCoveredTransaction: true, mspaMode: 'opt-out-option' } });
  });

  it('Germany: opt-in banner, signals denied until Accept, the receipt says DE and accept_all, no GPP', async () => {
    await visitor('DE');
    await open(shop);
    expect(await state()).toMatchObject({ mode: 'opt-in', jurisdiction: 'DE', needsConsent: true, choices: { analytics: false, ads: false } });
    expect(await bannerButtons()).toEqual(['reject-all', 'accept-all', 'manage']);
    expect(await consentMode()).toEqual([['default', 'denied', 'denied']]);
    expect(await hasGpp()).toBe(false);
    await page.locator(hook('accept-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    expect((await consentMode()).at(-1)).toEqual(['update', 'granted', 'granted']);
    const [receipt] = await receipts(shop);
    expect(receipt).toMatchObject({ jurisdiction: 'DE', action: 'accept_all', choices: { analytics: true, ads: true } });
    expect(receipt!.gpp).toBeUndefined();
  });

  it('California: an opt-out notice, granted signals, __gpp with usnat and usca; Do Not Sell records opt_out with the GPP string', async () => {
    await visitor('US-CA');
    await open(shop);
    expect(await state()).toMatchObject({ mode: 'opt-out', jurisdiction: 'US-CA', needsConsent: true, choices: { analytics: true, ads: true } });
    expect(await bannerButtons()).toEqual(['do-not-sell', 'ok', 'manage']);
    await expect.poll(consentMode).toEqual([
      ['default', 'denied', 'denied'],
      ['update', 'granted', 'granted'],
    ]);
    // gpp.js came from the service, only here.
    await gppReady();
    const ping = (await gpp('ping')).data;
    expect(ping).toMatchObject({ cmpStatus: 'loaded', cmpDisplayStatus: 'visible', applicableSections: [7], sectionList: [7, 8], supportedAPIs: ['7:usnat', '8:usca'] });
    expect(field(ping.gppString, 'usnat.SaleOptOut')).toBe(2);
    expect(field(ping.gppString, 'usnat.MspaCoveredTransaction')).toBe(1);
    expect(field(ping.gppString, 'usnat.MspaOptOutOptionMode')).toBe(1);
    expect(field(ping.gppString, 'usnat.MspaServiceProviderMode')).toBe(2);
    expect(await gpp('getField', 'usca.SaleOptOutNotice')).toEqual({ data: 1, ok: true });
    await screenshot('opt-out-notice');
    expect(await axeViolations()).toEqual([]);

    await page.locator(hook('do-not-sell')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    await expect.poll(async () => (await gpp('getField', 'usnat.SaleOptOut')).data).toBe(1);
    expect(await gpp('getField', 'usca.SharingOptOut')).toEqual({ data: 1, ok: true });
    expect((await consentMode()).at(-1)).toEqual(['update', 'denied', 'granted']);
    const [receipt] = await receipts(shop);
    expect(receipt).toMatchObject({ jurisdiction: 'US-CA', action: 'opt_out', gpc: false, choices: { analytics: true, ads: false } });
    expect(receipt!.gpp).toBe((await gpp('ping')).data.gppString);
    expect(field(receipt!.gpp!, 'usnat.TargetedAdvertisingOptOut')).toBe(1);
    expect(field(receipt!.gpp!, 'usca.Gpc')).toBe(false);
  });

  it('California: __gpp answers addEventListener at once, from the stub too (before gpp.js), and later events reach that listener', async () => {
    await visitor('US-CA');
    await open(shop, { gppListener: true });
    await gppReady();
    type Heard = { sync: boolean; ok: boolean; eventName: string; listenerId: number; data: unknown; cmpStatus: string; signalStatus: string };
    const heard = () => page.evaluate(() => (window as any).gppEvents as Heard[]);
    const [registered] = await heard();
    // Answered inside the call, by the stub (gpp.js could not have loaded yet), with a new listenerId.
    expect(registered).toMatchObject({ sync: true, ok: true, eventName: 'listenerRegistered', data: true, cmpStatus: 'stub', signalStatus: 'not ready' });
    const id = registered!.listenerId;
    expect(typeof id).toBe('number');
    const events = (list: Heard[]) => list.map((e) => [e.eventName, e.data]);
    // The library took the stub's listener over: every later event reaches it, under the same id.
    await expect.poll(async () => events(await heard())).toEqual([
      ['listenerRegistered', true],
      ['cmpDisplayStatus', 'visible'],
      ['cmpStatus', 'loaded'],
      ['sectionChange', 'usnat'],
      ['sectionChange', 'usca'],
      ['signalStatus', 'ready'],
    ]);
    expect(new Set((await heard()).map((e) => e.listenerId))).toEqual(new Set([id]));

    // The stub's listener is the library's now: removing it by its id works.
    expect(await gpp('removeEventListener', id)).toMatchObject({ ok: true, data: { eventName: 'listenerRemoved', data: true } });
  });

  it('California: after Do Not Sell, listeners hear signalStatus not ready first, each change once, ready last', async () => {
    await visitor('US-CA');
    await open(shop);
    await gppReady();
    type Heard = { eventName: string; listenerId: number; data: unknown; cmpStatus: string; signalStatus: string };
    await page.evaluate(() => {
      (window as any).gppEvents = [];
      (window as any).__gpp('addEventListener', (e: any) =>
        (window as any).gppEvents.push({ eventName: e.eventName, listenerId: e.listenerId, data: e.data, cmpStatus: e.pingData.cmpStatus, signalStatus: e.pingData.signalStatus }),
      );
    });
    const heard = () => page.evaluate(() => (window as any).gppEvents as Heard[]);
    const events = (list: Heard[]) => list.map((e) => [e.eventName, e.data]);
    const id = (await heard())[0]!.listenerId;
    const before = 1; // after its listenerRegistered answer
    await page.locator(hook('do-not-sell')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    // Not ready first, ready last, each change once, and no status repeated that did not change.
    await expect.poll(async () => events((await heard()).slice(before))).toEqual([
      ['signalStatus', 'not ready'],
      ['cmpDisplayStatus', 'hidden'],
      ['sectionChange', 'usnat'],
      ['sectionChange', 'usca'],
      ['signalStatus', 'ready'],
    ]);
    const after = (await heard()).slice(before);
    expect(after.map((e) => [e.listenerId, e.signalStatus, e.cmpStatus])).toEqual([
      [id, 'not ready', 'loaded'],
      [id, 'not ready', 'loaded'],
      [id, 'not ready', 'loaded'],
      [id, 'not ready', 'loaded'],
      [id, 'ready', 'loaded'],
    ]);
    expect((await gpp('ping')).data).toMatchObject({ signalStatus: 'ready', cmpDisplayStatus: 'hidden' });
    expect(field((await gpp('ping')).data.gppString, 'usnat.SaleOptOut')).toBe(1);
  });

  it('California with GPC: opted out at once, recorded as gpc, "Opt-Out Request Honored" until dismissed', async () => {
    await visitor('US-CA', { gpc: true });
    await open(shop);
    expect(await state()).toMatchObject({ mode: 'opt-out', gpc: true, needsConsent: true, choices: { analytics: true, ads: false } });
    expect(await bannerButtons()).toEqual(['ok', 'manage']);
    expect(await page.locator(hook('opt-out-honored')).textContent()).toBe('Opt-Out Request Honored');
    await expect.poll(consentMode).toEqual([
      ['default', 'denied', 'denied'],
      ['update', 'denied', 'granted'],
    ]);
    await gppReady();
    const string = (await gpp('ping')).data.gppString;
    expect(field(string, 'usnat.Gpc')).toBe(true);
    expect(field(string, 'usnat.SaleOptOut')).toBe(1);
    await expect.poll(async () => (await receipts(shop))[0]?.action).toBe('gpc');
    const [receipt] = await receipts(shop);
    expect(receipt).toMatchObject({ jurisdiction: 'US-CA', gpc: true, choices: { analytics: true, ads: false } });
    expect(field(receipt!.gpp!, 'usca.Gpc')).toBe(true);
    expect(field(receipt!.gpp!, 'usca.SaleOptOut')).toBe(1);
    await screenshot('opt-out-honored');
    expect(await axeViolations()).toEqual([]);

    await page.locator(hook('ok')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    expect((await gpp('ping')).data.cmpDisplayStatus).toBe('hidden');
    // Next page: nothing shown, nothing recorded again.
    const before = (await receipts(shop)).length;
    await page.reload();
    await page.waitForFunction(() => (window as any).sdkSettled);
    await gppReady();
    expect(await page.locator(hook('banner')).count()).toBe(0);
    expect((await receipts(shop)).length).toBe(before);
  });

  it('Texas: opt-out with usnat and ustx', async () => {
    await visitor('US-TX');
    await open(shop);
    expect(await state()).toMatchObject({ mode: 'opt-out', jurisdiction: 'US-TX' });
    await gppReady();
    expect((await gpp('ping')).data.sectionList).toEqual([7, 16]);
    await page.locator(hook('do-not-sell')).click();
    await expect.poll(async () => (await receipts(shop))[0]?.jurisdiction).toBe('US-TX');
    const [receipt] = await receipts(shop);
    expect(receipt).toMatchObject({ action: 'opt_out' });
    expect(field(receipt!.gpp!, 'ustx.SaleOptOut')).toBe(1);
    expect(field(receipt!.gpp!, 'usnat.SaleOptOut')).toBe(1);

    // An ad frame asks through postMessage, finding the API's window by the __gppLocator frame.
    const fromFrame = await page.evaluate(
      () =>
        new Promise((resolve) => {
          addEventListener('message', (e) => e.data?.fromFrame && resolve(e.data.fromFrame));
          const frame = document.createElement('iframe');
          frame.title = 'ad';
          frame.srcdoc = `<script>
            addEventListener('message', function (e) { if (e.data && e.data.__gppReturn) parent.postMessage({ fromFrame: e.data.__gppReturn }, '*'); });
            var cmp = parent.frames['__gppLocator'] ? parent : null;
            cmp.postMessage({ __gppCall: { command: 'getField', parameter: 'ustx.SaleOptOut', callId: 'ad-1', version: '1.1' } }, '*');
          <\/script>`;
          document.body.append(frame);
        }),
    );
    expect(fromFrame).toEqual({ returnValue: 1, success: true, callId: 'ad-1' });
  });

  it('Brazil and an unknown place fall to the default rule: opt-in, no GPP', async () => {
    for (const [where, code] of [
      ['BR', 'BR'],
      [undefined, null],
    ] as const) {
      await visitor(where);
      await open(shop);
      expect(await state()).toMatchObject({ mode: 'opt-in', jurisdiction: code, needsConsent: true, choices: { analytics: false, ads: false } });
      expect(await hasGpp()).toBe(false);
      await page.locator(hook('reject-all')).click();
      await page.locator(hook('banner')).waitFor({ state: 'detached' });
      const [receipt] = await receipts(shop);
      expect(receipt).toMatchObject({ action: 'reject_all', choices: { analytics: false, ads: false } });
      expect(receipt!.jurisdiction).toBe(code ?? undefined);
      await context!.close();
      context = undefined;
    }
  });
});

it("the operator's own rules: Brazil gets an informational notice, everywhere else nothing", async () => {
  const shop = await project({
    jurisdictions: [
      { id: 'brazil', regions: ['BR'], mode: 'notice' },
      { id: 'elsewhere', regions: ['*'], mode: 'none' },
    ],
  });
  await visitor('BR');
  await open(shop);
  expect(await state()).toMatchObject({ mode: 'notice', jurisdiction: 'BR', choices: { analytics: true, ads: true } });
  expect(await bannerButtons()).toEqual(['ok']);
  await expect.poll(consentMode).toEqual([
    ['default', 'denied', 'denied'],
    ['update', 'granted', 'granted'],
  ]);
  await page.locator(hook('ok')).click();
  await page.locator(hook('banner')).waitFor({ state: 'detached' });
  expect(await receipts(shop)).toEqual([]);
  await context!.close();

  await visitor('DE');
  await open(shop);
  expect(await state()).toMatchObject({ mode: 'none', jurisdiction: 'DE', needsConsent: false, choices: { necessary: true, analytics: false, ads: false } });
  expect(await page.locator(hook('banner')).count()).toBe(0);
  expect((await consentMode()).at(-1)).toEqual(['update', 'denied', 'denied']);
  expect(await page.evaluate(() => (window as any).analyticsRan ?? 0)).toBe(0);
});

it('right-to-left visitors in California read the opt-out notice in their language: Arabic, and Hebrew under GPC', async () => {
  const shop = await project({
    translations: {
      ar: { notice: { title: 'نحن نحترم خصوصيتك', description: 'نستخدم ملفات تعريف الارتباط لتشغيل المتجر ولقياس الزيارات وعرض الإعلانات.' } },
      he: { notice: { title: 'אנחנו מכבדים את הפרטיות שלך', description: 'אנחנו משתמשים בעוגיות כדי להפעיל את החנות, למדוד ביקורים ולהציג פרסומות.' } },
    },
  });
  await visitor('US-CA');
  await open(shop, { lang: 'ar' });
  expect(await state()).toMatchObject({ mode: 'opt-out', locale: 'ar' });
  expect(await page.locator('#consent-sdk-root .w').getAttribute('dir')).toBe('rtl');
  expect(await page.locator(hook('do-not-sell')).textContent()).toBe('عدم بيع معلوماتي الشخصية أو مشاركتها');
  expect(await page.locator(hook('ok')).textContent()).toBe('حسنًا');
  expect(await page.locator(hook('manage')).textContent()).toBe('تخصيص');
  expect(await page.locator(`${hook('banner')} [data-consent="privacy-policy"]`).textContent()).toBe('سياسة الخصوصية');
  await screenshot('opt-out-notice-ar');
  expect(await axeViolations()).toEqual([]);
  await context!.close();

  await visitor('US-CA', { gpc: true });
  await open(shop, { lang: 'he' });
  expect(await state()).toMatchObject({ mode: 'opt-out', locale: 'he', gpc: true });
  expect(await page.locator('#consent-sdk-root .w').getAttribute('dir')).toBe('rtl');
  expect(await page.locator(hook('opt-out-honored')).textContent()).toBe('בקשת הסירוב שלך כובדה');
  expect(await page.locator(hook('ok')).textContent()).toBe('הבנתי');
  await screenshot('opt-out-honored-he');
  await page.locator(hook('manage')).click();
  expect(await page.locator(hook('save')).textContent()).toBe('שמירת הבחירות');
  await screenshot('dialog-he');
  expect(await axeViolations()).toEqual([]);
});
