import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentPath, evidencePath } from './helpers/consent.js';
import { team } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { consentHashOf, publishVersion, sampleDraft, type VersionConfig } from './helpers/versions.js';

// Experience settings and translations (extensions.md section 2) over real HTTP.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const sha256 = (value: unknown) => createHash('sha256').update(canonicalize(value)!).digest('hex');

const DEFAULTS = {
  defaultLocale: 'en',
  translations: {},
  privacyPolicyUrl: '',
  reconsentAfterDays: 365,
  gpc: { optOutPurposes: [] },
  googleConsentMode: {
    enabled: false,
    signals: {
      ad_storage: [],
      ad_user_data: [],
      ad_personalization: [],
      analytics_storage: [],
      functionality_storage: [],
      personalization_storage: [],
      security_storage: [],
    },
  },
  cookies: {},
  theme: { colorScheme: 'light', borderRadius: 8 },
};

/** A German translation of sampleDraft() and the settings an EU shop would set. */
function germanExperience(categoryIds: { statistics: string }) {
  return {
    defaultLocale: 'en',
    translations: {
      de: {
        notice: { title: 'Wir respektieren Ihre Privatsphäre', description: 'Wählen Sie, was wir verwenden dürfen.', acceptLabel: 'Alle akzeptieren' },
        purposes: { analytics: { name: 'Statistik', description: 'Zählt Besuche' }, marketing: { name: 'Marketing' } },
        categories: { [categoryIds.statistics]: { name: 'Statistiken' } },
        ui: { saveChoices: 'Meine Auswahl speichern' },
      },
      'pt-BR': { ui: { close: 'Fechar janela' } },
    },
    privacyPolicyUrl: 'https://shop.example/privacy',
    reconsentAfterDays: 180,
    gpc: { optOutPurposes: ['marketing'] },
    googleConsentMode: { enabled: true, signals: { ad_storage: ['marketing'], analytics_storage: ['analytics'] } },
    cookies: { analytics: ['_ga', '_ga_*'] },
    theme: { colorScheme: 'dark', borderRadius: 12 },
  };
}

/** Publishes the draft as it is (publishVersion would replace it, and with it the category ids). */
async function publishNow(actor: { token: string }, projectId: string) {
  const published = await server.request('POST', consentPath(projectId, '/publish'), { token: actor.token });
  expect(published.status, published.text).toBe(201);
  const [row] = await server.services.db.query<{ config: VersionConfig }>('SELECT config FROM consent_versions WHERE id = $1', [published.body.version.id]);
  return { ...published.body.version, config: row!.config } as { id: string; consentHash: string; config: VersionConfig };
}

const experiencePath = (projectId: string) => consentPath(projectId, '/experience');

async function draftWithIds(t: Awaited<ReturnType<typeof team>>) {
  const saved = await server.request('PUT', consentPath(t.project.id), { token: t.admin.token, body: sampleDraft() });
  expect(saved.status, saved.text).toBe(200);
  const statistics = saved.body.draft.categories.find((c: { name: string }) => c.name === 'Statistics').id as string;
  return { statistics };
}

