// Members on GraphQL for Owners, and the rule that an organization always keeps an OWNER, also
// when changes race (over HTTP, and through the admin tool's function on PostgreSQL).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember as adminAddMember, removeMember as adminRemoveMember } from '../src/admin/members.js';
import { additionRules } from '../src/organizations/invitations.js';
import { operator, organization, team } from './helpers/fixtures.js';
import { onPostgres, startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const gql = (query: string, variables: Record<string, unknown>, token: string) =>
  server.request('POST', '/graphql', { token, body: { query, variables } });

const ADD = `mutation($org: ID!, $email: String, $role: String) { addMember(organizationId: $org, email: $email, role: $role) { invitation { id email role organizationId organizationName invitedByEmail } } }`;
const ACCEPT = `mutation($id: ID!) { acceptInvitation(id: $id) { member { userId email role } } }`;
const DECLINE = `mutation($id: ID!) { declineInvitation(id: $id) { invitation { id } } }`;
const INVITATIONS = `{ invitations { id organizationId organizationName role invitedByEmail invitedByName } }`;
/** An Owner's addMember, accepted by the invitee: the way anyone becomes a member on GraphQL. */
async function addAndAccept(orgId: string, owner: { token: string }, invitee: { email: string; token: string }, role: string) {
  const invited = await gql(ADD, { org: orgId, email: invitee.email, role }, owner.token);
  expect(invited.body.errors).toBeUndefined();
  return gql(ACCEPT, { id: invited.body.data.addMember.invitation.id }, invitee.token);
}
const CHANGE = `mutation($org: ID!, $user: ID, $role: String) { changeMemberRole(organizationId: $org, userId: $user, role: $role) { member { userId role } } }`;
const REMOVE = `mutation($org: ID!, $user: ID) { removeMember(organizationId: $org, userId: $user) { member { userId } } }`;
const LEAVE = `mutation($org: ID!) { leaveOrganization(organizationId: $org) { member { userId role } } }`;
const codeOf = (res: { body: { errors?: { extensions: { code: string } }[] } }) => res.body.errors?.[0]?.extensions.code;

const members = async (orgId: string) =>
  (await server.services.db.query<{ user_id: string }>('SELECT user_id FROM memberships WHERE organization_id = $1', [orgId])).map((r) => r.user_id);

/** Every request of this file comes from loopback: a test that counts the address's budget starts it afresh. */
async function freshAddressBudget() {
  for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) await server.services.rateLimits.reset(additionRules(server.services).address, address);
}

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

    const invited = await gql(ADD, { org: t.org.id, email: newcomer.email.toUpperCase(), role: 'VIEWER' }, t.owner.token);
    expect(invited.body.data.addMember.invitation).toMatchObject({ email: newcomer.email, role: 'VIEWER', organizationId: t.org.id });
    // Not a member until they accept.
    expect((await projects()).status).toBe(404);
    const accepted = await gql(ACCEPT, { id: invited.body.data.addMember.invitation.id }, newcomer.token);
    expect(accepted.body).toEqual({ data: { acceptInvitation: { member: { userId: newcomer.id, email: newcomer.email, role: 'VIEWER' } } } });
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

    it('answers rate_limited after 20 addMember calls per organization in an hour, found or not; other organizations keep theirs', async () => {
      await freshAddressBudget();
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

      // Another Owner's organization still adds (the same Owner's would not: issue 38, below).
      const other = await team(server);
      const added = await gql(ADD, { org: other.org.id, email: newcomer.email, role: 'VIEWER' }, other.owner.token);
      expect(added.body.data.addMember.invitation.email).toBe(newcomer.email);
      // Refusals that come first do not spend it: a non-member (404), a lower role (403), bad input (400).
      const fresh = await team(server);
      for (let i = 0; i < 25; i++) expect(codeOf(await gql(ADD, { org: fresh.org.id, email: 'x@example.com', role: 'VIEWER' }, fresh.admin.token))).toBe('forbidden');
      expect(codeOf(await gql(ADD, { org: fresh.org.id, email: newcomer.email, role: 'VIEWER' }, fresh.owner.token))).toBeUndefined();
    });

    it('tells the invitee in their inbox which organization and who invited them', async () => {
      const t = await team(server);
      const newcomer = await operator(server, 'Newcomer');
      expect(codeOf(await gql(ADD, { org: t.org.id, email: newcomer.email, role: 'ADMIN' }, t.owner.token))).toBeUndefined();
      const inbox = await server.request('GET', '/api/platform/notifications', { token: newcomer.token });
      expect(inbox.status).toBe(200);
      expect(inbox.body.unreadCount).toBe(1);
      expect(inbox.body.notifications).toEqual([
        expect.objectContaining({
          product: 'organization',
          type: 'organization.invitation',
          title: `You are invited to ${t.org.name}`,
          body: `Owner (${t.owner.email}) invited you to the organization ${t.org.name} as ADMIN. You are not a member unless you accept; decline if you do not want to join.`,
          link: null,
          organizationId: t.org.id,
          projectId: null,
          readAt: null,
        }),
      ]);
      // Only the invitee is told; the Owner's inbox has nothing about it.
      const ownerInbox = await server.request('GET', '/api/platform/notifications?product=organization', { token: t.owner.token });
      expect(ownerInbox.body.notifications).toEqual([]);
      // A refused addition tells nobody anything: invited already is a conflict, as a member already is.
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

  // Issue 38: someone added as Owner without asking could not leave once the adder left (the last OWNER stays).
  // An addition is now an invitation: nobody is a member of anything they did not accept.
  describe('invitations', () => {
    it('makes nobody a member until they accept: an OWNER invitation declined leaves nothing, and the adder may leave', async () => {
      const t = await team(server);
      const stranger = await operator(server, 'Stranger');
      const invited = await gql(ADD, { org: t.org.id, email: stranger.email, role: 'OWNER' }, t.owner.token);
      const invitation = invited.body.data.addMember.invitation;
      expect(invitation).toMatchObject({ role: 'OWNER', organizationName: t.org.name, invitedByEmail: t.owner.email });
      // The stranger sees the invitation, not the organization.
      expect((await gql(INVITATIONS, {}, stranger.token)).body.data.invitations).toEqual([
        { id: invitation.id, organizationId: t.org.id, organizationName: t.org.name, role: 'OWNER', invitedByEmail: t.owner.email, invitedByName: 'Owner' },
      ]);
      expect((await server.request('GET', `/api/platform/orgs/${t.org.id}/projects`, { token: stranger.token })).status).toBe(404);
      expect(await members(t.org.id)).not.toContain(stranger.id);
      // Owners and Admins see it pending; nobody else can answer it (not_found, as for an unknown id).
      const pending = await gql(`query($id: ID!) { organization(id: $id) { invitations { id email } } }`, { id: t.org.id }, t.admin.token);
      expect(pending.body.data.organization.invitations).toEqual([{ id: invitation.id, email: stranger.email }]);
      for (const other of [t.owner, t.admin, t.outsider]) expect(codeOf(await gql(ACCEPT, { id: invitation.id }, other.token))).toBe('not_found');
      expect(codeOf(await gql(ACCEPT, { id: 'no-such-invitation' }, stranger.token))).toBe('not_found');
      // Declined: gone, nothing changed; the Owner can step down and leave as before (they were never two owners).
      expect((await gql(DECLINE, { id: invitation.id }, stranger.token)).body.errors).toBeUndefined();
      expect((await gql(INVITATIONS, {}, stranger.token)).body.data.invitations).toEqual([]);
      expect(codeOf(await gql(ACCEPT, { id: invitation.id }, stranger.token))).toBe('not_found');
      expect(await owners(t.org.id)).toEqual([t.owner.id]);
      expect(await members(t.org.id)).not.toContain(stranger.id);
    });

    it('an accepted OWNER invitation makes a member who can leave once the adder has left', async () => {
      const t = await team(server);
      const partner = await operator(server, 'Partner');
      expect((await addAndAccept(t.org.id, t.owner, partner, 'OWNER')).body.data.acceptInvitation.member.role).toBe('OWNER');
      expect(codeOf(await gql(LEAVE, { org: t.org.id }, t.owner.token))).toBeUndefined();
      expect(await owners(t.org.id)).toEqual([partner.id]);
    });

    it('counts additions per adding user and per address too: a new organization renews nothing', async () => {
      await freshAddressBudget();
      const budget = server.services.config.rateLimits.memberAdditionsPerHour;
      const owner = await operator(server, 'Owner');
      const first = await organization(server, owner);
      for (let i = 0; i < budget; i++) expect(codeOf(await gql(ADD, { org: first.id, email: `nobody-${i}-${first.id}@example.com`, role: 'VIEWER' }, owner.token))).toBe('not_found');
      // The same user's fresh organization has its own budget, but the user's is spent.
      const second = await organization(server, owner);
      const refused = await gql(ADD, { org: second.id, email: `nobody-x-${second.id}@example.com`, role: 'VIEWER' }, owner.token);
      expect(refused.body.errors[0].extensions).toMatchObject({ code: 'rate_limited', rateLimit: { limit: budget, remaining: 0 } });
      // Another account on the same client address is refused once the address's budget (5 × 20) is spent.
      const accomplice = await operator(server, 'Accomplice');
      const third = await organization(server, accomplice);
      const rules = additionRules(server.services);
      const address = await gql(ADD, { org: third.id, email: `nobody-y-${third.id}@example.com`, role: 'VIEWER' }, accomplice.token);
      expect(codeOf(address)).toBe('not_found');
      for (let i = budget + 1; i < rules.address.points; i++) await server.services.rateLimits.penalise(rules.address, '127.0.0.1');
      expect(codeOf(await gql(ADD, { org: third.id, email: `nobody-z-${third.id}@example.com`, role: 'VIEWER' }, accomplice.token))).toBe('rate_limited');
      // Those refusals spent nothing of the organization's or the accomplice's budgets.
      await freshAddressBudget();
      expect(codeOf(await gql(ADD, { org: third.id, email: `nobody-w-${third.id}@example.com`, role: 'VIEWER' }, accomplice.token))).toBe('not_found');
      await freshAddressBudget();
    });

    it('limits how fast one user creates organizations (429 rate_limited on REST, as the contract’s rate limit)', async () => {
      const founder = await operator(server, 'Founder');
      const limit = server.services.config.rateLimits.organizationsPerHour;
      for (let i = 0; i < limit; i++) expect((await server.request('POST', '/api/platform/orgs', { token: founder.token, body: { name: `Org ${i}` } })).status).toBe(201);
      const refused = await server.request('POST', '/api/platform/orgs', { token: founder.token, body: { name: 'One more' } });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'rate_limited' });
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      // Bad input spends nothing, and another user is not affected.
      expect((await server.request('POST', '/api/platform/orgs', { token: founder.token, body: { name: '' } })).status).toBe(400);
      const other = await operator(server, 'Other');
      expect((await server.request('POST', '/api/platform/orgs', { token: other.token, body: { name: 'Mine' } })).status).toBe(201);
    });
  });
});
