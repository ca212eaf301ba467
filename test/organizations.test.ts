import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from '../src/admin/members.js';
import { operator, organization, project, team } from './helpers/fixtures.js';
import { onPostgres, startTestServer, type TestServer } from './helpers/server.js';

const ORGS = '/api/platform/orgs';
const projectsOf = (orgId: string) => `/api/platform/orgs/${orgId}/projects`;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let server: TestServer;
let clock: Date;
beforeAll(async () => {
  clock = new Date('2026-11-22T10:00:00.000Z');
  server = await startTestServer({}, { now: () => clock });
});
afterAll(() => server?.close());

const rowCount = async (table: string, where = 'true', params: unknown[] = []) =>
  Number((await server.services.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, params))[0]!.n);

describe('POST /api/platform/orgs', () => {
  it('answers 201 {organization:{id,name,slug,createdAt}} and makes the creator OWNER', async () => {
    const owner = await operator(server, 'Founder');
    const res = await server.request('POST', ORGS, { token: owner.token, body: { name: 'Acme Corp' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      organization: { id: expect.any(String), name: 'Acme Corp', slug: expect.stringMatching(/^acme-corp/), createdAt: clock.toISOString() },
    });
    expect(res.body.organization.createdAt).toMatch(ISO_MS);
    const [membership] = await server.services.db.query<{ role: string; user_id: string }>(
      'SELECT role::text AS role, user_id FROM memberships WHERE organization_id = $1',
      [res.body.organization.id],
    );
    expect(membership).toEqual({ role: 'OWNER', user_id: owner.id });
    // The owner may do owner things right away: list and create projects.
    expect((await server.request('GET', projectsOf(res.body.organization.id), { token: owner.token })).status).toBe(200);
  });

  it('derives the slug from the name, unicode included, and adds a random suffix on collision', async () => {
    const owner = await operator(server, 'Slugger');
    const stamp = Date.now().toString(36);
    const name = `Ünïcødé Straße ${stamp}`;
    const first = await organization(server, owner, { name });
    expect(first.slug).toBe(`unicode-strasse-${stamp}`);
    const second = await organization(server, owner, { name });
    const third = await organization(server, owner, { name });
    expect(second.slug).not.toBe(first.slug);
    expect(third.slug).not.toBe(second.slug);
    expect(second.slug.startsWith(`${first.slug}-`)).toBe(true);
    expect(third.slug.startsWith(`${first.slug}-`)).toBe(true);

    const symbols = await organization(server, owner, { name: '!!! ???' });
    expect(symbols.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    const cjk = await organization(server, owner, { name: '東京 カフェ' });
    expect(cjk.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    expect(cjk.name).toBe('東京 カフェ');
  });

  it('accepts names of 1 and 120 characters and refuses 0 and 121 with 400 details', async () => {
    const owner = await operator(server, 'Lengths');
    expect((await server.request('POST', ORGS, { token: owner.token, body: { name: 'A' } })).status).toBe(201);
    expect((await server.request('POST', ORGS, { token: owner.token, body: { name: 'n'.repeat(120) } })).status).toBe(201);
    const before = await rowCount('organizations');
    for (const body of [{ name: '' }, { name: 'n'.repeat(121) }, {}, { name: 42 }]) {
      const res = await server.request('POST', ORGS, { token: owner.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ error: expect.any(String), code: 'validation_failed', details: [{ path: ['name'], message: expect.any(String) }] });
    }
    expect(await rowCount('organizations')).toBe(before);
  });

  it('accepts a catalog planId, and refuses an unknown one with 400', async () => {
    const owner = await operator(server, 'Planner');
    for (const planId of ['free', 'starter', 'growth', 'scale']) {
      expect((await server.request('POST', ORGS, { token: owner.token, body: { name: `Plan ${planId}`, planId } })).status).toBe(201);
    }
    const before = await rowCount('organizations');
    for (const planId of ['platinum', '', 7]) {
      const res = await server.request('POST', ORGS, { token: owner.token, body: { name: 'Bad plan', planId } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.details).toEqual([{ path: ['planId'], message: expect.any(String) }]);
    }
    expect(await rowCount('organizations')).toBe(before);
  });

  it('starts the trial of a starter or growth planId (3 projects), free otherwise (1 project)', async () => {
    const owner = await operator(server, 'Trial');
    const trial = await organization(server, owner, { name: 'Trial org', planId: 'starter' });
    for (const name of ['One', 'Two', 'Three']) await project(server, owner, trial.id, name);
    const fourth = await server.request('POST', projectsOf(trial.id), { token: owner.token, body: { name: 'Four' } });
    expect(fourth.status).toBe(403);
    expect(fourth.body.code).toBe('entitlement_exceeded');
  });

  it('answers 401 without or with an invalid session', async () => {
    for (const token of [undefined, 'invalid-token']) {
      const res = await server.request('POST', ORGS, { token, body: { name: 'Nope' } });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: expect.any(String), code: 'unauthorized' });
    }
    // Authentication comes before validation.
    expect((await server.request('POST', ORGS, { body: { name: '' } })).status).toBe(401);
  });
});

describe('GET /api/platform/orgs/:orgId/projects', () => {
  it('lists {projects:[...]} oldest first for every role from Viewer up', async () => {
    const t = await team(server, { planId: 'growth' });
    clock = new Date(clock.getTime() + 1000);
    const second = await project(server, t.admin, t.org.id, 'Second');
    clock = new Date(clock.getTime() + 1000);
    const third = await project(server, t.owner, t.org.id, 'Third');
    for (const member of [t.owner, t.admin, t.viewer]) {
      const res = await server.request('GET', projectsOf(t.org.id), { token: member.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ projects: [t.project, second, third] });
    }
    for (const p of [t.project, second, third]) {
      expect(Object.keys(p).sort()).toEqual(['createdAt', 'id', 'name', 'organizationId', 'slug']);
      expect(p.organizationId).toBe(t.org.id);
    }
  });

  it('answers 404 to a non-member and for an unknown or malformed orgId, 401 without session', async () => {
    const t = await team(server);
    for (const orgId of [t.org.id, '00000000-0000-7000-8000-000000000000', 'not-an-id', '%E2%82']) {
      const res = await server.request('GET', projectsOf(orgId), { token: orgId === t.org.id ? t.outsider.token : t.owner.token });
      expect(res.status, orgId).toBe(404);
      expect(res.body).toEqual({ error: expect.any(String), code: 'not_found' });
    }
    expect((await server.request('GET', projectsOf(t.org.id))).status).toBe(401);
  });
});

describe('POST /api/platform/orgs/:orgId/projects', () => {
  it('creates {project} for Admin and Owner with a slug from the name', async () => {
    const t = await team(server, { planId: 'growth' });
    const res = await server.request('POST', projectsOf(t.org.id), { token: t.admin.token, body: { name: 'Web Shop' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      project: { id: expect.any(String), organizationId: t.org.id, name: 'Web Shop', slug: 'web-shop', createdAt: clock.toISOString() },
    });
    // Same name again in the same organization: a suffixed slug.
    const again = await server.request('POST', projectsOf(t.org.id), { token: t.owner.token, body: { name: 'Web Shop' } });
    expect(again.status).toBe(201);
    expect(again.body.project.slug).toMatch(/^web-shop-[a-z0-9]+$/);
  });

  it('a new project has an empty draft, origin enforcement on with no origins, no key and no webhook', async () => {
    const t = await team(server);
    const [row] = await server.services.db.query<{ enforce_origins: boolean; allowed_origins: string[] }>(
      'SELECT enforce_origins, allowed_origins FROM projects WHERE id = $1',
      [t.project.id],
    );
    expect(row).toEqual({ enforce_origins: true, allowed_origins: [] });
    for (const table of ['categories', 'purposes', 'consent_versions', 'api_keys', 'webhooks']) {
      expect(await rowCount(table, 'project_id = $1', [t.project.id]), table).toBe(0);
    }
  });

  it('refuses a Viewer with 403 forbidden and a non-member with 404, changing nothing', async () => {
    const t = await team(server, { planId: 'growth' });
    const before = await rowCount('projects', 'organization_id = $1', [t.org.id]);
    const viewer = await server.request('POST', projectsOf(t.org.id), { token: t.viewer.token, body: { name: 'X' } });
    expect(viewer.status).toBe(403);
    expect(viewer.body).toEqual({ error: expect.any(String), code: 'forbidden' });
    const outsider = await server.request('POST', projectsOf(t.org.id), { token: t.outsider.token, body: { name: 'X' } });
    expect(outsider.status).toBe(404);
    expect(outsider.body).toEqual({ error: expect.any(String), code: 'not_found' });
    const unknown = await server.request('POST', projectsOf('no-such-org'), { token: t.owner.token, body: { name: 'X' } });
    expect(unknown.status).toBe(404);
    expect(await rowCount('projects', 'organization_id = $1', [t.org.id])).toBe(before);
  });

  it('checks membership and role before the body: 404 for a non-member and 403 for a viewer with a bad body', async () => {
    const t = await team(server, { planId: 'growth' });
    for (const body of [{}, { name: '' }, { name: 'n'.repeat(121) }, { name: 42 }, { name: ['a'] }]) {
      const outsider = await server.request('POST', projectsOf(t.org.id), { token: t.outsider.token, body });
      expect(outsider.status, JSON.stringify(body)).toBe(404);
      const viewer = await server.request('POST', projectsOf(t.org.id), { token: t.viewer.token, body });
      expect(viewer.status, JSON.stringify(body)).toBe(403);
      const admin = await server.request('POST', projectsOf(t.org.id), { token: t.admin.token, body });
      expect(admin.status, JSON.stringify(body)).toBe(400);
      expect(admin.body.code).toBe('validation_failed');
      expect(admin.body.details).toEqual([{ path: ['name'], message: expect.any(String) }]);
    }
  });

  it('refuses the second project on the free plan with 403 entitlement_exceeded', async () => {
    const owner = await operator(server, 'FreeOwner');
    const org = await organization(server, owner, { name: 'Free org' });
    await project(server, owner, org.id, 'Only');
    const res = await server.request('POST', projectsOf(org.id), { token: owner.token, body: { name: 'Second' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: expect.any(String), code: 'entitlement_exceeded' });
    expect(await rowCount('projects', 'organization_id = $1', [org.id])).toBe(1);
    // Validation comes before business rules: a bad body is still 400.
    const bad = await server.request('POST', projectsOf(org.id), { token: owner.token, body: { name: '' } });
    expect(bad.status).toBe(400);
  });

  // A race only on PostgreSQL (the embedded database runs one query at a time). Fails without the
  // organization row lock (`FOR UPDATE` removed in src/projects/service.ts, tried): more than 3 are created.
  it.runIf(onPostgres)('never passes the limit with parallel creates (PostgreSQL: a real race)', async () => {
    expect(server.services.db.kind).toBe('postgres');
    for (let round = 0; round < 3; round++) {
      const owner = await operator(server, `Racer ${round}`);
      const org = await organization(server, owner, { name: `Race org ${round}`, planId: 'starter' });
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) => server.request('POST', projectsOf(org.id), { token: owner.token, body: { name: `P${i}` } })),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(3);
      expect(statuses.filter((s) => s === 403)).toHaveLength(13);
      expect(await rowCount('projects', 'organization_id = $1', [org.id])).toBe(3);
    }
  }, 180_000); // rounds on a loaded machine

  it('parallel creates with the same name all get distinct slugs', async () => {
    const owner = await operator(server, 'SameName');
    const org = await organization(server, owner, { name: 'Same name org', planId: 'growth' });
    const results = await Promise.all(
      Array.from({ length: 5 }, () => server.request('POST', projectsOf(org.id), { token: owner.token, body: { name: 'Twin' } })),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(results.map((r) => r.body.project.slug)).size).toBe(5);
  });

  it('lets a member added later see and create projects by role', async () => {
    const owner = await operator(server, 'Later');
    const late = await operator(server, 'Latecomer');
    const org = await organization(server, owner, { name: 'Later org', planId: 'growth' });
    expect((await server.request('GET', projectsOf(org.id), { token: late.token })).status).toBe(404);
    await addMember(server.services.db, { org: org.slug, email: late.email, role: 'VIEWER' });
    expect((await server.request('GET', projectsOf(org.id), { token: late.token })).status).toBe(200);
    expect((await server.request('POST', projectsOf(org.id), { token: late.token, body: { name: 'No' } })).status).toBe(403);
    await addMember(server.services.db, { org: org.id, email: late.email, role: 'ADMIN' });
    expect((await server.request('POST', projectsOf(org.id), { token: late.token, body: { name: 'Yes' } })).status).toBe(201);
  });
});
