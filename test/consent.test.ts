import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentRoutes } from '../rest/routes/consent.js';
import { latestPublishedVersion } from '../src/consent/versions.js';
import { consentPath, evidencePath, NOTICE, publish, putDraft } from './helpers/consent.js';
import { team, type Operator } from './helpers/fixtures.js';
import { onPostgres, startTestServer, type TestServer } from './helpers/server.js';
import { consentHashOf, contentHashOf, type VersionConfig } from './helpers/versions.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

type Team = Awaited<ReturnType<typeof team>>;

const getConfiguration = async (actor: Operator, projectId: string) => {
  const response = await server.request('GET', consentPath(projectId), { token: actor.token });
  expect(response.status).toBe(200);
  return response.body;
};
const getVersions = async (actor: Operator, projectId: string) =>
  (await server.request('GET', consentPath(projectId, '/versions'), { token: actor.token })).body.versions;

/** Everything a denied or invalid request could have changed. */
const snapshot = async (t: Team) => ({
  configuration: await getConfiguration(t.owner, t.project.id),
  versions: await getVersions(t.owner, t.project.id),
});

/** The draft as a PUT /consent body: what GET returns is accepted back. */
const asBody = (draft: { categories: unknown[]; purposes: unknown[]; notice: unknown }) => ({
  categories: draft.categories,
  purposes: draft.purposes,
  notice: draft.notice,
});

