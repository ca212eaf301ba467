import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentPath } from './helpers/consent.js';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { sampleDraft } from './helpers/versions.js';

// The experience's `integrations` and `cookieDomain` (extensions.md section 12, docs/integrations.md) over real
// HTTP: validated with paths, stored, published, served to the SDK v2; absent stays absent.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const experiencePath = (projectId: string) => consentPath(projectId, '/experience');
const ORIGINS = ['https://www.example.com', 'https://shop.example.com:8443', 'https://*.eu.example.com', 'https://example.de'];

async function draftedTeam() {
  const t = await team(server);
  const saved = await server.request('PUT', consentPath(t.project.id), { token: t.admin.token, body: sampleDraft() });
  expect(saved.status, saved.text).toBe(200);
  const origins = await server.request('PUT', `/api/platform/projects/${t.project.id}/allowed-origins`, { token: t.admin.token, body: { origins: ORIGINS } });
  expect(origins.status, origins.text).toBe(200);
  return t;
}

describe('experience.integrations and experience.cookieDomain', () => {
  it.each([
    ['an unknown type', { integrations: [{ type: 'linkedin' }] }, ['integrations', 0, 'type']],
    ['a signal of another type', { integrations: [{ type: 'meta-pixel', signals: { ad_storage: ['marketing'] } }] }, ['integrations', 0, 'signals', 'ad_storage']],
    ["Clarity's signal in Google's spelling", { integrations: [{ type: 'microsoft-clarity', signals: { analytics_storage: [] } }] }, ['integrations', 0, 'signals', 'analytics_storage']],
    ['a type listed twice', { integrations: [{ type: 'shopify' }, { type: 'shopify' }] }, ['integrations', 1, 'type']],
    ['a purpose the draft does not have', { integrations: [{ type: 'microsoft-uet', signals: { ad_storage: ['ads'] } }] }, ['integrations', 0, 'signals', 'ad_storage', 0]],
    ['an unknown field', { integrations: [{ type: 'tiktok-pixel', pixelId: 'x' }] }, ['integrations', 0]],
    ['a public suffix', { cookieDomain: 'co.uk' }, ['cookieDomain']],
    ['a private public suffix', { cookieDomain: 'github.io' }, ['cookieDomain']],
    ['a leading dot', { cookieDomain: '.example.com' }, ['cookieDomain']],
    ['a URL', { cookieDomain: 'https://example.com' }, ['cookieDomain']],
    ['a domain that is not a parent of every origin of its site', { cookieDomain: 'shop.example.com' }, ['cookieDomain']],
    ['a domain below a wildcard origin', { cookieDomain: 'a.eu.example.com' }, ['cookieDomain']],
    ['a domain no allowed origin is on', { cookieDomain: 'example.org' }, ['cookieDomain']],
  ])('refuses %s with 400 validation_failed naming the path, storing nothing', async (_name, body, path) => {
    const t = await draftedTeam();
    const response = await server.request('PUT', experiencePath(t.project.id), { token: t.admin.token, body });
    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('validation_failed');
    expect(response.body.details.map((d: { path: unknown }) => d.path)).toContainEqual(path);
    expect((await server.request('GET', experiencePath(t.project.id), { token: t.admin.token })).body.experience).not.toHaveProperty('integrations');
  });

  it('stores every signal of a type (unlisted ones empty), publishes it and serves it to the SDK; absent stays absent', async () => {
    const t = await draftedTeam();
    const p = t.project.id;
    const plain = await server.request('PUT', experiencePath(p), { token: t.admin.token, body: {} });
    expect(plain.body.experience).not.toHaveProperty('integrations');
    expect(plain.body.experience).not.toHaveProperty('cookieDomain');
    const before = await server.request('POST', consentPath(p, '/publish'), { token: t.admin.token });
    expect(before.status, before.text).toBe(201);
    const key = await createKey(server, t.owner.token, p);
    const v2 = () => server.request('GET', '/api/sdk/v2/config?locale=en', { token: key.secret, headers: { origin: 'https://www.example.com' } });
    const old = await v2();
    expect(old.status, old.text).toBe(200);
    expect(old.body.experience).not.toHaveProperty('integrations');
    expect(old.body.experience).not.toHaveProperty('cookieDomain');

    const body = {
      integrations: [
        { type: 'microsoft-uet', signals: { ad_storage: ['marketing'] } },
        { type: 'microsoft-clarity', signals: { analytics_Storage: ['analytics'] } },
        { type: 'wordpress' },
      ],
      // www., shop. (any port) and every host below *.eu.example.com are under example.com; example.de is another site.
      cookieDomain: 'example.com',
    };
    const set = await server.request('PUT', experiencePath(p), { token: t.admin.token, body });
    expect(set.status, set.text).toBe(200);
    const integrations = [
      { type: 'microsoft-uet', signals: { ad_storage: ['marketing'] } },
      { type: 'microsoft-clarity', signals: { ad_Storage: [], analytics_Storage: ['analytics'] } },
      { type: 'wordpress', signals: { functional: [], preferences: [], statistics: [], 'statistics-anonymous': [], marketing: [] } },
    ];
    expect(set.body.experience).toMatchObject({ integrations, cookieDomain: 'example.com' });
    expect((await server.request('GET', consentPath(p), { token: t.viewer.token })).body.hasUnpublishedChanges).toBe(true);
    const published = await server.request('POST', consentPath(p, '/publish'), { token: t.admin.token });
    expect(published.status, published.text).toBe(201);
    // Settings, not the consent surface: the consentHash stays.
    expect(published.body.version.consentHash).toBe(before.body.version.consentHash);
    const served = await v2();
    expect(served.body.experience).toMatchObject({ integrations, cookieDomain: 'example.com' });

    // The purposes a published mapping names are checked again at publish, as Consent Mode's.
    const draft = sampleDraft();
    draft.purposes = draft.purposes.filter((purpose) => purpose.key !== 'marketing');
    expect((await server.request('PUT', consentPath(p), { token: t.admin.token, body: draft })).status).toBe(200);
    const refused = await server.request('POST', consentPath(p, '/publish'), { token: t.admin.token });
    expect(refused.status).toBe(400);
    expect(refused.body.details.map((d: { path: unknown }) => d.path)).toContainEqual(['experience', 'integrations', 0, 'signals', 'ad_storage', 0]);
  });
});
