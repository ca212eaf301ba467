import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { team } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { publishVersion } from './helpers/versions.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const keysPath = (projectId: string) => `/api/platform/projects/${projectId}/api-keys`;

describe('publishable keys', () => {
  it('creates a key whose secret is shown once and stored only as a hash', async () => {
    const t = await team(server);
    const created = await server.request('POST', keysPath(t.project.id), { token: t.owner.token, body: { name: 'Website' } });
    expect(created.status).toBe(201);
    const { apiKey, secret } = created.body;
    expect(secret).toMatch(/^pk_live_[0-9A-Za-z]{32}$/);
    expect(apiKey).toEqual({
      id: expect.any(String),
      name: 'Website',
      prefix: secret.slice(0, 'pk_live_'.length + 6),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      lastUsedAt: null,
      revokedAt: null,
    });

    const listed = await server.request('GET', keysPath(t.project.id), { token: t.viewer.token });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ apiKeys: [apiKey] });
    expect(listed.text).not.toContain(secret);
    expect(listed.text).not.toContain(secret.slice(14));

    const [row] = await server.services.db.query<{ secret_hash: string }>('SELECT secret_hash FROM api_keys WHERE id = $1', [apiKey.id]);
    expect(row!.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.secret_hash).not.toContain(secret.slice(8));
  });

  it('accepts a create without a body or name, and refuses a name over 120 characters', async () => {
    const t = await team(server);
    const bare = await server.request('POST', keysPath(t.project.id), { token: t.owner.token });
    expect(bare.status).toBe(201);
    expect(bare.body.apiKey.name).toBe('');
    const long = await server.request('POST', keysPath(t.project.id), { token: t.owner.token, body: { name: 'x'.repeat(121) } });
    expect(long.status).toBe(400);
    expect(long.body.code).toBe('validation_failed');
  });

  it('lets only the Owner create and revoke; Viewer and Admin may list; outsiders get 404', async () => {
    const t = await team(server);
    for (const who of [t.admin, t.viewer]) {
      const create = await server.request('POST', keysPath(t.project.id), { token: who.token, body: {} });
      expect(create.status).toBe(403);
      expect(create.body.code).toBe('forbidden');
    }
    const key = await server.request('POST', keysPath(t.project.id), { token: t.owner.token, body: {} });
    for (const who of [t.admin, t.viewer]) {
      const revoke = await server.request('DELETE', `${keysPath(t.project.id)}/${key.body.apiKey.id}`, { token: who.token });
      expect(revoke.status).toBe(403);
      const list = await server.request('GET', keysPath(t.project.id), { token: who.token });
      expect(list.status).toBe(200);
    }
    const outsider = await server.request('GET', keysPath(t.project.id), { token: t.outsider.token });
    expect(outsider.status).toBe(404);
    const anonymous = await server.request('GET', keysPath(t.project.id));
    expect(anonymous.status).toBe(401);
    // Nothing changed for the denied requests.
    const list = await server.request('GET', keysPath(t.project.id), { token: t.owner.token });
    expect(list.body.apiKeys).toHaveLength(1);
    expect(list.body.apiKeys[0].revokedAt).toBeNull();
  });

  it('revokes softly and idempotently; the SDK then answers revoked_key', async () => {
    const t = await team(server);
    await publishVersion(server, t.owner, t.project.id);
    const { body } = await server.request('POST', keysPath(t.project.id), { token: t.owner.token, body: {} });
    const config = () => server.request('GET', '/api/sdk/v1/config', { token: body.secret });
    expect((await config()).status).toBe(200);

    const revoked = await server.request('DELETE', `${keysPath(t.project.id)}/${body.apiKey.id}`, { token: t.owner.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body.apiKey.id).toBe(body.apiKey.id);
    expect(revoked.body.apiKey.revokedAt).toEqual(expect.any(String));
    const again = await server.request('DELETE', `${keysPath(t.project.id)}/${body.apiKey.id}`, { token: t.owner.token });
    expect(again.status).toBe(200);
    expect(again.body.apiKey.revokedAt).toBe(revoked.body.apiKey.revokedAt);

    const refused = await config();
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: expect.any(String), code: 'revoked_key' });
    const listed = await server.request('GET', keysPath(t.project.id), { token: t.viewer.token });
    expect(listed.body.apiKeys[0].revokedAt).toBe(revoked.body.apiKey.revokedAt);
  });

  it('answers 404 for a key of another project or no key at all', async () => {
    const a = await team(server);
    const b = await team(server);
    const { body } = await server.request('POST', keysPath(b.project.id), { token: b.owner.token, body: {} });
    const other = await server.request('DELETE', `${keysPath(a.project.id)}/${body.apiKey.id}`, { token: a.owner.token });
    expect(other.status).toBe(404);
    const missing = await server.request('DELETE', `${keysPath(a.project.id)}/nope`, { token: a.owner.token });
    expect(missing.status).toBe(404);
  });

  it('records lastUsedAt when the SDK uses the key', async () => {
    const t = await team(server);
    await publishVersion(server, t.owner, t.project.id);
    const { body } = await server.request('POST', keysPath(t.project.id), { token: t.owner.token, body: {} });
    await server.request('GET', '/api/sdk/v1/config', { token: body.secret });
    const listed = await server.request('GET', keysPath(t.project.id), { token: t.owner.token });
    expect(listed.body.apiKeys[0].lastUsedAt).toEqual(expect.any(String));
  });

  it('notifies members when a key is created and revoked (product consent)', async () => {
    const t = await team(server);
    const { body } = await server.request('POST', keysPath(t.project.id), { token: t.owner.token, body: {} });
    await server.request('DELETE', `${keysPath(t.project.id)}/${body.apiKey.id}`, { token: t.owner.token });
    await server.request('DELETE', `${keysPath(t.project.id)}/${body.apiKey.id}`, { token: t.owner.token });
    // The notifications API belongs to another route group; read the inbox rows of the viewer.
    const rows = await server.services.db.query<{ type: string; product: string; project_id: string }>(
      'SELECT type, product, project_id FROM notifications WHERE user_id = $1 ORDER BY created_at, id',
      [t.viewer.id],
    );
    expect(rows.map((r) => r.type)).toEqual(['consent.key_created', 'consent.key_revoked']);
    expect(rows.every((r) => r.product === 'consent' && r.project_id === t.project.id)).toBe(true);
  });
});
