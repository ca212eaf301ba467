import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allRoutes } from '../rest/routes/index.js';
import { PASSWORD, operator, team } from './helpers/fixtures.js';
import { startTestServer, type TestResponse, type TestServer } from './helpers/server.js';

type OpenApi = { openapi: string; info: { title: string; version: string }; paths: Record<string, Record<string, any>>; components: any };

let server: TestServer;
let doc: OpenApi;
let ajv: Ajv2020;
beforeAll(async () => {
  server = await startTestServer();
  const res = await server.request('GET', '/api/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = res.body;
  // The document itself is the schema registry: responses are checked against their own pointers.
  ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(doc as object, 'openapi.json');
});
afterAll(() => server?.close());

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
const templateOf = (path: string) => path.replace(/:(\w+)\*?/g, '{$1}'); // `:path*` (the rest of the path) is `{path}` too

/** Asserts that a real response matches what the document promises for its route and status. */
function expectDocumented(method: string, routePath: string, res: TestResponse) {
  const operation = doc.paths[templateOf(routePath)]?.[method.toLowerCase()];
  expect(operation, `${method} ${routePath} is documented`).toBeDefined();
  const response = operation.responses[String(res.status)];
  expect(response, `${method} ${routePath} documents status ${res.status}`).toBeDefined();
  const content = response.content?.['application/json'];
  expect(content, `${method} ${routePath} ${res.status} has a JSON schema`).toBeDefined();
  const ref = `openapi.json#/${pointer('paths', templateOf(routePath), method.toLowerCase(), 'responses', String(res.status), 'content', 'application/json', 'schema')}`;
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  const valid = validate(res.body);
  expect(valid, `${method} ${routePath} ${res.status}: ${JSON.stringify(validate.errors)} for ${res.text}`).toBe(true);
}

describe('GET /api/openapi.json', () => {
  it('is an OpenAPI 3.1 document of this service', () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: expect.any(String), version });
    expect(doc.components.securitySchemes.session).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [path, operations] of Object.entries(doc.paths)) {
      expect(path.startsWith('/')).toBe(true);
      for (const [method, operation] of Object.entries(operations)) {
        expect(['get', 'post', 'put', 'patch', 'delete']).toContain(method);
        expect(Object.keys(operation.responses).length, `${method} ${path}`).toBeGreaterThan(0);
        for (const status of Object.keys(operation.responses)) expect(status).toMatch(/^[1-5]\d\d$/);
        const declared = (operation.parameters ?? []).filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name);
        expect(declared.sort(), `${method} ${path} path parameters`).toEqual([...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort());
      }
    }
  });

  it('is strict enough to catch a drifting body', () => {
    const ref = `openapi.json#/${pointer('paths', '/api/platform/auth/register', 'post', 'responses', '201', 'content', 'application/json', 'schema')}`;
    const validate = ajv.compile({ $ref: ref });
    const user = { id: 'u', email: 'a@example.com', name: 'A', createdAt: '2026-11-22T10:00:00.000Z' };
    expect(validate({ user })).toBe(true);
    expect(validate({ user: { ...user, passwordHash: 'x' } })).toBe(false);
    expect(validate({ user: { ...user, id: 1 } })).toBe(false);
    expect(validate({ user, token: 't' })).toBe(false);
  });

  it('holds only valid JSON Schema 2020-12 with resolvable references', () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const status of Object.keys(operation.responses)) {
          if (!operation.responses[status].content) continue;
          for (const type of Object.keys(operation.responses[status].content)) {
            const ref = `openapi.json#/${pointer('paths', path, method, 'responses', status, 'content', type, 'schema')}`;
            expect(() => ajv.compile({ $ref: ref }), `${method} ${path} ${status}`).not.toThrow();
          }
        }
        for (const type of Object.keys(operation.requestBody?.content ?? {})) {
          const ref = `openapi.json#/${pointer('paths', path, method, 'requestBody', 'content', type, 'schema')}`;
          expect(() => ajv.compile({ $ref: ref }), `${method} ${path} request ${type}`).not.toThrow();
        }
      }
    }
  });
});

