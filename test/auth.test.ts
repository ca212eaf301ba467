import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as passwords from '../src/auth/passwords.js';
import { loadConfig } from '../src/config.js';
import { PASSWORD, operator, organization } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';

// A call-through spy (not a mock): proves that a login with an unknown e-mail
// still runs scrypt, against the dummy hash, so both failures cost the same.
vi.mock('../src/auth/passwords.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/auth/passwords.js')>();
  return { ...real, verifyPassword: vi.fn(real.verifyPassword) };
});

const REGISTER = '/api/platform/auth/register';
const LOGIN = '/api/platform/auth/login';
const LOGOUT = '/api/platform/auth/logout';
const ME = '/api/platform/auth/me';
const PASSWORD_CHANGE = '/api/platform/auth/password';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const INVALID_CREDENTIALS = { error: 'Invalid credentials', code: 'invalid_credentials' };

let server: TestServer;
let clock: Date;
beforeAll(async () => {
  clock = new Date('2026-11-22T10:00:00.000Z');
  server = await startTestServer({}, { now: () => clock });
});
afterAll(() => server?.close());

let counter = 0;
const uniqueEmail = (prefix = 'user') => `${prefix}-${Date.now().toString(36)}-${counter++}@example.com`;
const count = async (sql: string, params: unknown[] = []) =>
  Number((await server.services.db.query<{ n: string }>(sql, params))[0]!.n);

