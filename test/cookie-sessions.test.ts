import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, operator, type Operator } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';

// Console cookie sessions (extensions.md section 5): the cookie is a second way to present the same
// session token, and it counts only on requests a page on another site cannot make. Every
// cross-site case below is a 401 (or refused) with the cookie attached; without the origin check
// in src/auth/console-session.ts they would all answer 200 as the victim.

const LOGIN = '/api/platform/auth/login';
const LOGOUT = '/api/platform/auth/logout';
const ME = '/api/platform/auth/me';
const ORGS = '/api/platform/orgs';
const SESSION_LIFETIME_SECONDS = 30 * 24 * 60 * 60;
const EVIL = 'https://evil.example';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

/** The headers the console sends on every request. */
const consoleHeaders = (cookie: string, origin = server.url) => ({ cookie, 'x-consent-console': '1', origin });

/** Logs in with `?session=cookie`; returns the answer and the `name=value` pair for a Cookie header. */
async function cookieLogin(target: TestServer, who: Operator) {
  const res = await target.request('POST', `${LOGIN}?session=cookie`, { body: { email: who.email, password: PASSWORD } });
  expect(res.status).toBe(200);
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { res, setCookie, cookie: setCookie.split(';')[0]! };
}

const me = (headers: Record<string, string>) => server.request('GET', ME, { headers });
const graphqlMe = (headers: Record<string, string>) =>
  server.request('POST', '/graphql', { headers, body: { query: '{ me { user { id email } } }' } });
const orgCount = async (userId: string) =>
  Number(
    (await server.services.db.query<{ n: string }>('SELECT count(*) AS n FROM memberships WHERE user_id = $1', [userId]))[0]!.n,
  );

