// Issue 27, item 1 (extensions.md section 9): text PostgreSQL cannot hold (U+0000, unpaired surrogates) is
// refused in the route's shape before it reaches the database. On main every case below answered 500 with an
// error-level log line (and the database's message in development bodies).
import { GraphQLError } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromGraphQLError } from '../rest/errors.js';
import { isUnstorableTextError } from '../src/storable-text.js';
import { PASSWORD, operator, organization, team } from './helpers/fixtures.js';
import { sdkTeam } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const NUL = '\u0000';
const LONE = '\ud800';
/** Both kinds, each in a string the routes would otherwise accept. */
const HOSTILE: [string, string][] = [
  ['U+0000', NUL],
  ['an unpaired surrogate', LONE],
];

let server: TestServer;
const errorLines: unknown[] = [];
beforeAll(async () => {
  server = await startTestServer(
    { logLevel: 'warn' },
    {
      logDestination: {
        write: (line: string) => {
          const parsed = JSON.parse(line);
          if (parsed.level >= 50) errorLines.push(parsed);
        },
      },
    },
  );
});
afterAll(() => server?.close());

/** 400 validation_failed with details pointing at `path`, no database text, nothing logged as an error. */
function expectRefused(res: { status: number; body: any; text: string }, path: (string | number)[]) {
  expect(res.status, res.text).toBe(400);
  expect(res.body.code).toBe('validation_failed');
  expect(res.body.details).toContainEqual({ path, message: expect.stringMatching(/U\+0000|surrogate/) });
  expectNoDatabaseText(res.text);
}

function expectNoDatabaseText(text: string) {
  expect(text).not.toMatch(/invalid byte sequence|unsupported Unicode|prisma|SELECT|INSERT|UPDATE/i);
}

describe.each(HOSTILE)('REST bodies with %s', (_, bad) => {
  it('login and register answer 400 with details and make no session or user', async () => {
    const login = await server.request('POST', '/api/platform/auth/login', { body: { email: `a${bad}@x.com`, password: 'x' } });
    expectRefused(login, ['email']);
    expect(login.headers.get('set-cookie')).toBeNull();
    const email = `n-${bad.codePointAt(0)}@x.com`;
    const register = await server.request('POST', '/api/platform/auth/register', { body: { email, password: PASSWORD, name: `Bad${bad}` } });
    expectRefused(register, ['name']);
    // Nothing was stored: the e-mail is still free.
    const again = await server.request('POST', '/api/platform/auth/register', { body: { email, password: PASSWORD, name: 'Good' } });
    expect(again.status).toBe(201);
    await server.request('POST', '/api/platform/auth/register', { body: { email: `other${bad}@x.com`, password: PASSWORD, name: 'X' } }).then((res) =>
      expectRefused(res, ['email']),
    );
  });

  it('organization name, notice title and translations answer 400; a member still sees them unchanged', async () => {
    const t = await team(server);
    expectRefused(await server.request('POST', '/api/platform/orgs', { token: t.owner.token, body: { name: `Org${bad}` } }), ['name']);
    const notice = `/api/platform/projects/${t.project.id}/consent/notice`;
    expectRefused(await server.request('PUT', notice, { token: t.owner.token, body: { title: `Title${bad}` } }), ['title']);
    const experience = `/api/platform/projects/${t.project.id}/consent/experience`;
    expectRefused(
      await server.request('PUT', experience, { token: t.owner.token, body: { translations: { de: { notice: { title: `Titel${bad}` } } } } }),
      ['translations', 'de', 'notice', 'title'],
    );
    // A key is text too (jsonb keeps keys as it keeps values).
    expectRefused(await server.request('PUT', experience, { token: t.owner.token, body: { cookies: { [`a${bad}`]: ['_ga'] } } }), ['cookies', `a${bad}`]);
    const read = await server.request('GET', experience, { token: t.owner.token });
    expect(read.body.experience.translations).toEqual({});
    // Membership comes first: a non-member learns nothing from the body (404, as for any other body).
    const outsider = await server.request('PUT', notice, { token: t.outsider.token, body: { title: `Title${bad}` } });
    expect(outsider.status).toBe(404);
  });

  it('a receipt with such an sdkVersion answers 400 invalid_body {error, code} and a good receipt beside it is stored', async () => {
    const t = await sdkTeam(server);
    const [bad1, good] = await Promise.all([
      server.request('POST', '/api/sdk/v1/consent', { token: t.key.secret, body: { ...t.body('installation-1'), sdkVersion: `1.0${bad}` } }),
      t.post('installation-2'),
    ]);
    expect(bad1.status, bad1.text).toBe(400);
    expect(bad1.body).toEqual({ error: expect.any(String), code: 'invalid_body' });
    expect(good.status).toBe(201);
    // A bad installation id in a JSON key position (choices) too.
    const choices = await server.request('POST', '/api/sdk/v1/consent', { token: t.key.secret, body: { ...t.body('installation-3'), choices: { [`a${bad}`]: true } } });
    expect(choices.status).toBe(400);
    expect(choices.body).toEqual({ error: expect.any(String), code: 'invalid_body' });
    // The key is checked first: a wrong key is still 401.
    const noKey = await server.request('POST', '/api/sdk/v1/consent', { token: 'pk_live_nope', body: { ...t.body('installation-4'), sdkVersion: bad } });
    expect(noKey.status).toBe(401);
  });
});

