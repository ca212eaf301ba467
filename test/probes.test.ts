import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, onPostgres, startTestServer, type TestServer } from './helpers/server.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('GET /api/health', () => {
  it('reports ok with exactly the contract fields', async () => {
    const before = Date.now();
    const res = await server.request('GET', '/api/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      status: 'ok',
      checks: { database: 'ok', migrations: 'ok' },
      version,
      gitCommit: null,
      environment: 'test',
      startedAt: expect.stringMatching(ISO_MS),
      uptimeSeconds: expect.any(Number),
    });
    expect(Number.isInteger(res.body.uptimeSeconds)).toBe(true);
    expect(res.body.uptimeSeconds).toBeGreaterThanOrEqual(0);
    expect(Date.parse(res.body.startedAt)).toBeLessThanOrEqual(before);
    // startedAt is the start of this server, not of this request.
    const again = await server.request('GET', '/api/health');
    expect(again.body.startedAt).toBe(res.body.startedAt);
  });

  it('reports GIT_COMMIT and NODE_ENV as configured', async () => {
    const other = await startTestServer({ gitCommit: 'abc1234', nodeEnv: 'production' });
    try {
      const res = await other.request('GET', '/api/health');
      expect(res.body).toMatchObject({ status: 'ok', gitCommit: 'abc1234', environment: 'production' });
    } finally {
      await other.close();
    }
  });

  it('reports migrations error (503) when an applied migration is missing from the table', async () => {
    const other = await startTestServer();
    try {
      await other.services.db.query('DELETE FROM "_prisma_migrations"');
      const res = await other.request('GET', '/api/health');
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ status: 'error', checks: { database: 'ok', migrations: 'error' } });
      // The database itself still answers.
      expect((await other.request('GET', '/api/ready')).body).toEqual({ ready: true });
    } finally {
      await other.close();
    }
  });
});

describe('GET /api/ready', () => {
  it('answers 200 {ready:true} while the database accepts queries', async () => {
    const res = await server.request('GET', '/api/ready');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ready: true });
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});

describe('when the database stops answering', () => {
  it('embedded: closing it turns both probes to 503 quickly, and the server still answers', async () => {
    // Embedded explicitly, on the PostgreSQL run too.
    const target = await startTestServer({ databaseUrl: undefined });
    expect(target.services.db.kind).toBe('pglite');
    try {
      await target.services.db.pglite!.close();
      const health = await target.request('GET', '/api/health');
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ status: 'error', checks: { database: 'error', migrations: 'error' } });
      const ready = await target.request('GET', '/api/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ ready: false });
      expect((await target.request('GET', '/nope')).status).toBe(404);
    } finally {
      await target.close();
    }
  });

  it.runIf(onPostgres)('PostgreSQL: refusing connections turns both probes to 503, and they recover', async () => {
    const url = (await freshDatabaseUrl())!;
    const name = new URL(url).pathname.slice(1);
    const pgServer = await startTestServer({ databaseUrl: url });
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      expect((await pgServer.request('GET', '/api/ready')).status).toBe(200);
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      // Every backend of the database gone before the probes ask: pg_terminate_backend only signals unless given a
      // timeout, and a connection a worker was opening as the ALTER committed shows its database only once it is up
      // (CI saw /api/health answer 200 from one). So terminate, waiting for each, until none is left.
      await expect
        .poll(async () => (await admin.query('SELECT count(pg_terminate_backend(pid, 5000))::int AS n FROM pg_stat_activity WHERE datname = $1', [name])).rows[0].n)
        .toBe(0);
      const health = await pgServer.request('GET', '/api/health');
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ status: 'error', checks: { database: 'error', migrations: 'error' } });
      const ready = await pgServer.request('GET', '/api/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ ready: false });

      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      expect((await pgServer.request('GET', '/api/ready')).status).toBe(200);
      expect((await pgServer.request('GET', '/api/health')).body.status).toBe('ok');
    } finally {
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`).catch(() => {});
      await admin.end();
      await pgServer.close();
    }
  });
});
