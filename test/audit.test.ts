// The audit log (docs/audit.md): every operator mutation, REST or GraphQL, writes one event in its
// own transaction with the actor and request id; refused or rolled-back mutations write nothing;
// secrets never appear; the table is append-only; the list pages by cursor and exports CSV.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditScopeActive, recordAudit, withAuditScope } from '../src/audit/record.js';
import { putDraft, publish } from './helpers/consent.js';
import { operator, PASSWORD, team, type Operator } from './helpers/fixtures.js';
import { sdkTeam } from './helpers/sdk.js';
import { statementsSent } from './helpers/statements.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

type Team = Awaited<ReturnType<typeof team>>;
interface Event {
  id: string;
  organizationId: string;
  projectId: string | null;
  actor: { id: string | null; email: string | null; via: string | null };
  action: string;
  target: { type: string; id: string };
  changes: Record<string, { before: unknown; after: unknown }>;
  requestId: string | null;
  createdAt: string;
}

const auditPath = (orgId: string, query = '') => `/api/platform/orgs/${orgId}/audit-log${query}`;
const as = (actor: Operator, requestId: string, body?: unknown) => ({ token: actor.token, headers: { 'x-request-id': requestId }, body });
const gql = (query: string, variables: Record<string, unknown>, actor: Operator, requestId = `gql-${Math.random().toString(36).slice(2)}`) =>
  server.request('POST', '/graphql', as(actor, requestId, { query, variables }));

/** Every event of the organization, newest first, straight through REST as an Admin sees it. */
async function events(t: Team): Promise<Event[]> {
  const res = await server.request('GET', auditPath(t.org.id, '?limit=200'), { token: t.admin.token });
  expect(res.status).toBe(200);
  return res.body.events;
}
const byRequest = async (t: Team, requestId: string) => (await events(t)).filter((event) => event.requestId === requestId);
const countAll = async () => Number((await server.services.db.query<{ n: string }>('SELECT count(*) AS n FROM audit_events'))[0]!.n);

