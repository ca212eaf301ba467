// Issue 11 (extensions.md §1): the /graphql holes found by the attacker's review. Each test says how
// it failed on main before the fix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'graphql';
import { prepareOperations } from '../rest/operations.js';
import { schema } from '../schema/index.js';
import { loadConfig } from '../src/config.js';
import { checkPreparedOperation } from '../src/graphql-limits.js';
import { evidencePath } from './helpers/consent.js';
import { PASSWORD, team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { publishVersion } from './helpers/versions.js';
import { TEST_LEDGER_SIGNING_KEY } from './helpers/ledger.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ graphqlCorsOrigins: ['https://console.example'] });
});
afterAll(() => server?.close());

const gql = (query: string, options: { variables?: Record<string, unknown>; token?: string; headers?: Record<string, string>; target?: TestServer } = {}) =>
  (options.target ?? server).request('POST', '/graphql', { token: options.token, headers: options.headers, body: { query, variables: options.variables } });

/** A refusal by the limits: an ordinary GraphQL error with our code, no data, no stack, not a 5xx. */
function expectRefused(res: { status: number; body: any; text: string }, message: RegExp) {
  expect(res.status).toBeLessThan(500);
  expect(res.body.data ?? null).toBeNull();
  expect(res.body.errors[0].message).toMatch(message);
  expect(res.body.errors[0].extensions.code).toBe('query_too_complex');
  expect(res.text).not.toMatch(/stack|at .*\.(js|ts):\d+/i);
}

