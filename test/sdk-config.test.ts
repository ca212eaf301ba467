import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { onPostgres, startTestServer, type TestServer } from './helpers/server.js';
import { consentHashOf, contentHashOf, publishVersion, sampleDraft } from './helpers/versions.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

async function setup(target = server) {
  const t = await team(target);
  const key = await createKey(target, t.owner.token, t.project.id);
  const config = (headers: Record<string, string> = {}, token: string | undefined = key.secret) =>
    target.request('GET', '/api/sdk/v1/config', { token, headers });
  return { ...t, key, config };
}

describe('GET /api/sdk/v1/config', () => {
  it('serves the latest published version exactly, with ETag and caching headers', async () => {
    const s = await setup();
    const version = await publishVersion(server, s.owner, s.project.id);
    const res = await s.config();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      projectId: s.project.id,
      version: {
        id: version.id,
        number: 1,
        publishedAt: version.publishedAt,
        contentHash: version.contentHash,
        consentHash: version.consentHash,
      },
      config: version.config,
    });
    expect(Object.keys(res.body)).toEqual(['projectId', 'version', 'config']);
    // The hashes are the ones decisions.md defines, recomputed here from what the SDK receives.
    expect(consentHashOf(res.body.config)).toBe(version.consentHash);
    expect(contentHashOf(1, res.body.config)).toBe(version.contentHash);
    expect(Object.keys(res.body.config)).toEqual(['purposes', 'categories', 'notice']);
    expect(Object.keys(res.body.config.purposes[0])).toEqual(['id', 'key', 'name', 'description', 'required', 'categoryId', 'sortOrder']);
    expect(res.headers.get('etag')).toBe(`"${version.contentHash}"`);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=600');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers 304 when If-None-Match matches (strong, weak, in a list, or *), 200 otherwise', async () => {
    const s = await setup();
    const version = await publishVersion(server, s.owner, s.project.id);
    const etag = `"${version.contentHash}"`;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await s.config({ 'if-none-match': ifNoneMatch });
      expect(res.status, ifNoneMatch).toBe(304);
      expect(res.text).toBe('');
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=600');
    }
    expect((await s.config({ 'if-none-match': '"stale"' })).status).toBe(200);
  });

  it('follows a new publish at once (new number, new ETag)', async () => {
    const s = await setup();
    const first = await publishVersion(server, s.owner, s.project.id);
    expect((await s.config()).body.version.number).toBe(1);
    const second = await publishVersion(server, s.owner, s.project.id, sampleDraft({ primaryColor: '#112233' }));
    const res = await s.config({ 'if-none-match': `"${first.contentHash}"` });
    expect(res.status).toBe(200);
    expect(res.body.version).toMatchObject({ id: second.id, number: 2, consentHash: second.consentHash });
    expect(res.headers.get('etag')).toBe(`"${second.contentHash}"`);
  });

  it('answers 404 no_published_version before anything is published', async () => {
    const s = await setup();
    const res = await s.config();
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: expect.any(String), code: 'no_published_version' });
  });

  it('refuses missing, malformed and unknown keys with 401 invalid_key, and never takes an operator session', async () => {
    const s = await setup();
    await publishVersion(server, s.owner, s.project.id);
    for (const token of ['', 'nonsense', `pk_live_${'A'.repeat(32)}`, s.key.secret.replace('pk_live_', 'pk_test_'), s.owner.token]) {
      const res = await s.config({}, token);
      expect(res.status, String(token)).toBe(401);
      expect(res.body).toEqual({ error: expect.any(String), code: 'invalid_key' });
    }
  });

  it('accepts the key as a query parameter for compatibility', async () => {
    const s = await setup();
    await publishVersion(server, s.owner, s.project.id);
    const res = await server.request('GET', `/api/sdk/v1/config?key=${s.key.secret}`);
    expect(res.status).toBe(200);
    expect(res.body.projectId).toBe(s.project.id);
  });

  it('answers CORS preflights for any origin', async () => {
    const res = await server.request('OPTIONS', '/api/sdk/v1/config', {
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, if-none-match' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    // X-Consent-Installation: GET /api/sdk/v2/decision (extensions.md section 3); Idempotency-Key: the consent POST
    // (section 13).
    expect(res.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, If-None-Match, X-Consent-Installation, Idempotency-Key');
    expect(res.headers.get('access-control-allow-methods')).toContain('GET');
  });
});

describe('repeat requests (answered from the in-process cache)', () => {
  const logLines: string[] = [];
  let logged: TestServer;
  beforeAll(async () => {
    logged = await startTestServer({ logLevel: 'info' }, { logDestination: { write: (line: string) => void logLines.push(line) } });
  });
  afterAll(() => logged?.close());

  const comparable = (res: { status: number; headers: Headers; text: string }) => ({
    status: res.status,
    headers: [...res.headers].filter(([name]) => !['date', 'x-request-id'].includes(name)),
    text: res.text,
  });

  it('answer with the same status, headers and bytes as the first request, and are logged alike', async () => {
    const s = await setup(logged);
    const version = await publishVersion(logged, s.owner, s.project.id);
    await logged.request('PUT', `/api/platform/projects/${s.project.id}/allowed-origins`, {
      token: s.owner.token,
      body: { origins: ['https://shop.example'] },
    });
    const origin = { origin: 'https://shop.example' };
    const first = await s.config({ ...origin, 'x-request-id': 'cfg-cold' });
    const again = await s.config({ ...origin, 'x-request-id': 'cfg-warm' });
    expect(first.status).toBe(200);
    expect(comparable(again)).toEqual(comparable(first));
    expect(again.headers.get('x-request-id')).toBe('cfg-warm');
    expect(again.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    // The sample config is over 1 KB: compressed for fetch's Accept-Encoding (test/compression.test.ts).
    // Authorization: the key is not in the URL and the answer is public (a cache must key on it).
    expect(again.headers.get('vary')).toBe('Origin, Authorization, Accept-Encoding');
    expect(again.headers.get('content-encoding')).toMatch(/^(br|gzip)$/);
    expect(Number(again.headers.get('content-length'))).toBeGreaterThan(0);
    const etag = `"${version.contentHash}"`;
    const notModified = await s.config({ ...origin, 'if-none-match': etag, 'x-request-id': 'cfg-304' });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag);
    expect((await s.config({ ...origin, 'if-none-match': `W/${etag}` })).status).toBe(304);

    // A first request that is conditional answers like a repeated one.
    const other = await setup(logged);
    const otherVersion = await publishVersion(logged, other.owner, other.project.id);
    const conditional = { 'if-none-match': `"${otherVersion.contentHash}"` };
    expect(comparable(await other.config(conditional))).toEqual(comparable(await other.config(conditional)));

    await new Promise((resolve) => setImmediate(resolve));
    const entries = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request');
    for (const [reqId, status] of [['cfg-cold', 200], ['cfg-warm', 200], ['cfg-304', 304]] as const) {
      expect(entries.filter((entry) => entry.reqId === reqId)).toEqual([
        expect.objectContaining({ method: 'GET', path: '/api/sdk/v1/config', status, durationMs: expect.any(Number) }),
      ]);
    }
    expect(entries.find((entry) => entry.reqId === 'cfg-warm')).not.toHaveProperty('aborted');
  });

  it('follow origin changes and revocations at once', async () => {
    const s = await setup(logged);
    await publishVersion(logged, s.owner, s.project.id);
    const originsPath = `/api/platform/projects/${s.project.id}/allowed-origins`;
    await logged.request('PUT', originsPath, { token: s.owner.token, body: { origins: ['https://shop.example'] } });
    const fromShop = () => s.config({ origin: 'https://shop.example' });
    expect((await fromShop()).status).toBe(200);
    expect((await fromShop()).status).toBe(200);
    await logged.request('PUT', originsPath, { token: s.owner.token, body: { origins: ['https://other.example'] } });
    const refused = await fromShop();
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: expect.any(String), code: 'origin_not_allowed' });
    await logged.request('PUT', originsPath, { token: s.owner.token, body: { enforce: false } });
    expect((await fromShop()).status).toBe(200);
    expect((await fromShop()).status).toBe(200);
    await logged.request('DELETE', `/api/platform/projects/${s.project.id}/api-keys/${s.key.id}`, { token: s.owner.token });
    const revoked = await fromShop();
    expect(revoked.status).toBe(403);
    expect(revoked.body).toEqual({ error: expect.any(String), code: 'revoked_key' });
  });
});

