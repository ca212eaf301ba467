import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDue, webhookWorkerOf } from '../src/webhooks/worker.js';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { dropDatabase, freshDatabaseUrl, onPostgres, send, startTestServer, type TestServer } from './helpers/server.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';
import { publishVersion } from './helpers/versions.js';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js';

/**
 * Issue 19 part 5: Prometheus /metrics (docs/operations.md "Metrics"), counted from real requests.
 * On the METRICS_PORT listener with no token; on the public port only with METRICS_TOKEN as a bearer
 * token, otherwise the ordinary 404.
 */
const TOKEN = 'metrics-token-0123456789';

/** Prometheus text format → `name{labels}` (labels as written) → value. */
function parse(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

async function scrape(server: TestServer): Promise<Map<string, number>> {
  const res = await send(`http://127.0.0.1:${server.metricsPort}`, 'GET', '/metrics');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(res.text);
}

const value = (samples: Map<string, number>, key: string) => samples.get(key) ?? 0;
const seriesOf = (samples: Map<string, number>, name: string) => [...samples.keys()].filter((key) => key.startsWith(`${name}{`));

async function sdkTeam(server: TestServer) {
  const t = await team(server);
  const version = await publishVersion(server, t.owner, t.project.id);
  const key = await createKey(server, t.owner.token, t.project.id);
  const receipt = () =>
    server.request('POST', '/api/sdk/v1/consent', {
      token: key.secret,
      body: { versionId: version.id, consentHash: version.consentHash, choices: { analytics: true }, installationId: 'inst_0123456789abcdef' },
    });
  return { ...t, version, key, receipt };
}

describe('metrics on METRICS_PORT and behind METRICS_TOKEN', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ metricsPort: 0, metricsToken: TOKEN });
  });
  afterAll(() => server?.close());

  it('counts receipts written, their group-commit batches and the requests that posted them', async () => {
    const t = await sdkTeam(server);
    const before = await scrape(server);
    const posted = await Promise.all([t.receipt(), t.receipt(), t.receipt()]);
    expect(posted.map((res) => res.status)).toEqual([201, 201, 201]);
    const after = await scrape(server);

    expect(value(after, 'consent_receipts_written_total') - value(before, 'consent_receipts_written_total')).toBe(3);
    // Three receipts in one or more transactions: the batch sizes add up to three.
    expect(value(after, 'consent_receipt_batch_size_sum') - value(before, 'consent_receipt_batch_size_sum')).toBe(3);
    const batches = value(after, 'consent_receipt_batch_size_count') - value(before, 'consent_receipt_batch_size_count');
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(batches).toBeLessThanOrEqual(3);
    const consent = 'http_requests_total{route="/api/sdk/v1/consent",method="POST",status="201"}';
    expect(value(after, consent) - value(before, consent)).toBe(3);
    expect(
      value(after, 'http_request_duration_seconds_count{route="/api/sdk/v1/consent",method="POST"}') -
        value(before, 'http_request_duration_seconds_count{route="/api/sdk/v1/consent",method="POST"}'),
    ).toBe(3);
    expect(after.get('consent_receipt_queue_length')).toBe(0);
    expect(after.get('consent_receipts_shed_total')).toBe(0);
  });

  it('labels requests by route pattern and status: a 200 from memory, a 200 with a path parameter, a 404', async () => {
    const t = await sdkTeam(server);
    const before = await scrape(server);
    expect((await server.request('GET', '/api/sdk/v1/config', { token: t.key.secret })).status).toBe(200);
    expect((await server.request('GET', `/api/platform/projects/${t.project.id}/consent`, { token: t.owner.token })).status).toBe(200);
    expect((await server.request('GET', '/no/such/route')).status).toBe(404);
    const after = await scrape(server);
    const delta = (key: string) => value(after, key) - value(before, key);

    expect(delta('http_requests_total{route="/api/sdk/v1/config",method="GET",status="200"}')).toBe(1);
    expect(delta('http_requests_total{route="/api/platform/projects/:projectId/consent",method="GET",status="200"}')).toBe(1);
    expect(delta('http_requests_total{route="unmatched",method="GET",status="404"}')).toBe(1);
    // The raw URL never becomes a label.
    expect([...after.keys()].some((key) => key.includes(t.project.id) || key.includes('/no/such/route'))).toBe(false);
  });

  it('keeps one series for any number of unknown paths (no label per raw URL)', async () => {
    await server.request('GET', '/unknown-warm-up');
    const before = seriesOf(await scrape(server), 'http_requests_total');
    for (let i = 0; i < 50; i++) {
      expect((await server.request('GET', `/${randomBytes(8).toString('hex')}/${i}?q=${i}`)).status).toBe(404);
    }
    const after = await scrape(server);
    expect(seriesOf(after, 'http_requests_total')).toEqual(before);
    expect(value(after, 'http_requests_total{route="unmatched",method="GET",status="404"}')).toBeGreaterThanOrEqual(51);
  });

  it('reports the database pool, the outage state and the event-loop delay', async () => {
    const samples = await scrape(server);
    expect(samples.get('db_unavailable')).toBe(0);
    expect(samples.has('nodejs_eventloop_lag_p99_seconds')).toBe(true);
    expect(samples.get('db_pool_waiting')).toBe(0);
    // The embedded database has one connection and no pool: reported as one in use.
    if (!onPostgres) expect(samples.get('db_pool_connections_in_use')).toBe(1);
    else expect(samples.get('db_pool_connections_idle')).toBeGreaterThanOrEqual(1);
  });

  it('answers on the public port only with the token; a missing or wrong token is the ordinary 404', async () => {
    const right = await server.request('GET', '/metrics', { token: TOKEN });
    expect(right.status).toBe(200);
    expect(right.text).toContain('consent_receipts_written_total');

    const notFound = (await server.request('GET', '/no-such-page')).body;
    for (const token of [undefined, 'wrong', `${TOKEN}x`, TOKEN.slice(0, -1)]) {
      const res = await server.request('GET', '/metrics', { token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(notFound);
    }
    // The METRICS_PORT listener has /metrics and nothing else.
    expect((await send(`http://127.0.0.1:${server.metricsPort}`, 'GET', '/api/health')).status).toBe(404);
  });
});

