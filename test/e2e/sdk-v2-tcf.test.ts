// IAB TCF in the browser (extensions.md section 11, docs/tcf.md): stub.js, tcf.js and the core in real headless
// Chromium, called as ad tags call them: `__tcfapi` before any SDK code has loaded (queued by the stub), after
// tcf.js took over, and from a cross-origin iframe through the `__tcfapiLocator` frame and postMessage. Every TC
// string is decoded with the IAB's own @iabtechlabtcf/core.
//
// The service's TCF side (the `tcf` experience, the vendor-list route) is built on another branch: tcf-site.ts
// plays the service on loopback with exactly the published shapes, from the shared GVL fixture in test/fixtures/tcf/.
import { GppModel } from '@iabgpp/cmpapi';
import { GVL, Segment, TCString } from '@iabtechlabtcf/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromiumForSites } from './site-v2.js';
import { gvlFixture } from '../helpers/tcf-gvl-server.js';
import { CMP_ID, defaultPublished, startTcfSite, type Published, type TcfSite } from './tcf-site.js';

let site: TcfSite;
let published: Published;
let receipts: Record<string, unknown>[];
let siteOrigin: string;
let adsOrigin: string;
let browser: Browser;
let context: BrowserContext | undefined;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  site = await startTcfSite();
  ({ siteOrigin, adsOrigin } = site);
  browser = await launchChromiumForSites();
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});
beforeEach(async () => {
  published = site.published = defaultPublished();
  receipts = site.receipts = [];
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
    // Stacks stand for purposes (the GVL's stacks 2 {2, 7} and 3 {2, 3, 4} share purpose 2: one of them, the one
    // that leaves fewer lines); stack 1 {special features 1, 2} is not allowed, special feature 2 is not asked for.
    const purposeLines = await banner.locator('[data-tcf="purposes"] li').allTextContents();
    expect(purposeLines).toHaveLength(9);
    expect(purposeLines[0]).toMatch(/^Personalised advertising Fixture text: Personalised advertising\.$/);
    expect(await banner.locator('[data-tcf-stack]').evaluateAll((els) => els.map((e) => e.getAttribute('data-tcf-stack')))).toEqual(['3']);
    for (const purpose of ['Use limited data to select advertising', 'Create profiles for personalised advertising', 'Use profiles to select personalised advertising'])
      expect(purposeLines).not.toContain(purpose);
    expect(purposeLines.slice(1)).toEqual(['Store and/or access information on a device', 'Create profiles to personalise content', 'Use profiles to select personalised content', 'Measure advertising performance', 'Measure content performance', 'Understand audiences through statistics or combinations of data from different sources', 'Develop and improve services', 'Use limited data to select content']);
    expect(await banner.textContent()).toContain('Use precise geolocation data');
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
    expect(await frame.evaluate(() => (window as unknown as { stringPing: unknown }).stringPing)).toMatchObject({ cmpLoaded: expect.any(Boolean), apiVersion: expect.any(String) });
    expect(inFrame.events.at(-1)!.tcString).toBe(done.tcString);

    // The loaded CMP answers a call posted as a JSON string with a JSON string, an object call with an object
    // (the IAB's reference stub does both), and says the same apiVersion as the stub did (the IAB's stub: "2").
    await frame.evaluate(() => (window as unknown as { stringCall: (c: string, id: string) => void }).stringCall('ping', 's2'));
    const answers = () => frame.evaluate(() => (window as unknown as { answers: Record<string, { as: string; returnValue: { cmpLoaded: boolean; apiVersion: string } }> }).answers);
    await expect.poll(async () => (await answers()).s2).toBeTruthy();
    const stubPing = await page.evaluate(() => (window as unknown as { stubPing: { apiVersion: string } }).stubPing);
    expect((await answers()).s2).toEqual({ as: 'string', returnValue: expect.objectContaining({ cmpLoaded: true, apiVersion: stubPing.apiVersion }) });
    expect(stubPing.apiVersion).toBe('2');
    expect((await answers()).c1).toMatchObject({ as: 'object' });
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

  it('the second layer by keyboard: focus in the dialog, Tab cycles inside it, Escape goes back to the first layer and its manage button; a returning visitor\u2019s link gets focus back', async () => {
    // Where keyboard focus is, through the shadow root: the element's data-consent hook or data-tcf.
    const focused = () =>
      page.evaluate(() => {
        let el = document.activeElement;
        while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
        return el ? el.getAttribute('data-consent') || el.getAttribute('data-tcf') || el.tagName.toLowerCase() : null;
      });
    await visit();
    await waitForEvent('cmpuishown');
    await page.locator('[data-consent="manage"]').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('[data-tcf="second-layer"]').isVisible()).toBe(true);
    expect(await focused()).toBe('dialog');
    // Shift+Tab from the dialog itself wraps to its last control, Tab from there to its first (the close button).
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('save');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('close');
    // A vendor's <details> is reachable: its summary is among the controls Tab cycles through.
    await page.locator('[data-tcf-vendor="1"] summary').focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.shadowRoot?.activeElement?.closest('[data-tcf="second-layer"]') != null)).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('[data-tcf="second-layer"]').count()).toBe(0);
    await expect.poll(focused).toBe('manage');
    expect(await page.locator('[data-tcf="first-layer"]').isVisible()).toBe(true);

    // A returning visitor opens the second layer from the site's own link; Escape puts focus back on that link.
    await page.locator('[data-consent="accept-all"]').click();
    await waitForEvent('useractioncomplete');
    await visit();
    await waitForEvent('tcloaded');
    await page.evaluate(() => {
      const link = document.createElement('button');
      link.id = 'privacy-settings';
      link.textContent = 'Privacy settings';
      link.onclick = () => (window as unknown as { consent: { showPreferences(): void } }).consent.showPreferences();
      document.body.append(link);
    });
    await page.locator('#privacy-settings').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('[data-tcf="second-layer"]').isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('[data-tcf="second-layer"]').count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('privacy-settings');
    expect(await page.locator('[data-tcf="first-layer"]').count()).toBe(0);
  });

  it('TCF v2.4: no legitimate-interest bit for vendors without a legitimate-interest purpose; a string stored before keeps working and loses it when next saved; features with the IAB’s standard text', async () => {
    // Vendor 1 declares legitimate-interest purposes; vendor 2 consent purposes and a special purpose; vendor 3 only
    // special purposes. The IAB's library 1.5.21 gives 2 and 3 the bit (the 2.2/2.3 workaround that 2.4 removed).
    await visit();
    await waitForEvent('cmpuishown');
    const shown = TCString.decode((await events()).find((e) => e.eventStatus === 'cmpuishown')!.tcString);
    expect(ids(shown.vendorLegitimateInterests)).toEqual([1]);
    await page.locator('[data-consent="accept-all"]').click();
    await waitForEvent('useractioncomplete');
    const accepted = TCString.decode((await events()).at(-1)!.tcString);
    expect(ids(accepted.vendorLegitimateInterests)).toEqual([1]);
    expect(ids(accepted.vendorsDisclosed)).toEqual([1, 2, 3]);
    expect([accepted.policyVersion, accepted.vendorListVersion]).toEqual([5, 1]);

    // A string as it was stored before 2.4: the library itself, fed every vendor's legitimate interest, sets the bit.
    const before = TCString.decode((await events()).at(-1)!.tcString);
    before.gvl = new GVL(gvlFixture(1));
    await before.gvl.readyPromise;
    before.vendorLegitimateInterests.set([1, 2, 3]);
    const old = TCString.encode(before, { segments: [Segment.CORE, Segment.VENDORS_DISCLOSED, Segment.PUBLISHER_TC] });
    expect(ids(TCString.decode(old).vendorLegitimateInterests)).toEqual([1, 2, 3]);
    await page.evaluate((tcString) => {
      const key = 'consent:tcf:prj_tcf';
      localStorage.setItem(key, JSON.stringify({ ...JSON.parse(localStorage.getItem(key)!), tcString }));
    }, old);

    // Not asked again: the stored string is loaded as it is.
    await visit();
    await waitForEvent('tcloaded');
    expect((await events()).map((e) => e.eventStatus)).toEqual(['tcloaded']);
    expect((await events())[0]!.tcString).toBe(old);
    expect(await page.locator('[data-tcf="first-layer"]').count()).toBe(0);

    // The second layer: features in a section of their own, the list's standard text above them, no controls.
    await page.evaluate(() => (window as unknown as { consent: { showPreferences(): void } }).consent.showPreferences());
    const second = page.locator('[data-tcf="second-layer"]');
    await expect.poll(() => second.isVisible()).toBe(true);
    expect(await second.locator('[data-tcf="features-text"]').textContent()).toBe(gvlFixture(1).standardTexts.features);
    expect(await second.locator('[data-tcf-feature]').evaluateAll((els) => els.map((el) => el.getAttribute('data-tcf-feature')))).toEqual(['1', '3']);
    expect(await second.locator('[data-tcf-feature="1"]').textContent()).toContain(gvlFixture(1).features['1'].name);
    expect(await second.locator('[data-tcf-feature] input').count()).toBe(0);
    await second.locator('[data-tcf="features-text"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: 'test-artifacts/tcf-second-layer-features.png' });

    // Saved again: re-encoded without the bits.
    await second.locator('[data-consent="save"]').click();
    await expect.poll(async () => (await events()).filter((e) => e.eventStatus === 'useractioncomplete').length).toBe(1);
    const resaved = TCString.decode((await events()).at(-1)!.tcString);
    expect(ids(resaved.vendorLegitimateInterests)).toEqual([1]);
    expect(receipts.at(-1)!.tcf).toMatchObject({ tcString: (await events()).at(-1)!.tcString });
  });

  it('every name comes from the held list: version 2 renamed special feature 2, and both layers say the new name', async () => {
    published = site.published = { ...published, vendorListVersion: 2, vendors: [1, 2, 3, 4], specialFeatures: [2] };
    await visit();
    await waitForEvent('cmpuishown');
    const renamed = gvlFixture(2).specialFeatures['2'].name;
    expect(renamed).not.toBe(gvlFixture(1).specialFeatures['2'].name);
    expect(await page.locator('[data-tcf="first-layer"]').textContent()).toContain(renamed);
    await page.locator('[data-consent="manage"]').click();
    const second = page.locator('[data-tcf="second-layer"]');
    await expect.poll(() => second.isVisible()).toBe(true);
    expect(await second.textContent()).toContain(renamed);
    expect(await second.textContent()).not.toContain(gvlFixture(1).specialFeatures['2'].name);
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

  it('on a page whose CSP refuses inline styles, both layers are still styled (a constructed sheet, as the core banner)', async () => {
    published.styleCsp = true;
    const refused: string[] = [];
    page.on('console', (message) => message.text().includes('Content Security Policy') && refused.push(message.text()));
    await visit();
    await waitForEvent('cmpuishown');
    // A <style> would be refused here and the layer would sit unpositioned in the page's flow.
    expect(await page.locator('[data-tcf="first-layer"]').evaluate((el) => getComputedStyle(el).position)).toBe('fixed');
    await page.locator('[data-consent="manage"]').click();
    const layer = page.locator('[data-tcf="second-layer"]');
    await expect.poll(() => layer.isVisible()).toBe(true);
    expect(await layer.evaluate((el) => getComputedStyle(el.closest('.backdrop') ?? el).position)).toBe('fixed');
    expect(refused).toEqual([]);
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

    published = site.published = { ...published, vendorListVersion: 2, vendors: [1, 2, 3, 4] };
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

  it('the first layer with both special features asked for: their stack stands for them, no list of its own', async () => {
    published.specialFeatures = [1, 2];
    await visit();
    await waitForEvent('cmpuishown');
    const banner = page.locator('[data-tcf="first-layer"]');
    await expect.poll(() => banner.isVisible()).toBe(true);
    expect(await banner.locator('[data-tcf-stack]').evaluateAll((els) => els.map((e) => e.getAttribute('data-tcf-stack')))).toEqual(['1', '3']);
    expect(await banner.locator('[data-tcf="purposes"] li').count()).toBe(10);
    const text = await banner.textContent();
    expect(text).toContain('Precise geolocation data, and identification through device scanning');
    expect(text).not.toContain('Special features');
    expect(text).not.toContain('Use precise geolocation data');
    await page.screenshot({ path: 'test-artifacts/tcf-first-layer-stacks.png' });
  });

  it('outside the EEA, the UK and Switzerland: gdprApplies false, the project\u2019s normal banner', async () => {
    published = site.published = { ...published, jurisdiction: { code: 'BR', rule: 'rest' } };
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
    published = site.published = { ...published, jurisdiction: null };
    await visit();
    await waitForEvent('cmpuishown');
    expect((await events())[0]).toMatchObject({ gdprApplies: true });
  });
});
