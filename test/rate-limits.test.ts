import { randomBytes, randomInt } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { PASSWORD, operator, organization } from './helpers/fixtures.js';
import { startTestServer, type TestServer, type TestOverrides } from './helpers/server.js';

const REGISTER = '/api/platform/auth/register';
const LOGIN = '/api/platform/auth/login';
const DEFAULTS = loadConfig({}).rateLimits;

// Every test speaks from its own client address (the server trusts X-Forwarded-For
// here), so counters of one test never leak into another, nor across runs on Redis.
const newIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
const email = () => `rl-${randomBytes(5).toString('hex')}@example.com`;

const servers: TestServer[] = [];
async function start(overrides: TestOverrides = {}) {
  const server = await startTestServer({ trustProxy: true, ...overrides, rateLimits: { ...DEFAULTS, ...overrides.rateLimits } });
  servers.push(server);
  return server;
}
afterAll(() => Promise.all(servers.map((s) => s.close())));

const register = (server: TestServer, ip: string, address = email()) =>
  server.request('POST', REGISTER, { headers: { 'x-forwarded-for': ip }, body: { email: address, password: PASSWORD, name: 'Limit' } });
const login = (server: TestServer, ip: string, address: string, password = PASSWORD) =>
  server.request('POST', LOGIN, { headers: { 'x-forwarded-for': ip }, body: { email: address, password } });

function expectRateLimited(res: Awaited<ReturnType<TestServer['request']>>, limit: number, windowSeconds: number) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ error: expect.any(String), code: 'rate_limited' });
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(res.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
  const reset = Number(res.headers.get('x-ratelimit-reset'));
  const now = Math.floor(Date.now() / 1000);
  expect(reset).toBeGreaterThanOrEqual(now);
  expect(reset).toBeLessThanOrEqual(now + windowSeconds + 1);
}

describe('defaults', () => {
  it('are the decisions and extensions.md: register 10/IP/hour, login 20/IP/15 min, failed logins 5 per (e-mail, address) and 50 per e-mail per 15 min, SDK 600, 120 and 600 per minute, 20 member additions per organization per hour, 20 organizations per user per hour', () => {
    expect(DEFAULTS).toEqual({
      registerPerHour: 10,
      loginPerIp: 20,
      loginFailedPerEmailAndAddress: 5,
      loginFailedPerEmail: 50,
      sdkConfigPerMinute: 600,
      sdkConsentPerMinute: 120,
      sdkConsentPerAddressPerMinute: 600,
      graphqlPerMinute: 600,
      memberAdditionsPerHour: 20,
      organizationsPerHour: 20,
    });
    expect(
      loadConfig({
        RATE_LIMIT_REGISTER_PER_HOUR: '3',
        RATE_LIMIT_LOGIN_PER_IP: '4',
        RATE_LIMIT_LOGIN_FAILED_PER_EMAIL_AND_ADDRESS: '2',
        RATE_LIMIT_LOGIN_FAILED_PER_EMAIL: '7',
        RATE_LIMIT_SDK_CONSENT_PER_ADDRESS_PER_MINUTE: '9',
        RATE_LIMIT_MEMBER_ADDITIONS_PER_HOUR: '11',
      }).rateLimits,
    ).toMatchObject({ registerPerHour: 3, loginPerIp: 4, loginFailedPerEmailAndAddress: 2, loginFailedPerEmail: 7, sdkConsentPerAddressPerMinute: 9, memberAdditionsPerHour: 11 });
  });
});

