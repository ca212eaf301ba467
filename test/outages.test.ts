import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { dropDatabase, freshDatabaseUrl, onPostgres, send, startTestServer, type TestOverrides, type TestResponse, type TestServer } from './helpers/server.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.js';
import { publishVersion, type PublishedVersion } from './helpers/versions.js';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js';

/**
 * extensions.md "Database unavailable": an outage or an overloaded database
 * answers 503 `service_unavailable` with Retry-After on every route, never 500;
 * the service recovers by itself; nothing acknowledged is lost; a webhook its
 * receiver acknowledged is not sent again. On PostgreSQL the database is cut
 * through a TCP proxy the test owns (never the shared server); on the embedded
 * database the equivalent is a closed engine.
 */

interface SdkProject {
  server: TestServer;
  version: PublishedVersion;
  key: { id: string; secret: string };
  owner: { token: string };
  projectId: string;
}

async function sdkProject(server: TestServer): Promise<SdkProject> {
  const t = await team(server);
  const version = await publishVersion(server, t.owner, t.project.id);
  const key = await createKey(server, t.owner.token, t.project.id);
  return { server, version, key, owner: t.owner, projectId: t.project.id };
}

const postConsent = (p: SdkProject) =>
  p.server.request('POST', '/api/sdk/v1/consent', {
    token: p.key.secret,
    body: {
      versionId: p.version.id,
      consentHash: p.version.consentHash,
      choices: { analytics: true },
      installationId: `inst_${randomBytes(6).toString('hex')}`,
    },
  });

/** What a caller of any route must see while the database is unavailable. */
function expectUnavailable(response: TestResponse) {
  expect(response.status, response.text).toBe(503);
  expect(response.headers.get('retry-after')).toBe('5');
  expect(response.body).toEqual({ error: expect.any(String), code: 'service_unavailable' });
}

const graphqlMe = (server: TestServer, token: string) =>
  send(server.url, 'POST', '/graphql', { token, body: { query: '{ me { user { id } } }' } });

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function logCapture() {
  const lines: { msg: string; [key: string]: unknown }[] = [];
  return { lines, destination: { write: (line: string) => void lines.push(JSON.parse(line)) } };
}

describe('the embedded database closed under the service', () => {
  let server: TestServer;
  let p: SdkProject;
  const log = logCapture();
  beforeAll(async () => {
    server = await startTestServer({ databaseUrl: undefined, logLevel: 'info' }, { logDestination: log.destination });
    p = await sdkProject(server);
    expect((await postConsent(p)).status).toBe(201);
    await server.services.db.pglite!.close();
  });
  afterAll(() => server?.close());

  // Before the fix every one of these answered 500 internal ("PGlite is closed").
  it('answers 503 service_unavailable with Retry-After on SDK, operator and GraphQL routes, and /api/ready 503', async () => {
    expectUnavailable(await postConsent(p));
    expectUnavailable(await server.request('GET', '/api/platform/auth/me', { token: p.owner.token }));
    const graphql = await graphqlMe(server, p.owner.token);
    expect(graphql.status, graphql.text).toBe(503);
    expect(graphql.headers.get('retry-after')).toBe('5');
    expect(graphql.body.errors[0].extensions.code).toBe('service_unavailable');
    expect((await server.request('GET', '/api/ready')).status).toBe(503);
    // One line for the outage, not one per refused request.
    expect(log.lines.filter((line) => line.msg === 'database unavailable')).toHaveLength(1);
    expect(log.lines.filter((line) => line.msg === 'unhandled error')).toHaveLength(0);
  });
});