describe('POST /api/platform/auth/register', () => {
  it('creates a user only: 201 {user:{id,email,name,createdAt}}, no session, no organization', async () => {
    const email = uniqueEmail('new');
    const sessionsBefore = await count('SELECT count(*) AS n FROM sessions');
    const orgsBefore = await count('SELECT count(*) AS n FROM organizations');
    const res = await server.request('POST', REGISTER, { body: { email, password: PASSWORD, name: 'Ada Lovelace' } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['user']);
    expect(Object.keys(res.body.user).sort()).toEqual(['createdAt', 'email', 'id', 'name']);
    expect(res.body.user).toMatchObject({ email, name: 'Ada Lovelace', createdAt: clock.toISOString() });
    expect(res.body.user.createdAt).toMatch(ISO_MS);
    expect(typeof res.body.user.id).toBe('string');
    expect(res.text).not.toMatch(/password|hash|token/i);
    expect(await count('SELECT count(*) AS n FROM sessions')).toBe(sessionsBefore);
    expect(await count('SELECT count(*) AS n FROM organizations')).toBe(orgsBefore);
    expect(await count('SELECT count(*) AS n FROM memberships WHERE user_id = $1', [res.body.user.id])).toBe(0);
  });

  it('normalizes the e-mail to lowercase, and a duplicate in any case is 409 conflict', async () => {
    const email = uniqueEmail('MixedCase');
    const res = await server.request('POST', REGISTER, { body: { email: email.toUpperCase(), password: PASSWORD, name: 'Case' } });
    expect(res.status).toBe(201);
    expect(res.body.user.email).toBe(email.toLowerCase());
    for (const variant of [email, email.toLowerCase(), email.toUpperCase()]) {
      const dup = await server.request('POST', REGISTER, { body: { email: variant, password: PASSWORD, name: 'Again' } });
      expect(dup.status).toBe(409);
      expect(dup.body).toEqual({ error: expect.any(String), code: 'conflict' });
    }
    expect(await count('SELECT count(*) AS n FROM users WHERE lower(email) = $1', [email.toLowerCase()])).toBe(1);
  });

  it('refuses a password shorter than 12 characters with 400 details [{path, message}]', async () => {
    const email = uniqueEmail('short');
    const res = await server.request('POST', REGISTER, { body: { email, password: 'elevenchars', name: 'Short' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: expect.any(String),
      code: 'validation_failed',
      details: [{ path: ['password'], message: expect.any(String) }],
    });
    expect(await count('SELECT count(*) AS n FROM users WHERE email = $1', [email])).toBe(0);
  });

  it('accepts a password of exactly 12 characters', async () => {
    const res = await server.request('POST', REGISTER, { body: { email: uniqueEmail('twelve'), password: 'x'.repeat(12), name: 'Twelve' } });
    expect(res.status).toBe(201);
  });

  it('names every missing or malformed field in details', async () => {
    const res = await server.request('POST', REGISTER, { body: {} });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    const paths = res.body.details.map((d: { path: string[] }) => d.path.join('.')).sort();
    expect(paths).toEqual(['email', 'name', 'password']);
    for (const detail of res.body.details) expect(detail).toEqual({ path: expect.any(Array), message: expect.any(String) });

    const badEmail = await server.request('POST', REGISTER, { body: { email: 'not-an-email', password: PASSWORD, name: 'X' } });
    expect(badEmail.status).toBe(400);
    expect(badEmail.body.details).toEqual([{ path: ['email'], message: expect.any(String) }]);

    const wrongType = await server.request('POST', REGISTER, { body: { email: uniqueEmail(), password: 123456789012345, name: 'X' } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.code).toBe('validation_failed');
    expect(wrongType.body.details[0].path).toEqual(['password']);
  });
});

describe('POST /api/platform/auth/login', () => {
  it('answers 200 {token, user} with a base64url token of at least 32 random bytes', async () => {
    const email = uniqueEmail('login');
    const registered = await server.request('POST', REGISTER, { body: { email, password: PASSWORD, name: 'Login' } });
    const res = await server.request('POST', LOGIN, { body: { email: email.toUpperCase(), password: PASSWORD } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['token', 'user']);
    expect(res.body.user).toEqual(registered.body.user);
    expect(res.body.token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(res.body.token, 'base64url').length).toBeGreaterThanOrEqual(32);
    const other = await server.request('POST', LOGIN, { body: { email, password: PASSWORD } });
    expect(other.body.token).not.toBe(res.body.token);
  });

  it('stores only the SHA-256 of the token, never the token itself', async () => {
    const op = await operator(server, 'Stored');
    const rows = await server.services.db.query<Record<string, unknown>>(
      'SELECT s.* FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1',
      [op.email],
    );
    expect(rows).toHaveLength(1);
    const sha = createHash('sha256').update(op.token).digest('hex');
    expect(rows[0]!.token_hash).toBe(sha);
    expect(JSON.stringify(rows)).not.toContain(op.token);
  });

  it('gives the identical 401 body for an unknown e-mail and for a wrong password', async () => {
    const op = await operator(server, 'Wrong');
    const wrong = await server.request('POST', LOGIN, { body: { email: op.email, password: 'not the password!' } });
    const unknown = await server.request('POST', LOGIN, { body: { email: uniqueEmail('ghost'), password: PASSWORD } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(INVALID_CREDENTIALS);
    expect(unknown.text).toBe(wrong.text);
  });

  it('runs scrypt against the dummy hash when the e-mail is unknown', async () => {
    const verify = vi.mocked(passwords.verifyPassword);
    verify.mockClear();
    const res = await server.request('POST', LOGIN, { body: { email: uniqueEmail('nobody'), password: 'some password 1' } });
    expect(res.status).toBe(401);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify).toHaveBeenCalledWith('some password 1', await passwords.dummyPasswordHash(server.services.config.passwordHashLogN));
    expect(await verify.mock.results[0]!.value).toBe(false);
  });

  it('refuses a body without e-mail or password with 400 details', async () => {
    const res = await server.request('POST', LOGIN, { body: { email: 'a@example.com' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.details).toEqual([{ path: ['password'], message: expect.any(String) }]);
  });
});

describe('POST /api/platform/auth/logout', () => {
  it('answers 200 {success:true} without a token and with an unknown one', async () => {
    for (const token of [undefined, 'no-such-token', 'pk_live_abc']) {
      const res = await server.request('POST', LOGOUT, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
    }
    const malformed = await server.request('POST', LOGOUT, { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    expect(malformed.status).toBe(200);
    expect(malformed.body).toEqual({ success: true });
  });

  it('revokes the presented session only: the token then gets 401, others keep working', async () => {
    const op = await operator(server, 'Logout');
    const second = await server.request('POST', LOGIN, { body: { email: op.email, password: PASSWORD } });
    expect((await server.request('GET', ME, { token: op.token })).status).toBe(200);
    const res = await server.request('POST', LOGOUT, { token: op.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    const after = await server.request('GET', ME, { token: op.token });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: expect.any(String), code: 'unauthorized' });
    expect((await server.request('GET', ME, { token: second.body.token })).status).toBe(200);
    // Logging out twice is still 200.
    expect((await server.request('POST', LOGOUT, { token: op.token })).body).toEqual({ success: true });
  });
});

describe('GET /api/platform/auth/me', () => {
  it('answers the user with their organizations and projects, exactly the contract fields', async () => {
    const op = await operator(server, 'Me');
    const empty = await server.request('GET', ME, { token: op.token });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({
      user: { id: op.id, email: op.email, name: 'Me', createdAt: expect.stringMatching(ISO_MS) },
      organizations: [],
      projects: [],
    });
    const org = await organization(server, op, { name: 'Me Org' });
    const created = await server.request('POST', `/api/platform/orgs/${org.id}/projects`, { token: op.token, body: { name: 'Site' } });
    const res = await server.request('GET', ME, { token: op.token });
    expect(res.body.organizations).toEqual([org]);
    expect(Object.keys(res.body.organizations[0]).sort()).toEqual(['createdAt', 'id', 'name', 'slug']);
    expect(res.body.projects).toEqual([created.body.project]);
    expect(Object.keys(res.body.projects[0]).sort()).toEqual(['createdAt', 'id', 'name', 'organizationId', 'slug']);
  });

  it('answers 401 unauthorized without, with an unknown or with a malformed bearer', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer nope' }, { authorization: 'Token abc' }, { authorization: 'Bearer' }]) {
      const res = await server.request('GET', ME, { headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: expect.any(String), code: 'unauthorized' });
    }
  });

  it('expires a session after 30 days (clock moved, no sleeping)', async () => {
    const op = await operator(server, 'Expiry');
    const start = clock;
    try {
      clock = new Date(start.getTime() + 29 * 24 * 3600 * 1000);
      expect((await server.request('GET', ME, { token: op.token })).status).toBe(200);
      clock = new Date(start.getTime() + 31 * 24 * 3600 * 1000);
      const res = await server.request('GET', ME, { token: op.token });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
      // Still expired when the clock comes back: nothing extended it. A new login works.
      const again = await server.request('POST', LOGIN, { body: { email: op.email, password: PASSWORD } });
      expect((await server.request('GET', ME, { token: again.body.token })).status).toBe(200);
    } finally {
      clock = start;
    }
  });
});

describe('POST /api/platform/auth/password', () => {
  it('changes the password, revokes every session, and only the new password works', async () => {
    const op = await operator(server, 'Changer');
    const second = (await server.request('POST', LOGIN, { body: { email: op.email, password: PASSWORD } })).body.token;
    const newPassword = 'a brand new passphrase';
    const res = await server.request('POST', PASSWORD_CHANGE, { token: op.token, body: { currentPassword: PASSWORD, newPassword } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    for (const token of [op.token, second]) expect((await server.request('GET', ME, { token })).status).toBe(401);
    const old = await server.request('POST', LOGIN, { body: { email: op.email, password: PASSWORD } });
    expect(old.status).toBe(401);
    expect(old.body).toEqual(INVALID_CREDENTIALS);
    const fresh = await server.request('POST', LOGIN, { body: { email: op.email, password: newPassword } });
    expect(fresh.status).toBe(200);
    expect((await server.request('GET', ME, { token: fresh.body.token })).status).toBe(200);
  });

  it('answers 401 invalid_credentials for a wrong current password and changes nothing', async () => {
    const op = await operator(server, 'WrongCurrent');
    const res = await server.request('POST', PASSWORD_CHANGE, {
      token: op.token,
      body: { currentPassword: 'not my password', newPassword: 'another long passphrase' },
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID_CREDENTIALS);
    expect((await server.request('GET', ME, { token: op.token })).status).toBe(200);
    expect((await server.request('POST', LOGIN, { body: { email: op.email, password: PASSWORD } })).status).toBe(200);
  });

  it('refuses a new password under 12 characters (400) and a missing session (401)', async () => {
    const op = await operator(server, 'ShortNew');
    const short = await server.request('POST', PASSWORD_CHANGE, { token: op.token, body: { currentPassword: PASSWORD, newPassword: 'short' } });
    expect(short.status).toBe(400);
    expect(short.body.code).toBe('validation_failed');
    expect(short.body.details).toEqual([{ path: ['newPassword'], message: expect.any(String) }]);
    expect((await server.request('GET', ME, { token: op.token })).status).toBe(200);

    const anonymous = await server.request('POST', PASSWORD_CHANGE, { body: { currentPassword: PASSWORD, newPassword: 'long enough passphrase' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe('unauthorized');
  });
});

describe('password hashing (src/auth/passwords.ts)', () => {
  // Fails on the old main, which hashed at N=2^15 with no PASSWORD_HASH_LOG_N.
  it('defaults to scrypt N=2^17, r=8, p=1 (PASSWORD_HASH_LOG_N=17) with a per-hash salt', async () => {
    expect(loadConfig({}).passwordHashLogN).toBe(17);
    expect(() => loadConfig({ PASSWORD_HASH_LOG_N: '8' })).toThrow(/PASSWORD_HASH_LOG_N/);
    const a = await passwords.hashPassword(PASSWORD);
    const b = await passwords.hashPassword(PASSWORD);
    const [algorithm, version, N, r, p, salt, hash] = a.split('$');
    expect([algorithm, version]).toEqual(['scrypt', 'v1']);
    expect([Number(N), Number(r), Number(p)]).toEqual([2 ** 17, 8, 1]);
    expect(Buffer.from(salt!, 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(Buffer.from(hash!, 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(a).not.toBe(b);
    expect(b.split('$')[5]).not.toBe(salt);
    expect(await passwords.verifyPassword(PASSWORD, a)).toBe(true);
  });

  it('verifies the right password and refuses a wrong one or a foreign encoding', async () => {
    const encoded = await passwords.hashPassword('right password!', 10);
    expect(await passwords.verifyPassword('right password!', encoded)).toBe(true);
    expect(await passwords.verifyPassword('wrong password!', encoded)).toBe(false);
    expect(await passwords.verifyPassword('right password!', 'bcrypt$2b$10$abc')).toBe(false);
    expect(await passwords.verifyPassword('right password!', '')).toBe(false);
  });

  it('verifies hashes made with older parameters and asks for a rehash', async () => {
    const current = await passwords.hashPassword('upgrade me please');
    expect(passwords.needsRehash(current)).toBe(false);
    const weak = await passwords.hashPassword('upgrade me please', 15); // the old default
    expect(await passwords.verifyPassword('upgrade me please', weak)).toBe(true);
    expect(passwords.needsRehash(weak)).toBe(true);
  });

  it('rehashes an old-cost (2^15) stored hash at N=2^17 on the next successful login', async () => {
    // A server at the production cost (the shared test server hashes at 2^10 for speed).
    const real = await startTestServer({ passwordHashLogN: 17 });
    try {
      const op = await operator(real, 'Rehash');
      const weak = await passwords.hashPassword(PASSWORD, 15);
      await real.services.db.query('UPDATE users SET password_hash = $1 WHERE id = $2', [weak, op.id]);
      expect((await real.request('POST', LOGIN, { body: { email: op.email, password: PASSWORD } })).status).toBe(200);
      const [after] = await real.services.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [op.id]);
      expect(after!.password_hash.split('$')[2]).toBe(String(2 ** 17));
      expect(await passwords.verifyPassword(PASSWORD, after!.password_hash)).toBe(true);
    } finally {
      await real.close();
    }
  });
});

// Fails on the old main: nothing ever deleted an expired session row.
describe('expired sessions', () => {
  it('are purged by the session-purge worker (SESSION_PURGE_INTERVAL_MS); live ones stay', async () => {
    let now = new Date('2026-11-22T10:00:00.000Z');
    const purging = await startTestServer({ sessionPurgeIntervalMs: 50 }, { now: () => now });
    try {
      expect(loadConfig({}).sessionPurgeIntervalMs).toBe(3_600_000);
      const old = await operator(purging, 'Expiring');
      now = new Date(now.getTime() + 31 * 24 * 60 * 60 * 1000); // past the 30-day lifetime
      const live = (await purging.request('POST', LOGIN, { body: { email: old.email, password: PASSWORD } })).body.token;
      const count = async (token: string) =>
        (await purging.services.db.query('SELECT id FROM sessions WHERE token_hash = $1', [createHash('sha256').update(token).digest('hex')])).length;
      await vi.waitFor(async () => expect(await count(old.token)).toBe(0), { timeout: 10_000, interval: 50 });
      expect(await count(live)).toBe(1);
      expect((await purging.request('GET', ME, { token: live })).status).toBe(200);
    } finally {
      await purging.close();
    }
  });
});