describe('SDK config rate limit', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ rateLimits: { sdkConfigPerMinute: 3 } });
  });
  afterAll(() => limited?.close());

  it('answers 429 rate_limited with Retry-After and X-RateLimit-* once a key spends its budget', async () => {
    const s = await setup(limited);
    await publishVersion(limited, s.owner, s.project.id);
    for (let i = 0; i < 3; i++) expect((await s.config()).status).toBe(200);
    const res = await s.config();
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: expect.any(String), code: 'rate_limited' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.headers.get('x-ratelimit-limit')).toBe('3');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
    // Another key has its own budget.
    const other = await createKey(limited, s.owner.token, s.project.id);
    expect((await s.config({}, other.secret)).status).toBe(200);
  });
});

describe('SDK config rate limit per key and client address', () => {
  let proxied: TestServer;
  beforeAll(async () => {
    proxied = await startTestServer({ trustProxy: true, rateLimits: { sdkConfigPerMinute: 3 } });
  });
  afterAll(() => proxied?.close());

  // Fails on the old main, where the budget was the key's alone: the visitor got 429 too.
  it('lets one client spend only its own allowance, never a real visitor\'s', async () => {
    const s = await setup(proxied);
    await publishVersion(proxied, s.owner, s.project.id);
    const from = (address: string) => ({ 'x-forwarded-for': address });
    // The answer from memory (src/sdk/config.ts) and the full path (`?key=`) count alike.
    for (let i = 0; i < 3; i++) expect((await s.config(from('203.0.113.7'))).status).toBe(200);
    expect((await s.config(from('203.0.113.7'))).status).toBe(429);
    const viaQuery = await proxied.request('GET', `/api/sdk/v1/config?key=${s.key.secret}`, { headers: from('203.0.113.7') });
    expect(viaQuery.status).toBe(429);
    // What the client writes to the left of the proxy's entry is not an address of its own.
    expect((await s.config(from('198.51.100.1, 203.0.113.7'))).status).toBe(429);
    const visitor = await s.config(from('198.51.100.20'));
    expect(visitor.status).toBe(200);
    expect(visitor.body.projectId).toBe(s.project.id);
    expect((await proxied.request('GET', `/api/sdk/v1/config?key=${s.key.secret}`, { headers: from('198.51.100.21') })).status).toBe(200);
  });
});

describe.runIf(onPostgres)('several instances on one PostgreSQL', () => {
  let second: TestServer;
  beforeAll(async () => {
    second = await startTestServer({ databaseUrl: server.services.config.databaseUrl });
  });
  afterAll(() => second?.close());

  it('sees a publish and a revocation made through another instance', async () => {
    const s = await setup();
    await publishVersion(server, s.owner, s.project.id);
    const viaSecond = () => second.request('GET', '/api/sdk/v1/config', { token: s.key.secret });
    expect((await viaSecond()).body.version.number).toBe(1);
    await publishVersion(server, s.owner, s.project.id);
    await vi.waitFor(async () => expect((await viaSecond()).body.version.number).toBe(2), { timeout: 10_000, interval: 50 });
    await server.request('DELETE', `/api/platform/projects/${s.project.id}/api-keys/${s.key.id}`, { token: s.owner.token });
    await vi.waitFor(async () => expect((await viaSecond()).status).toBe(403), { timeout: 10_000, interval: 50 });
  });
});
