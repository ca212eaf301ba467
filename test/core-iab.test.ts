import { GppModel } from '@iabgpp/cmpapi';
import { TCString } from '@iabtechlabtcf/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { consentPath } from './helpers/consent.js';
import { AppStorage, loadCore, Network, until, type ConsentCore, type CoreModule } from './helpers/core.js';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { startGvlServer, type GvlServer } from './helpers/tcf-gvl-server.js';
import { publishVersion, sampleDraft } from './helpers/versions.js';

// The IAB's in-app keys from @consent/core (extensions.md section 13; docs/apps.md, "The in-app keys"), decoded with
// the IAB's own libraries: a TCF project's TC data and GPP tcfeuv2 section, and a US opt-out project's GPP string.

let server: TestServer;
let gvl: GvlServer;
let core: CoreModule;
const opened: ConsentCore[] = [];
const GEO = { countryHeader: 'cf-ipcountry', regionHeader: 'cf-region-code' };
beforeAll(async () => {
  gvl = await startGvlServer({ version: 1 });
  [server, core] = await Promise.all([
    startTestServer({ geo: GEO, tcf: { gvlUrl: gvl.gvlUrl, acProvidersUrl: gvl.acProvidersUrl, minRefreshSeconds: 300 } }),
    loadCore(),
  ]);
});
afterEach(() => {
  for (const c of opened.splice(0)) c.destroy();
});
afterAll(async () => {
  await server?.close();
  await gvl?.close();
});

const tcfSettings = {
  enabled: true,
  cmpId: 300,
  cmpVersion: 2,
  publisherCountryCode: 'FR',
  vendors: [1, 2],
  googleAtps: [89],
  specialFeatures: [1],
  restrictions: [{ purposeId: 7, vendorIds: [1], type: 'requireConsent' }],
  publisher: { purposes: [1, 7], legitimateInterests: [] },
  purposeMap: { marketing: [1, 2, 3, 4], analytics: [1, 8, 9] },
};

async function app(options: { tcf?: boolean; via: Record<string, string> }) {
  const t = await team(server);
  if (options.tcf) {
    expect((await server.request('PUT', consentPath(t.project.id), { token: t.owner.token, body: sampleDraft() })).status).toBe(200);
    const put = await server.request('PUT', consentPath(t.project.id, '/experience'), { token: t.owner.token, body: { tcf: tcfSettings } });
    expect(put.status, put.text).toBe(200);
    expect((await server.request('POST', consentPath(t.project.id, '/publish'), { token: t.owner.token })).status).toBe(201);
  } else await publishVersion(server, t.owner, t.project.id);
  const key = await createKey(server, t.owner.token, t.project.id);
  const network = new Network();
  network.via = options.via;
  const storage = new AppStorage();
  const c = core.createConsent({ publicKey: key.secret, apiBaseUrl: server.url, adapters: { storage, fetch: network.fetch }, source: { platform: 'android' } });
  const errors: unknown[] = [];
  c.onError((e) => errors.push(e));
  opened.push(c);
  const receipts = async () => (await server.request('GET', `/api/platform/projects/${t.project.id}/receipts`, { token: t.owner.token })).body.receipts as any[];
  return { ...t, c, network, storage, errors, receipts };
}

/** What a platform writer would hold: NSUserDefaults / SharedPreferences, with the type each value was written as. */
function platformStore() {
  const values = new Map<string, { type: 'int' | 'string'; value: number | string }>();
  return {
    values,
    writer: {
      setInt: (k: string, v: number) => void values.set(k, { type: 'int', value: v }),
      setString: (k: string, v: string) => void values.set(k, { type: 'string', value: v }),
      remove: (k: string) => void values.delete(k),
    },
  };
}