describe.runIf(onPostgres)('PostgreSQL cut through a TCP proxy', () => {
  let proxy: TcpProxy;
  let databaseUrl: string;
  const servers: TestServer[] = [];

  /** A server whose every database connection (pool, cache listener) goes through the proxy. */
  async function start(overrides: TestOverrides = {}, options: { now?: () => Date } = {}) {
    const log = logCapture();
    const server = await startTestServer(
      // DATABASE_WAIT_MS as in production (2 s): the waits are what these tests are about.
      { databaseUrl: proxy.url(databaseUrl), databaseWaitMs: 2000, logLevel: 'info', rateLimits: { sdkConsentPerMinute: 1_000_000 }, ...overrides },
      { logDestination: log.destination, ...options },
    );
    servers.push(server);
    return { server, log };
  }

  beforeAll(async () => {
    databaseUrl = (await freshDatabaseUrl())!;
    const target = new URL(databaseUrl);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  });
  afterEach(async () => {
    proxy.delay(0);
    if (!proxy.listening) await proxy.restore();
    for (const server of servers.splice(0)) await server.close();
  });
  afterAll(async () => {
    await proxy?.close();
    if (databaseUrl) await dropDatabase(databaseUrl);
  });

  // Before the fix the outage answered 500 internal (the wait for 20 refusals timed out).
  it('under load: 503 with Retry-After (never 500) while cut, recovery without a restart, every 201 stored', async () => {
    const { server, log } = await start();
    const p = await sdkProject(server);
    const results: { status: number; id?: string; retryAfter: string | null; code?: string }[] = [];
    let stop = false;
    const load = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const response = await postConsent(p);
        results.push({ status: response.status, id: response.body?.id, retryAfter: response.headers.get('retry-after'), code: response.body?.code });
      }
    });
    const count = (status: number) => results.filter((r) => r.status === status).length;

    await until(() => count(201) >= 50, '50 receipts before the outage');
    await proxy.refuse({ cut: true });
    await until(() => count(503) >= 20, '20 refusals during the outage');
    expectUnavailable(await server.request('GET', '/api/platform/auth/me', { token: p.owner.token }));
    const graphql = await graphqlMe(server, p.owner.token);
    expect(graphql.status, graphql.text).toBe(503);
    expect(graphql.headers.get('retry-after')).toBe('5');
    expect(graphql.body.errors[0].extensions.code).toBe('service_unavailable');
    expect((await server.request('GET', '/api/ready')).status).toBe(503);

    await proxy.restore();
    const before = count(201);
    await until(() => count(201) >= before + 50, '50 receipts after the database came back');
    stop = true;
    await Promise.all(load);

    expect(new Set(results.map((r) => r.status))).toEqual(new Set([201, 503]));
    for (const refused of results.filter((r) => r.status === 503)) {
      expect(refused).toMatchObject({ retryAfter: '5', code: 'service_unavailable' });
    }
    expect((await server.request('GET', '/api/ready')).status).toBe(200);
    expect((await server.request('GET', '/api/platform/auth/me', { token: p.owner.token })).status).toBe(200);
    // Nothing acknowledged is lost: every 201's receipt is in the database.
    const acknowledged = results.filter((r) => r.status === 201).map((r) => r.id!);
    const stored = await server.services.db.query<{ id: string }>('SELECT id FROM receipts WHERE id = ANY($1::text[])', [acknowledged]);
    expect(stored).toHaveLength(acknowledged.length);
    // One line when the outage starts and one when it ends, however many requests were refused.
    await until(() => log.lines.some((line) => line.msg === 'database available again'), 'the end of the outage logged');
    expect(log.lines.filter((line) => line.msg === 'database unavailable')).toHaveLength(1);
    expect(log.lines.filter((line) => line.msg === 'database available again')).toHaveLength(1);
    // Nothing else warns or errs per request or per reconnection attempt (the SDK cache listener used to, every second).
    expect(log.lines.filter((line) => (line.level as number) >= 40 && line.msg !== 'database unavailable').map((line) => line.msg)).toEqual([]);
  });

  it('a full receipt queue sheds with 503 and Retry-After; every 201 is stored', async () => {
    const { server } = await start({ receiptQueueLimit: 2 });
    const p = await sdkProject(server);
    expect((await postConsent(p)).status).toBe(201); // the key and version are cached: only receipts wait now
    proxy.delay(100);
    const responses = await Promise.all(Array.from({ length: 60 }, () => postConsent(p)));
    proxy.delay(0);
    const statuses = new Set(responses.map((r) => r.status));
    expect(statuses).toEqual(new Set([201, 503]));
    for (const refused of responses.filter((r) => r.status === 503)) expectUnavailable(refused);
    const acknowledged = responses.filter((r) => r.status === 201).map((r) => r.body.id);
    const stored = await server.services.db.query('SELECT id FROM receipts WHERE id = ANY($1::text[])', [acknowledged]);
    expect(stored).toHaveLength(acknowledged.length);
  });

  it('answers a repeat of a key this instance stored while the database is cut: the app hears its 201 and stops', async () => {
    const { server } = await start();
    const p = await sdkProject(server);
    const body = { versionId: p.version.id, consentHash: p.version.consentHash, choices: { analytics: true }, installationId: 'inst_outage_repeat' };
    const send = (key: string) => server.request('POST', '/api/sdk/v1/consent', { token: p.key.secret, body, headers: { 'Idempotency-Key': key } });
    const first = await send('outage-repeat');
    expect(first.status).toBe(201);
    await proxy.refuse({ cut: true });
    // The instance remembers the keys it took (src/sdk/idempotency.ts, takenRecently): no statement to wait for.
    const again = await send('outage-repeat');
    expect(again.status, again.text).toBe(201);
    expect(again.text).toBe(first.text);
    // A new key is a new receipt, which needs the database.
    expectUnavailable(await send('outage-new-key'));
  });

  it('a pool wait over DATABASE_WAIT_MS answers 503, not an endless wait', async () => {
    // 1 s, not less: set-up opens connections too, on a loaded machine.
    const { server } = await start({ databaseWaitMs: 1000 });
    const p = await sdkProject(server);
    proxy.cut();
    // Connections are accepted by the proxy but never answered: only the wait bound ends the request.
    proxy.delay(60_000);
    expectUnavailable(await server.request('GET', '/api/platform/auth/me', { token: p.owner.token }));
    proxy.delay(0);
    proxy.cut();
  });

  it('webhooks: the worker waits out an outage and never resends what its receiver acknowledged', async () => {
    let skewMs = 0;
    const { server, log } = await start({}, { now: () => new Date(Date.now() + skewMs) });
    const t = await sdkProject(server);
    const receiver: Receiver = await startReceiver(() => 'hold');
    try {
      const put = await server.request('PUT', `/api/platform/projects/${t.projectId}/webhook`, { token: t.owner.token, body: { url: receiver.url, enabled: true } });
      expect(put.status, put.text).toBe(200);
      const posted = await Promise.all(Array.from({ length: 10 }, () => postConsent(t)));
      expect(posted.map((r) => r.status)).toEqual(Array(10).fill(201));
      await receiver.until((received) => received.length >= 10);

      // The receiver acknowledges every delivery while the database is down.
      await proxy.refuse({ cut: true });
      receiver.behave(() => 200);
      receiver.release(200);
      // The worker has tried to record the attempts in the outage (before the fix it logged each failure).
      await until(() => log.lines.some((line) => line.msg === 'database unavailable' || line.msg.startsWith('webhook worker')), 'the outage met by the worker');
      await proxy.restore();

      // Leases run out: before the fix, the attempts whose recording failed in the outage were claimed and sent
      // again (the receiver saw 20 acknowledged deliveries of 10 events).
      skewMs = 60_000;
      await until(async () => {
        const [row] = await server.services.db.query<{ pending: number }>(`SELECT count(*)::int AS pending FROM webhook_events WHERE status = 'pending'`);
        return row!.pending === 0;
      }, 'every event recorded as delivered');
      // Another poll or two, to give a wrong resend its chance.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const acknowledged = receiver.received.filter((r) => r.answered === 200).map((r) => r.headers['x-consent-delivery']);
      expect(acknowledged).toHaveLength(10);
      expect(new Set(acknowledged).size).toBe(10);
      const events = await server.services.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM webhook_events');
      expect(events).toEqual(Array(10).fill({ status: 'succeeded', attempts: 1 }));
    } finally {
      await receiver.close();
    }
  });
});
