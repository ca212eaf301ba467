import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../rest/openapi.js';
import { allRoutes } from '../rest/routes/index.js';
import { checkAnswersOf, conformanceProblems, forgetServer } from './helpers/openapi-conformance.js';
import { PASSWORD } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { firstSteps } from './openapi-client/client.js';
import { printedClientTypes, printedOpenApi } from './openapi-client/generate.js';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('the committed OpenAPI document and its generated client', () => {
  it('rest/openapi.json is the document the server serves (npm run openapi:print after changing a route)', async () => {
    const printed = printedOpenApi();
    expect(read('../rest/openapi.json'), 'rest/openapi.json is stale: npm run openapi:print').toBe(printed);
    const served = await server.request('GET', '/api/openapi.json');
    expect(served.body).toEqual(JSON.parse(printed));
  });

  it('test/openapi-client/schema.d.ts is what openapi-typescript generates from it', async () => {
    expect(read('./openapi-client/schema.d.ts'), 'schema.d.ts is stale: npm run openapi:print').toBe(await printedClientTypes(read('../rest/openapi.json')));
  });

  it("passes Redocly's recommended ruleset without an error (offline)", async () => {
    const bin = new URL('../node_modules/.bin/redocly', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(bin, ['lint', 'rest/openapi.json', '--format=json'], {
      cwd: new URL('..', import.meta.url).pathname,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { totals: { errors: number }; problems: { ruleId: string; severity: string; message: string }[] };
    expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  it('gives every operation a unique operationId (the GraphQL operation where there is one), tags and a summary', () => {
    const doc = JSON.parse(read('../rest/openapi.json'));
    const ids: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        expect(operation.operationId, `${method} ${path}`).toMatch(/^[A-Za-z][A-Za-z0-9]*$/);
        if (operation['x-graphql-operation']) expect(operation.operationId).toBe(operation['x-graphql-operation']);
        expect(operation.tags, `${method} ${path}`).toHaveLength(1);
        expect(operation.summary, `${method} ${path}`).toBeTruthy();
        ids.push(operation.operationId);
      }
    }
    expect(ids.filter((id, i) => ids.indexOf(id) !== i), 'duplicate operationIds').toEqual([]);
    expect(doc.tags.map((t: { name: string }) => t.name).sort()).toEqual([...new Set(Object.values<any>(doc.paths).flatMap((ops) => Object.values<any>(ops).flatMap((o) => o.tags)))].sort());
  });

  it('names PUBLIC_BASE_URL as the server when it is set, and its own origin (relative) otherwise', () => {
    const routes = allRoutes(new Date());
    expect(buildOpenApi(routes, { version: '1', publicBaseUrl: 'https://consent.example' }).servers).toEqual([
      { url: 'https://consent.example', description: 'PUBLIC_BASE_URL' },
    ]);
    expect(buildOpenApi(routes, { version: '1' }).servers[0]!.url).toBe('/');
  });

  it('a client generated from it works against the service, sending only the fields it wants (defaults fill the rest)', async () => {
    const { user, experience, operationIdsAreTyped } = await firstSteps(server.url, `typed-${Date.now()}@example.com`, PASSWORD);
    expect(user.name).toBe('Typed');
    expect(operationIdsAreTyped).toBe('UpdateConsentExperience');
    expect(experience).toMatchObject({ reconsentAfterDays: 30, theme: { colorScheme: 'dark', borderRadius: 8 }, defaultLocale: 'en' });
  });
});

describe('every answer a test receives is checked against the document (test/helpers/openapi-conformance.ts)', () => {
  const at = (path: string) => `${server.url}${path}`;
  const json = (status: number, body: unknown, type = 'application/json; charset=utf-8') =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': type } });

  it('is installed: fetch itself refuses an undocumented answer of a test server, naming the route, status and problem', async () => {
    // A stand-in server that answers 418 to everything, registered as a test server would be.
    const teapot = createServer((_req, res) => res.writeHead(418, { 'content-type': 'application/json' }).end('{}'));
    await new Promise<void>((done) => teapot.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(teapot.address() as AddressInfo).port}`;
    checkAnswersOf(url);
    try {
      await expect(fetch(`${url}/api/platform/orgs/o1/projects`)).rejects.toThrow(
        /OpenAPI conformance: GET \/api\/platform\/orgs\/o1\/projects \(documented path \/api\/platform\/orgs\/\{orgId\}\/projects\) answered 418[^]*status 418 is not documented/,
      );
    } finally {
      forgetServer(url);
      teapot.close();
    }
    expect((await fetch(at('/api/health'))).status).toBe(200);
  });

  it('finds a body that does not match, an undocumented media type, an unknown path and a request the document would refuse', async () => {
    const me = { url: at('/api/platform/auth/me'), method: 'GET' };
    expect(await conformanceProblems(me, undefined, json(200, { user: { id: 1 } }))).toEqual([expect.stringContaining('the body does not match the 200 schema')]);
    expect(await conformanceProblems(me, undefined, new Response('<p>', { status: 200, headers: { 'content-type': 'text/html' } }))).toEqual([
      expect.stringContaining('media type text/html is not documented for 200'),
    ]);
    expect(await conformanceProblems({ url: at('/api/nothing-here'), method: 'GET' }, undefined, json(404, { error: 'Not found', code: 'not_found' }))).toEqual([]);
    expect(await conformanceProblems({ url: at('/api/nothing-here'), method: 'GET' }, undefined, json(200, {}))).toEqual([
      expect.stringContaining('no path of the document matches'),
    ]);
    const user = { id: 'u', email: 'a@example.com', name: 'A', createdAt: '2026-11-22T10:00:00.000Z' };
    const register = { url: at('/api/platform/auth/register'), method: 'POST', headers: { 'content-type': 'application/json' } };
    expect(await conformanceProblems(register, JSON.stringify({ email: 'a@example.com', password: PASSWORD, name: 'A' }), json(201, { user }))).toEqual([]);
    expect(await conformanceProblems(register, JSON.stringify({ email: 'a@example.com', name: 'A' }), json(201, { user }))).toEqual([
      expect.stringContaining('the request body does not match its schema'),
    ]);
  });

  it("matches the console's {path} over many segments, and checks non-JSON answers by status and media type", async () => {
    const deep = { url: at('/console/settings/members/new'), method: 'GET' };
    expect(await conformanceProblems(deep, undefined, new Response('<!doctype html>', { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' } }))).toEqual([]);
    expect(await conformanceProblems(deep, undefined, new Response('x', { status: 200, headers: { 'content-type': 'application/pdf' } }))).toEqual([
      expect.stringContaining('media type application/pdf is not documented'),
    ]);
  });
});