describe('building the draft piece by piece', () => {
  it('creates, changes and deletes categories and purposes, and replaces the notice', async () => {
    const t = await team(server);
    const p = t.project.id;
    const empty = await getConfiguration(t.viewer, p);
    expect(empty).toEqual({
      draft: {
        categories: [],
        purposes: [],
        notice: { title: '', description: '', acceptLabel: '', rejectLabel: '', manageLabel: '', companyName: '', logoUrl: '', primaryColor: '' },
      },
      latestVersion: null,
      hasUnpublishedChanges: false,
    });

    const analytics = await server.request('POST', consentPath(p, '/categories'), { token: t.admin.token, body: { name: 'Analytics' } });
    expect(analytics.status).toBe(201);
    expect(analytics.body).toEqual({ category: { id: expect.any(String), name: 'Analytics', sortOrder: 0 } });
    const essential = await server.request('POST', consentPath(p, '/categories'), {
      token: t.owner.token,
      body: { name: 'Essential', sortOrder: -1 },
    });
    expect(essential.body.category.sortOrder).toBe(-1);
    const categoryId = analytics.body.category.id;

    const stats = await server.request('POST', consentPath(p, '/purposes'), {
      token: t.admin.token,
      body: { key: 'stats', name: 'Statistics', categoryId },
    });
    expect(stats.status).toBe(201);
    expect(stats.body).toEqual({
      purpose: { id: expect.any(String), key: 'stats', name: 'Statistics', description: '', required: false, categoryId, sortOrder: 0 },
    });
    const heatmaps = await server.request('POST', consentPath(p, '/purposes'), {
      token: t.admin.token,
      body: { key: 'heatmaps', name: 'Heatmaps', description: 'Where people click', required: false, categoryId, sortOrder: 0 },
    });
    const session = await server.request('POST', consentPath(p, '/purposes'), {
      token: t.admin.token,
      body: { key: 'session', name: 'Session', required: true, categoryId: essential.body.category.id, sortOrder: -5 },
    });
    expect(session.status).toBe(201);

    const renamed = await server.request('PATCH', consentPath(p, `/purposes/${stats.body.purpose.id}`), {
      token: t.admin.token,
      body: { name: 'Visit statistics', sortOrder: 3 },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.purpose).toEqual({ ...stats.body.purpose, name: 'Visit statistics', sortOrder: 3 });
    const recategorised = await server.request('PATCH', consentPath(p, `/categories/${categoryId}`), {
      token: t.admin.token,
      body: { sortOrder: 2 },
    });
    expect(recategorised.body.category).toEqual({ id: categoryId, name: 'Analytics', sortOrder: 2 });

    const notice = await server.request('PUT', consentPath(p, '/notice'), {
      token: t.admin.token,
      body: { title: 'Cookies', description: 'We use cookies.', logoUrl: '', primaryColor: '#AA00ff' },
    });
    expect(notice.status).toBe(200);
    expect(notice.body).toEqual({
      notice: { title: 'Cookies', description: 'We use cookies.', acceptLabel: '', rejectLabel: '', manageLabel: '', companyName: '', logoUrl: '', primaryColor: '#AA00ff' },
    });

    const configuration = await getConfiguration(t.viewer, p);
    // Sorted by sortOrder, then creation.
    expect(configuration.draft.categories.map((c: { name: string }) => c.name)).toEqual(['Essential', 'Analytics']);
    expect(configuration.draft.purposes.map((c: { key: string }) => c.key)).toEqual(['session', 'heatmaps', 'stats']);
    expect(configuration.draft.purposes[1]).toEqual(heatmaps.body.purpose);
    expect(configuration.draft.notice).toEqual(notice.body.notice);
    expect(configuration.hasUnpublishedChanges).toBe(true);

    const deleted = await server.request('DELETE', consentPath(p, `/purposes/${heatmaps.body.purpose.id}`), { token: t.admin.token });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const again = await server.request('DELETE', consentPath(p, `/purposes/${heatmaps.body.purpose.id}`), { token: t.admin.token });
    expect(again.status).toBe(404);
    expect((await getConfiguration(t.viewer, p)).draft.purposes.map((c: { key: string }) => c.key)).toEqual(['session', 'stats']);
  });

  it('refuses to delete a category that purposes still use (409), and deletes it once they are gone', async () => {
    const t = await team(server);
    const p = t.project.id;
    const { draft } = await putDraft(server, t.admin, p);
    const marketing = draft.categories.find((c) => c.name === 'Marketing')!;
    const before = await snapshot(t);
    const refused = await server.request('DELETE', consentPath(p, `/categories/${marketing.id}`), { token: t.admin.token });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('conflict');
    expect(await snapshot(t)).toEqual(before);

    for (const purpose of draft.purposes.filter((x) => x.categoryId === marketing.id)) {
      expect((await server.request('DELETE', consentPath(p, `/purposes/${purpose.id}`), { token: t.admin.token })).status).toBe(204);
    }
    expect((await server.request('DELETE', consentPath(p, `/categories/${marketing.id}`), { token: t.admin.token })).status).toBe(204);
    expect((await getConfiguration(t.admin, p)).draft.categories.map((c: { name: string }) => c.name)).toEqual(['Essential']);
  });

  it('answers 409 conflict for a duplicate purpose key, on create and on rename', async () => {
    const t = await team(server);
    const p = t.project.id;
    const { draft } = await putDraft(server, t.admin, p);
    const before = await snapshot(t);
    const created = await server.request('POST', consentPath(p, '/purposes'), {
      token: t.admin.token,
      body: { key: 'analytics', name: 'Again', categoryId: draft.categories[0]!.id },
    });
    expect(created.status).toBe(409);
    expect(created.body).toMatchObject({ code: 'conflict', error: expect.stringContaining('analytics') });
    const ads = draft.purposes.find((x) => x.key === 'ads')!;
    const renamed = await server.request('PATCH', consentPath(p, `/purposes/${ads.id}`), { token: t.admin.token, body: { key: 'analytics' } });
    expect(renamed.status).toBe(409);
    expect(await snapshot(t)).toEqual(before);
  });

  it('answers 404 for categories and purposes of another project or that do not exist', async () => {
    const t = await team(server);
    const u = await team(server);
    const mine = await putDraft(server, t.admin, t.project.id);
    const theirs = await putDraft(server, u.admin, u.project.id);
    const foreignCategory = theirs.draft.categories[0]!.id;
    const foreignPurpose = theirs.draft.purposes[0]!.id;
    const before = await snapshot(u);
    for (const [method, path, body] of [
      ['PATCH', `/categories/${foreignCategory}`, { name: 'Mine now' }],
      ['DELETE', `/categories/${foreignCategory}`, undefined],
      ['PATCH', `/purposes/${foreignPurpose}`, { name: 'Mine now' }],
      ['DELETE', `/purposes/${foreignPurpose}`, undefined],
      ['PATCH', '/purposes/nope', { name: 'x' }],
      ['DELETE', '/categories/nope', undefined],
    ] as const) {
      const response = await server.request(method, consentPath(t.project.id, path), { token: t.admin.token, body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.code).toBe('not_found');
    }
    // A purpose may not point at another project's category either (400: bad input).
    const crossLinked = await server.request('POST', consentPath(t.project.id, '/purposes'), {
      token: t.admin.token,
      body: { key: 'cross', name: 'Cross', categoryId: foreignCategory },
    });
    expect(crossLinked.status).toBe(400);
    expect(crossLinked.body.details).toEqual([{ path: ['categoryId'], message: 'Unknown category' }]);
    expect(await snapshot(u)).toEqual(before);
    expect((await getConfiguration(t.admin, t.project.id)).draft).toEqual(mine.draft);
  });
});

describe('invalid input gets 400 with details and changes nothing', () => {
  let t: Team;
  let categoryId: string;
  let purposeId: string;
  beforeAll(async () => {
    t = await team(server);
    const { draft } = await putDraft(server, t.admin, t.project.id);
    categoryId = draft.categories[0]!.id;
    purposeId = draft.purposes[0]!.id;
  });

  const long = (n: number) => 'x'.repeat(n);
  const cases: [string, string, () => string, Record<string, unknown>, (string | number)[]][] = [
    ['purpose key with capitals', 'POST', () => '/purposes', { key: 'Analytics', name: 'A', categoryId: 'x' }, ['key']],
    ['purpose key starting with a digit', 'POST', () => '/purposes', { key: '1st', name: 'A', categoryId: 'x' }, ['key']],
    ['purpose key with a dash', 'POST', () => '/purposes', { key: 'a-b', name: 'A', categoryId: 'x' }, ['key']],
    ['purpose key of 65 characters', 'POST', () => '/purposes', { key: `a${'b'.repeat(64)}`, name: 'A', categoryId: 'x' }, ['key']],
    ['unknown category', 'POST', () => '/purposes', { key: 'fine', name: 'A', categoryId: 'no-such-category' }, ['categoryId']],
    ['missing purpose name', 'POST', () => '/purposes', { key: 'fine', categoryId: 'x' }, ['name']],
    ['blank purpose name', 'POST', () => '/purposes', { key: 'fine', name: '   ', categoryId: 'x' }, ['name']],
    ['purpose description over 2000', 'POST', () => '/purposes', { key: 'fine', name: 'A', description: long(2001), categoryId: 'x' }, ['description']],
    ['purpose name over 200', 'PATCH', () => `/purposes/${purposeId}`, { name: long(201) }, ['name']],
    ['bad key on rename', 'PATCH', () => `/purposes/${purposeId}`, { key: 'Bad Key' }, ['key']],
    ['unknown category on move', 'PATCH', () => `/purposes/${purposeId}`, { categoryId: 'nowhere' }, ['categoryId']],
    ['category name over 100', 'POST', () => '/categories', { name: long(101) }, ['name']],
    ['empty category name', 'PATCH', () => `/categories/${categoryId}`, { name: '' }, ['name']],
    ['sortOrder out of range', 'POST', () => '/categories', { name: 'A', sortOrder: 2_000_000 }, ['sortOrder']],
    ['logoUrl over http', 'PUT', () => '/notice', { ...NOTICE, logoUrl: 'http://cdn.example.com/logo.svg' }, ['logoUrl']],
    ['logoUrl with javascript:', 'PUT', () => '/notice', { ...NOTICE, logoUrl: 'javascript:alert(1)' }, ['logoUrl']],
    ['primaryColor as a name', 'PUT', () => '/notice', { ...NOTICE, primaryColor: 'red' }, ['primaryColor']],
    ['primaryColor #rgb', 'PUT', () => '/notice', { ...NOTICE, primaryColor: '#fff' }, ['primaryColor']],
    ['notice title over 200', 'PUT', () => '/notice', { ...NOTICE, title: long(201) }, ['title']],
    ['notice description over 5000', 'PUT', () => '/notice', { ...NOTICE, description: long(5001) }, ['description']],
    ['label over 60', 'PUT', () => '/notice', { ...NOTICE, acceptLabel: long(61) }, ['acceptLabel']],
  ];

  for (const [name, method, path, body, field] of cases) {
    it(name, async () => {
      const before = await snapshot(t);
      const response = await server.request(method, consentPath(t.project.id, path()), { token: t.admin.token, body });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'validation_failed', error: expect.any(String) });
      expect(response.body.details.map((d: { path: unknown }) => d.path)).toContainEqual(field);
      expect(await snapshot(t)).toEqual(before);
    });
  }

  it('wrong JSON types are 400 validation_failed too', async () => {
    const before = await snapshot(t);
    for (const body of [{ name: 'A', sortOrder: 1.5 }, { name: 42 }]) {
      const response = await server.request('POST', consentPath(t.project.id, '/categories'), { token: t.admin.token, body });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('validation_failed');
    }
    expect(await snapshot(t)).toEqual(before);
  });

  it('an empty logoUrl and primaryColor are allowed', async () => {
    const response = await server.request('PUT', consentPath(t.project.id, '/notice'), {
      token: t.admin.token,
      body: { ...NOTICE, logoUrl: '', primaryColor: '' },
    });
    expect(response.status).toBe(200);
    await server.request('PUT', consentPath(t.project.id, '/notice'), { token: t.admin.token, body: NOTICE });
  });
});

