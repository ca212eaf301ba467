import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_IN_UI_STRINGS } from '../src/consent/ui-strings.js';
import { consentPath } from './helpers/consent.js';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { consentHashOf, publishVersion, sampleDraft } from './helpers/versions.js';

// SDK API v2 (extensions.md section 3) over real HTTP.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

async function setup(target = server) {
  const t = await team(target);
  const key = await createKey(target, t.owner.token, t.project.id);
  const config = (query = '', headers: Record<string, string> = {}, token: string | undefined = key.secret) =>
    target.request('GET', `/api/sdk/v2/config${query}`, { token, headers });
  return { ...t, key, config };
}

/** A published version of sampleDraft() with German, Austrian German and Arabic translations. */
async function translatedVersion(s: Awaited<ReturnType<typeof setup>>, target = server) {
  const saved = await target.request('PUT', consentPath(s.project.id), { token: s.owner.token, body: sampleDraft() });
  const statistics = saved.body.draft.categories.find((c: { name: string }) => c.name === 'Statistics').id as string;
  const experience = {
    defaultLocale: 'en',
    translations: {
      de: {
        notice: { title: 'Wir respektieren Ihre Privatsphäre', description: 'Wählen Sie aus.', acceptLabel: 'Alle annehmen' },
        purposes: { analytics: { name: 'Statistik' } },
        categories: { [statistics]: { name: 'Statistiken' } },
        ui: { close: 'Zumachen' },
      },
      'de-AT': { notice: { title: 'Servus, Ihre Privatsphäre' } },
      // An empty UI string overrides nothing: the built-in one of the locale stays (never an English fallback).
      ar: { notice: { title: 'نحن نحترم خصوصيتك' }, ui: { close: '' } },
    },
    privacyPolicyUrl: 'https://shop.example/privacy',
    gpc: { optOutPurposes: ['marketing'] },
    googleConsentMode: { enabled: true, signals: { analytics_storage: ['analytics'] } },
    cookies: { analytics: ['_ga', '_ga_*'] },
    theme: { colorScheme: 'auto', borderRadius: 4 },
  };
  const put = await target.request('PUT', consentPath(s.project.id, '/experience'), { token: s.owner.token, body: experience });
  expect(put.status, put.text).toBe(200);
  const published = await target.request('POST', consentPath(s.project.id, '/publish'), { token: s.owner.token });
  expect(published.status, published.text).toBe(201);
  return { version: published.body.version, statistics };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('GET /api/sdk/v2/config', () => {
  it('serves the version in the asked locale, with UI strings, settings and an ETag that is the SHA-256 of the body', async () => {
    const s = await setup();
    const { version } = await translatedVersion(s);
    const res = await s.config('?locale=de');
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body)).toEqual(['projectId', 'version', 'locale', 'locales', 'dir', 'config', 'ui', 'experience', 'jurisdiction', 'mode']);
    expect(res.body.version).toEqual(version);
    expect(res.body.locale).toBe('de');
    expect(res.body.locales).toEqual(['en', 'ar', 'de', 'de-AT']);
    expect(res.body.dir).toBe('ltr');
    expect(res.body.config.notice).toMatchObject({ title: 'Wir respektieren Ihre Privatsphäre', acceptLabel: 'Alle annehmen', rejectLabel: '', companyName: 'Acme' });
    expect(res.body.config.purposes.map((p: { name: string }) => p.name)).toEqual(['Necessary', 'Statistik', 'Marketing']);
    expect(res.body.config.categories.map((c: { name: string }) => c.name)).toEqual(['Essential', 'Statistiken']);
    expect(Object.keys(res.body.config)).toEqual(['purposes', 'categories', 'notice']);
    expect(res.body.ui).toEqual({ ...BUILT_IN_UI_STRINGS.de, close: 'Zumachen' });
    expect(res.body.experience).toEqual({
      privacyPolicyUrl: 'https://shop.example/privacy',
      reconsentAfterDays: 365,
      gpc: { optOutPurposes: ['marketing'] },
      googleConsentMode: {
        enabled: true,
        signals: {
          ad_storage: [],
          ad_user_data: [],
          ad_personalization: [],
          analytics_storage: ['analytics'],
          functionality_storage: [],
          personalization_storage: [],
          security_storage: [],
        },
      },
      cookies: { analytics: ['_ga', '_ga_*'] },
      theme: { colorScheme: 'auto', borderRadius: 4 },
      gpp: { mspaCoveredTransaction: false, mspaMode: 'none' },
    });
    expect(res.headers.get('etag')).toBe(`"${sha256(res.text)}"`);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=600');
    expect(res.headers.get('vary')).toBe('Origin, Authorization, Accept-Encoding');
    // No GEO_COUNTRY_HEADER on this server: no location, whatever a client sends (docs/jurisdictions.md).
    expect(res.body.jurisdiction).toBeNull();
    expect(res.body.mode).toBe('opt-in');
    const located = await s.config('?locale=de', { 'cf-ipcountry': 'US', 'x-vercel-ip-country': 'US' });
    expect(located.text).toBe(res.text);
    expect(located.headers.get('vary')).toBe('Origin, Authorization, Accept-Encoding');
    const again = await s.config('?locale=de', { 'if-none-match': res.headers.get('etag')! });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');

    // The default locale: the published texts, English UI.
    const en = await s.config('?locale=en');
    expect(en.body.config.notice.title).toBe('We value your privacy');
    expect(en.body.config.notice.acceptLabel).toBe('Accept all');
    expect(en.body.ui).toEqual(BUILT_IN_UI_STRINGS.en);
    expect(en.headers.get('etag')).not.toBe(res.headers.get('etag'));
  });

  it.each([
    ['de-AT', 'de-AT'],
    ['de-at', 'de-AT'],
    ['de-CH', 'de'],
    ['ar-EG', 'ar'],
    ['fr', 'en'],
    ['not a tag!', 'en'],
    ['', 'en'],
  ])('resolves ?locale=%s to %s (exact tag, language, default; never an error)', async (asked, served) => {
    const s = await setup();
    await translatedVersion(s);
    const res = await s.config(`?locale=${encodeURIComponent(asked)}`, { 'accept-language': 'de' });
    expect(res.status).toBe(200);
    expect(res.body.locale).toBe(served);
    expect(res.headers.get('vary')).toBe('Origin, Authorization, Accept-Encoding');
  });

  it('without locale, Accept-Language decides and the answer varies on it', async () => {
    const s = await setup();
    await translatedVersion(s);
    const cases: [string | undefined, string][] = [
      ['fr-FR, de;q=0.8, en;q=0.5', 'de'],
      ['de-AT', 'de-AT'],
      ['en;q=0.1, ar;q=0.9', 'ar'],
      ['ja', 'en'],
      [undefined, 'en'],
    ];
    for (const [acceptLanguage, served] of cases) {
      const res = await s.config('', acceptLanguage ? { 'accept-language': acceptLanguage } : {});
      expect(res.body.locale, acceptLanguage).toBe(served);
      expect(res.headers.get('vary')).toBe('Origin, Accept-Language, Authorization, Accept-Encoding');
      expect(res.headers.get('etag')).toBe(`"${sha256(res.text)}"`);
    }
    const arabic = await s.config('', { 'accept-language': 'ar' });
    expect(arabic.body.dir).toBe('rtl');
    expect(arabic.body.config.notice.title).toBe('نحن نحترم خصوصيتك');
    // Arabic built-in strings, right to left (they fell back to English before); the empty `close` left them be.
    expect(arabic.body.ui).toEqual(BUILT_IN_UI_STRINGS.ar);
    expect(arabic.body.ui.close).toBe('إغلاق');
    expect(arabic.body.ui.saveChoices).toBe('حفظ الاختيارات');
  });

  it('serves a version published before any experience with the defaults, and its hash as in v1', async () => {
    const s = await setup();
    const version = await publishVersion(server, s.owner, s.project.id);
    const res = await s.config('?locale=pl');
    expect(res.body.locale).toBe('en');
    expect(res.body.locales).toEqual(['en']);
    expect(res.body.config).toEqual(version.config);
    expect(res.body.version.consentHash).toBe(consentHashOf(version.config));
    const v1 = await server.request('GET', '/api/sdk/v1/config', { token: s.key.secret });
    expect(v1.body.config).toEqual(res.body.config);
  });

  it('answers repeat requests (from memory) with the same status, headers and bytes as the first', async () => {
    const s = await setup();
    await translatedVersion(s);
    const comparable = (res: { status: number; headers: Headers; text: string }) => ({
      status: res.status,
      headers: [...res.headers].filter(([name]) => !['date', 'x-request-id'].includes(name)),
      text: res.text,
    });
    for (const query of ['?locale=de', '']) {
      const headers = { 'accept-language': 'de-AT' };
      const first = await s.config(query, headers);
      const again = await s.config(query, headers);
      expect(first.status).toBe(200);
      expect(comparable(again)).toEqual(comparable(first));
    }
  });

  it('applies the key, origin and no-version rules of v1', async () => {
    const s = await setup();
    expect((await server.request('GET', '/api/sdk/v2/config')).body.code).toBe('invalid_key');
    expect((await s.config('', {}, 'pk_live_nope')).status).toBe(401);
    expect((await s.config('?locale=de')).body).toEqual({ error: expect.any(String), code: 'no_published_version' });
    await translatedVersion(s);
    await server.request('PUT', `/api/platform/projects/${s.project.id}/allowed-origins`, {
      token: s.owner.token,
      body: { enforce: true, origins: ['https://shop.example'] },
    });
    const refused = await s.config('?locale=de', { origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('origin_not_allowed');
    expect((await s.config('?locale=de', { origin: 'https://shop.example' })).status).toBe(200);
    const preflight = await server.request('OPTIONS', '/api/sdk/v2/config', {
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, x-consent-installation' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/X-Consent-Installation/);
  });

  it('shares the config rate limit with v1', async () => {
    const limited = await startTestServer({ rateLimits: { sdkConfigPerMinute: 2 } });
    try {
      const s = await setup(limited);
      await publishVersion(limited, s.owner, s.project.id);
      expect((await limited.request('GET', '/api/sdk/v1/config', { token: s.key.secret })).status).toBe(200);
      expect((await s.config('?locale=de')).status).toBe(200);
      const refused = await s.config('?locale=de');
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('rate_limited');
      expect(refused.headers.get('retry-after')).toBeTruthy();
    } finally {
      await limited.close();
    }
  });
});