describe('GraphQL limits', () => {
  it('refuses 600 aliases of receipts(limit: 200) (main ran them all: 600 queries in one request)', async () => {
    const t = await team(server);
    // Written as tightly as the 64 KiB body limit requires; its tokens are over the limit too.
    const flood = `query($p:ID!){${Array.from({ length: 600 }, (_, i) => `r${i}:receipts(projectId:$p,limit:200){receipts{id}}`).join('')}}`;
    expectRefused(await gql(flood, { token: t.owner.token, variables: { p: t.project.id } }), /(Aliases|Token) limit/);
    const aliases = `{ ${Array.from({ length: 31 }, (_, i) => `m${i}: me { user { id } }`).join(' ')} }`;
    expectRefused(await gql(aliases, { token: t.owner.token }), /Aliases limit of 30 exceeded, found 31/);
    const field = `receipts(projectId: "${t.project.id}", limit: 200) { receipts { id choices createdAt } nextCursor }`;
    // Under the alias limit, the cost still counts each page at its limit: 20 pages of 200 rows are refused...
    const wide = `{ ${Array.from({ length: 20 }, (_, i) => `r${i}: ${field}`).join(' ')} }`;
    expectRefused(await gql(wide, { token: t.owner.token }), /cost \d+ exceeds the limit of 5000/);
    // ...also when the limit comes in a variable, while one page of 200 answers.
    const byVariable = `query($n: Int) { ${Array.from({ length: 20 }, (_, i) => `r${i}: receipts(projectId: "${t.project.id}", limit: $n) { receipts { id } }`).join(' ')} }`;
    expectRefused(await gql(byVariable, { token: t.owner.token, variables: { n: 200 } }), /cost/);
    expect((await gql(byVariable, { token: t.owner.token, variables: { n: 5 } })).body.data.r0.receipts).toEqual([]);
    const one = await gql(`{ ${field} }`, { token: t.owner.token });
    expect(one.body).toEqual({ data: { receipts: { receipts: [], nextCursor: null } } });
  });

  it('refuses 50 aliases of changePassword without hashing a password (main ran 100 scrypt hashes)', async () => {
    const t = await team(server);
    const change = (n: number) =>
      `mutation { ${Array.from({ length: n }, (_, i) => `c${i}: changePassword(input: { currentPassword: "${PASSWORD}", newPassword: "another password ${i}" }) { success }`).join(' ')} }`;
    expectRefused(await gql(change(50), { token: t.owner.token }), /Aliases limit/);
    // Even two in one request are one password check too many.
    expectRefused(await gql(change(2), { token: t.owner.token }), /one password check per request/);
    // Nothing ran: the password is unchanged and the session (revoked by a change) still works.
    expect((await gql('{ me { user { id } } }', { token: t.owner.token })).body.data.me.user.id).toBe(t.owner.id);
    const login = await server.request('POST', '/api/platform/auth/login', { body: { email: t.owner.email, password: PASSWORD } });
    expect(login.status).toBe(200);
  });

  it('answers a 3,000-deep query with a GraphQL error (main: 500 with a stack trace from the parser)', async () => {
    const deep = `{ ${'me { '.repeat(3000)}id${' }'.repeat(3000)} }`;
    expectRefused(await gql(deep), /Nesting limit of 64 exceeded/);
    expectRefused(await gql(`{ me(x: ${'['.repeat(3000)}${']'.repeat(3000)}) { id } }`), /Nesting limit/);
    expectRefused(await gql(`{ ${'__typename '.repeat(5001)}}`), /Token limit of 5000 exceeded/);
    // Deep but not nested past the parser's limit: the depth limit refuses it at validation.
    const nested = `{ ${'me { '.repeat(20)}id${' }'.repeat(20)} }`;
    expectRefused(await gql(nested), /depth limit of 8/i);
    // The service keeps serving.
    expect((await gql('{ __typename }')).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('does not batch: an array of operations is refused, none run', async () => {
    const res = await server.request('POST', '/graphql', { body: [{ query: '{ __typename }' }, { query: '{ __typename }' }] });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.text).not.toMatch(/"__typename":"Query"/);
  });

  it('gives no field suggestions in production (main: "Did you mean "me"?" revealed the schema)', async () => {
    const development = await gql('{ mee }');
    expect(development.body.errors[0].message).toMatch(/Did you mean "me"\?/);
    const production = await startTestServer({ ...loadConfig({ NODE_ENV: 'production', BILLING_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_unused', BILLING_WEBHOOK_SECRET: 'test-secret', LEDGER_SIGNING_KEY: TEST_LEDGER_SIGNING_KEY }), port: 0, logLevel: 'silent', dataDir: 'memory://' });
    try {
      const res = await gql('{ mee { user { idd } } }', { target: production });
      expect(res.body.errors[0].message).toBe('Cannot query field "mee" on type "Query".');
      expect(res.text).not.toMatch(/Did you mean/);
    } finally {
      await production.close();
    }
  });

  it('checks every REST operation against the same limits at start-up', () => {
    expect(prepareOperations(schema).size).toBeGreaterThan(40);
    const flood = parse(`query Flood { ${Array.from({ length: 31 }, (_, i) => `a${i}: me { user { id } }`).join(' ')} }`);
    expect(() => checkPreparedOperation(schema, flood, 'Flood')).toThrow(/Flood exceeds the GraphQL limits: Aliases limit of 30/);
  });
});

describe('/graphql rate limits per client address', () => {
  it('after 30 refused operations in a minute, every request gets 429 rate_limited with Retry-After (main had no limit)', async () => {
    const target = await startTestServer();
    try {
      const deep = `{ ${'me { '.repeat(100)}id${' }'.repeat(100)} }`;
      for (let i = 0; i < 30; i++) expect((await gql(deep, { target })).body.errors[0].extensions.code).toBe('query_too_complex');
      const limited = await gql('{ __typename }', { target });
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ errors: [{ message: 'Too many requests', extensions: { code: 'rate_limited' } }] });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      // REST and the SDK are not affected.
      expect((await target.request('GET', '/api/health')).status).toBe(200);
    } finally {
      await target.close();
    }
  });

  it('counts every request against RATE_LIMIT_GRAPHQL_PER_MINUTE', async () => {
    expect(loadConfig({}).rateLimits.graphqlPerMinute).toBe(600);
    const target = await startTestServer({ rateLimits: { graphqlPerMinute: 2 } });
    try {
      expect((await gql('{ __typename }', { target })).status).toBe(200);
      expect((await gql('{ __typename }', { target })).status).toBe(200);
      expect((await gql('{ __typename }', { target })).status).toBe(429);
    } finally {
      await target.close();
    }
  });
});

describe('SDK fields on /graphql', () => {
  it('refuse recordConsent from a foreign origin like POST /api/sdk/v1/consent, storing nothing (main stored a receipt)', async () => {
    const t = await team(server);
    const version = await publishVersion(server, t.owner, t.project.id);
    const key = await createKey(server, t.owner.token, t.project.id);
    const input = { versionId: version.id, consentHash: version.consentHash, choices: { analytics: true }, installationId: 'inst_0123456789abcdef' };
    const evil = { origin: 'https://evil.example' };

    const rest = await server.request('POST', '/api/sdk/v1/consent', { token: key.secret, headers: evil, body: input });
    expect(rest.status).toBe(403);
    const mutation = 'mutation($input: JSON!) { recordConsent(input: $input) { ok id } }';
    const refused = await gql(mutation, { token: key.secret, headers: evil, variables: { input } });
    expect(refused.status).toBeLessThan(500);
    expect(refused.body.data).toBeNull();
    expect(refused.body.errors[0].extensions.code).toBe(rest.body.code);
    const config = await gql('{ sdkConfig { projectId } }', { token: key.secret, headers: evil });
    expect(config.body.errors[0].extensions.code).toBe('origin_not_allowed');
    const stored = await server.services.db.query('SELECT id FROM receipts WHERE project_id = $1', [t.project.id]);
    expect(stored).toHaveLength(0);

    // An allowed origin (and a request without Origin, not a browser) still records.
    await server.request('PUT', `/api/platform/projects/${t.project.id}/allowed-origins`, { token: t.owner.token, body: { origins: ['https://shop.example'] } });
    const allowed = await gql(mutation, { token: key.secret, headers: { origin: 'https://shop.example' }, variables: { input } });
    expect(allowed.body.data.recordConsent.ok).toBe(true);
  });
});

describe('/graphql CORS', () => {
  const preflight = (origin: string) =>
    server.request('OPTIONS', '/graphql', {
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });

  it('answers a foreign origin without allow-origin or credentials (main reflected it with credentials)', async () => {
    for (const res of [await preflight('https://evil.example'), await gql('{ __typename }', { headers: { origin: 'https://evil.example' } })]) {
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it('allows an origin listed in GRAPHQL_CORS_ORIGINS', async () => {
    const res = await preflight('https://console.example');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://console.example');
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    const post = await gql('{ __typename }', { headers: { origin: 'https://console.example' } });
    expect(post.headers.get('access-control-allow-origin')).toBe('https://console.example');
  });

  it('reads GRAPHQL_CORS_ORIGINS as a comma-separated list of origins', () => {
    expect(loadConfig({}).graphqlCorsOrigins).toEqual([]);
    expect(loadConfig({ GRAPHQL_CORS_ORIGINS: 'https://a.example, http://localhost:5173/' }).graphqlCorsOrigins).toEqual([
      'https://a.example',
      'http://localhost:5173',
    ]);
    expect(() => loadConfig({ GRAPHQL_CORS_ORIGINS: 'https://a.example/path' })).toThrow(/GRAPHQL_CORS_ORIGINS/);
    expect(() => loadConfig({ GRAPHQL_CORS_ORIGINS: '*' })).toThrow(/GRAPHQL_CORS_ORIGINS/);
  });
});

describe('HTML pages cannot be framed (main sent no frame-ancestors and no X-Frame-Options)', () => {
  const expectUnframeable = (res: { headers: Headers }, what: string) => {
    expect(res.headers.get('x-frame-options'), what).toBe('DENY');
    expect(res.headers.get('content-security-policy'), what).toMatch(/frame-ancestors 'none'/);
    expect(res.headers.get('content-security-policy'), what).toMatch(/default-src 'none'/);
  };

  it('the hosted preferences page, also its error pages', async () => {
    const t = await team(server);
    const key = await createKey(server, t.owner.token, t.project.id);
    expectUnframeable(await server.request('GET', `/preferences?key=${key.secret}`), 'preferences');
    expectUnframeable(await server.request('GET', '/preferences'), 'preferences without a key');
  });

  it('the mock checkout page', async () => {
    const t = await team(server);
    const checkout = await server.request('POST', `/api/platform/orgs/${t.org.id}/billing/checkout`, {
      token: t.owner.token,
      body: { planId: 'growth', interval: 'month' },
    });
    expect(checkout.status).toBe(200);
    expectUnframeable(await server.request('GET', new URL(checkout.body.checkoutUrl).pathname), 'checkout');
  });

  it('the evidence html, inline and as a download', async () => {
    const t = await team(server);
    const version = await publishVersion(server, t.owner, t.project.id);
    for (const query of ['?format=html', '?format=html&download=1']) {
      const res = await server.request('GET', evidencePath(t.project.id, `/${version.id}${query}`), { token: t.owner.token });
      expect(res.status).toBe(200);
      expectUnframeable(res, query);
    }
  });
});

describe('order of checks for unreadable bodies', () => {
  it('a non-member sending a malformed body gets 404, a member without the role 403, then 400 (main: 400 for everyone)', async () => {
    const t = await team(server);
    const path = `/api/platform/projects/${t.project.id}/allowed-origins`;
    const unreadable = [{ raw: '{"origins":' }, { raw: '[]' }, { raw: '"text"' }];
    for (const body of unreadable) {
      const options = (token: string) => ({ token, raw: body.raw, headers: { 'content-type': 'application/json' } });
      const outsider = await server.request('PUT', path, options(t.outsider.token));
      expect(outsider.status, body.raw).toBe(404);
      expect(outsider.body.code).toBe('not_found');
      const viewer = await server.request('PUT', path, options(t.viewer.token));
      expect(viewer.status, body.raw).toBe(403);
      expect(viewer.body.code).toBe('forbidden');
      const admin = await server.request('PUT', path, options(t.admin.token));
      expect(admin.status, body.raw).toBe(400);
      expect(admin.body.code).toBe('invalid_json');
    }
    // Organization routes too, and a body that is not JSON at all.
    const create = (token: string) =>
      server.request('POST', `/api/platform/orgs/${t.org.id}/projects`, { token, raw: 'name=X', headers: { 'content-type': 'text/plain' } });
    expect((await create(t.outsider.token)).status).toBe(404);
    expect((await create(t.viewer.token)).status).toBe(403);
    expect((await create(t.admin.token)).body.code).toBe('invalid_json');
  });
});
