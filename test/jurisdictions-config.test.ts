import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { DEFAULT_JURISDICTIONS } from '../src/consent/jurisdictions.js';
import { BUILT_IN_UI_STRINGS, UI_STRING_KEYS } from '../src/consent/ui-strings.js';
import { consentPath } from './helpers/consent.js';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { publishVersion, sampleDraft } from './helpers/versions.js';

// The v2 config's `jurisdiction` and `mode` (extensions.md section 6, docs/jurisdictions.md) over real HTTP:
// the location comes from the headers a CDN sets, never from an address.

const GEO = { countryHeader: 'cf-ipcountry', regionHeader: 'cf-region-code' };
let dev: TestServer;
let prod: TestServer;
beforeAll(async () => {
  [dev, prod] = await Promise.all([startTestServer({ geo: GEO }), startTestServer({ geo: GEO, production: true, nodeEnv: 'production' })]);
});
afterAll(() => Promise.all([dev?.close(), prod?.close()]));

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A project with a published version; `experience` is PUT before publishing when given. */
async function published(server: TestServer, experience?: Record<string, unknown>) {
  const t = await team(server);
  const key = await createKey(server, t.owner.token, t.project.id);
  if (experience) {
    await server.request('PUT', consentPath(t.project.id), { token: t.owner.token, body: sampleDraft() });
    const put = await server.request('PUT', consentPath(t.project.id, '/experience'), { token: t.owner.token, body: experience });
    expect(put.status, put.text).toBe(200);
  }
  const version = await publishVersion(server, t.owner, t.project.id);
  const config = (headers: Record<string, string> = {}, query = '', token: string | undefined = key.secret) =>
    server.request('GET', `/api/sdk/v2/config${query}`, { token, headers });
  return { ...t, key, version, config };
}

const at = (country?: string, region?: string): Record<string, string> => ({
  ...(country !== undefined && { 'cf-ipcountry': country }),
  ...(region !== undefined && { 'cf-region-code': region }),
});