describe('the route table, the OpenAPI document and the GraphQL operations agree', () => {
  it('documents every route with its method, auth and GraphQL operation', () => {
    const routes = allRoutes(new Date());
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) {
      const operation = doc.paths[templateOf(route.path)]?.[route.method.toLowerCase()];
      const name = `${route.method} ${route.path}`;
      expect(operation, name).toBeDefined();
      expect(operation['x-graphql-operation'], name).toBe(route.operation);
      expect(route.operation || route.handle, `${name} runs an operation or a handler`).toBeTruthy();
      const statuses = Object.keys(operation.responses).map(Number);
      expect(statuses.some((s) => s >= 200 && s < 400), `${name} documents success`).toBe(true);
      if (route.auth === 'session') expect(statuses, `${name} documents 401`).toContain(401);
      expect(operation.security, name).toEqual(route.auth === 'public' ? [] : [{ [route.auth]: [] }]);
    }
  });

  it("every route's GraphQL operation exists and was prepared at start-up", async () => {
    const { RestHandler } = await import('../rest/handler.js');
    const { schema } = await import('../schema/index.js');
    const routes = allRoutes(new Date());
    const handler = new RestHandler(server.services, schema, routes);
    for (const route of routes.filter((r) => r.operation)) {
      expect(handler.operations.has(route.operation!), `${route.method} ${route.path} -> ${route.operation}`).toBe(true);
    }
  });

  it('has every foundation route of the contract', () => {
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)));
    for (const route of [
      'POST /api/platform/auth/register',
      'POST /api/platform/auth/login',
      'POST /api/platform/auth/logout',
      'GET /api/platform/auth/me',
      'POST /api/platform/auth/password',
      'POST /api/platform/orgs',
      'GET /api/platform/orgs/{orgId}/projects',
      'POST /api/platform/orgs/{orgId}/projects',
      'GET /api/health',
      'GET /api/ready',
    ]) {
      expect(documented.has(route), route).toBe(true);
    }
  });
});

describe('real responses match the document', () => {
  it('auth routes', async () => {
    const email = `openapi-${Date.now()}@example.com`;
    const register = (body: unknown) => server.request('POST', '/api/platform/auth/register', { body });
    expectDocumented('POST', '/api/platform/auth/register', await register({ email, password: PASSWORD, name: 'Doc' }));
    expectDocumented('POST', '/api/platform/auth/register', await register({ email, password: PASSWORD, name: 'Doc' }));
    expectDocumented('POST', '/api/platform/auth/register', await register({ email: 'x', password: 'short', name: '' }));
    const login = await server.request('POST', '/api/platform/auth/login', { body: { email, password: PASSWORD } });
    expectDocumented('POST', '/api/platform/auth/login', login);
    expectDocumented('POST', '/api/platform/auth/login', await server.request('POST', '/api/platform/auth/login', { body: { email, password: 'wrong password' } }));
    expectDocumented('POST', '/api/platform/auth/login', await server.request('POST', '/api/platform/auth/login', { body: {} }));
    const token = login.body.token;
    expectDocumented('GET', '/api/platform/auth/me', await server.request('GET', '/api/platform/auth/me', { token }));
    expectDocumented('GET', '/api/platform/auth/me', await server.request('GET', '/api/platform/auth/me'));
    const change = (body: unknown) => server.request('POST', '/api/platform/auth/password', { token, body });
    expectDocumented('POST', '/api/platform/auth/password', await change({ currentPassword: 'wrong password', newPassword: 'whatever long enough' }));
    expectDocumented('POST', '/api/platform/auth/password', await change({ currentPassword: PASSWORD, newPassword: 'x' }));
    expectDocumented('POST', '/api/platform/auth/password', await change({ currentPassword: PASSWORD, newPassword: 'a new long passphrase' }));
    expectDocumented('POST', '/api/platform/auth/logout', await server.request('POST', '/api/platform/auth/logout', { token }));
  });

  it('organization and project routes', async () => {
    const t = await team(server);
    const outsider = await operator(server, 'DocOutsider');
    const orgs = (body: unknown, token?: string) => server.request('POST', '/api/platform/orgs', { token, body });
    expectDocumented('POST', '/api/platform/orgs', await orgs({ name: 'Documented' }, t.owner.token));
    expectDocumented('POST', '/api/platform/orgs', await orgs({ name: '' }, t.owner.token));
    expectDocumented('POST', '/api/platform/orgs', await orgs({ name: 'X' }));
    const path = '/api/platform/orgs/:orgId/projects';
    const at = `/api/platform/orgs/${t.org.id}/projects`;
    expectDocumented('GET', path, await server.request('GET', at, { token: t.viewer.token }));
    expectDocumented('GET', path, await server.request('GET', at, { token: outsider.token }));
    expectDocumented('GET', path, await server.request('GET', at));
    expectDocumented('POST', path, await server.request('POST', at, { token: t.viewer.token, body: { name: 'X' } }));
    expectDocumented('POST', path, await server.request('POST', at, { token: t.admin.token, body: { name: '' } }));
    expectDocumented('POST', path, await server.request('POST', at, { token: t.admin.token, body: { name: 'Over the free limit' } }));
    const starter = await team(server, { planId: 'starter' });
    expectDocumented('POST', path, await server.request('POST', `/api/platform/orgs/${starter.org.id}/projects`, { token: starter.admin.token, body: { name: 'Fits' } }));
  });

  it('probes', async () => {
    expectDocumented('GET', '/api/health', await server.request('GET', '/api/health'));
    expectDocumented('GET', '/api/ready', await server.request('GET', '/api/ready'));
  });
});
