import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from '../src/admin/members.js';
import { notifyMembers } from '../src/notifications/notify.js';
import { operator, organization, type Operator } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const START = new Date('2026-11-23T10:00:00.000Z');
let now = START;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({}, { now: () => now });
});
afterAll(() => server?.close());

const list = (who: Operator, query = '') => server.request('GET', `/api/platform/notifications${query}`, { token: who.token });
const read = (who: Operator, id: string) => server.request('POST', `/api/platform/notifications/${id}/read`, { token: who.token });
const readAll = (who: Operator) => server.request('POST', '/api/platform/notifications/read-all', { token: who.token });

/** The inbox of a single member, filled through the same notifyMembers other domains call. */
async function inboxWith(entries: { product: string; title: string; createdAt: Date }[]) {
  const owner = await operator(server);
  const org = await organization(server, owner);
  for (const entry of entries) {
    await notifyMembers(server.services.db.prisma, {
      organizationId: org.id,
      product: entry.product,
      type: `${entry.product}.test`,
      title: entry.title,
      createdAt: entry.createdAt,
    });
  }
  return { owner, org };
}

const at = (minutes: number) => new Date(START.getTime() + minutes * 60_000);
const titles = (body: { notifications: { title: string }[] }) => body.notifications.map((n) => n.title);