describe('the draft experience', () => {
  it('answers the defaults until set, stores a whole object for an Admin, and is part of hasUnpublishedChanges', async () => {
    const t = await team(server);
    const p = t.project.id;
    const initial = await server.request('GET', experiencePath(p), { token: t.viewer.token });
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({ experience: DEFAULTS });

    const ids = await draftWithIds(t);
    await server.request('POST', consentPath(p, '/publish'), { token: t.admin.token });
    expect((await server.request('GET', consentPath(p), { token: t.viewer.token })).body.hasUnpublishedChanges).toBe(false);

    const body = germanExperience(ids);
    const put = await server.request('PUT', experiencePath(p), { token: t.admin.token, body });
    expect(put.status, put.text).toBe(200);
    expect(put.body.experience).toEqual({
      ...body,
      translations: {
        de: body.translations.de,
        'pt-BR': { notice: {}, purposes: {}, categories: {}, ui: { close: 'Fechar janela' } },
      },
      googleConsentMode: { enabled: true, signals: { ...DEFAULTS.googleConsentMode.signals, ad_storage: ['marketing'], analytics_storage: ['analytics'] } },
    });
    expect((await server.request('GET', experiencePath(p), { token: t.viewer.token })).body).toEqual(put.body);
    expect((await server.request('GET', consentPath(p), { token: t.viewer.token })).body.hasUnpublishedChanges).toBe(true);

    // PUT is whole-object: what is left out goes back to its default.
    const reset = await server.request('PUT', experiencePath(p), { token: t.admin.token, body: { privacyPolicyUrl: 'https://shop.example/p' } });
    expect(reset.body.experience).toEqual({ ...DEFAULTS, privacyPolicyUrl: 'https://shop.example/p' });

    // The same on /graphql.
    const graphql = await server.request('POST', '/graphql', {
      token: t.viewer.token,
      body: { query: 'query($p: ID!) { consentExperience(projectId: $p) consentConfiguration(projectId: $p) { experience } }', variables: { p } },
    });
    expect(graphql.body.data.consentExperience).toEqual(reset.body.experience);
    expect(graphql.body.data.consentConfiguration.experience).toEqual(reset.body.experience);
  });

  it('refuses a Viewer (403) and a non-member (404), on REST and /graphql, changing nothing', async () => {
    const t = await team(server);
    const p = t.project.id;
    expect((await server.request('PUT', experiencePath(p), { token: t.viewer.token, body: {} })).status).toBe(403);
    expect((await server.request('PUT', experiencePath(p), { token: t.outsider.token, body: {} })).status).toBe(404);
    expect((await server.request('GET', experiencePath(p), { token: t.outsider.token })).status).toBe(404);
    const graphql = await server.request('POST', '/graphql', {
      token: t.viewer.token,
      body: { query: 'mutation($p: ID!) { updateConsentExperience(projectId: $p, input: {}) }', variables: { p } },
    });
    expect(graphql.body.errors[0].extensions.code).toBe('forbidden');
    expect((await server.request('GET', consentPath(p), { token: t.owner.token })).body.hasUnpublishedChanges).toBe(false);
  });

  it.each([
    ['an unknown locale tag', { translations: { 'not a tag': {} } }, ['translations', 'not a tag']],
    ['a non-canonical tag', { translations: { 'de-at': {} } }, ['translations', 'de-at']],
    ['a bad defaultLocale', { defaultLocale: 'english!' }, ['defaultLocale']],
    ['more than 50 locales', { translations: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`q${'ab'[i % 2]}${String.fromCharCode(97 + Math.floor(i / 2))}`, {}])) }, ['translations']],
    ['an http privacy policy', { privacyPolicyUrl: 'http://shop.example/privacy' }, ['privacyPolicyUrl']],
    ['reconsentAfterDays over 395', { reconsentAfterDays: 396 }, ['reconsentAfterDays']],
    ['negative reconsentAfterDays', { reconsentAfterDays: -1 }, ['reconsentAfterDays']],
    ['borderRadius over 24', { theme: { borderRadius: 25 } }, ['theme', 'borderRadius']],
    ['an unknown colour scheme', { theme: { colorScheme: 'blue' } }, ['theme', 'colorScheme']],
    ['an unknown Google signal', { googleConsentMode: { signals: { ads: ['marketing'] } } }, ['googleConsentMode', 'signals', 'ads']],
    ['an unknown purpose key', { gpc: { optOutPurposes: ['nope'] } }, ['gpc', 'optOutPurposes', 0]],
    ['an unknown purpose in cookies', { cookies: { nope: ['_x'] } }, ['cookies', 'nope']],
    ['an unknown category id', { translations: { de: { categories: { 'no-such-id': { name: 'X' } } } } }, ['translations', 'de', 'categories', 'no-such-id']],
    ['an oversized title', { translations: { de: { notice: { title: 'x'.repeat(201) } } } }, ['translations', 'de', 'notice', 'title']],
    ['an unknown UI string', { translations: { de: { ui: { accept: 'Ja' } } } }, ['translations', 'de', 'ui', 'accept']],
    ['an unknown field', { colour: 'red' }, []],
  ])('refuses %s with 400 validation_failed naming the path, storing nothing', async (_name, body, path) => {
    const t = await team(server);
    await draftWithIds(t);
    const response = await server.request('PUT', experiencePath(t.project.id), { token: t.admin.token, body });
    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('validation_failed');
    expect(response.body.details.map((d: { path: unknown }) => d.path)).toContainEqual(path);
    expect((await server.request('GET', experiencePath(t.project.id), { token: t.admin.token })).body.experience).toEqual(DEFAULTS);
  });

  it('refuses at publish a purpose key or category id the draft no longer has, naming it', async () => {
    const t = await team(server);
    const p = t.project.id;
    const ids = await draftWithIds(t);
    expect((await server.request('PUT', experiencePath(p), { token: t.admin.token, body: germanExperience(ids) })).status).toBe(200);
    // The draft loses marketing and the statistics category after the experience named them.
    const draft = sampleDraft();
    draft.purposes = draft.purposes.filter((purpose) => purpose.key === 'necessary');
    draft.categories = draft.categories.filter((category) => category.ref === 'essential');
    expect((await server.request('PUT', consentPath(p), { token: t.admin.token, body: draft })).status).toBe(200);
    const refused = await server.request('POST', consentPath(p, '/publish'), { token: t.admin.token });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('validation_failed');
    const paths = refused.body.details.map((d: { path: unknown[] }) => d.path.join('.'));
    expect(paths).toContain('experience.gpc.optOutPurposes.0');
    expect(paths).toContain('experience.cookies.analytics');
    expect(paths).toContain(`experience.translations.de.categories.${ids.statistics}`);
    expect(refused.body.details.find((d: { path: unknown[] }) => d.path.join('.') === 'experience.gpc.optOutPurposes.0').message).toMatch(/marketing/);
    expect((await server.request('GET', consentPath(p, '/versions'), { token: t.admin.token })).body.versions).toEqual([]);
  });
});