describe('with the default limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await start();
  });

  it('lets 10 registrations per IP through in an hour and refuses the 11th with 429, creating nothing', async () => {
    const ip = newIp();
    for (let i = 0; i < 10; i++) expect((await register(server, ip)).status).toBe(201);
    const address = email();
    const refused = await register(server, ip, address);
    expectRateLimited(refused, 10, 3600);
    const rows = await server.services.db.query('SELECT id FROM users WHERE email = $1', [address]);
    expect(rows).toHaveLength(0);
    // Another address is not affected.
    expect((await register(server, newIp())).status).toBe(201);
  });

  it('refuses the 21st login from one IP within 15 minutes, whatever the outcome', async () => {
    const ip = newIp();
    const address = email();
    expect((await register(server, newIp(), address)).status).toBe(201);
    // Mixed outcomes across different e-mails so the per-e-mail budget never trips first.
    for (let i = 0; i < 20; i++) {
      const res = i % 4 === 0 ? await login(server, ip, address) : await login(server, ip, email(), 'wrong password!');
      expect(res.status).toBe(i % 4 === 0 ? 200 : 401);
    }
    expectRateLimited(await login(server, ip, address), 20, 900);
    expect((await login(server, newIp(), address)).status).toBe(200);
  });

  it('blocks an e-mail from one address after 5 failed logins there, even with the right password', async () => {
    const address = email();
    const attacker = newIp();
    expect((await register(server, newIp(), address)).status).toBe(201);
    for (let i = 0; i < 5; i++) expect((await login(server, attacker, address, `wrong password ${i}`)).status).toBe(401);
    expectRateLimited(await login(server, attacker, address), 5, 900);
    expectRateLimited(await login(server, attacker, address.toUpperCase()), 5, 900);
    // Other e-mails are not affected.
    const other = email();
    expect((await register(server, newIp(), other)).status).toBe(201);
    expect((await login(server, attacker, other)).status).toBe(200);
  });

  // Fails on the old main: five wrong passwords from anywhere locked the e-mail out from every address (429).
  it('never locks the owner out from their own address, whatever one address floods', async () => {
    const address = email();
    expect((await register(server, newIp(), address)).status).toBe(201);
    const attacker = newIp();
    for (let i = 0; i < 8; i++) expect((await login(server, attacker, address, 'guess guess guess')).status).toBe(i < 5 ? 401 : 429);
    expect((await login(server, newIp(), address)).status).toBe(200);
  });

  it('counts unknown e-mails too, and a successful login clears the failures of that address', async () => {
    const ghost = email();
    const ip = newIp();
    for (let i = 0; i < 5; i++) expect((await login(server, ip, ghost, 'whatever password')).status).toBe(401);
    expect((await login(server, ip, ghost, 'whatever password')).status).toBe(429);

    const address = email();
    const owner = newIp();
    expect((await register(server, newIp(), address)).status).toBe(201);
    for (let i = 0; i < 4; i++) expect((await login(server, owner, address, 'wrong password!')).status).toBe(401);
    expect((await login(server, owner, address)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await login(server, owner, address, 'wrong password!')).status).toBe(401);
    expect((await login(server, owner, address)).status).toBe(200);
  });

  // Fails on the old main, which checked the budget before hashing and counted after: parallel guesses all got through.
  it('counts concurrent guesses: no more than 5 of 12 sent at once are tried', async () => {
    const address = email();
    const ip = newIp();
    expect((await register(server, newIp(), address)).status).toBe(201);
    const statuses = (await Promise.all(Array.from({ length: 12 }, (_, i) => login(server, ip, address, `parallel guess ${i}`)))).map((r) => r.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(7);
  });

  // Fails on the old main: a wrong currentPassword was not counted, so a stolen session could guess without limit.
  it('counts a wrong currentPassword on POST /auth/password as a failed login', async () => {
    const address = email();
    const ip = newIp();
    expect((await register(server, newIp(), address)).status).toBe(201);
    const token = (await login(server, newIp(), address)).body.token;
    const change = (currentPassword: string) =>
      server.request('POST', '/api/platform/auth/password', {
        token,
        headers: { 'x-forwarded-for': ip },
        body: { currentPassword, newPassword: 'a new long passphrase' },
      });
    for (let i = 0; i < 5; i++) expect((await change(`wrong guess ${i}`)).status).toBe(401);
    expectRateLimited(await change(PASSWORD), 5, 900);
    expectRateLimited(await login(server, ip, address), 5, 900);
    expect((await login(server, newIp(), address)).status).toBe(200);
  });

  // Fails on the old main, which took the LEFTMOST X-Forwarded-For entry: a client rotating it got a fresh budget each time.
  it('takes the client address from the right of X-Forwarded-For: what a client prepends changes nothing', async () => {
    const proxySaw = newIp();
    const spoofed = () => `${newIp()}, ${proxySaw}`;
    for (let i = 0; i < 10; i++) expect((await register(server, spoofed())).status).toBe(201);
    expectRateLimited(await register(server, spoofed()), 10, 3600);

    const address = email();
    expect((await register(server, newIp(), address)).status).toBe(201);
    const loginFrom = newIp();
    for (let i = 0; i < 5; i++) expect((await login(server, `${newIp()}, ${loginFrom}`, address, 'wrong password!')).status).toBe(401);
    expectRateLimited(await login(server, `${newIp()},${loginFrom}`, address), 5, 900);
  });

  it('ignores X-Forwarded-For unless TRUST_PROXY is on', async () => {
    const direct = await start({ trustProxy: false, rateLimits: { registerPerHour: 2 } });
    expect((await register(direct, newIp())).status).toBe(201);
    expect((await register(direct, newIp())).status).toBe(201);
    expect((await register(direct, newIp())).status).toBe(429);
  });
});