describe('GET /api/platform/notifications', () => {
  it('needs a session on every inbox route', async () => {
    expect((await server.request('GET', '/api/platform/notifications')).status).toBe(401);
    expect((await server.request('POST', '/api/platform/notifications/read-all')).status).toBe(401);
    expect((await server.request('POST', '/api/platform/notifications/x/read')).status).toBe(401);
  });

  it('starts empty', async () => {
    const someone = await operator(server);
    const response = await list(someone);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ notifications: [], unreadCount: 0, nextCursor: null });
  });

  it('fans a billing event out to every current member; a member who joins later sees only newer ones', async () => {
    now = START;
    const owner = await operator(server, 'Owner');
    const viewer = await operator(server, 'Viewer');
    const latecomer = await operator(server, 'Late');
    const org = await organization(server, owner);
    await addMember(server.services.db, { org: org.id, email: viewer.email, role: 'VIEWER' });

    const trial = await server.request('POST', `/api/platform/orgs/${org.id}/billing/trial`, { token: owner.token, body: { planId: 'starter' } });
    expect(trial.status).toBe(200);
    for (const member of [owner, viewer]) {
      const response = await list(member);
      expect(response.body).toEqual({
        notifications: [
          {
            id: expect.any(String),
            product: 'billing',
            type: 'billing.subscription_changed',
            title: 'Starter trial started',
            body: 'The Starter trial runs until 2026-12-07.',
            link: `/orgs/${org.id}/billing`,
            readAt: null,
            createdAt: START.toISOString(),
            organizationId: org.id,
            projectId: null,
          },
        ],
        unreadCount: 1,
        nextCursor: null,
      });
    }

    await addMember(server.services.db, { org: org.id, email: latecomer.email, role: 'ADMIN' });
    expect((await list(latecomer)).body.notifications).toEqual([]);
    now = at(5);
    await server.request('POST', `/api/platform/orgs/${org.id}/billing/cancel`, { token: owner.token });
    expect(titles((await list(latecomer)).body)).toEqual(['Starter subscription canceled']);
    expect(titles((await list(owner)).body)).toEqual(['Starter subscription canceled', 'Starter trial started']);
  });

  it('pages newest first on (createdAt, id) without gaps or repeats, ties included', async () => {
    // Seven notifications, three of them sharing one timestamp.
    const entries = [0, 1, 2, 2, 2, 3, 4].map((minute, i) => ({ product: 'consent', title: `N${i}`, createdAt: at(minute) }));
    const { owner } = await inboxWith(entries);
    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: number[] = [];
    do {
      const response = await list(owner, `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(response.status).toBe(200);
      expect(response.body.unreadCount).toBe(7);
      pages.push(response.body.notifications.length);
      seen.push(...titles(response.body));
      cursor = response.body.nextCursor;
    } while (cursor);
    expect(pages).toEqual([3, 3, 1]);
    expect(seen).toEqual(['N6', 'N5', 'N4', 'N3', 'N2', 'N1', 'N0']);
    const exact = await list(owner, '?limit=7');
    expect(exact.body.nextCursor).toBeNull();
  });

  it('filters by product and unread; unreadCount counts every unread notification of the user', async () => {
    const { owner } = await inboxWith([
      { product: 'consent', title: 'C1', createdAt: at(1) },
      { product: 'billing', title: 'B1', createdAt: at(2) },
      { product: 'consent', title: 'C2', createdAt: at(3) },
    ]);
    const consent = await list(owner, '?product=consent');
    expect(titles(consent.body)).toEqual(['C2', 'C1']);
    expect(consent.body.unreadCount).toBe(3);
    expect(titles((await list(owner, '?product=billing')).body)).toEqual(['B1']);
    expect(titles((await list(owner, '?product=rights')).body)).toEqual([]);

    const c2 = consent.body.notifications[0];
    await read(owner, c2.id);
    const unread = await list(owner, '?unread=1');
    expect(titles(unread.body)).toEqual(['B1', 'C1']);
    expect(unread.body.unreadCount).toBe(2);
    expect(titles((await list(owner, '?unread=1&product=consent')).body)).toEqual(['C1']);
    expect(titles((await list(owner, '?unread=0')).body)).toEqual(['C2', 'B1', 'C1']);
  });

  it('refuses bad paging input with 400 validation_failed', async () => {
    const someone = await operator(server);
    for (const query of ['?limit=0', '?limit=201', '?limit=ten', '?cursor=not-a-cursor', '?unread=maybe', '?product=Bad%20Name']) {
      const response = await list(someone, query);
      expect(response.status, query).toBe(400);
      expect(response.body.code).toBe('validation_failed');
    }
  });
});

describe('POST /api/platform/notifications/:id/read and read-all', () => {
  it('marks one read, idempotently; another user cannot see or mark it', async () => {
    now = START;
    const { owner } = await inboxWith([
      { product: 'consent', title: 'A', createdAt: at(1) },
      { product: 'consent', title: 'B', createdAt: at(2) },
    ]);
    const stranger = await operator(server);
    const [b] = (await list(owner)).body.notifications;

    expect((await read(stranger, b.id)).status).toBe(404);
    expect((await read(stranger, b.id)).body.code).toBe('not_found');
    expect((await read(owner, '00000000-0000-7000-8000-000000000000')).status).toBe(404);
    expect((await list(owner)).body.unreadCount).toBe(2);

    now = at(10);
    const first = await read(owner, b.id);
    expect(first.status).toBe(200);
    expect(first.body.notification).toEqual({ ...b, readAt: at(10).toISOString() });
    now = at(20);
    const again = await read(owner, b.id);
    expect(again.status).toBe(200);
    expect(again.body.notification.readAt).toBe(at(10).toISOString());
    expect((await list(owner)).body.unreadCount).toBe(1);
  });

  it('marks every unread notification of the user, and only theirs', async () => {
    now = START;
    const { owner, org } = await inboxWith([
      { product: 'consent', title: 'A', createdAt: at(1) },
      { product: 'billing', title: 'B', createdAt: at(2) },
      { product: 'consent', title: 'C', createdAt: at(3) },
    ]);
    const colleague = await operator(server);
    await addMember(server.services.db, { org: org.id, email: colleague.email, role: 'VIEWER' });
    await notifyMembers(server.services.db.prisma, { organizationId: org.id, product: 'consent', type: 'consent.test', title: 'D' });
    await read(owner, (await list(owner)).body.notifications[1].id);

    const response = await readAll(owner);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ updated: 3 });
    expect((await list(owner)).body.unreadCount).toBe(0);
    expect((await list(owner, '?unread=1')).body.notifications).toEqual([]);
    expect((await readAll(owner)).body).toEqual({ updated: 0 });
    expect((await list(colleague)).body.unreadCount).toBe(1);
  });
});