describe('POST /api/platform/auth/login?session=cookie', () => {
  it('answers { user } without the token and sets it in an HttpOnly, SameSite=Strict, Path=/ cookie', async () => {
    const alice = await operator(server, 'Alice');
    const plain = await server.request('POST', LOGIN, { body: { email: alice.email, password: PASSWORD } });
    const { res, setCookie, cookie } = await cookieLogin(server, alice);

    // The bearer login keeps the contract's answer exactly.
    expect(plain.headers.get('set-cookie')).toBeNull();
    expect(Object.keys(plain.body)).toEqual(['token', 'user']);
    // The cookie login: no script ever holds the token (extensions.md section 9), the user is the same.
    expect(Object.keys(res.body)).toEqual(['user']);
    expect(res.text).not.toContain(cookie.split('=')[1]);
    expect(Object.keys(res.body.user)).toEqual(Object.keys(plain.body.user));
    expect(res.body.user).toEqual(plain.body.user);
    expect(res.headers.get('content-type')).toBe(plain.headers.get('content-type'));
    // The cookie carries a session token of its own, for as long as the session lives; not Secure outside production.
    expect(setCookie).toMatch(new RegExp(`^consent_session=[A-Za-z0-9_-]{43}; Max-Age=${SESSION_LIFETIME_SECONDS}; Path=/; HttpOnly; SameSite=Strict$`));
    expect((await me(consoleHeaders(cookie))).body.user.email).toBe(alice.email);
  });

  it('refuses any other `session` value with 400 validation_failed, before a session is made', async () => {
    const bob = await operator(server, 'Bob');
    const count = () => server.services.db.query<{ n: string }>('SELECT count(*) AS n FROM sessions WHERE user_id = $1', [bob.id]);
    const before = (await count())[0]!.n;
    const res = await server.request('POST', `${LOGIN}?session=bearer`, { body: { email: bob.email, password: PASSWORD } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_failed' });
    expect(res.headers.get('set-cookie')).toBeNull();
    expect((await count())[0]!.n).toBe(before);
  });
});

describe('a console request (cookie + X-Consent-Console: 1 + same Origin)', () => {
  it('is authenticated on REST and /graphql alike', async () => {
    const carol = await operator(server, 'Carol');
    const { cookie } = await cookieLogin(server, carol);

    const rest = await me(consoleHeaders(cookie));
    expect(rest.status).toBe(200);
    expect(rest.body.user.email).toBe(carol.email);

    const created = await server.request('POST', ORGS, { headers: consoleHeaders(cookie), body: { name: 'Console Org' } });
    expect(created.status).toBe(201);

    const graphql = await graphqlMe(consoleHeaders(cookie));
    expect(graphql.status).toBe(200);
    expect(graphql.body.data.me.user).toEqual({ id: carol.id, email: carol.email });
  });

  it('without Origin, as browsers send a same-origin GET, counts when Sec-Fetch-Site is same-origin', async () => {
    const olivia = await operator(server, 'Olivia');
    const { cookie } = await cookieLogin(server, olivia);
    const res = await me({ cookie, 'x-consent-console': '1', 'sec-fetch-site': 'same-origin' });
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(olivia.email);
  });

  it('lets a bearer token win over the cookie, even a bad one', async () => {
    const dave = await operator(server, 'Dave');
    const erin = await operator(server, 'Erin');
    const { cookie } = await cookieLogin(server, erin);
    const withBearer = await me({ ...consoleHeaders(cookie), authorization: `Bearer ${dave.token}` });
    expect(withBearer.body.user.email).toBe(dave.email);
    const badBearer = await me({ ...consoleHeaders(cookie), authorization: 'Bearer not-a-session' });
    expect(badBearer.status).toBe(401);
  });
});

describe('cross-site requests carrying the cookie authenticate nothing', () => {
  let victim: Operator;
  let cookie: string;
  beforeAll(async () => {
    victim = await operator(server, 'Victim');
    ({ cookie } = await cookieLogin(server, victim));
  });

  const cases: [string, () => Record<string, string>][] = [
    ['the cookie alone', () => ({ cookie })],
    ['the cookie with the header but another Origin', () => consoleHeaders(cookie, EVIL)],
    ['the cookie with the header but no Origin', () => ({ cookie, 'x-consent-console': '1' })],
    ['the cookie with the header but Origin null', () => consoleHeaders(cookie, 'null')],
    ['the cookie and same Origin, but the header is not 1', () => ({ ...consoleHeaders(cookie), 'x-consent-console': 'true' })],
    ['the cookie with the header and a look-alike Origin', () => consoleHeaders(cookie, `${server.url}.evil.example`)],
    ['the cookie with the header, no Origin, Sec-Fetch-Site cross-site', () => ({ cookie, 'x-consent-console': '1', 'sec-fetch-site': 'cross-site' })],
    ['the cookie with the header, no Origin, Sec-Fetch-Site same-site', () => ({ cookie, 'x-consent-console': '1', 'sec-fetch-site': 'same-site' })],
    ['the cookie, same-origin Sec-Fetch-Site but another Origin', () => ({ ...consoleHeaders(cookie, EVIL), 'sec-fetch-site': 'same-origin' })],
  ];

  for (const [name, headers] of cases) {
    it(`${name}: 401 on REST, unauthorized on /graphql`, async () => {
      const rest = await me(headers());
      expect(rest.status).toBe(401);
      expect(rest.body).toEqual({ error: 'Authentication required', code: 'unauthorized' });
      const graphql = await graphqlMe(headers());
      expect(graphql.body.data ?? null).toBeNull();
      expect(graphql.body.errors[0].extensions.code).toBe('unauthorized');
    });
  }

  it('a simple form-style POST (text/plain, x-www-form-urlencoded) changes nothing on REST or /graphql', async () => {
    const before = await orgCount(victim.id);
    const mutation = 'mutation { createOrganization(input: { name: "Forged" }) { organization { id } } }';
    // What a cross-site <form> can send: the cookie, its Origin, a simple content type, no custom header.
    const forms = [
      { type: 'text/plain', rest: JSON.stringify({ name: 'Forged' }), graphql: JSON.stringify({ query: mutation }) },
      { type: 'application/x-www-form-urlencoded', rest: 'name=Forged', graphql: new URLSearchParams({ query: mutation }).toString() },
    ];
    for (const form of forms) {
      const headers = { cookie, origin: EVIL, 'content-type': form.type };
      const rest = await server.request('POST', ORGS, { headers, raw: form.rest });
      expect(rest.status).toBe(401);
      const graphql = await server.request('POST', '/graphql', { headers, raw: form.graphql });
      expect(graphql.text).not.toContain('"organization"');
      // text/plain is refused outright (415); a urlencoded form is parsed by yoga, and runs without a viewer.
      if (form.type === 'text/plain') expect(graphql.status).toBe(415);
      else expect(JSON.parse(graphql.text).errors[0].extensions.code).toBe('unauthorized');
    }
    expect(await orgCount(victim.id)).toBe(before);
  });

  it('/graphql never lets another origin read answers with credentials (CORS)', async () => {
    const preflight = await fetch(`${server.url}/graphql`, {
      method: 'OPTIONS',
      headers: {
        origin: EVIL,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-consent-console',
      },
    });
    expect(preflight.headers.get('access-control-allow-credentials')).not.toBe('true');
    const post = await graphqlMe(consoleHeaders(cookie, EVIL));
    expect(post.headers.get('access-control-allow-credentials')).not.toBe('true');
  });
});

describe('POST /api/platform/auth/logout with a cookie session', () => {
  it('revokes the session and clears the cookie', async () => {
    const frank = await operator(server, 'Frank');
    const { cookie } = await cookieLogin(server, frank);
    const out = await server.request('POST', LOGOUT, { headers: consoleHeaders(cookie) });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ success: true });
    expect(out.headers.get('set-cookie')).toBe('consent_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict');
    expect((await me(consoleHeaders(cookie))).status).toBe(401);
    expect((await me({ authorization: `Bearer ${cookie.split('=')[1]}` })).status).toBe(401);
    // The bearer login of the same user is another session and lives on.
    expect((await me({ authorization: `Bearer ${frank.token}` })).status).toBe(200);
  });

  it('a plain logout answers as before, without Set-Cookie', async () => {
    const grace = await operator(server, 'Grace');
    const out = await server.request('POST', LOGOUT, { token: grace.token });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toBeNull();
  });

  it('a password change revokes the cookie session too', async () => {
    const heidi = await operator(server, 'Heidi');
    const { cookie } = await cookieLogin(server, heidi);
    const changed = await server.request('POST', '/api/platform/auth/password', {
      headers: consoleHeaders(cookie),
      body: { currentPassword: PASSWORD, newPassword: 'another long password' },
    });
    expect(changed.status).toBe(200);
    expect((await me(consoleHeaders(cookie))).status).toBe(401);
  });
});