describe('TRUST_PROXY', () => {
  it('counts the address n proxies from the right with TRUST_PROXY=n, and the socket when the header is short', async () => {
    const server = await start({ trustProxy: 2, rateLimits: { registerPerHour: 1 } });
    const client = newIp();
    // client-written, the client as the first proxy saw it, the first proxy as the second saw it
    expect((await register(server, `${newIp()}, ${client}, ${newIp()}`)).status).toBe(201);
    expect((await register(server, `${newIp()}, ${client}, ${newIp()}`)).status).toBe(429);
    // IPv4-mapped IPv6 is the same client.
    expect((await register(server, `::ffff:${client}, ${newIp()}`)).status).toBe(429);
    // One entry where two proxies must have written: the socket address (127.0.0.1) is counted.
    expect((await register(server, newIp())).status).toBe(201);
    expect((await register(server, newIp())).status).toBe(429);
  });
});

describe('the per-e-mail ceiling', () => {
  it('refuses an e-mail from every address once RATE_LIMIT_LOGIN_FAILED_PER_EMAIL failures came from many', async () => {
    const server = await start({ rateLimits: { loginFailedPerEmailAndAddress: 5, loginFailedPerEmail: 6 } });
    const address = email();
    expect((await register(server, newIp(), address)).status).toBe(201);
    for (let i = 0; i < 6; i++) expect((await login(server, newIp(), address, 'spread out guess')).status).toBe(401);
    expectRateLimited(await login(server, newIp(), address), 6, 900);
  });
});

describe('configured limits', () => {
  it('applies overridden numbers and reports them in X-RateLimit-Limit', async () => {
    const server = await start({ rateLimits: { registerPerHour: 2, loginPerIp: 3, loginFailedPerEmailAndAddress: 1 } });
    const ip = newIp();
    expect((await register(server, ip)).status).toBe(201);
    expect((await register(server, ip)).status).toBe(201);
    expectRateLimited(await register(server, ip), 2, 3600);

    const address = email();
    const from = newIp();
    expect((await register(server, newIp(), address)).status).toBe(201);
    expect((await login(server, from, address, 'wrong password!')).status).toBe(401);
    expectRateLimited(await login(server, from, address), 1, 900);

    const loginIp = newIp();
    for (let i = 0; i < 3; i++) expect((await login(server, loginIp, email(), 'nobody home')).status).toBe(401);
    expectRateLimited(await login(server, loginIp, email(), 'nobody home'), 3, 900);
  });

  it('limits register over /graphql as well, with extensions.code rate_limited', async () => {
    const server = await start({ rateLimits: { registerPerHour: 1 } });
    const ip = newIp();
    const mutation = 'mutation($input: RegisterInput!) { register(input: $input) { user { id } } }';
    const call = () =>
      server.request('POST', '/graphql', {
        headers: { 'x-forwarded-for': ip },
        body: { query: mutation, variables: { input: { email: email(), password: PASSWORD, name: 'G' } } },
      });
    expect((await call()).body.data.register.user.id).toEqual(expect.any(String));
    const refused = await call();
    expect(refused.body.errors[0].extensions.code).toBe('rate_limited');
  });
});

