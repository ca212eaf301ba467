// What the go-live checklist says about a site that does not show the banner (issue 28, item 5): the SDK
// requests the service refused for a project, by kind (a revoked key, an origin not allowed, an unknown key that
// starts like one of the project's keys), with the origin and the key's prefix, written at most once a minute per
// project and kind, never on the success path. Real HTTP, both databases.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { publishVersion } from './helpers/versions.js';

let server: TestServer;
const clock = { offsetMs: 0 };
beforeAll(async () => {
  server = await startTestServer({}, { now: () => new Date(Date.now() + clock.offsetMs) });
});
afterAll(() => server?.close());

const REFUSALS = `query($id: ID!) { project(id: $id) { sdkRefusals { kind origin keyPrefix seenAt } } }`;

async function refusals(token: string, projectId: string) {
  const res = await server.request('POST', '/graphql', { token, body: { query: REFUSALS, variables: { id: projectId } } });
  expect(res.status).toBe(200);
  return res.body as { data: { project: { sdkRefusals: { kind: string; origin: string | null; keyPrefix: string | null; seenAt: string }[] } | null }; errors?: { extensions: { code: string } }[] };
}

async function setup() {
  const t = await team(server);
  await publishVersion(server, t.owner, t.project.id);
  const key = await createKey(server, t.owner.token, t.project.id);
  await server.request('PUT', `/api/platform/projects/${t.project.id}/allowed-origins`, { token: t.owner.token, body: { origins: ['https://shop.example'] } });
  const config = (token: string, origin?: string) =>
    server.request('GET', '/api/sdk/v2/config', { token, headers: origin ? { origin } : {} });
  // Refusals are written after the answer (not awaited by it): wait for what the checklist would read next.
  const seen = (kinds: number) =>
    vi.waitFor(async () => {
      const list = (await refusals(t.viewer.token, t.project.id)).data.project!.sdkRefusals;
      expect(list).toHaveLength(kinds);
      return list;
    });
  return { ...t, key, config, seen };
}

describe('Project.sdkRefusals', () => {
  it('is empty until something is refused; a request that passes writes nothing', async () => {
    const t = await setup();
    expect((await t.config(t.key.secret, 'https://shop.example')).status).toBe(200);
    expect((await t.config(t.key.secret)).status).toBe(200);
    expect((await refusals(t.viewer.token, t.project.id)).data.project!.sdkRefusals).toEqual([]);
    // Refusals are written without being awaited: one refused request afterwards, seen written, is the sentinel
    // that anything the passing requests had written would be there too.
    expect((await t.config(t.key.secret, 'https://elsewhere.example')).status).toBe(403);
    const [only] = await t.seen(1);
    expect(only).toMatchObject({ kind: 'origin_not_allowed', origin: 'https://elsewhere.example' });
    expect(await server.services.db.prisma.sdkRefusal.count({ where: { projectId: t.project.id } })).toBe(1);
  });

  it('says which origin was not allowed, with the key’s prefix, and a revoked key', async () => {
    const t = await setup();
    const refused = await t.config(t.key.secret, 'http://www.acme.test:8080');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('origin_not_allowed');
    const [origin] = await t.seen(1);
    expect(origin).toMatchObject({ kind: 'origin_not_allowed', origin: 'http://www.acme.test:8080', keyPrefix: t.key.secret.slice(0, 14) });

    expect((await server.request('DELETE', `/api/platform/projects/${t.project.id}/api-keys/${t.key.id}`, { token: t.owner.token })).status).toBe(200);
    clock.offsetMs += 1000;
    expect((await t.config(t.key.secret, 'https://shop.example')).body.code).toBe('revoked_key');
    const list = await t.seen(2);
    expect(list[0]).toMatchObject({ kind: 'revoked_key', origin: 'https://shop.example', keyPrefix: t.key.secret.slice(0, 14) });
    expect(list[1]!.kind).toBe('origin_not_allowed');
  });

  it('ties an unknown key to the project whose key it starts like; a key like no other is nobody’s', async () => {
    const t = await setup();
    const truncated = t.key.secret.slice(0, 20); // copied short
    expect((await t.config(truncated, 'https://shop.example')).body.code).toBe('invalid_key');
    const mistyped = `${t.key.secret.slice(0, -1)}${t.key.secret.endsWith('A') ? 'B' : 'A'}`;
    expect((await t.config(mistyped, 'https://shop.example')).body.code).toBe('invalid_key');
    const [unknown] = await t.seen(1);
    expect(unknown).toMatchObject({ kind: 'invalid_key', origin: 'https://shop.example', keyPrefix: t.key.secret.slice(0, 14) });
    // Only the prefix is kept: never more of what the site sent.
    expect(JSON.stringify(await server.services.db.prisma.sdkRefusal.findMany({ where: { projectId: t.project.id } }))).not.toContain(truncated);

    const other = await setup();
    expect((await other.config('pk_live_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz', 'https://shop.example')).body.code).toBe('invalid_key');
    expect((await other.config('pk_live_abc', 'https://shop.example')).body.code).toBe('invalid_key');
    expect((await refusals(other.viewer.token, other.project.id)).data.project!.sdkRefusals).toEqual([]);
  });

  it('is written at most once a minute per kind: the next origin shows after the minute', async () => {
    const t = await setup();
    await t.config(t.key.secret, 'https://first.example');
    const [first] = await t.seen(1);
    await t.config(t.key.secret, 'https://second.example');
    // Another request after the second's answer, so its (skipped) write would have happened before this read.
    expect((await t.config(t.key.secret, 'https://shop.example')).status).toBe(200);
    expect((await refusals(t.viewer.token, t.project.id)).data.project!.sdkRefusals[0]!.origin).toBe('https://first.example');

    clock.offsetMs += 61_000;
    await t.config(t.key.secret, 'https://second.example');
    await vi.waitFor(async () => {
      const [latest] = (await refusals(t.viewer.token, t.project.id)).data.project!.sdkRefusals;
      expect(latest!.origin).toBe('https://second.example');
      expect(Date.parse(latest!.seenAt)).toBeGreaterThan(Date.parse(first!.seenAt));
    });
  });

  it('is read by members only: an outsider gets not_found', async () => {
    const t = await setup();
    const outsider = await refusals(t.outsider.token, t.project.id);
    expect(outsider.data?.project ?? null).toBeNull();
    expect(outsider.errors?.[0]?.extensions.code).toBe('not_found');
  });
});