describe('in production', () => {
  let production: TestServer;
  const PUBLIC = 'https://consent.example.com';
  beforeAll(async () => {
    production = await startTestServer({ nodeEnv: 'production', production: true, publicBaseUrl: PUBLIC });
  });
  afterAll(() => production?.close());

  it('the cookie is __Host-consent_session: Secure, Path=/, no Domain, and the answer holds no token', async () => {
    const judy = await operator(production, 'Judy');
    const { res, setCookie, cookie } = await cookieLogin(production, judy);
    const [pair, ...attributes] = setCookie.split('; ');
    expect(pair).toMatch(/^__Host-consent_session=[A-Za-z0-9_-]{43}$/);
    expect(attributes).toEqual([`Max-Age=${SESSION_LIFETIME_SECONDS}`, 'Path=/', 'HttpOnly', 'Secure', 'SameSite=Strict']);
    expect(setCookie.toLowerCase()).not.toContain('domain=');
    expect(res.body).toEqual({ user: expect.objectContaining({ email: judy.email }) });
    const asConsole = (cookieHeader: string) =>
      production.request('GET', ME, { headers: { cookie: cookieHeader, 'x-consent-console': '1', origin: PUBLIC } });
    expect((await asConsole(cookie)).status).toBe(200);

    // A plain `consent_session` cookie (what a sibling subdomain could plant for the parent domain) counts for
    // nothing in production, even with a valid session token in it.
    const token = cookie.split('=')[1]!;
    expect(await asConsole(`consent_session=${token}`)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect((await asConsole(`consent_session=${judy.token}`)).status).toBe(401);
    // Logout clears the __Host- cookie with the same attributes.
    const out = await production.request('POST', LOGOUT, { headers: { cookie, 'x-consent-console': '1', origin: PUBLIC } });
    expect(out.headers.get('set-cookie')).toBe('__Host-consent_session=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Strict');
  });

  it('outside production the __Host- name is not read (each mode reads only its own name)', async () => {
    const kim = await operator(server, 'Kim');
    expect((await me(consoleHeaders(`__Host-consent_session=${kim.token}`))).status).toBe(401);
    expect((await me(consoleHeaders(`consent_session=${kim.token}`))).status).toBe(200);
  });

  it('the cookie is accepted from PUBLIC_BASE_URL’s origin (https only)', async () => {
    const ivan = await operator(production, 'Ivan');
    const { cookie } = await cookieLogin(production, ivan);

    const asConsole = (origin: string) =>
      production.request('GET', ME, { headers: { cookie, 'x-consent-console': '1', origin } });
    expect((await asConsole(PUBLIC)).status).toBe(200);
    // The service's own host over plain http is not the console in production.
    expect((await asConsole(production.url)).status).toBe(401);
    expect((await asConsole(production.url.replace('http:', 'https:'))).status).toBe(200);
    expect((await asConsole(EVIL)).status).toBe(401);
  });
});
