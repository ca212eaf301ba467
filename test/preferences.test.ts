import { readFileSync } from 'node:fs';
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

describe('hosted preferences page', () => {
  it('serves a page that loads the SDK for the key and opens the preferences, embedding nothing else', async () => {
    const t = await team(server);
    await publishVersion(server, t.owner, t.project.id);
    const key = await createKey(server, t.owner.token, t.project.id);
    const res = await server.request('GET', `/preferences?key=${key.secret}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self' 'nonce-");
    expect(res.text).toContain('<script src="/sdk/v2/consent.js"></script>');
    expect(res.text).toContain(`var KEY = "${key.secret}";`);
    expect(res.text).toContain('ConsentSDK.init({ publicKey: KEY, locale: ');
    expect(res.text).toContain('c.showPreferences()');
    expect(res.text).not.toContain('apiBaseUrl');
    for (const secretish of [t.project.id, t.project.name, t.org.id, t.org.name, 'We value your privacy', 'Analytics']) {
      expect(res.text).not.toContain(secretish);
    }
    // The page's own SDK calls come from the service's origin, which the allowlist always admits.
    const fromPage = await server.request('GET', '/api/sdk/v2/config', {
      token: key.secret,
      headers: { origin: new URL(server.services.config.publicBaseUrl).origin },
    });
    expect(fromPage.status).toBe(200);
  });

  it('answers an HTML error page for a missing, unknown or revoked key', async () => {
    const t = await team(server);
    const key = await createKey(server, t.owner.token, t.project.id);
    await server.request('DELETE', `/api/platform/projects/${t.project.id}/api-keys/${key.id}`, { token: t.owner.token });
    for (const [query, status] of [
      ['', 400],
      [`?key=pk_live_${'C'.repeat(32)}`, 401],
      ['?key=<script>alert(1)</script>', 401],
      [`?key=${key.secret}`, 403],
    ] as const) {
      const res = await server.request('GET', `/preferences${query}`);
      expect(res.status, query).toBe(status);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.text).toMatch(/^<!doctype html>/);
      expect(res.text).not.toContain('<script>alert');
      expect(res.text).not.toContain('consent.js');
    }
  });
});

describe('the built SDK', () => {
  for (const [name, marker] of [
    ['consent.js', 'ConsentSDK'],
    ['consent.mjs', 'export'],
  ] as const) {
    it(`is served at /sdk/v1/${name} as JavaScript, cacheable and readable from any origin`, async () => {
      const res = await server.request('GET', `/sdk/v1/${name}`, { headers: { origin: 'https://shop.example' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.text).toBe(readFileSync(new URL(`../sdk/dist/${name}`, import.meta.url), 'utf8'));
      expect(res.text).toContain(marker);
      const revalidated = await server.request('GET', `/sdk/v1/${name}`, { headers: { 'if-none-match': res.headers.get('etag')! } });
      expect(revalidated.status).toBe(304);
    });
  }

  it('answers HEAD without a body', async () => {
    const res = await fetch(`${server.url}/sdk/v1/consent.js`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await res.text()).toBe('');
  });
});