describe('GET /api/sdk/v2/config: jurisdiction and mode from the CDN headers', () => {
  it.each([
    ['DE', undefined, { code: 'DE', rule: 'eea-uk-ch' }, 'opt-in'],
    ['GB', undefined, { code: 'GB', rule: 'eea-uk-ch' }, 'opt-in'],
    ['ch', undefined, { code: 'CH', rule: 'eea-uk-ch' }, 'opt-in'],
    ['US', 'CA', { code: 'US-CA', rule: 'us-state-privacy' }, 'opt-out'],
    ['US', 'US-CA', { code: 'US-CA', rule: 'us-state-privacy' }, 'opt-out'],
    ['US', 'TX', { code: 'US-TX', rule: 'us-state-privacy' }, 'opt-out'],
    ['US', 'FL', { code: 'US-FL', rule: 'default' }, 'opt-in'],
    ['US', undefined, { code: 'US', rule: 'default' }, 'opt-in'],
    ['BR', undefined, { code: 'BR', rule: 'default' }, 'opt-in'],
    // A region of another country is not used: no rule can name it.
    ['DE', 'BY', { code: 'DE', rule: 'eea-uk-ch' }, 'opt-in'],
  ])('country %s, region %s → %j, %s (the default rules)', async (country, region, jurisdiction, mode) => {
    const p = await published(dev);
    const res = await p.config(at(country, region), '?locale=en');
    expect(res.status, res.text).toBe(200);
    expect(res.body.jurisdiction).toEqual(jurisdiction);
    expect(res.body.mode).toBe(mode);
    expect(res.body.experience.gpp).toEqual({ mspaCoveredTransaction: false, mspaMode: 'none' });
    expect(res.headers.get('vary')).toBe('Origin, cf-ipcountry, cf-region-code, Authorization, Accept-Encoding');
    expect(res.headers.get('etag')).toBe(`"${sha256(res.text)}"`);
  });

  it.each([
    ['no headers', {}],
    ['Cloudflare unknown (XX)', at('XX')],
    ['Tor (T1)', at('T1')],
    ['not a code', at('Germany')],
    ['three letters', at('DEU')],
    ['markup', at('<script>')],
    ['empty country', at('')],
    ['region without country', at(undefined, 'CA')],
    ['a US region that is not a subdivision', at('US', 'ZZ')],
    ['a malformed US region', at('US', 'US-CA-1')],
  ])('%s → jurisdiction null, mode of the * rule (opt-in)', async (_name, headers) => {
    const p = await published(dev);
    const res = await p.config(headers, '?locale=en');
    expect(res.status, res.text).toBe(200);
    expect(res.body.jurisdiction).toBeNull();
    expect(res.body.mode).toBe('opt-in');
  });

  it('gives each location its own body and ETag, answers If-None-Match per location, and repeats from memory alike', async () => {
    const p = await published(dev);
    const de = await p.config(at('DE'));
    const ca = await p.config(at('US', 'CA'));
    const tx = await p.config(at('US', 'TX'));
    const unknown = await p.config();
    const etags = [de, ca, tx, unknown].map((res) => res.headers.get('etag'));
    expect(new Set(etags).size).toBe(4);
    expect((await p.config(at('US', 'CA'), '', p.key.secret)).text).toBe(ca.text);
    expect((await p.config({ ...at('US', 'CA'), 'if-none-match': etags[1]! })).status).toBe(304);
    // Another location's tag is not a match.
    expect((await p.config({ ...at('DE'), 'if-none-match': etags[1]! })).status).toBe(200);
    // Without locale, the answer varies on Accept-Language too.
    const byLanguage = await p.config(at('DE'));
    expect(byLanguage.headers.get('vary')).toBe('Origin, Accept-Language, cf-ipcountry, cf-region-code, Authorization, Accept-Encoding');
  });

  it('applies the project rules: first match wins, groups expand, a * rule catches the unknown, and mode with no match is opt-in', async () => {
    const rules = [
      { id: 'california', regions: ['US-CA'], mode: 'opt-out' },
      { id: 'rest-of-us', regions: ['US'], mode: 'notice' },
      { id: 'europe', regions: ['EEA', 'UK'], mode: 'opt-in' },
      { id: 'brazil', regions: ['BR'], mode: 'none' },
    ];
    const p = await published(dev, { jurisdictions: rules, gpp: { mspaCoveredTransaction: true, mspaMode: 'opt-out-option' } });
    const cases: [Record<string, string>, unknown, string][] = [
      [at('US', 'CA'), { code: 'US-CA', rule: 'california' }, 'opt-out'],
      [at('US', 'TX'), { code: 'US-TX', rule: 'rest-of-us' }, 'notice'],
      [at('US'), { code: 'US', rule: 'rest-of-us' }, 'notice'],
      [at('NO'), { code: 'NO', rule: 'europe' }, 'opt-in'],
      [at('GB'), { code: 'GB', rule: 'europe' }, 'opt-in'],
      [at('BR'), { code: 'BR', rule: 'brazil' }, 'none'],
      // No rule matches and none has *: the strictest, with no rule to name.
      [at('JP'), { code: 'JP', rule: null }, 'opt-in'],
      [{}, null, 'opt-in'],
    ];
    for (const [headers, jurisdiction, mode] of cases) {
      const res = await p.config(headers, '?locale=en');
      expect(res.body.jurisdiction, JSON.stringify(headers)).toEqual(jurisdiction);
      expect(res.body.mode, JSON.stringify(headers)).toBe(mode);
      expect(res.body.experience.gpp).toEqual({ mspaCoveredTransaction: true, mspaMode: 'opt-out-option' });
      // The rules decide on the server: the SDK does not receive them.
      expect(res.body.experience).not.toHaveProperty('jurisdictions');
    }
  });

  it('carries gpp.sections "state" to the SDK (section 15), the config answer’s shape as the OpenAPI document says', async () => {
    const p = await published(dev, { gpp: { mspaCoveredTransaction: false, sections: 'state' } });
    const res = await p.config(at('US', 'CA'), '?locale=en');
    expect(res.body.jurisdiction).toEqual({ code: 'US-CA', rule: 'us-state-privacy' });
    expect(res.body.experience.gpp).toEqual({ mspaCoveredTransaction: false, mspaMode: 'none', sections: 'state' });
  });

  it('the GraphQL field answers the same from the request headers', async () => {
    const p = await published(dev);
    const query = '{ sdkConfigV2(locale: "en") { jurisdiction { code rule } mode experience } }';
    const res = await dev.request('POST', '/graphql', { token: p.key.secret, headers: at('US', 'CO'), body: { query } });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.sdkConfigV2.jurisdiction).toEqual({ code: 'US-CO', rule: 'us-state-privacy' });
    expect(res.body.data.sdkConfigV2.mode).toBe('opt-out');
    expect(res.body.data.sdkConfigV2.experience.gpp).toEqual({ mspaCoveredTransaction: false, mspaMode: 'none' });
  });
});