describe('a TCF project (GDPR applies)', () => {
  it('writes the CMP keys at once, and after Accept all the TC data with the IAB types, matching the TC string and GPP', async () => {
    const a = await app({ tcf: true, via: { 'cf-ipcountry': 'DE' } });
    const state = await a.c.init();
    expect(state).toMatchObject({ jurisdiction: 'DE', needsConsent: true });
    const before = await a.c.inAppKeys();
    expect(before.set).toEqual({ IABTCF_CmpSdkID: 300, IABTCF_CmpSdkVersion: 2, IABTCF_gdprApplies: 1, IABTCF_PublisherCC: 'FR' });
    expect(before.remove).toContain('IABTCF_TCString');

    await a.c.acceptAll();
    await until(() => a.c.getState().pendingReceipts, (n) => n == 0, 'the receipt');
    const { set, remove } = await a.c.inAppKeys();
    const m = TCString.decode(set.IABTCF_TCString as string);
    expect(m.cmpId).toBe(300);
    expect([...m.vendorsDisclosed].map(([id]) => id)).toEqual([1, 2]);
    // Integers where the IAB says Number; strings elsewhere.
    for (const k of ['IABTCF_CmpSdkID', 'IABTCF_CmpSdkVersion', 'IABTCF_PolicyVersion', 'IABTCF_gdprApplies', 'IABTCF_PurposeOneTreatment', 'IABTCF_UseNonStandardTexts']) {
      expect(Number.isInteger(set[k]), k).toBe(true);
    }
    for (const k of Object.keys(set).filter((k) => !['IABTCF_CmpSdkID', 'IABTCF_CmpSdkVersion', 'IABTCF_PolicyVersion', 'IABTCF_gdprApplies', 'IABTCF_PurposeOneTreatment', 'IABTCF_UseNonStandardTexts'].includes(k))) {
      expect(typeof set[k], k).toBe('string');
    }
    expect(set.IABTCF_PolicyVersion).toBe(Number(m.policyVersion));
    const bits = (v: { has(id: number): boolean }, n: number) => Array.from({ length: n }, (_, i) => (v.has(i + 1) ? '1' : '0')).join('');
    expect(set.IABTCF_PurposeConsents).toBe(bits(m.purposeConsents, 11));
    expect(set.IABTCF_PurposeConsents).toMatch(/^1{11}$/);
    expect(set.IABTCF_VendorConsents).toBe(bits(m.vendorConsents, 2));
    expect(set.IABTCF_VendorLegitimateInterests).toBe(bits(m.vendorLegitimateInterests, 2));
    expect(set.IABTCF_SpecialFeaturesOptIns).toBe('10');
    expect(set.IABTCF_PublisherConsent).toBe(bits(m.publisherConsents, 11));
    expect(set.IABTCF_PublisherConsent).toBe('10000010000');
    // Purpose 7: vendor 1 "require consent" (1, in place of its legitimate interest), vendor 2 none.
    expect(set.IABTCF_PublisherRestrictions7).toBe('1_');
    expect(set.IABTCF_AddtlConsent).toBe('2~89~dv.');
    expect(set).toMatchObject({ IABTCF_CmpSdkID: 300, IABTCF_gdprApplies: 1, IABTCF_PublisherCC: 'FR', IABTCF_PurposeOneTreatment: 0 });

    // GPP: the tcfeuv2 section (2) holds the same decision.
    const gpp = new GppModel(set.IABGPP_HDR_GppString as string);
    expect(gpp.getSectionIds()).toEqual([2]);
    expect(set.IABGPP_GppSID).toBe('2');
    expect(set.IABGPP_HDR_Sections).toBe('2');
    expect(set.IABGPP_2_String).toBe(gpp.encodeSection('tcfeuv2'));
    expect(gpp.getFieldValue('tcfeuv2', 'CmpId')).toBe(300);
    expect(gpp.getFieldValue('tcfeuv2', 'PurposeConsents').slice(0, 11)).toEqual(Array(11).fill(true));
    expect(remove).not.toContain('IABTCF_TCString');
    expect(remove).toContain('IABGPP_7_String');

    // The service decoded and checked the TC string (docs/tcf.md, "Receipts") before it stored it with the receipt.
    const [receipt] = await a.receipts();
    expect(receipt.tcf).toEqual({ tcString: set.IABTCF_TCString, addtlConsent: '2~89~dv.' });

    // The app's writer gets each key with its type; reset(writer) removes every key the decision had.
    const store = platformStore();
    await a.c.writeInAppKeys(store.writer);
    expect(store.values.get('IABTCF_gdprApplies')).toEqual({ type: 'int', value: 1 });
    expect(store.values.get('IABTCF_PurposeConsents')).toEqual({ type: 'string', value: '11111111111' });
    await a.c.reset(store.writer);
    expect([...store.values.keys()].sort()).toEqual(['IABTCF_CmpSdkID', 'IABTCF_CmpSdkVersion', 'IABTCF_PublisherCC', 'IABTCF_gdprApplies']);
    expect(a.errors).toEqual([]);
  });

  it('Reject all: no purpose consents, objections recorded, the AC providers disclosed only; gdprApplies 0 outside the EEA', async () => {
    const a = await app({ tcf: true, via: { 'cf-ipcountry': 'FR' } });
    await a.c.init();
    await a.c.rejectAll();
    const { set } = await a.c.inAppKeys();
    expect(set.IABTCF_PurposeConsents).toBe('00000000000');
    expect(set.IABTCF_VendorConsents).toBe('00');
    expect(set.IABTCF_AddtlConsent).toBe('2~~dv.89');
    expect(TCString.decode(set.IABTCF_TCString as string).purposeConsents.size).toBe(0);

    const outside = await app({ tcf: true, via: { 'cf-ipcountry': 'BR' } });
    await outside.c.init();
    await outside.c.acceptAll();
    const keys = await outside.c.inAppKeys();
    expect(keys.set).toEqual({ IABTCF_CmpSdkID: 300, IABTCF_CmpSdkVersion: 2, IABTCF_gdprApplies: 0, IABTCF_PublisherCC: 'FR' });
  });
});