describe('PUT /consent replaces the whole draft in one transaction', () => {
  it('creates by ref, keeps by id, deletes what is left out', async () => {
    const t = await team(server);
    const p = t.project.id;
    const first = await putDraft(server, t.admin, p);
    expect(first.draft.categories.map((c) => c.name)).toEqual(['Essential', 'Marketing']);
    expect(first.draft.purposes.map((x) => [x.key, x.categoryId])).toEqual([
      ['necessary', first.draft.categories[0]!.id],
      ['analytics', first.draft.categories[1]!.id],
      ['ads', first.draft.categories[1]!.id],
    ]);
    expect(first.draft.notice).toEqual(NOTICE);
    expect(first.hasUnpublishedChanges).toBe(true);

    // GET's draft is a valid body: sending it back changes nothing.
    const roundTrip = await server.request('PUT', consentPath(p), { token: t.admin.token, body: asBody(first.draft) });
    expect(roundTrip.status).toBe(200);
    expect(roundTrip.body).toEqual(first);

    const [essential, marketing] = first.draft.categories;
    const [necessary, analytics, ads] = first.draft.purposes;
    const second = await server.request('PUT', consentPath(p), {
      token: t.admin.token,
      body: {
        categories: [
          { id: essential!.id, name: 'Strictly necessary', sortOrder: 0 },
          { ref: 'stats', name: 'Statistics', sortOrder: 1 },
        ],
        purposes: [
          // Swapping two keys between kept purposes is fine.
          { ...necessary, key: 'analytics', name: 'Was necessary' },
          { ...analytics, key: 'necessary', categoryId: 'stats' },
          { key: 'heatmaps', name: 'Heatmaps', description: '', required: false, categoryId: 'stats', sortOrder: 9 },
        ],
        notice: { title: 'Only a title' },
      },
    });
    expect(second.status, second.text).toBe(200);
    const draft = second.body.draft;
    const stats = draft.categories.find((c: { name: string }) => c.name === 'Statistics');
    expect(draft.categories).toEqual([{ id: essential!.id, name: 'Strictly necessary', sortOrder: 0 }, { id: expect.any(String), name: 'Statistics', sortOrder: 1 }]);
    expect(draft.categories.map((c: { id: string }) => c.id)).not.toContain(marketing!.id);
    expect(draft.purposes).toEqual([
      { ...necessary, key: 'analytics', name: 'Was necessary' },
      { ...analytics, key: 'necessary', categoryId: stats.id },
      { id: expect.any(String), key: 'heatmaps', name: 'Heatmaps', description: '', required: false, categoryId: stats.id, sortOrder: 9 },
    ]);
    expect(draft.purposes.map((x: { id: string }) => x.id)).not.toContain(ads!.id);
    expect(draft.notice).toEqual({ ...Object.fromEntries(Object.keys(NOTICE).map((k) => [k, ''])), title: 'Only a title' });
  });

  it('refuses unknown ids, duplicate or dangling refs and duplicate keys with 400, changing nothing', async () => {
    const t = await team(server);
    const u = await team(server);
    const p = t.project.id;
    const { draft } = await putDraft(server, t.admin, p);
    const foreign = (await putDraft(server, u.admin, u.project.id)).draft;
    const purpose = (over: Record<string, unknown>) => ({ key: 'ok', name: 'Ok', categoryId: 'a', ...over });
    const cases: [string, Record<string, unknown>, (string | number)[]][] = [
      ['unknown category id', { categories: [{ id: 'nope', name: 'X' }], purposes: [], notice: {} }, ['categories', 0, 'id']],
      ['category id of another project', { categories: [{ id: foreign.categories[0]!.id, name: 'X' }], purposes: [], notice: {} }, ['categories', 0, 'id']],
      ['unknown purpose id', { categories: [{ ref: 'a', name: 'A' }], purposes: [purpose({ id: foreign.purposes[0]!.id })], notice: {} }, ['purposes', 0, 'id']],
      ['duplicate ref', { categories: [{ ref: 'a', name: 'A' }, { ref: 'a', name: 'B' }], purposes: [], notice: {} }, ['categories', 1, 'ref']],
      ['dangling ref', { categories: [{ ref: 'a', name: 'A' }], purposes: [purpose({ categoryId: 'b' })], notice: {} }, ['purposes', 0, 'categoryId']],
      [
        'category id left out of the body',
        { categories: [{ ref: 'a', name: 'A' }], purposes: [purpose({ categoryId: draft.categories[0]!.id })], notice: {} },
        ['purposes', 0, 'categoryId'],
      ],
      [
        'duplicate keys',
        { categories: [{ ref: 'a', name: 'A' }], purposes: [purpose({}), purpose({ name: 'Twice' })], notice: {} },
        ['purposes', 1, 'key'],
      ],
      ['bad key', { categories: [{ ref: 'a', name: 'A' }], purposes: [purpose({ key: 'Nope' })], notice: {} }, ['purposes', 0, 'key']],
      [
        'valid rows but a bad notice colour',
        { categories: [{ ref: 'a', name: 'A' }], purposes: [purpose({})], notice: { title: 'T', primaryColor: 'blue' } },
        ['notice', 'primaryColor'],
      ],
      ['missing notice', { categories: [], purposes: [] }, ['notice']],
      ['missing purposes', { categories: [], notice: {} }, ['purposes']],
    ];
    const before = await snapshot(t);
    for (const [name, body, path] of cases) {
      const response = await server.request('PUT', consentPath(p), { token: t.admin.token, body });
      expect(response.status, name).toBe(400);
      expect(response.body.code, name).toBe('validation_failed');
      expect(response.body.details.map((d: { path: unknown }) => d.path), name).toContainEqual(path);
    }
    expect(await snapshot(t)).toEqual(before);
  });
});