/** extensions.md section 2, computed here without the service's code. */
function translatedConsentHash(config: VersionConfig, translations: Record<string, any>): string {
  const categoryName = new Map(config.categories.map((c) => [c.id, c.name]));
  const translated: Record<string, unknown> = {};
  for (const [locale, t] of Object.entries(translations)) {
    const entry: Record<string, unknown> = {};
    const notice = Object.fromEntries(Object.entries({ title: t.notice?.title, description: t.notice?.description }).filter(([, v]) => v !== undefined));
    if (Object.keys(notice).length) entry.notice = notice;
    const purposes = Object.fromEntries(
      Object.entries(t.purposes ?? {}).map(([key, p]: [string, any]) => [
        key,
        Object.fromEntries(Object.entries({ name: p.name, description: p.description }).filter(([, v]) => v !== undefined)),
      ]),
    );
    if (Object.keys(purposes).length) entry.purposes = purposes;
    const categories = Object.fromEntries(Object.entries(t.categories ?? {}).map(([id, c]: [string, any]) => [categoryName.get(id), c.name]));
    if (Object.keys(categories).length) entry.categories = categories;
    if (Object.keys(entry).length) translated[locale] = entry;
  }
  const sorted = [...config.purposes].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return sha256({
    purposes: sorted.map((p) => ({ key: p.key, name: p.name, description: p.description, required: p.required, category: categoryName.get(p.categoryId) })),
    notice: { title: config.notice.title, description: config.notice.description },
    translations: translated,
  });
}