describe('audit log: what each mutation writes', () => {
  it('records organization and project creation, key create/revoke, origins, webhook and members with actor, request id and before/after', async () => {
    const t = await team(server);
    const owner = { id: t.owner.id, email: t.owner.email };

    const all = await events(t);
    expect(all.map((event) => event.action)).toEqual(['project.created', 'organization.created']);
    expect(all[1]).toMatchObject({ actor: owner, target: { type: 'organization', id: t.org.id }, changes: { name: { before: null, after: 'Acme' } } });
    expect(all[0]).toMatchObject({ projectId: t.project.id, target: { type: 'project', id: t.project.id }, changes: { name: { before: null, after: 'Shop' } } });

    const key = await server.request('POST', `/api/platform/projects/${t.project.id}/api-keys`, as(t.owner, 'req-key-create', { name: 'Site' }));
    expect(key.status).toBe(201);
    const [created] = await byRequest(t, 'req-key-create');
    expect(created).toMatchObject({
      organizationId: t.org.id,
      projectId: t.project.id,
      actor: owner,
      action: 'api_key.created',
      target: { type: 'api_key', id: key.body.apiKey.id },
      changes: { name: { before: null, after: 'Site' }, prefix: { before: null, after: key.body.apiKey.prefix } },
    });

    const revoked = await server.request('DELETE', `/api/platform/projects/${t.project.id}/api-keys/${key.body.apiKey.id}`, as(t.owner, 'req-key-revoke'));
    expect(revoked.status).toBe(200);
    const [revocation] = await byRequest(t, 'req-key-revoke');
    expect(revocation).toMatchObject({ action: 'api_key.revoked', changes: { revokedAt: { before: null, after: revoked.body.apiKey.revokedAt } } });

    const origins = await server.request('PUT', `/api/platform/projects/${t.project.id}/allowed-origins`, as(t.admin, 'req-origins', { origins: ['https://shop.example'] }));
    expect(origins.status).toBe(200);
    expect(await byRequest(t, 'req-origins')).toMatchObject([
      { action: 'allowed_origins.updated', actor: { id: t.admin.id, email: t.admin.email }, changes: { allowedOrigins: { before: [], after: ['https://shop.example'] } } },
    ]);

    const webhookPath = `/api/platform/projects/${t.project.id}/webhook`;
    const hook = await server.request('PUT', webhookPath, as(t.admin, 'req-hook-create', { url: 'http://127.0.0.1:9/hook' }));
    expect(hook.status).toBe(200);
    expect((await byRequest(t, 'req-hook-create'))[0]).toMatchObject({ action: 'webhook.created', changes: { url: { before: null, after: 'http://127.0.0.1:9/hook' } } });
    await server.request('PUT', webhookPath, as(t.admin, 'req-hook-update', { url: 'http://127.0.0.1:9/other', enabled: false }));
    expect((await byRequest(t, 'req-hook-update'))[0]).toMatchObject({
      action: 'webhook.updated',
      changes: { url: { before: 'http://127.0.0.1:9/hook', after: 'http://127.0.0.1:9/other' }, enabled: { before: true, after: false } },
    });
    const rotated = await server.request('POST', `${webhookPath}/secret`, as(t.owner, 'req-hook-rotate'));
    expect(rotated.status).toBe(200);
    expect((await byRequest(t, 'req-hook-rotate'))[0]).toMatchObject({ action: 'webhook.secret_rotated' });
    expect((await server.request('POST', `${webhookPath}/test`, as(t.admin, 'req-hook-test'))).status).toBe(200);
    expect((await byRequest(t, 'req-hook-test'))[0]).toMatchObject({ action: 'webhook.tested', changes: { status: { before: null, after: 'failed' } } });

    // Members go through GraphQL only; the same log.
    const newcomer = await operator(server, 'Newcomer');
    const ADD = `mutation($org: ID!, $email: String, $role: String) { addMember(organizationId: $org, email: $email, role: $role) { invitation { id } } }`;
    const ACCEPT = `mutation($id: ID!) { acceptInvitation(id: $id) { member { userId } } }`;
    const CHANGE = `mutation($org: ID!, $user: ID, $role: String) { changeMemberRole(organizationId: $org, userId: $user, role: $role) { member { userId } } }`;
    const REMOVE = `mutation($org: ID!, $user: ID) { removeMember(organizationId: $org, userId: $user) { member { userId } } }`;
    const invited = await gql(ADD, { org: t.org.id, email: newcomer.email, role: 'VIEWER' }, t.owner, 'req-member-add');
    expect(invited.body.errors).toBeUndefined();
    // The invitee accepts: the membership, and its event, are theirs.
    expect((await gql(ACCEPT, { id: invited.body.data.addMember.invitation.id }, newcomer, 'req-member-accept')).body.errors).toBeUndefined();
    await gql(CHANGE, { org: t.org.id, user: newcomer.id, role: 'ADMIN' }, t.owner, 'req-member-change');
    await gql(REMOVE, { org: t.org.id, user: newcomer.id }, t.owner, 'req-member-remove');
    expect((await byRequest(t, 'req-member-add'))[0]).toMatchObject({ action: 'member.invited', actor: { id: t.owner.id }, target: { type: 'user', id: newcomer.id }, changes: { role: { before: null, after: 'VIEWER' } } });
    expect((await byRequest(t, 'req-member-accept'))[0]).toMatchObject({ action: 'member.added', actor: { id: newcomer.id }, target: { type: 'user', id: newcomer.id }, changes: { role: { before: null, after: 'VIEWER' } } });
    expect((await byRequest(t, 'req-member-change'))[0]).toMatchObject({ action: 'member.role_changed', changes: { role: { before: 'VIEWER', after: 'ADMIN' } } });
    expect((await byRequest(t, 'req-member-remove'))[0]).toMatchObject({ action: 'member.removed', changes: { role: { before: 'ADMIN', after: null } } });
  });

  it('records draft edits and publish, on REST and GraphQL alike', async () => {
    const t = await team(server);
    await putDraft(server, t.admin, t.project.id);
    const published = await publish(server, t.admin, t.project.id);
    const actions = (await events(t)).map((event) => event.action);
    expect(actions.slice(0, 2)).toEqual(['consent.published', 'consent.draft_replaced']);
    const publishEvent = (await events(t))[0]!;
    expect(publishEvent).toMatchObject({ actor: { id: t.admin.id }, target: { type: 'consent_version', id: published.id }, changes: { number: { before: null, after: 1 } } });

    const category = await server.request('POST', `/api/platform/projects/${t.project.id}/consent/categories`, as(t.admin, 'req-cat', { name: 'Stats' }));
    expect(category.status).toBe(201);
    expect((await byRequest(t, 'req-cat'))[0]).toMatchObject({ action: 'consent.category_created', changes: { name: { before: null, after: 'Stats' } } });
    const NOTICE = `mutation($p: ID!, $i: ConsentNoticeInput!) { updateConsentNotice(projectId: $p, input: $i) { notice { title } } }`;
    const notice = await gql(NOTICE, { p: t.project.id, i: { title: 'New title' } }, t.admin, 'req-notice');
    expect(notice.body.errors).toBeUndefined();
    const [noticeEvent] = await byRequest(t, 'req-notice');
    expect(noticeEvent).toMatchObject({ action: 'consent.notice_updated', changes: { title: { after: 'New title' } } });
    expect(noticeEvent!.changes.title!.before).not.toBe('New title');

    const experience = await server.request('PUT', `/api/platform/projects/${t.project.id}/consent/experience`, as(t.admin, 'req-experience', { defaultLocale: 'de' }));
    expect(experience.status).toBe(200);
    expect((await byRequest(t, 'req-experience'))[0]).toMatchObject({
      action: 'consent.experience_updated',
      changes: { experience: { before: null, after: { defaultLocale: 'de' } } },
    });
  });

  it('records billing and password changes; a password change is an account event outside every organization log', async () => {
    const t = await team(server);
    const trial = await server.request('POST', `/api/platform/orgs/${t.org.id}/billing/trial`, as(t.owner, 'req-trial', { planId: 'starter' }));
    expect(trial.status).toBe(200);
    expect((await byRequest(t, 'req-trial'))[0]).toMatchObject({ action: 'billing.trial_started', changes: { planId: { after: 'starter' } } });
    expect((await server.request('POST', `/api/platform/orgs/${t.org.id}/billing/cancel`, as(t.owner, 'req-cancel'))).status).toBe(200);
    expect((await byRequest(t, 'req-cancel'))[0]).toMatchObject({ action: 'billing.subscription_canceled', changes: { cancelAtPeriodEnd: { before: false, after: true } } });

    const changed = await server.request('POST', '/api/platform/auth/password', as(t.viewer, 'req-password', { currentPassword: PASSWORD, newPassword: 'another long passphrase' }));
    expect(changed.status).toBe(200);
    expect(await byRequest(t, 'req-password')).toEqual([]);
    const rows = await server.services.db.query<{ organization_id: string | null; actor_id: string; changes: unknown }>(
      `SELECT organization_id, actor_id, changes FROM audit_events WHERE request_id = 'req-password'`,
    );
    expect(rows).toEqual([{ organization_id: null, actor_id: t.viewer.id, changes: {} }]);
  });

  it('keeps each actor and request id when mutations overlap, and switches the scope off once none runs', async () => {
    // The scope is switched off between executions (src/audit/record.ts): one ending must not take it from another
    // still running. Two executions as the REST handler and /graphql run them; the second records after the first ended.
    const t = await team(server);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = withAuditScope({ requestId: 'req-overlap-first', viewer: t.owner }, () => gate);
    const second = withAuditScope({ requestId: 'req-overlap-second', viewer: t.admin }, async () => {
      await first;
      await server.services.db.prisma.$transaction((tx) =>
        recordAudit(tx, { action: 'allowed_origins.updated', projectId: t.project.id, target: { type: 'project', id: t.project.id } }),
      );
    });
    release();
    await second;
    expect(await byRequest(t, 'req-overlap-second')).toMatchObject([{ action: 'allowed_origins.updated', actor: { id: t.admin.id, email: t.admin.email } }]);
    expect(auditScopeActive()).toBe(false);

    // And through HTTP: overlapping mutations of two operators each keep their own actor.
    const actors = [t.owner, t.admin, t.owner, t.admin];
    const updated = await Promise.all(
      actors.map((actor, i) =>
        server.request('PUT', `/api/platform/projects/${t.project.id}/allowed-origins`, as(actor, `req-overlap-${i}`, { origins: [`https://shop${i}.example`] })),
      ),
    );
    expect(updated.map((res) => res.status)).toEqual(actors.map(() => 200));
    for (const [i, actor] of actors.entries()) {
      expect(await byRequest(t, `req-overlap-${i}`)).toMatchObject([{ action: 'allowed_origins.updated', actor: { id: actor.id, email: actor.email } }]);
    }
    expect(auditScopeActive()).toBe(false);
  });

  // Fails before issue 41's change: SDK requests ran inside the audit scope, so under SDK load async_hooks were on
  // for every promise of the process, though a visitor's call never records an audit event. What runs inside the
  // scope is seen by the statements it sends (statementsSent tags each with the scope's request id).
  it('runs SDK requests outside the audit scope (async_hooks stay off for visitors), operator mutations inside it', async () => {
    const t = await sdkTeam(server);
    const sdkPost = (i: number) =>
      server.request('POST', '/api/sdk/v1/consent', { token: t.key.secret, headers: { 'x-request-id': `sdk-scope-${i}` }, body: t.body(`audit-scope-${i}`) });
    const sdk = await statementsSent(server, async () => {
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => sdkPost(i)));
      expect(answers.map((res) => res.status)).toEqual(answers.map(() => 201));
    });
    expect(sdk.length).toBeGreaterThan(0); // the key, the version and the receipts were read and written
    expect(sdk.filter((statement) => statement.requestId !== undefined)).toEqual([]);
    const operatorStatements = await statementsSent(server, async () => {
      const res = await server.request('PUT', `/api/platform/projects/${t.project.id}/allowed-origins`, as(t.owner, 'req-in-scope', { origins: ['https://scoped.example'] }));
      expect(res.status).toBe(200);
    });
    expect(operatorStatements.some((statement) => statement.requestId === 'req-in-scope')).toBe(true);
  });

  it('writes nothing for a refused mutation (403, 404, 400)', async () => {
    const t = await team(server);
    const before = await countAll();
    const keys = `/api/platform/projects/${t.project.id}/api-keys`;
    expect((await server.request('POST', keys, as(t.viewer, 'r1', {}))).status).toBe(403);
    expect((await server.request('POST', keys, as(t.outsider, 'r2', {}))).status).toBe(404);
    expect((await server.request('PUT', `/api/platform/projects/${t.project.id}/allowed-origins`, as(t.admin, 'r3', { origins: ['ftp://x'] }))).status).toBe(400);
    expect((await server.request('POST', `/api/platform/orgs/${t.org.id}/projects`, as(t.admin, 'r4', { name: '' }))).status).toBe(400);
    expect(await countAll()).toBe(before);
  });

  // If the event were written outside the mutation's transaction (or after it), the key would
  // stay created while its event failed, or the event would stay while the key rolled back.
  it('rolls the event back with the mutation, and the mutation back with the event', async () => {
    const t = await team(server);
    const db = server.services.db;
    await db.query(`CREATE OR REPLACE FUNCTION audit_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit test failure'; END; $$`);
    // Fires on the event's insert, which comes after the key's: the key must go with it.
    await db.query(`CREATE TRIGGER audit_test_fail AFTER INSERT ON audit_events
      FOR EACH ROW WHEN (NEW.request_id = 'req-doomed') EXECUTE FUNCTION audit_test_fail()`);
    try {
      const res = await server.request('POST', `/api/platform/projects/${t.project.id}/api-keys`, as(t.owner, 'req-doomed', { name: 'Doomed' }));
      expect(res.status).toBe(500);
    } finally {
      await db.query('DROP TRIGGER audit_test_fail ON audit_events');
    }
    expect(await db.query(`SELECT id FROM api_keys WHERE project_id = $1 AND name = 'Doomed'`, [t.project.id])).toEqual([]);
    expect(await db.query(`SELECT id FROM audit_events WHERE request_id = 'req-doomed'`)).toEqual([]);
  });

  it('never records a secret, hash or token', async () => {
    const t = await team(server);
    const key = await server.request('POST', `/api/platform/projects/${t.project.id}/api-keys`, as(t.owner, 's1', {}));
    const hook = await server.request('PUT', `/api/platform/projects/${t.project.id}/webhook`, as(t.admin, 's2', { url: 'http://127.0.0.1:9/hook' }));
    const rotated = await server.request('POST', `/api/platform/projects/${t.project.id}/webhook/secret`, as(t.owner, 's3'));
    await server.request('POST', '/api/platform/auth/password', as(t.owner, 's4', { currentPassword: PASSWORD, newPassword: 'a brand new passphrase' }));
    const secrets = [key.body.secret, hook.body.secret, rotated.body.secret, t.owner.token, PASSWORD, 'a brand new passphrase'];
    for (const secret of secrets) expect(typeof secret === 'string' && secret.length > 8).toBe(true);
    const rows = await server.services.db.query(`SELECT * FROM audit_events`);
    const hashes = await server.services.db.query<{ h: string }>(
      `SELECT secret_hash AS h FROM api_keys UNION ALL SELECT password_hash FROM users UNION ALL SELECT token_hash FROM sessions`,
    );
    const everything = JSON.stringify(rows);
    for (const secret of [...secrets, ...hashes.map((row) => row.h)]) expect(everything).not.toContain(secret);
  });

  it('is append-only: the database refuses UPDATE, DELETE and TRUNCATE', async () => {
    const t = await team(server);
    const db = server.services.db;
    await expect(db.query(`UPDATE audit_events SET action = 'x' WHERE organization_id = $1`, [t.org.id])).rejects.toThrow(/immutable/);
    await expect(db.query(`DELETE FROM audit_events WHERE organization_id = $1`, [t.org.id])).rejects.toThrow(/immutable/);
    await expect(db.query(`TRUNCATE audit_events`)).rejects.toThrow(/immutable/);
    expect(await events(t)).toHaveLength(2);
  });
});

