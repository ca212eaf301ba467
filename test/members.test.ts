// Members on GraphQL for Owners, and the rule that an organization always keeps an OWNER, also
// when changes race (over HTTP, and through the admin tool's function on PostgreSQL).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember as adminAddMember, removeMember as adminRemoveMember } from '../src/admin/members.js';
import { operator, organization, team } from './helpers/fixtures.js';
import { onPostgres, startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const gql = (query: string, variables: Record<string, unknown>, token: string) =>
  server.request('POST', '/graphql', { token, body: { query, variables } });

const ADD = `mutation($org: ID!, $email: String, $role: String) { addMember(organizationId: $org, email: $email, role: $role) { member { userId email role } } }`;
const CHANGE = `mutation($org: ID!, $user: ID, $role: String) { changeMemberRole(organizationId: $org, userId: $user, role: $role) { member { userId role } } }`;
const REMOVE = `mutation($org: ID!, $user: ID) { removeMember(organizationId: $org, userId: $user) { member { userId } } }`;
const LEAVE = `mutation($org: ID!) { leaveOrganization(organizationId: $org) { member { userId role } } }`;
const codeOf = (res: { body: { errors?: { extensions: { code: string } }[] } }) => res.body.errors?.[0]?.extensions.code;

async function owners(orgId: string) {
  const rows = await server.services.db.query<{ user_id: string }>(`SELECT user_id FROM memberships WHERE organization_id = $1 AND role = 'OWNER'`, [orgId]);
  return rows.map((row) => row.user_id);
}

describe('members on GraphQL', () => {
  it('lets an Owner add, change and remove members; the change takes effect on REST at once', async () => {
    const t = await team(server);
    const newcomer = await operator(server, 'Newcomer');
    const projects = () => server.request('GET', `/api/platform/orgs/${t.org.id}/projects`, { token: newcomer.token });
    expect((await projects()).status).toBe(404);

    const added = await gql(ADD, { org: t.org.id, email: newcomer.email.toUpperCase(), role: 'VIEWER' }, t.owner.token);
    expect(added.body).toEqual({ data: { addMember: { member: { userId: newcomer.id, email: newcomer.email, role: 'VIEWER' } } } });
    expect((await projects()).status).toBe(200);

    const changed = await gql(CHANGE, { org: t.org.id, user: newcomer.id, role: 'ADMIN' }, t.owner.token);
    expect(changed.body.data.changeMemberRole.member).toEqual({ userId: newcomer.id, role: 'ADMIN' });

    const removed = await gql(REMOVE, { org: t.org.id, user: newcomer.id }, t.owner.token);
    expect(removed.body.data.removeMember.member).toEqual({ userId: newcomer.id });
    expect((await projects()).status).toBe(404);
  });

  it('answers 404 to non-members, 403 below Owner, and refuses bad input without changing anything', async () => {
    const t = await team(server);
    const newcomer = await operator(server, 'Newcomer');
    expect(codeOf(await gql(ADD, { org: t.org.id, email: newcomer.email, role: 'VIEWER' }, t.outsider.token))).toBe('not_found');
    expect(codeOf(await gql(ADD, { org: t.org.id, email: newcomer.email, role: 'VIEWER' }, t.admin.token))).toBe('forbidden');
    expect(codeOf(await gql(CHANGE, { org: t.org.id, user: t.viewer.id, role: 'OWNER' }, t.admin.token))).toBe('forbidden');

    const badRole = await gql(ADD, { org: t.org.id, email: newcomer.email, role: 'GOD' }, t.owner.token);
    expect(badRole.body.errors[0].extensions).toEqual({ code: 'validation_failed', details: [{ path: ['role'], message: 'Must be OWNER, ADMIN or VIEWER' }] });
    expect(codeOf(await gql(ADD, { org: t.org.id, email: 'nobody@example.com', role: 'VIEWER' }, t.owner.token))).toBe('not_found');
    expect(codeOf(await gql(ADD, { org: t.org.id, email: t.viewer.email, role: 'ADMIN' }, t.owner.token))).toBe('conflict');
    expect(codeOf(await gql(CHANGE, { org: t.org.id, user: newcomer.id, role: 'ADMIN' }, t.owner.token))).toBe('not_found');
    const members = await server.services.db.query('SELECT user_id, role FROM memberships WHERE organization_id = $1', [t.org.id]);
    expect(members).toHaveLength(3);
  });

  it('keeps the last OWNER: demoting or removing them is a conflict', async () => {
    const t = await team(server);
    expect(codeOf(await gql(CHANGE, { org: t.org.id, user: t.owner.id, role: 'ADMIN' }, t.owner.token))).toBe('conflict');
    expect(codeOf(await gql(REMOVE, { org: t.org.id, user: t.owner.id }, t.owner.token))).toBe('conflict');
    expect(await owners(t.org.id)).toEqual([t.owner.id]);
    // With a second owner, the first may step down.
    await gql(CHANGE, { org: t.org.id, user: t.admin.id, role: 'OWNER' }, t.owner.token);
    expect((await gql(CHANGE, { org: t.org.id, user: t.owner.id, role: 'VIEWER' }, t.owner.token)).body.errors).toBeUndefined();
    expect(await owners(t.org.id)).toEqual([t.admin.id]);
  });

  // Without the organization row lock (owners.ts) both owners see "another owner remains" under
  // READ COMMITTED and both step down: the organization ends with no OWNER and this fails.
  it('keeps an OWNER when two owners step down at the same moment', async () => {
    for (let round = 0; round < 5; round++) {
      const t = await team(server);
      await gql(CHANGE, { org: t.org.id, user: t.admin.id, role: 'OWNER' }, t.owner.token);
      const results = await Promise.all([
        gql(CHANGE, { org: t.org.id, user: t.owner.id, role: 'ADMIN' }, t.owner.token),
        gql(CHANGE, { org: t.org.id, user: t.admin.id, role: 'ADMIN' }, t.admin.token),
      ]);
      expect(results.map(codeOf).sort()).toEqual(['conflict', undefined]);
      expect(await owners(t.org.id)).toHaveLength(1);
    }
  });

  describe.runIf(onPostgres)('the admin tool, two command lines at once on PostgreSQL', () => {
    it('keeps an OWNER when two owners are removed at the same moment', async () => {
      const clients = [0, 1].map(() => new pg.Client({ connectionString: server.services.config.databaseUrl }));
      await Promise.all(clients.map((client) => client.connect()));
      const sql = (client: pg.Client) => ({ query: async (text: string, params?: unknown[]) => (await client.query(text, params)).rows as never });
      try {
        for (let round = 0; round < 5; round++) {
          const t = await team(server);
          await adminAddMember(server.services.db, { org: t.org.id, email: t.admin.email, role: 'OWNER' });
          const results = await Promise.allSettled([
            adminRemoveMember(sql(clients[0]!), { org: t.org.id, email: t.owner.email }),
            adminRemoveMember(sql(clients[1]!), { org: t.org.id, email: t.admin.email }),
          ]);
          expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
          expect(await owners(t.org.id)).toHaveLength(1);
        }
      } finally {
        await Promise.all(clients.map((client) => client.end()));
      }
    });
  });

  // extensions.md section 9: addMember answers whether an e-mail has an account, so an Owner may ask only so
  // often; the person added is told, and may leave. Before: unlimited, silent, and no way out but an Owner.
  describe('additions are limited, announced, and can be undone by the person added', () => {
    const members = async (orgId: string) =>
      (await server.services.db.query<{ user_id: string }>('SELECT user_id FROM memberships WHERE organization_id = $1', [orgId])).map((r) => r.user_id);

    it('answers rate_limited after 20 addMember calls per organization in an hour, found or not; other organizations keep theirs', async () => {
      const t = await team(server);
      const newcomer = await operator(server, 'Newcomer');
      // 20 lookups of e-mails without an account answer as today (not_found)...
      for (let i = 0; i < 20; i++) {
        expect(codeOf(await gql(ADD, { org: t.org.id, email: `nobody-${i}-${t.org.id}@example.com`, role: 'VIEWER' }, t.owner.token))).toBe('not_found');
      }
      // ...and the 21st call is refused, even for a registered user, before anything is read or written.
      const refused = await gql(ADD, { org: t.org.id, email: newcomer.email, role: 'VIEWER' }, t.owner.token);
      expect(refused.body.data).toBeNull();
      expect(refused.body.errors[0].extensions).toMatchObject({
        code: 'rate_limited',
        rateLimit: { limit: 20, remaining: 0, retryAfter: expect.any(Number) },
      });
      expect(refused.body.errors[0].extensions.rateLimit.retryAfter).toBeGreaterThan(3500);
      expect(await members(t.org.id)).not.toContain(newcomer.id);

      // The budget is the organization's: the same Owner's other organization still adds.
      const other = await organization(server, t.owner);
      const added = await gql(ADD, { org: other.id, email: newcomer.email, role: 'VIEWER' }, t.owner.token);
      expect(added.body.data.addMember.member.userId).toBe(newcomer.id);
      // Refusals that come first do not spend it: a non-member (404), a lower role (403), bad input (400).
      const fresh = await team(server);
      for (let i = 0; i < 25; i++) expect(codeOf(await gql(ADD, { org: fresh.org.id, email: 'x@example.com', role: 'VIEWER' }, fresh.admin.token))).toBe('forbidden');
      expect(codeOf(await gql(ADD, { org: fresh.org.id, email: newcomer.email, role: 'VIEWER' }, fresh.owner.token))).toBeUndefined();
    });

    it('tells the added user in their inbox which organization and who added them', async () => {
      const t = await team(server);
      const newcomer = await operator(server, 'Newcomer');
      expect(codeOf(await gql(ADD, { org: t.org.id, email: newcomer.email, role: 'ADMIN' }, t.owner.token))).toBeUndefined();
      const inbox = await server.request('GET', '/api/platform/notifications', { token: newcomer.token });
      expect(inbox.status).toBe(200);
      expect(inbox.body.unreadCount).toBe(1);
      expect(inbox.body.notifications).toEqual([
        expect.objectContaining({
          product: 'organization',
          type: 'organization.member_added',
          title: `You were added to ${t.org.name}`,
          body: `Owner (${t.owner.email}) added you to the organization ${t.org.name} as ADMIN. If you do not want to be a member, leave it.`,
          link: `/orgs/${t.org.id}`,
          organizationId: t.org.id,
          projectId: null,
          readAt: null,
        }),
      ]);
      // Only the added user is told; the Owner's inbox has nothing about it.
      const ownerInbox = await server.request('GET', '/api/platform/notifications?product=organization', { token: t.owner.token });
      expect(ownerInbox.body.notifications).toEqual([]);
      // A refused addition tells nobody anything.
      expect(codeOf(await gql(ADD, { org: t.org.id, email: newcomer.email, role: 'VIEWER' }, t.owner.token))).toBe('conflict');
      expect((await server.request('GET', '/api/platform/notifications', { token: newcomer.token })).body.notifications).toHaveLength(1);
    });

    it('lets a member leave (audited), refuses the last OWNER, and answers not_found to non-members', async () => {
      const t = await team(server);
      const projects = (token: string) => server.request('GET', `/api/platform/orgs/${t.org.id}/projects`, { token });
      const left = await server.request('POST', '/graphql', {
        token: t.viewer.token,
        headers: { 'x-request-id': 'req-member-leave' },
        body: { query: LEAVE, variables: { org: t.org.id } },
      });
      expect(left.body).toEqual({ data: { leaveOrganization: { member: { userId: t.viewer.id, role: 'VIEWER' } } } });
      expect((await projects(t.viewer.token)).status).toBe(404);
      const audit = await server.request('GET', `/api/platform/orgs/${t.org.id}/audit-log?action=member.left`, { token: t.owner.token });
      expect(audit.body.events).toEqual([
        expect.objectContaining({
          action: 'member.left',
          actor: { id: t.viewer.id, email: t.viewer.email, via: null },
          target: { type: 'user', id: t.viewer.id },
          changes: { email: { before: t.viewer.email, after: null }, role: { before: 'VIEWER', after: null } },
          requestId: 'req-member-leave',
        }),
      ]);

      // Gone already, or never a member: not_found; no session: unauthorized.
      expect(codeOf(await gql(LEAVE, { org: t.org.id }, t.viewer.token))).toBe('not_found');
      expect(codeOf(await gql(LEAVE, { org: t.org.id }, t.outsider.token))).toBe('not_found');
      expect(codeOf(await server.request('POST', '/graphql', { body: { query: LEAVE, variables: { org: t.org.id } } }))).toBe('unauthorized');

      // The last OWNER stays; with a second OWNER either may go.
      expect(codeOf(await gql(LEAVE, { org: t.org.id }, t.owner.token))).toBe('conflict');
      expect(await owners(t.org.id)).toEqual([t.owner.id]);
      await gql(CHANGE, { org: t.org.id, user: t.admin.id, role: 'OWNER' }, t.owner.token);
      expect(codeOf(await gql(LEAVE, { org: t.org.id }, t.owner.token))).toBeUndefined();
      expect(await owners(t.org.id)).toEqual([t.admin.id]);
      expect(await members(t.org.id)).toEqual([t.admin.id]);
    });

    // The same organization row lock as removeMember: without it both see "another owner remains" and leave.
    it('keeps an OWNER when two owners leave at the same moment', async () => {
      for (let round = 0; round < 5; round++) {
        const t = await team(server);
        await gql(CHANGE, { org: t.org.id, user: t.admin.id, role: 'OWNER' }, t.owner.token);
        const results = await Promise.all([gql(LEAVE, { org: t.org.id }, t.owner.token), gql(LEAVE, { org: t.org.id }, t.admin.token)]);
        expect(results.map(codeOf).sort()).toEqual(['conflict', undefined]);
        expect(await owners(t.org.id)).toHaveLength(1);
      }
    });
  });
});