describe('metrics off (the default)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('has no listener and /metrics is a 404 on the public port, whatever token is sent', async () => {
    expect(server.metricsPort).toBeUndefined();
    expect((await server.request('GET', '/metrics')).status).toBe(404);
    expect((await server.request('GET', '/metrics', { token: TOKEN })).status).toBe(404);
  });
});

describe('outbox and webhook metrics', () => {
  let server: TestServer;
  let receiver: Receiver;
  beforeAll(async () => {
    server = await startTestServer({ metricsPort: 0 });
    // The worker is paused: events wait in the outbox until the test delivers them.
    await webhookWorkerOf(server.services)!.stop();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('shows the pending backlog and its age, then the deliveries by outcome and their latency', async () => {
    const t = await sdkTeam(server);
    const put = await server.request('PUT', `/api/platform/projects/${t.project.id}/webhook`, { token: t.admin.token, body: { url: receiver.url, enabled: true } });
    expect(put.status).toBe(200);
    expect((await t.receipt()).status).toBe(201);
    expect((await t.receipt()).status).toBe(201);

    const waiting = await scrape(server);
    expect(waiting.get('webhook_outbox_pending')).toBe(2);
    expect(waiting.get('webhook_outbox_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(0);

    receiver.behave((_, index) => (index === 0 ? 500 : 200));
    await runDue(server.services);
    const delivered = await scrape(server);
    expect(delivered.get('webhook_deliveries_total{outcome="succeeded"}')).toBe(1);
    expect(delivered.get('webhook_deliveries_total{outcome="retrying"}')).toBe(1);
    expect(delivered.get('webhook_delivery_duration_seconds_count')).toBe(2);
    // The retrying event is still pending (later), the delivered one is not.
    expect(delivered.get('webhook_outbox_pending')).toBe(1);
  });
});

describe.runIf(onPostgres)('metrics during a database outage', () => {
  it('still answers 200, with db_unavailable 1 and the outbox gauges left out', async () => {
    const databaseUrl = (await freshDatabaseUrl({ migrated: true }))!;
    const target = new URL(databaseUrl);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const server = await startTestServer({ databaseUrl: proxy.url(databaseUrl), metricsPort: 0, databaseWaitMs: 300 });
    try {
      const t = await team(server);
      expect((await scrape(server)).has('webhook_outbox_pending')).toBe(true);
      await proxy.refuse({ cut: true });
      // A request meets the outage and the monitor notices it.
      expect((await server.request('GET', `/api/platform/projects/${t.project.id}/consent`, { token: t.owner.token })).status).toBe(503);
      const samples = await scrape(server);
      expect(samples.get('db_unavailable')).toBe(1);
      expect(samples.has('webhook_outbox_pending')).toBe(false);
      expect(samples.has('webhook_outbox_oldest_pending_age_seconds')).toBe(false);
    } finally {
      if (!proxy.listening) await proxy.restore();
      await server.close();
      await proxy.close();
      await dropDatabase(databaseUrl);
    }
  });
});