describe('publishing the experience', () => {
  it('hashes a version without translations exactly as decisions.md says, even with other settings', async () => {
    const t = await team(server);
    const ids = await draftWithIds(t);
    const { translations: _translations, ...settings } = germanExperience(ids);
    expect((await server.request('PUT', experiencePath(t.project.id), { token: t.admin.token, body: settings })).status).toBe(200);
    const version = await publishNow(t.admin, t.project.id);
    expect(version.consentHash).toBe(consentHashOf(version.config));

    // UI strings and labels alone are branding: still the plain hash.
    const branding = { ...settings, translations: { de: { notice: { acceptLabel: 'Ja' }, ui: { close: 'Zu' } } } };
    expect((await server.request('PUT', experiencePath(t.project.id), { token: t.admin.token, body: branding })).status).toBe(200);
    const second = await publishNow(t.admin, t.project.id);
    expect(second.consentHash).toBe(consentHashOf(second.config));
  });

  it('covers the translated consent surface in consentHash, snapshots the experience immutably, and shows it in evidence', async () => {
    const t = await team(server);
    const p = t.project.id;
    const ids = await draftWithIds(t);
    const experience = germanExperience(ids);
    expect((await server.request('PUT', experiencePath(p), { token: t.admin.token, body: experience })).status).toBe(200);
    const version = await publishNow(t.admin, p);
    expect(version.consentHash).not.toBe(consentHashOf(version.config));
    expect(version.consentHash).toBe(translatedConsentHash(version.config, experience.translations));
    expect((await server.request('GET', consentPath(p), { token: t.viewer.token })).body.hasUnpublishedChanges).toBe(false);

    // The database refuses to change the snapshot.
    await expect(
      server.services.db.query(`UPDATE consent_versions SET experience = '{}'::jsonb WHERE id = $1`, [version.id]),
    ).rejects.toThrow(/immutable/);

    // A later draft change does not touch the published snapshot.
    await server.request('PUT', experiencePath(p), { token: t.admin.token, body: {} });
    expect((await server.request('GET', consentPath(p), { token: t.viewer.token })).body.hasUnpublishedChanges).toBe(true);

    const evidence = (await server.request('GET', evidencePath(p, `/${version.id}`), { token: t.viewer.token })).body.evidence;
    expect(evidence.experience.translations.de.notice.title).toBe('Wir respektieren Ihre Privatsphäre');
    expect(evidence.experience.reconsentAfterDays).toBe(180);
    const { packageHash, ...otherHashes } = evidence.hashes;
    expect(sha256({ ...evidence, hashes: otherHashes })).toBe(packageHash);
    // Without the experience the hash would not match: it is covered.
    const { experience: _e, ...withoutExperience } = evidence;
    expect(sha256({ ...withoutExperience, hashes: otherHashes })).not.toBe(packageHash);

    const html = await server.request('GET', evidencePath(p, `/${version.id}?format=html`), { token: t.viewer.token });
    expect(html.text).toContain('<h2>Experience</h2>');
    expect(html.text).toContain('Wir respektieren Ihre Privatsphäre');
    expect(html.text).toContain('categories.Statistics.name');
    expect(html.text).not.toContain('MISMATCH');
    const csv = await server.request('GET', evidencePath(p, `/${version.id}?format=csv`), { token: t.viewer.token });
    expect(csv.text).toContain('experience.reconsentAfterDays,180');
    expect(csv.text).toContain('experience.cookies.analytics,_ga _ga_*');
    expect(csv.text).toContain('translation.locale,translation.field,translation.text');
    expect(csv.text).toContain('de,purposes.analytics.name,Statistik');
  });

  it('keeps the evidence package of a version without an experience exactly as before (no experience key)', async () => {
    const t = await team(server);
    const version = await publishVersion(server, t.admin, t.project.id);
    const evidence = (await server.request('GET', evidencePath(t.project.id, `/${version.id}`), { token: t.viewer.token })).body.evidence;
    expect(Object.keys(evidence)).toEqual(['version', 'config', 'publishedBy', 'hashes', 'receiptsCount', 'firstReceiptAt']);
    const csv = await server.request('GET', evidencePath(t.project.id, `/${version.id}?format=csv`), { token: t.viewer.token });
    expect(csv.text).not.toContain('experience.');
  });
});
