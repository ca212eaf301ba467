import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { addMember } from '../../src/admin/members.js';
import type { TestServer } from './server.js';

export const PASSWORD = 'correct horse battery';

export interface Operator {
  id: string;
  email: string;
  token: string;
}

/** Registers and logs in a new user with a unique e-mail. */
export async function operator(server: TestServer, name = 'Operator'): Promise<Operator> {
  const email = `${name.toLowerCase().replace(/\W/g, '')}-${randomBytes(4).toString('hex')}@example.com`;
  const registered = await server.request('POST', '/api/platform/auth/register', { body: { email, password: PASSWORD, name } });
  expect(registered.status).toBe(201);
  const login = await server.request('POST', '/api/platform/auth/login', { body: { email, password: PASSWORD } });
  expect(login.status).toBe(200);
  return { id: registered.body.user.id, email, token: login.body.token };
}

export async function organization(server: TestServer, owner: Operator, body: Record<string, unknown> = {}) {
  const created = await server.request('POST', '/api/platform/orgs', { token: owner.token, body: { name: 'Acme', ...body } });
  expect(created.status).toBe(201);
  return created.body.organization as { id: string; name: string; slug: string; createdAt: string };
}

export async function project(server: TestServer, actor: Operator, orgId: string, name = 'Shop') {
  const created = await server.request('POST', `/api/platform/orgs/${orgId}/projects`, { token: actor.token, body: { name } });
  expect(created.status).toBe(201);
  return created.body.project as { id: string; organizationId: string; name: string; slug: string; createdAt: string };
}

/**
 * An organization with a project and one operator per role, plus an outsider.
 * Memberships go through the same code as `npm run admin -- member add`.
 */
export async function team(server: TestServer, options: { planId?: string } = {}) {
  const [owner, admin, viewer, outsider] = await Promise.all([
    operator(server, 'Owner'),
    operator(server, 'Admin'),
    operator(server, 'Viewer'),
    operator(server, 'Outsider'),
  ]);
  const org = await organization(server, owner, options.planId ? { planId: options.planId } : {});
  const db = server.services.db;
  await addMember(db, { org: org.id, email: admin.email, role: 'ADMIN' });
  await addMember(db, { org: org.id, email: viewer.email, role: 'VIEWER' });
  const proj = await project(server, owner, org.id);
  return { owner, admin, viewer, outsider, org, project: proj };
}