describe('REST path and query parameters', () => {
  it('a path parameter with such text is 404 not_found in the route shape', async () => {
    const owner = await operator(server);
    for (const bad of ['%00', '%ED%A0%80', 'a%00b']) {
      const res = await server.request('GET', `/api/platform/orgs/${bad}/projects`, { token: owner.token });
      expect(res.status, res.text).toBe(404);
      expect(res.body).toEqual({ error: expect.any(String), code: 'not_found' });
      const post = await server.request('POST', `/api/platform/orgs/${bad}/projects`, { token: owner.token, body: { name: 'P' } });
      expect(post.status, post.text).toBe(404);
      expectNoDatabaseText(post.text);
    }
    // Unauthenticated is still 401 first.
    expect((await server.request('GET', '/api/platform/orgs/%00/projects')).status).toBe(401);
  });

  it('a query parameter with such text is 400 (platform: validation_failed with details; SDK: invalid_body)', async () => {
    const t = await sdkTeam(server);
    const receipts = await server.request('GET', `/api/platform/projects/${t.project.id}/receipts?installationId=%00`, { token: t.owner.token });
    expectRefused(receipts, ['installationId']);
    const cursor = await server.request('GET', `/api/platform/projects/${t.project.id}/receipts?cursor=a%00`, { token: t.owner.token });
    expectRefused(cursor, ['cursor']);
    // A non-member gets 404 before the 400.
    expect((await server.request('GET', `/api/platform/projects/${t.project.id}/receipts?installationId=%00`, { token: t.outsider.token })).status).toBe(404);
    for (const path of ['/api/sdk/v2/config?locale=%00', '/api/sdk/v2/cookie-declaration?locale=%00']) {
      const res = await server.request('GET', path, { token: t.key.secret, headers: { 'X-Consent-Installation': 'installation-1' } });
      expect(res.status, `${path}: ${res.text}`).toBe(400);
      expect(res.body).toEqual({ error: expect.any(String), code: 'invalid_body' });
    }
  });

  it('a query parameter the route does not take is ignored, whatever its text (no 400 the route does not document)', async () => {
    const t = await sdkTeam(server);
    // GET /evidence/publish takes no query; `download` belongs to /evidence/publish/:versionId (routes-property found it).
    const list = await server.request('GET', `/api/platform/projects/${t.project.id}/evidence/publish?download=%00`, { token: t.owner.token });
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual({ evidence: expect.any(Array) });
    // The SDK's decision route takes no query (the installation comes in a header).
    const decision = await server.request('GET', '/api/sdk/v2/decision?installationId=%00', { token: t.key.secret, headers: { 'X-Consent-Installation': 'installation-1' } });
    expect(decision.status, decision.text).toBe(200);
    // A parameter the route takes is still refused.
    expectRefused(await server.request('GET', `/api/platform/projects/${t.project.id}/receipts?installationId=%00&unknown=%00`, { token: t.owner.token }), ['installationId']);
  });

  it('a key with such text is an unknown key where the contract says what an unknown key gets (v1 config, /preferences)', async () => {
    const t = await sdkTeam(server);
    // The contract's v1 config has no 400: an unknown key is 401 invalid_key, and `key` beside a Bearer key is ignored.
    const alone = await server.request('GET', '/api/sdk/v1/config?key=pk_live_%00');
    expect(alone.status, alone.text).toBe(401);
    expect(alone.body).toEqual({ error: expect.any(String), code: 'invalid_key' });
    const beside = await server.request('GET', '/api/sdk/v1/config?key=%00', { token: t.key.secret });
    expect(beside.status, beside.text).toBe(200);
    // decisions.md: an unknown key gets a 4xx HTML page.
    const preferences = await server.request('GET', '/preferences?key=pk_live_%00');
    expect(preferences.status).toBe(401);
    expect(preferences.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('a mock checkout id with such text gets the page’s own HTML 404', async () => {
    for (const method of ['GET', 'POST']) {
      const res = await server.request(method, '/billing/mock-checkout/a%00b');
      expect(res.status, res.text).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    }
  });
});

describe('/graphql arguments', () => {
  const gql = (query: string, token: string, variables?: Record<string, unknown>) => server.request('POST', '/graphql', { token, body: { query, variables } });

  function expectGraphqlRefused(res: { status: number; body: any; text: string }) {
    expect(res.status, res.text).toBeLessThan(500);
    expect(res.body.data ?? null).toBeNull();
    expect(res.body.errors[0].extensions.code, res.text).toBe('validation_failed');
    expect(res.text).not.toMatch(/stack|at .*\.(js|ts):\d+/i);
    expectNoDatabaseText(res.text);
  }

  it('refuses an ID or String argument with U+0000 in a variable or a literal', async () => {
    const owner = await operator(server);
    const org = await organization(server, owner);
    expectGraphqlRefused(await gql('query($id: ID!) { organization(id: $id) { id } }', owner.token, { id: NUL }));
    expectGraphqlRefused(await gql('query($id: ID!) { organization(id: $id) { id } }', owner.token, { id: LONE }));
    expectGraphqlRefused(await gql('{ organization(id: "\\u0000") { id } }', owner.token));
    expectGraphqlRefused(await gql(`{ project(id: "a\\u0000b") { id } }`, owner.token));
    // Inside an input object and a JSON value.
    expectGraphqlRefused(await gql('mutation($i: CreateOrganizationInput!) { createOrganization(input: $i) { organization { id } } }', owner.token, { i: { name: `x${NUL}` } }));
    expectGraphqlRefused(await gql(`mutation { createOrganization(input: { name: "x\\u0000" }) { organization { id } } }`, owner.token));
    // Good text still works.
    const ok = await gql('query($id: ID!) { organization(id: $id) { id } }', owner.token, { id: org.id });
    expect(ok.body.data.organization.id).toBe(org.id);
  });
});

describe('the safety net behind the checks', () => {
  it("turns the database's own refusal of such text into 400 validation_failed without its SQL", async () => {
    const refused = await server.services.db.prisma.user.findUnique({ where: { email: `a${NUL}` } }).catch((error: unknown) => error);
    expect(isUnstorableTextError(refused)).toBe(true);
    const response = fromGraphQLError(new GraphQLError('wrapped', { originalError: refused as Error }), { exposeInternal: true });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'validation_failed' });
    expectNoDatabaseText(JSON.stringify(response.body));
    expect(isUnstorableTextError(new Error('Code: `23505`'))).toBe(false);
  });

  it('a refused body on login with a bad ?session= answers 400, not 500 (the route refused its query while refusing the body)', async () => {
    const res = await server.request('POST', '/api/platform/auth/login?session=nope', { raw: '{not json', headers: { 'Content-Type': 'application/json' } });
    expect(res.status, res.text).toBe(400);
  });
});

describe('the log', () => {
  it('has no error-level line from any of the refusals above', () => {
    expect(errorLines).toEqual([]);
  });
});
