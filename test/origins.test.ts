import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { publishVersion } from './helpers/versions.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const originsPath = (projectId: string) => `/api/platform/projects/${projectId}/allowed-origins`;

async function setup() {
  const t = await team(server);
  const version = await publishVersion(server, t.owner, t.project.id);
  const key = await createKey(server, t.owner.token, t.project.id);
  const config = (origin?: string) =>
    server.request('GET', '/api/sdk/v1/config', { token: key.secret, headers: origin ? { origin } : {} });
  return { ...t, version, key, config };
}

describe('allowed origins', () => {
  it('starts enforced with an empty list; Viewer reads, Admin writes, outsiders get 404', async () => {
    const t = await team(server);
    const read = await server.request('GET', originsPath(t.project.id), { token: t.viewer.token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ enforce: true, origins: [] });
    const asViewer = await server.request('PUT', originsPath(t.project.id), { token: t.viewer.token, body: { enforce: false } });
    expect(asViewer.status).toBe(403);
    const asOutsider = await server.request('GET', originsPath(t.project.id), { token: t.outsider.token });
    expect(asOutsider.status).toBe(404);
    const asAdmin = await server.request('PUT', originsPath(t.project.id), { token: t.admin.token, body: { origins: ['https://shop.example'] } });
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.body).toEqual({ enforce: true, origins: ['https://shop.example'] });
  });

  it('normalises origins: lowercase, no trailing slash, no default port, no duplicates', async () => {
    const t = await team(server);
    const put = await server.request('PUT', originsPath(t.project.id), {
      token: t.admin.token,
      body: {
        origins: ['HTTPS://Shop.Example.com:443/', 'http://localhost:8080', 'http://legacy.example:80', 'https://shop.example.com', 'https://*.Example.org'],
      },
    });
    expect(put.status).toBe(200);
    expect(put.body.origins).toEqual(['https://shop.example.com', 'http://localhost:8080', 'http://legacy.example', 'https://*.example.org']);
    const read = await server.request('GET', originsPath(t.project.id), { token: t.viewer.token });
    expect(read.body).toEqual(put.body);
  });

  it('refuses what is not an origin, with the offending index, and changes nothing', async () => {
    const t = await team(server);
    await server.request('PUT', originsPath(t.project.id), { token: t.admin.token, body: { origins: ['https://keep.example'] } });
    for (const bad of ['shop.example.com', 'https://a.example/path', 'ftp://a.example', 'https://*.com', 'https://a.*.example', 'https://user@a.example', '*']) {
      const put = await server.request('PUT', originsPath(t.project.id), {
        token: t.admin.token,
        body: { enforce: false, origins: ['https://fine.example', bad] },
      });
      expect(put.status, bad).toBe(400);
      expect(put.body.code).toBe('validation_failed');
      expect(put.body.details).toEqual([{ path: ['origins', 1], message: expect.any(String) }]);
    }
    const typed = await server.request('PUT', originsPath(t.project.id), { token: t.admin.token, body: { enforce: 'no' } });
    expect(typed.status).toBe(400);
    expect(typed.body.code).toBe('validation_failed');
    const read = await server.request('GET', originsPath(t.project.id), { token: t.viewer.token });
    expect(read.body).toEqual({ enforce: true, origins: ['https://keep.example'] });
  });

  it('refuses SDK requests from unlisted origins with 403 origin_not_allowed until listed; no Origin passes', async () => {
    const s = await setup();
    const refused = await s.config('https://shop.example');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: expect.any(String), code: 'origin_not_allowed' });
    expect(refused.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect((await s.config()).status).toBe(200);

    await server.request('PUT', originsPath(s.project.id), { token: s.admin.token, body: { origins: ['https://shop.example'] } });
    const allowed = await s.config('https://shop.example');
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect((await s.config('https://other.example')).status).toBe(403);
    expect((await s.config('http://shop.example')).status).toBe(403);

    const consent = await server.request('POST', '/api/sdk/v1/consent', {
      token: s.key.secret,
      headers: { origin: 'https://other.example' },
      body: { versionId: s.version.id, consentHash: s.version.consentHash, choices: {}, installationId: 'inst-origin-1' },
    });
    expect(consent.status).toBe(403);
    expect(consent.body).toEqual({ error: expect.any(String), code: 'origin_not_allowed' });
  });

  it('lets a wildcard allow subdomains at any depth but not the bare domain', async () => {
    const s = await setup();
    await server.request('PUT', originsPath(s.project.id), { token: s.admin.token, body: { origins: ['https://*.example.com'] } });
    expect((await s.config('https://shop.example.com')).status).toBe(200);
    expect((await s.config('https://a.b.example.com')).status).toBe(200);
    expect((await s.config('https://example.com')).status).toBe(403);
    expect((await s.config('https://badexample.com')).status).toBe(403);
    expect((await s.config('http://shop.example.com')).status).toBe(403);
    expect((await s.config('https://shop.example.com:8443')).status).toBe(403);
  });

  it('lets any origin through when enforcement is off, and keeps the list', async () => {
    const s = await setup();
    await server.request('PUT', originsPath(s.project.id), { token: s.admin.token, body: { origins: ['https://shop.example'] } });
    const off = await server.request('PUT', originsPath(s.project.id), { token: s.admin.token, body: { enforce: false } });
    expect(off.body).toEqual({ enforce: false, origins: ['https://shop.example'] });
    expect((await s.config('https://anything.example')).status).toBe(200);
  });

  it('always allows the service’s own origin (the hosted preferences page)', async () => {
    const s = await setup();
    expect((await s.config(new URL(server.services.config.publicBaseUrl).origin)).status).toBe(200);
  });
});