describe('audit log: reading it', () => {
  it('answers Admins and Owners; Viewers 403, outsiders 404, anonymous 401, on REST and GraphQL', async () => {
    const t = await team(server);
    expect((await server.request('GET', auditPath(t.org.id), { token: t.owner.token })).status).toBe(200);
    expect((await server.request('GET', auditPath(t.org.id), { token: t.admin.token })).status).toBe(200);
    expect((await server.request('GET', auditPath(t.org.id), { token: t.viewer.token })).status).toBe(403);
    expect((await server.request('GET', auditPath(t.org.id), { token: t.outsider.token })).status).toBe(404);
    expect((await server.request('GET', auditPath(t.org.id))).status).toBe(401);
    // Access comes before input: a viewer's bad filter is still 403.
    expect((await server.request('GET', auditPath(t.org.id, '?action=nope'), { token: t.viewer.token })).status).toBe(403);

    const QUERY = `query($id: ID!) { organization(id: $id) { name auditLog(first: 5) { edges { node { action actor { email } } } } } }`;
    const asAdmin = await gql(QUERY, { id: t.org.id }, t.admin);
    expect(asAdmin.body.data.organization.auditLog.edges.map((edge: { node: { action: string } }) => edge.node.action)).toEqual([
      'project.created',
      'organization.created',
    ]);
    const asViewer = await gql(QUERY, { id: t.org.id }, t.viewer);
    expect(asViewer.body.data.organization).toEqual({ name: 'Acme', auditLog: null });
    expect(asViewer.body.errors[0].extensions.code).toBe('forbidden');
  });

  it('pages newest first by cursor, filters by project and action, and refuses bad input with 400', async () => {
    const t = await team(server);
    for (let i = 0; i < 4; i++) await server.request('POST', `/api/platform/projects/${t.project.id}/api-keys`, as(t.owner, `page-${i}`, { name: `k${i}` }));
    const all = await events(t);
    expect(all).toHaveLength(6);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { status: number; body: { events: Event[]; nextCursor: string | null } } = await server.request(
        'GET',
        auditPath(t.org.id, `?limit=4${cursor ? `&cursor=${cursor}` : ''}`),
        { token: t.admin.token },
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.events.map((event) => event.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.map((event) => event.id));
    expect(all.map((event) => event.requestId).slice(0, 4)).toEqual(['page-3', 'page-2', 'page-1', 'page-0']);

    const keysOnly = await server.request('GET', auditPath(t.org.id, `?action=api_key.created&projectId=${t.project.id}&limit=2`), { token: t.admin.token });
    expect(keysOnly.body.events.map((event: Event) => event.requestId)).toEqual(['page-3', 'page-2']);
    expect(keysOnly.body.nextCursor).toEqual(expect.any(String));

    const CONNECTION = `query($id: ID!, $after: String) { organization(id: $id) { auditLog(first: 4, after: $after, action: "api_key.created") {
      edges { node { requestId } } pageInfo { hasNextPage endCursor } } } }`;
    const first = (await gql(CONNECTION, { id: t.org.id }, t.admin)).body.data.organization.auditLog;
    expect(first.pageInfo.hasNextPage).toBe(false);
    expect(first.edges.map((edge: { node: { requestId: string } }) => edge.node.requestId)).toEqual(['page-3', 'page-2', 'page-1', 'page-0']);

    for (const query of ['?limit=0', '?limit=201', '?limit=x', '?action=project.exploded', '?cursor=nonsense', '?format=xml']) {
      const res = await server.request('GET', auditPath(t.org.id, query), { token: t.admin.token });
      expect(res.status, query).toBe(400);
      expect(res.body.code, query).toBe('validation_failed');
    }
    const badAction = await gql(`query($id: ID!) { organization(id: $id) { auditLog(action: "nope") { edges { cursor } } } }`, { id: t.org.id }, t.admin);
    expect(badAction.body.errors[0].extensions.code).toBe('validation_failed');
  });

  it('exports CSV with formula cells neutralised', async () => {
    const t = await team(server);
    const key = await server.request('POST', `/api/platform/projects/${t.project.id}/api-keys`, as(t.owner, '-formula', { name: '=HYPERLINK("x")' }));
    expect(key.status).toBe(201);
    const res = await server.request('GET', auditPath(t.org.id, '?format=csv'), { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = res.text.trim().split('\n');
    expect(lines[0]).toBe('id,createdAt,organizationId,projectId,actorId,actorEmail,action,target,changes,requestId,actorVia');
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(/,api_key\.created,/);
    // requestId, then actorVia (empty: an operator acted).
    expect(lines[1]!.endsWith(",'-formula,")).toBe(true);
    // The name is inside the JSON cell, which starts with `{`: a spreadsheet shows it as text.
    expect(lines[1]).toContain('=HYPERLINK');
    expect((await server.request('GET', auditPath(t.org.id, '?format=csv'), { token: t.viewer.token })).status).toBe(403);
  });
});