describe('a US opt-out project', () => {
  it('gives the GPP usnat and state sections; opting out is in the string', async () => {
    const a = await app({ via: { 'cf-ipcountry': 'US', 'cf-region-code': 'CA' } });
    // Opt-out, as on the web: optional purposes granted until the person opts out; the notice shows.
    expect(await a.c.init()).toMatchObject({ mode: 'opt-out', jurisdiction: 'US-CA', needsConsent: true, choices: { necessary: true, analytics: true, marketing: true } });
    const first = await a.c.inAppKeys();
    expect(Object.keys(first.set).some((k) => k.startsWith('IABTCF_'))).toBe(false);
    expect(first.remove).toContain('IABTCF_CmpSdkID');
    expect(first.set.IABGPP_GppSID).toBe('7');
    expect(new GppModel(first.set.IABGPP_HDR_GppString as string).getFieldValue('usnat', 'SaleOptOut')).toBe(2);

    await a.c.rejectAll();
    expect(a.c.isAllowed('marketing')).toBe(false);
    expect(a.c.shouldShowBanner()).toBe(false);
    await until(() => a.c.getState().pendingReceipts, (n) => n == 0, 'the receipt');
    const { set } = await a.c.inAppKeys();
    const gpp = new GppModel(set.IABGPP_HDR_GppString as string);
    expect(gpp.getSectionIds()).toEqual([7, 8]);
    expect(set.IABGPP_HDR_Sections).toBe('7_8');
    expect(gpp.getFieldValue('usnat', 'SaleOptOut')).toBe(1);
    expect(gpp.getFieldValue('usca', 'SaleOptOut')).toBe(1);
    expect(set.IABGPP_7_String).toBe(gpp.encodeSection('usnat'));
    expect(set.IABGPP_8_String).toBe(gpp.encodeSection('usca'));
    // The receipt carries the same string.
    const [receipt] = await a.receipts();
    expect(receipt.gpp).toBe(set.IABGPP_HDR_GppString);
  });
});
