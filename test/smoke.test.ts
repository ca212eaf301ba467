import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator, organization, project, team } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('a new operator, end to end', () => {
  it('registers, logs in, creates an organization and a project, and sees them in me', async () => {
    const owner = await operator(server);
    const org = await organization(server, owner, { name: 'Café Münster' });
    expect(org.slug).toBe('cafe-munster');
    const proj = await project(server, owner, org.id, 'Web shop');
    const me = await server.request('GET', '/api/platform/auth/me', { token: owner.token });
    expect(me.status).toBe(200);
    expect(me.body.organizations.map((o: { id: string }) => o.id)).toEqual([org.id]);
    expect(me.body.projects).toEqual([proj]);
  });

  it('enforces roles: viewer 403 on create, outsider 404', async () => {
    const t = await team(server, { planId: 'starter' });
    const asViewer = await server.request('POST', `/api/platform/orgs/${t.org.id}/projects`, { token: t.viewer.token, body: { name: 'X' } });
    expect(asViewer.status).toBe(403);
    expect(asViewer.body.code).toBe('forbidden');
    const asOutsider = await server.request('GET', `/api/platform/orgs/${t.org.id}/projects`, { token: t.outsider.token });
    expect(asOutsider.status).toBe(404);
    const asAdmin = await server.request('POST', `/api/platform/orgs/${t.org.id}/projects`, { token: t.admin.token, body: { name: 'Second' } });
    expect(asAdmin.status).toBe(201);
  });
});