// Shared counters need a Redis. Where one should be (REDIS_URL set, or CI=true as .ci/run sets it) the test
// always runs and fails when Redis does not answer; elsewhere it runs when the local default answers and is
// skipped with a note otherwise. (Checked: with REDIS_URL pointing at a closed port the test fails, not skips.)
const redisExpected = !!process.env.REDIS_URL || process.env.CI === 'true';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redisAnswers = await (async () => {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
})();
if (!redisAnswers && !redisExpected) console.warn(`rate-limits: no Redis answers on ${REDIS_URL}: the shared-counter test is skipped`);

describe.skipIf(!redisAnswers && !redisExpected)('with REDIS_URL', () => {
  it('Redis answers where it should be', () => {
    expect(redisAnswers, `Redis does not answer on ${REDIS_URL} (REDIS_URL or CI=true says it should)`).toBe(true);
  });

  it('shares counters between two instances', async () => {
    const limits = { registerPerHour: 3, loginFailedPerEmailAndAddress: 5, loginFailedPerEmail: 2 };
    const a = await start({ redisUrl: REDIS_URL, rateLimits: limits });
    const b = await start({ redisUrl: REDIS_URL, rateLimits: limits });
    const ip = newIp();
    expect((await register(a, ip)).status).toBe(201);
    expect((await register(b, ip)).status).toBe(201);
    expect((await register(a, ip)).status).toBe(201);
    expectRateLimited(await register(b, ip), 3, 3600);
    expectRateLimited(await register(a, ip), 3, 3600);

    const address = email();
    expect((await register(a, newIp(), address)).status).toBe(201);
    expect((await login(a, newIp(), address, 'wrong password!')).status).toBe(401);
    expect((await login(b, newIp(), address, 'wrong password!')).status).toBe(401);
    expectRateLimited(await login(a, newIp(), address), 2, 900);

    const redis = new Redis(REDIS_URL);
    try {
      expect(await redis.exists(`rl:register-ip:${ip}`)).toBe(1);
    } finally {
      redis.disconnect();
    }
  });

  it('counts member additions per organization in Redis too', async () => {
    const server = await start({ redisUrl: REDIS_URL, rateLimits: { registerPerHour: 100_000, loginPerIp: 100_000, memberAdditionsPerHour: 1 } });
    const owner = await operator(server, 'Owner');
    const org = await organization(server, owner);
    // Its own client address: the per-address budget (five at this limit) lives in the shared Redis for an hour,
    // and CI runs this file three times, so the loopback address's budget ran out on a second CI run in an hour.
    const ip = newIp();
    const add = () =>
      server.request('POST', '/graphql', {
        token: owner.token,
        headers: { 'x-forwarded-for': ip },
        body: { query: 'mutation($org: ID!) { addMember(organizationId: $org, email: "nobody@example.com", role: "VIEWER") { invitation { id } } }', variables: { org: org.id } },
      });
    expect((await add()).body.errors[0].extensions.code).toBe('not_found');
    expect((await add()).body.errors[0].extensions.code).toBe('rate_limited');
    const redis = new Redis(REDIS_URL);
    try {
      expect(await redis.exists(`rl:member-additions-org:${org.id}`)).toBe(1);
    } finally {
      redis.disconnect();
    }
  });
});


describe('IPv6 clients', () => {
  // Fails on the old main, which counted every IPv6 address apart: a client holding a /64 (the usual
  // allocation to one subscriber) rotated addresses inside it and got a fresh allowance each time.
  it('counts an IPv6 client per /64 network', async () => {
    const server = await start({ rateLimits: { registerPerHour: 2 } });
    const network = `2001:db8:${randomInt(65536).toString(16)}:${randomInt(65536).toString(16)}`;
    expect((await register(server, `${network}::1`)).status).toBe(201);
    expect((await register(server, `${network}:abcd:1234:5678:9abc`)).status).toBe(201);
    expect((await register(server, `${network}::ffff`)).status).toBe(429);
    // The neighbouring /64 is another client.
    const neighbour = network.replace(/:([0-9a-f]+)$/, (_, last: string) => `:${((parseInt(last, 16) + 1) % 65536).toString(16)}`);
    expect((await register(server, `${neighbour}::1`)).status).toBe(201);
  });
});