describe('publishing', () => {
  it('needs at least one purpose and a notice title (400), and creates nothing until then', async () => {
    const t = await team(server);
    const p = t.project.id;
    const empty = await server.request('POST', consentPath(p, '/publish'), { token: t.admin.token });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('validation_failed');
    expect(empty.body.details.map((d: { path: unknown }) => d.path)).toEqual([['purposes'], ['notice', 'title']]);

    await putDraft(server, t.admin, p, { notice: { ...NOTICE, title: '' } });
    const untitled = await server.request('POST', consentPath(p, '/publish'), { token: t.admin.token });
    expect(untitled.status).toBe(400);
    expect(untitled.body.details).toEqual([{ path: ['notice', 'title'], message: expect.any(String) }]);
    expect(await getVersions(t.admin, p)).toEqual([]);
    expect(await server.services.db.prisma.notification.count({ where: { projectId: p } })).toBe(0);
  });

  it('creates numbered immutable versions, newest first, even for identical content', async () => {
    const times = [new Date('2026-11-22T10:00:00.123Z'), new Date('2026-11-22T11:00:00.456Z'), new Date('2026-11-22T12:00:00.789Z')];
    let now = times[0]!;
    const clocked = await startTestServer({}, { now: () => now });
    try {
      const t = await team(clocked);
      const p = t.project.id;
      const { draft } = await putDraft(clocked, t.admin, p);
      const request = (method: string, path: string, actor = t.admin, body?: unknown) =>
        clocked.request(method, consentPath(p, path), { token: actor.token, body });

      const published = await request('POST', '/publish');
      expect(published.status).toBe(201);
      const v1 = published.body.version;
      expect(published.body).toEqual({
        version: { id: expect.any(String), number: 1, publishedAt: '2026-11-22T10:00:00.123Z', contentHash: expect.stringMatching(/^[0-9a-f]{64}$/), consentHash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      });
      const after = (await request('GET', '')).body;
      expect(after.latestVersion).toEqual(v1);
      expect(after.hasUnpublishedChanges).toBe(false);

      // An edit makes the draft differ; undoing it makes it equal again.
      const ads = draft.purposes.find((x) => x.key === 'ads')!;
      await request('PATCH', `/purposes/${ads.id}`, t.admin, { name: 'Ads' });
      expect((await request('GET', '')).body.hasUnpublishedChanges).toBe(true);
      await request('PATCH', `/purposes/${ads.id}`, t.admin, { name: ads.name });
      expect((await request('GET', '')).body.hasUnpublishedChanges).toBe(false);

      now = times[1]!;
      const v2 = (await request('POST', '/publish', t.owner)).body.version;
      now = times[2]!;
      const v3 = (await request('POST', '/publish')).body.version;
      expect([v2.number, v3.number]).toEqual([2, 3]);
      expect(v2.publishedAt).toBe('2026-11-22T11:00:00.456Z');
      // Same content: the consent surface is the same, the number (inside contentHash) is not.
      expect(v2.consentHash).toBe(v1.consentHash);
      expect(v3.consentHash).toBe(v1.consentHash);
      expect(new Set([v1.contentHash, v2.contentHash, v3.contentHash]).size).toBe(3);

      expect(await getVersionsOn(clocked, t.viewer, p)).toEqual([v3, v2, v1]);
    } finally {
      await clocked.close();
    }
  });

  // A race only on PostgreSQL (the embedded database runs one query at a time): see 'on PostgreSQL' below.
  it.runIf(onPostgres)('never gives two parallel publishes the same number', async () => {
    const t = await team(server);
    const p = t.project.id;
    await putDraft(server, t.admin, p);
    await publish(server, t.admin, p);
    const parallel = 8;
    const responses = await Promise.all(
      Array.from({ length: parallel }, (_, i) =>
        server.request('POST', consentPath(p, '/publish'), { token: (i % 2 ? t.owner : t.admin).token }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(parallel).fill(201));
    const numbers = responses.map((r) => r.body.version.number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: parallel }, (_, i) => i + 2));
    const versions = await getVersions(t.viewer, p);
    expect(versions.map((v: { number: number }) => v.number)).toEqual(Array.from({ length: parallel + 1 }, (_, i) => parallel + 1 - i));
  });

  it('is refused by the database when anyone tries to change or delete a version', async () => {
    const t = await team(server);
    const p = t.project.id;
    await putDraft(server, t.admin, p);
    const version = await publish(server, t.admin, p);
    const db = server.services.db;
    await expect(db.query(`UPDATE consent_versions SET content_hash = 'forged' WHERE id = $1`, [version.id])).rejects.toThrow(/immutable/);
    await expect(db.query(`UPDATE consent_versions SET config = '{}'::jsonb WHERE project_id = $1`, [p])).rejects.toThrow(/immutable/);
    await expect(db.query(`DELETE FROM consent_versions WHERE id = $1`, [version.id])).rejects.toThrow(/immutable/);
    await expect(db.query(`TRUNCATE consent_versions CASCADE`)).rejects.toThrow(/immutable/);
    expect(await getVersions(t.admin, p)).toEqual([version]);
  });

  it('notifies every member in the publish transaction', async () => {
    const t = await team(server);
    const p = t.project.id;
    await putDraft(server, t.admin, p);
    await publish(server, t.admin, p);
    const v2 = await publish(server, t.owner, p);
    const rows = await server.services.db.prisma.notification.findMany({
      where: { projectId: p, title: 'Version 2 published' },
      orderBy: { userId: 'asc' },
    });
    expect(rows.map((row) => row.userId).sort()).toEqual([t.owner.id, t.admin.id, t.viewer.id].sort());
    for (const row of rows) {
      expect(row).toMatchObject({
        organizationId: t.org.id,
        projectId: p,
        product: 'consent',
        type: 'consent.version_published',
        link: evidencePath(p, `/${v2.id}`),
        readAt: null,
      });
    }
    expect(await server.services.db.prisma.notification.count({ where: { userId: t.outsider.id } })).toBe(0);
  });
});

// --- Hashes: test/helpers/versions.ts recomputes them from decisions.md alone ---------------------

/** `{ number, config }`, config in the documented order: purposes by sortOrder then key, categories by sortOrder then name. */
function expectedConfig(draft: VersionConfig) {
  return {
    purposes: [...draft.purposes].sort((a, b) => a.sortOrder - b.sortOrder || (a.key < b.key ? -1 : 1)),
    categories: [...draft.categories].sort((a, b) => a.sortOrder - b.sortOrder || (a.name < b.name ? -1 : 1)),
    notice: draft.notice,
  };
}

describe('hashes', () => {
  it('match an independent computation from the definitions in decisions.md', async () => {
    const t = await team(server);
    const p = t.project.id;
    // Unicode, quotes and a category sorted before its creation order exercise the canonical form.
    const { draft } = await putDraft(server, t.admin, p, {
      categories: [
        { ref: 'm', name: 'Marketing "Plus"', sortOrder: 5 },
        { ref: 'e', name: 'Essentiel – nécessaire', sortOrder: 1 },
      ],
      purposes: [
        { key: 'zeta', name: 'Zeta ✓', description: 'Línea 1\nLine 2 \u2028', required: false, categoryId: 'm', sortOrder: 0 },
        { key: 'alpha', name: 'Alpha', description: '', required: true, categoryId: 'e', sortOrder: 0 },
        { key: 'beta_2', name: 'Beta', description: 'b', required: false, categoryId: 'm', sortOrder: -3 },
      ],
    });
    const version = await publish(server, t.admin, p);
    expect(version.consentHash).toBe(consentHashOf(draft));
    const config = expectedConfig(draft);
    expect(config.purposes.map((x) => x.key)).toEqual(['beta_2', 'alpha', 'zeta']);
    expect(version.contentHash).toBe(contentHashOf(1, config));

    // The stored snapshot is that config, as the SDK route will serve it.
    const stored = await latestPublishedVersion(server.services.db.prisma, p);
    // No experience was set: the version carries none (extensions.md section 2).
    expect(stored).toEqual({ ...version, publishedAt: new Date(version.publishedAt), config, experience: null });
    expect(JSON.stringify(stored!.config)).toBe(JSON.stringify(config));
  });

  it('branding-only changes keep consentHash and change contentHash; consent changes change both', async () => {
    const t = await team(server);
    const p = t.project.id;
    const { draft } = await putDraft(server, t.admin, p);
    const v1 = await publish(server, t.admin, p);
    const edit = async (path: string, body: Record<string, unknown>, method = 'PATCH') => {
      const response = await server.request(method, consentPath(p, path), { token: t.admin.token, body });
      expect(response.status, response.text).toBe(200);
    };
    const [essential, marketing] = draft.categories;
    const [necessary, analytics] = draft.purposes;

    // Branding: labels, colour, logo, company, sort orders.
    await edit('/notice', { ...NOTICE, acceptLabel: 'OK', primaryColor: '#000000', logoUrl: 'https://cdn.example.com/new.png', companyName: 'Acme AG' }, 'PUT');
    await edit(`/categories/${marketing!.id}`, { sortOrder: -1 });
    await edit(`/purposes/${analytics!.id}`, { sortOrder: 7 });
    const branded = await publish(server, t.admin, p);
    expect(branded.consentHash).toBe(v1.consentHash);
    expect(branded.contentHash).not.toBe(v1.contentHash);

    const consentChanges: [string, Record<string, unknown>, string?][] = [
      [`/purposes/${analytics!.id}`, { description: 'Counts visits and sessions' }],
      [`/purposes/${necessary!.id}`, { name: 'Strictly necessary' }],
      [`/purposes/${analytics!.id}`, { required: true }],
      [`/purposes/${analytics!.id}`, { categoryId: essential!.id }],
      [`/categories/${essential!.id}`, { name: 'Essentials' }],
      ['/notice', { ...NOTICE, title: 'Your privacy' }, 'PUT'],
      ['/notice', { ...NOTICE, title: 'Your privacy', description: 'Other words' }, 'PUT'],
    ];
    let previous = branded;
    for (const [path, body, method] of consentChanges) {
      await edit(path, body, method);
      const next = await publish(server, t.admin, p);
      expect(next.consentHash, `${path} ${JSON.stringify(body)}`).not.toBe(previous.consentHash);
      expect(next.contentHash).not.toBe(previous.contentHash);
      previous = next;
    }
    const current = (await getConfiguration(t.admin, p)).draft;
    expect(previous.consentHash).toBe(consentHashOf(current));
  });

  it('a draft edit never reaches the published snapshot', async () => {
    const t = await team(server);
    const p = t.project.id;
    await putDraft(server, t.admin, p);
    const version = await publish(server, t.admin, p);
    await server.request('PUT', consentPath(p, '/notice'), { token: t.admin.token, body: { ...NOTICE, title: 'Draft only' } });
    const published = await latestPublishedVersion(server.services.db.prisma, p);
    expect(published!.id).toBe(version.id);
    expect(published!.config.notice.title).toBe(NOTICE.title);
    expect(await latestPublishedVersion(server.services.db.prisma, (await team(server)).project.id)).toBeNull();
  });
});

async function getVersionsOn(target: TestServer, actor: Operator, projectId: string) {
  return (await target.request('GET', consentPath(projectId, '/versions'), { token: actor.token })).body.versions;
}

describe('access: every route by role', () => {
  let t: Team;
  let counter = 0;
  beforeAll(async () => {
    t = await team(server);
    await putDraft(server, t.owner, t.project.id);
  });
  const p = () => t.project.id;
  const draft = async () => (await getConfiguration(t.owner, p())).draft;
  const freshCategory = async () =>
    (await server.request('POST', consentPath(p(), '/categories'), { token: t.owner.token, body: { name: `Spare ${++counter}` } })).body.category.id;
  const freshPurpose = async () =>
    (
      await server.request('POST', consentPath(p(), '/purposes'), {
        token: t.owner.token,
        body: { key: `spare_${++counter}`, name: 'Spare', categoryId: (await draft()).categories[0].id },
      })
    ).body.purpose.id;

  const routes: { name: string; method: string; path: () => Promise<string>; body?: () => Promise<unknown>; write: boolean; ok: number }[] = [
    { name: 'GET /consent', method: 'GET', path: async () => '', write: false, ok: 200 },
    { name: 'GET /consent/versions', method: 'GET', path: async () => '/versions', write: false, ok: 200 },
    { name: 'PUT /consent', method: 'PUT', path: async () => '', body: async () => asBody(await draft()), write: true, ok: 200 },
    { name: 'POST /consent/categories', method: 'POST', path: async () => '/categories', body: async () => ({ name: `C ${++counter}` }), write: true, ok: 201 },
    { name: 'PATCH /consent/categories/:id', method: 'PATCH', path: async () => `/categories/${await freshCategory()}`, body: async () => ({ name: 'Renamed' }), write: true, ok: 200 },
    { name: 'DELETE /consent/categories/:id', method: 'DELETE', path: async () => `/categories/${await freshCategory()}`, write: true, ok: 204 },
    {
      name: 'POST /consent/purposes',
      method: 'POST',
      path: async () => '/purposes',
      body: async () => ({ key: `p_${++counter}`, name: 'P', categoryId: (await draft()).categories[0].id }),
      write: true,
      ok: 201,
    },
    { name: 'PATCH /consent/purposes/:id', method: 'PATCH', path: async () => `/purposes/${await freshPurpose()}`, body: async () => ({ name: 'Renamed' }), write: true, ok: 200 },
    { name: 'DELETE /consent/purposes/:id', method: 'DELETE', path: async () => `/purposes/${await freshPurpose()}`, write: true, ok: 204 },
    { name: 'PUT /consent/notice', method: 'PUT', path: async () => '/notice', body: async () => NOTICE, write: true, ok: 200 },
    { name: 'POST /consent/publish', method: 'POST', path: async () => '/publish', write: true, ok: 201 },
  ];

  for (const route of routes) {
    it(`${route.name}: no session 401, outsider 404, viewer ${route.write ? 403 : 200}, admin and owner ${route.ok}`, async () => {
      const actors: [string, Operator | null, number][] = [
        ['no session', null, 401],
        ['outsider', t.outsider, 404],
        ['viewer', t.viewer, route.write ? 403 : 200],
        ['admin', t.admin, route.ok],
        ['owner', t.owner, route.ok],
      ];
      for (const [who, actor, status] of actors) {
        const path = consentPath(p(), await route.path());
        const body = route.body ? await route.body() : undefined;
        const before = status >= 400 ? await snapshot(t) : null;
        const response = await server.request(route.method, path, { token: actor?.token, body });
        expect(response.status, `${who}: ${response.text}`).toBe(status);
        // The body is exactly what the route declares for OpenAPI (parsing drops undeclared keys).
        const declared = consentRoutes.find((r) => r.method === route.method && r.path === `/api/platform/projects/:projectId${route.name.split(' ')[1]}`);
        const schema = (declared!.responses as Record<number, { schema?: { parse(v: unknown): unknown } }>)[status]?.schema;
        if (schema) expect(schema.parse(response.body)).toEqual(response.body);
        else expect(response.text).toBe('');
        if (before) {
          expect(response.body.code).toBe({ 401: 'unauthorized', 403: 'forbidden', 404: 'not_found' }[status]);
          expect(await snapshot(t)).toEqual(before);
        }
      }
    });
  }

  it('an unknown project is 404 for everyone', async () => {
    const response = await server.request('GET', consentPath('01900000-0000-7000-8000-000000000000'), { token: t.owner.token });
    expect(response.status).toBe(404);
  });
});

describe('GraphQL', () => {
  const gql = (actor: Operator | null, query: string, variables: Record<string, unknown>) =>
    server.request('POST', '/graphql', { token: actor?.token, body: { query, variables } });

  it('offers the same operations with the same role checks', async () => {
    const t = await team(server);
    const p = t.project.id;
    const created = await gql(
      t.admin,
      `mutation($p: ID!) { createConsentCategory(projectId: $p, input: { name: "Essential" }) { category { id name sortOrder } } }`,
      { p },
    );
    expect(created.body.errors).toBeUndefined();
    const categoryId = created.body.data.createConsentCategory.category.id;
    const denied = await gql(t.viewer, `mutation($p: ID!) { publishConsent(projectId: $p) { version { id } } }`, { p });
    expect(denied.body.errors[0].extensions.code).toBe('forbidden');
    const hidden = await gql(t.outsider, `query($p: ID!) { consentConfiguration(projectId: $p) { hasUnpublishedChanges } }`, { p });
    expect(hidden.body.errors[0].extensions.code).toBe('not_found');

    const purpose = await gql(
      t.admin,
      `mutation($p: ID!, $c: ID!) { createConsentPurpose(projectId: $p, input: { key: "session", name: "Session", required: true, categoryId: $c }) { purpose { key required } } }`,
      { p, c: categoryId },
    );
    expect(purpose.body.data.createConsentPurpose.purpose).toEqual({ key: 'session', required: true });
    const invalid = await gql(t.admin, `mutation($p: ID!) { updateConsentNotice(projectId: $p, input: { primaryColor: "blue" }) { notice { title } } }`, { p });
    expect(invalid.body.errors[0].extensions).toMatchObject({ code: 'validation_failed', details: [{ path: ['primaryColor'] }] });
    await gql(t.admin, `mutation($p: ID!) { updateConsentNotice(projectId: $p, input: { title: "Cookies" }) { notice { title } } }`, { p });

    const published = await gql(t.owner, `mutation($p: ID!) { publishConsent(projectId: $p) { version { number config } } }`, { p });
    expect(published.body.data.publishConsent.version.number).toBe(1);
    expect(published.body.data.publishConsent.version.config.purposes).toEqual([
      { id: expect.any(String), key: 'session', name: 'Session', description: '', required: true, categoryId, sortOrder: 0 },
    ]);
    const versions = await gql(t.viewer, `query($p: ID!) { consentVersions(projectId: $p) { number consentHash config } }`, { p });
    expect(versions.body.data.consentVersions).toEqual([
      { number: 1, consentHash: expect.any(String), config: published.body.data.publishConsent.version.config },
    ]);
    // Keys of the stored snapshot come back in the contract's order.
    expect(Object.keys(versions.body.data.consentVersions[0].config)).toEqual(['purposes', 'categories', 'notice']);
    expect(Object.keys(versions.body.data.consentVersions[0].config.notice)).toEqual(Object.keys(NOTICE));
  });
});

describe.runIf(onPostgres)('on PostgreSQL', () => {
  // Fails without the project row lock (`FOR UPDATE` removed from withProjectLock in src/consent/draft.ts,
  // tried): parallel publishes read the same latest number and all but one hit the unique index (500).
  it('parallel publishes really race, and the project row lock keeps numbers unique', async () => {
    const t = await team(server);
    const p = t.project.id;
    await putDraft(server, t.admin, p);
    // Two instances on one database, so the publishes come from two connection pools at once.
    const other = await startTestServer({ databaseUrl: server.services.config.databaseUrl });
    try {
      const rounds = 3;
      const parallel = 16;
      for (let round = 0; round < rounds; round++) {
        const responses = await Promise.all(
          Array.from({ length: parallel }, (_, i) => (i % 2 ? other : server).request('POST', consentPath(p, '/publish'), { token: t.admin.token })),
        );
        expect(responses.map((r) => r.status)).toEqual(Array(parallel).fill(201));
      }
      const rows = await server.services.db.query<{ number: number }>('SELECT number FROM consent_versions WHERE project_id = $1 ORDER BY number', [p]);
      expect(rows.map((r) => r.number)).toEqual(Array.from({ length: rounds * parallel }, (_, i) => i + 1));
    } finally {
      await other.close();
    }
  }, 180_000); // rounds on a loaded machine
});