describe('?jurisdiction= (testing override)', () => {
  it('replaces the location in development, uncached; an invalid value is an unknown location', async () => {
    const p = await published(dev);
    const res = await p.config(at('DE'), '?jurisdiction=US-CA');
    expect(res.status, res.text).toBe(200);
    expect(res.body.jurisdiction).toEqual({ code: 'US-CA', rule: 'us-state-privacy' });
    expect(res.body.mode).toBe('opt-out');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect((await p.config({}, '?jurisdiction=us-tx&locale=en')).body.jurisdiction).toEqual({ code: 'US-TX', rule: 'us-state-privacy' });
    for (const bad of ['XX', 'DE-BY', 'US-ZZ', 'nonsense', '']) {
      const invalid = await p.config(at('DE'), `?jurisdiction=${encodeURIComponent(bad)}`);
      expect(invalid.status, bad).toBe(200);
      expect(invalid.body.jurisdiction, bad).toBeNull();
      expect(invalid.body.mode).toBe('opt-in');
    }
  });

  it('is ignored in production without an operator session', async () => {
    const p = await published(prod);
    const res = await p.config(at('DE'), '?jurisdiction=US-CA');
    expect(res.status, res.text).toBe(200);
    expect(res.body.jurisdiction).toEqual({ code: 'DE', rule: 'eea-uk-ch' });
    expect(res.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=600');
    // A bearer that is no session is taken for the key, as always: unknown.
    const forged = await prod.request('GET', `/api/sdk/v2/config?key=${p.key.secret}&jurisdiction=US-CA`, { token: 'not-a-session', headers: at('DE') });
    expect(forged.status).toBe(401);
    expect(forged.body.code).toBe('invalid_key');
    const graphql = await prod.request('POST', '/graphql', {
      token: p.key.secret,
      headers: at('DE'),
      body: { query: '{ sdkConfigV2(jurisdiction: "US-CA") { jurisdiction { code } mode overridden } }' },
    });
    expect(graphql.body.data.sdkConfigV2).toEqual({ jurisdiction: { code: 'DE' }, mode: 'opt-in', overridden: false });
  });

  it('is honoured in production with an operator session: bearer (key in ?key=) or the console cookie', async () => {
    const p = await published(prod);
    const bearer = await prod.request('GET', `/api/sdk/v2/config?key=${p.key.secret}&jurisdiction=US-CA`, { token: p.viewer.token, headers: at('DE') });
    expect(bearer.status, bearer.text).toBe(200);
    expect(bearer.body.jurisdiction).toEqual({ code: 'US-CA', rule: 'us-state-privacy' });
    expect(bearer.headers.get('cache-control')).toBe('no-store');
    const cookie = await prod.request('GET', `/api/sdk/v2/config?key=${p.key.secret}&jurisdiction=US-TX`, {
      headers: { ...at('DE'), cookie: `__Host-consent_session=${p.owner.token}`, 'x-consent-console': '1', origin: new URL(prod.url).origin },
    });
    expect(cookie.status, cookie.text).toBe(200);
    expect(cookie.body.jurisdiction).toEqual({ code: 'US-TX', rule: 'us-state-privacy' });
    // The cookie without the console's header counts for nothing.
    const plainCookie = await prod.request('GET', `/api/sdk/v2/config?key=${p.key.secret}&jurisdiction=US-TX`, {
      headers: { ...at('DE'), cookie: `__Host-consent_session=${p.owner.token}` },
    });
    expect(plainCookie.body.jurisdiction).toEqual({ code: 'DE', rule: 'eea-uk-ch' });
    const graphql = await prod.request('POST', '/graphql', {
      token: p.owner.token,
      headers: at('DE'),
      body: { query: `{ sdkConfigV2(key: "${p.key.secret}", jurisdiction: "US-CA") { jurisdiction { code } mode overridden } }` },
    });
    expect(graphql.body.data.sdkConfigV2).toEqual({ jurisdiction: { code: 'US-CA' }, mode: 'opt-out', overridden: true });
  });
});

describe('UI strings for the modes, and the right-to-left languages', () => {
  it('every built-in locale has every string, doNotSell, optOutHonored and noticeOk included', () => {
    expect(Object.keys(BUILT_IN_UI_STRINGS).sort()).toEqual(
      ['ar', 'cs', 'da', 'de', 'en', 'es', 'fa', 'fi', 'fr', 'he', 'it', 'nl', 'pl', 'pt', 'pt-BR', 'sv', 'ur'].sort(),
    );
    expect(UI_STRING_KEYS).toEqual(expect.arrayContaining(['doNotSell', 'optOutHonored', 'noticeOk']));
    for (const [locale, strings] of Object.entries(BUILT_IN_UI_STRINGS)) {
      expect(Object.keys(strings).sort(), locale).toEqual([...UI_STRING_KEYS].sort());
      for (const key of UI_STRING_KEYS) expect(strings[key].trim(), `${locale}.${key}`).not.toBe('');
      // Only English says it in English.
      if (locale !== 'en') expect(strings.saveChoices, locale).not.toBe(BUILT_IN_UI_STRINGS.en!.saveChoices);
    }
  });

  it.each(['ar', 'he', 'fa', 'ur'])('?locale=%s answers its own built-in strings, right to left', async (locale) => {
    // A translation of the notice title only: the SDK's own words come from the built-in strings.
    const p = await published(dev, { translations: { [locale]: { notice: { title: `title ${locale}` } } } });
    const res = await p.config({}, `?locale=${locale}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.locale).toBe(locale);
    expect(res.body.dir).toBe('rtl');
    expect(res.body.ui).toEqual(BUILT_IN_UI_STRINGS[locale]);
    expect(res.body.ui.saveChoices).not.toBe('Save choices');
    if (locale === 'ar') expect(res.body.ui.saveChoices).toBe('حفظ الاختيارات');
  });
});

describe('what stays as it was', () => {
  it('v1 config: the same bytes, keys and hashes with rules set and wherever the visitor is', async () => {
    const plain = await published(dev);
    const ruled = await published(dev, { jurisdictions: [{ id: 'all', regions: ['*'], mode: 'opt-out' }], gpp: { mspaCoveredTransaction: true } });
    // Rules and GPP are settings: the consent surface, and so consentHash, is the sampleDraft's either way.
    expect(ruled.version.consentHash).toBe(plain.version.consentHash);
    for (const headers of [{}, at('DE'), at('US', 'CA')]) {
      const v1 = await dev.request('GET', '/api/sdk/v1/config', { token: ruled.key.secret, headers });
      expect(Object.keys(v1.body)).toEqual(['projectId', 'version', 'config']);
      expect(v1.headers.get('etag')).toBe(`"${ruled.version.contentHash}"`);
      expect(v1.headers.get('vary')).toBe('Origin, Authorization, Accept-Encoding');
      expect(v1.body.version.consentHash).toBe(ruled.version.consentHash);
    }
    const [a, b] = await Promise.all([
      dev.request('GET', '/api/sdk/v1/config', { token: ruled.key.secret }),
      dev.request('GET', '/api/sdk/v1/config', { token: ruled.key.secret, headers: at('US', 'CA') }),
    ]);
    expect(a.text).toBe(b.text);
  });

  it('GEO_COUNTRY_HEADER and GEO_REGION_HEADER: any case, a region header alone means nothing, a bad name stops start-up', () => {
    expect(loadConfig({ GEO_COUNTRY_HEADER: 'CF-IPCountry', GEO_REGION_HEADER: 'CF-Region-Code' }).geo).toEqual({
      countryHeader: 'cf-ipcountry',
      regionHeader: 'cf-region-code',
    });
    expect(loadConfig({ GEO_REGION_HEADER: 'cf-region-code' }).geo).toEqual({ countryHeader: undefined, regionHeader: undefined });
    expect(loadConfig({}).geo).toEqual({ countryHeader: undefined, regionHeader: undefined });
    expect(() => loadConfig({ GEO_COUNTRY_HEADER: 'cf ipcountry' })).toThrow(/GEO_COUNTRY_HEADER: Must be an HTTP header name/);
  });

  it('the default rules are the documented constant', () => {
    expect(DEFAULT_JURISDICTIONS.map((rule) => rule.id)).toEqual(['eea-uk-ch', 'us-state-privacy', 'default']);
    expect(DEFAULT_JURISDICTIONS[1]!.regions).toEqual(
      expect.arrayContaining(['US-CA', 'US-CO', 'US-CT', 'US-DE', 'US-MD', 'US-MT', 'US-NE', 'US-NH', 'US-NJ', 'US-OR', 'US-TX', 'US-VA', 'US-UT']),
    );
  });
});
