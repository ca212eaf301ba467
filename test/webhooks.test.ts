import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Config } from '../src/config.js';
import { isAllowedAddress } from '../src/webhooks/address.js';
import { NO_ANSWER } from '../src/webhooks/send.js';
import { retryDelayMs, runDue, webhookWorkerOf } from '../src/webhooks/worker.js';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestResponse, type TestServer } from './helpers/server.js';
import { publishVersion } from './helpers/versions.js';
import { startReceiver, verifySignature, type Receiver } from './helpers/webhook-receiver.js';

/** Several teams register per server: lift the per-IP register and login limits. */
const start = (overrides: Partial<Config> = {}, options: { now?: () => Date } = {}) =>
  startTestServer(overrides, options);

/** Checks a real response against what /api/openapi.json promises for that route and status. */
async function documented(server: TestServer) {
  const doc = (await server.request('GET', '/api/openapi.json')).body;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(doc, 'openapi.json');
  return (method: string, path: string, res: TestResponse) => {
    const template = `/api/platform/projects/{projectId}/webhook${path}`;
    const content = doc.paths[template]?.[method.toLowerCase()]?.responses[String(res.status)]?.content?.['application/json'];
    expect(content, `${method} ${template} documents ${res.status}`).toBeDefined();
    const ref = `openapi.json#/paths/${template.replaceAll('/', '~1')}/${method.toLowerCase()}/responses/${res.status}/content/application~1json/schema`;
    const validate = ajv.compile({ $ref: ref });
    expect(validate(res.body), `${method} ${template} ${res.status}: ${JSON.stringify(validate.errors)} for ${res.text}`).toBe(true);
  };
}

const SECRET = /^whsec_[0-9A-Za-z]{32}$/;
const webhookPath = (projectId: string, rest = '') => `/api/platform/projects/${projectId}/webhook${rest}`;

/** A team whose project takes SDK receipts: a published version and a publishable key. */
async function sdkTeam(server: TestServer) {
  const t = await team(server);
  const version = await publishVersion(server, t.owner, t.project.id);
  const key = await createKey(server, t.owner.token, t.project.id);
  return { ...t, version, key };
}

/**
 * Stores a receipt through POST /api/sdk/v1/consent, as a visitor's browser
 * does, and returns the id of the consent.updated event it enqueued (if any).
 */
async function consentReceipt(server: TestServer, t: Awaited<ReturnType<typeof sdkTeam>>) {
  const posted = await server.request('POST', '/api/sdk/v1/consent', {
    token: t.key.secret,
    body: {
      versionId: t.version.id,
      consentHash: t.version.consentHash,
      choices: { analytics: true, marketing: false },
      installationId: INSTALLATION,
      sdkVersion: '1.0.0',
    },
  });
  expect(posted.status, posted.text).toBe(201);
  const [event] = await server.services.db.query<{ id: string }>(
    `SELECT id FROM webhook_events WHERE payload->'data'->>'receiptId' = $1`,
    [posted.body.id],
  );
  return event?.id as string;
}

const INSTALLATION = 'inst_4fJ9kQ2x';

async function configure(server: TestServer, t: Awaited<ReturnType<typeof team>>, url: string) {
  const put = await server.request('PUT', webhookPath(t.project.id), { token: t.admin.token, body: { url, enabled: true } });
  expect(put.status).toBe(200);
  return put.body.secret as string;
}

describe('webhook configuration', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => server?.close());

  it('starts empty, is created by an Admin with a secret shown once, and updated without one', async () => {
    const t = await team(server);
    const empty = await server.request('GET', webhookPath(t.project.id), { token: t.viewer.token });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ webhook: null });

    const created = await server.request('PUT', webhookPath(t.project.id), {
      token: t.admin.token,
      body: { url: 'https://hooks.example.com/consent', enabled: true },
    });
    expect(created.status).toBe(200);
    expect(created.body.secret).toMatch(SECRET);
    expect(created.body.webhook).toEqual({
      url: 'https://hooks.example.com/consent',
      enabled: true,
      secretPrefix: created.body.secret.slice(0, 12),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });

    const updated = await server.request('PUT', webhookPath(t.project.id), {
      token: t.admin.token,
      body: { url: 'https://hooks.example.com/v2', enabled: false },
    });
    expect(updated.status).toBe(200);
    expect(Object.keys(updated.body)).toEqual(['webhook']);
    expect(updated.body.webhook).toMatchObject({ url: 'https://hooks.example.com/v2', enabled: false, secretPrefix: created.body.webhook.secretPrefix });

    const read = await server.request('GET', webhookPath(t.project.id), { token: t.viewer.token });
    expect(read.body.webhook).toEqual(updated.body.webhook);
    expect(JSON.stringify(read.body)).not.toContain(created.body.secret);
  });

  it('lets only Admins configure and test, only Owners rotate, and hides the project from outsiders', async () => {
    const t = await team(server);
    const body = { url: 'https://hooks.example.com/consent', enabled: true };
    expect((await server.request('PUT', webhookPath(t.project.id), { token: t.viewer.token, body })).status).toBe(403);
    expect((await server.request('GET', webhookPath(t.project.id), { token: t.outsider.token })).status).toBe(404);
    expect((await server.request('PUT', webhookPath(t.project.id), { token: t.outsider.token, body })).status).toBe(404);
    expect((await server.request('GET', webhookPath(t.project.id))).status).toBe(401);
    const none = await server.request('POST', webhookPath(t.project.id, '/secret'), { token: t.owner.token });
    expect(none.status).toBe(404);

    const first = await configure(server, t, body.url);
    expect((await server.request('POST', webhookPath(t.project.id, '/secret'), { token: t.admin.token })).status).toBe(403);
    expect((await server.request('POST', webhookPath(t.project.id, '/test'), { token: t.viewer.token })).status).toBe(403);

    const rotated = await server.request('POST', webhookPath(t.project.id, '/secret'), { token: t.owner.token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(SECRET);
    expect(rotated.body.secret).not.toBe(first);
    expect(rotated.body.webhook.secretPrefix).toBe(rotated.body.secret.slice(0, 12));
  });

  it('answers every webhook route as the OpenAPI document describes', async () => {
    const check = await documented(server);
    const t = await team(server);
    const path = (rest = '') => webhookPath(t.project.id, rest);
    const call = (method: string, rest: string, token?: string, body?: unknown) => server.request(method, path(rest), { token, body });
    check('GET', '', await call('GET', '', t.viewer.token));
    check('GET', '', await call('GET', '', t.outsider.token));
    check('GET', '', await call('GET', ''));
    check('POST', '/secret', await call('POST', '/secret', t.owner.token));
    check('POST', '/test', await call('POST', '/test', t.admin.token));
    check('PUT', '', await call('PUT', '', t.viewer.token, { url: 'https://hooks.example.com/' }));
    check('PUT', '', await call('PUT', '', t.admin.token, { url: 'ftp://hooks.example.com/' }));
    check('PUT', '', await call('PUT', '', t.admin.token, { url: 'http://127.0.0.1:1/closed' }));
    check('PUT', '', await call('PUT', '', t.admin.token, { url: 'http://127.0.0.1:1/closed', enabled: true }));
    check('GET', '', await call('GET', '', t.viewer.token));
    check('POST', '/secret', await call('POST', '/secret', t.admin.token));
    check('POST', '/secret', await call('POST', '/secret', t.owner.token));
    check('POST', '/test', await call('POST', '/test', t.viewer.token));
    check('POST', '/test', await call('POST', '/test', t.admin.token));
    check('GET', '/deliveries', await call('GET', '/deliveries?limit=1', t.viewer.token));
    check('GET', '/deliveries', await call('GET', '/deliveries?limit=0', t.viewer.token));
    check('GET', '/deliveries', await call('GET', '/deliveries', t.outsider.token));
  });

  it('refuses URLs that are not https (http only to this machine) and changes nothing', async () => {
    const t = await team(server);
    for (const url of ['ftp://hooks.example.com/', 'http://hooks.example.com/consent', 'not a url', 'https://user:pw@hooks.example.com/']) {
      const refused = await server.request('PUT', webhookPath(t.project.id), { token: t.admin.token, body: { url, enabled: true } });
      expect(refused.status, url).toBe(400);
      expect(refused.body.code).toBe('validation_failed');
      expect(refused.body.details[0].path).toEqual(['url']);
    }
    const missing = await server.request('PUT', webhookPath(t.project.id), { token: t.admin.token, body: { enabled: true } });
    expect(missing.status).toBe(400);
    expect((await server.request('GET', webhookPath(t.project.id), { token: t.admin.token })).body.webhook).toBeNull();

    for (const url of ['http://localhost:8080/hook', 'http://127.0.0.1:9/hook', 'http://[::1]:9/hook']) {
      const local = await server.request('PUT', webhookPath(t.project.id), { token: t.admin.token, body: { url, enabled: true } });
      expect(local.status, url).toBe(200);
    }
  });
});

describe('webhook deliveries', () => {
  let server: TestServer;
  let receiver: Receiver;
  beforeAll(async () => {
    server = await start();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('delivers consent.updated signed with the secret, with the documented headers and body', async () => {
    const t = await sdkTeam(server);
    const secret = await configure(server, t, receiver.url);
    const eventId = await consentReceipt(server, t);
    await receiver.until((all) => all.some((r) => r.json?.id === eventId));
    const delivery = receiver.received.find((r) => r.json?.id === eventId)!;

    expect(verifySignature(delivery, secret)).toBe(true);
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['x-consent-event']).toBe('consent.updated');
    expect(delivery.headers['x-consent-delivery']).toBe(eventId);
    expect(Object.keys(delivery.json)).toEqual(['id', 'type', 'createdAt', 'data']);
    expect(delivery.json).toMatchObject({ id: eventId, type: 'consent.updated', createdAt: expect.stringMatching(/\.\d{3}Z$/) });
    // The installation id travels; nothing that identifies a person or an operator does.
    expect(Object.keys(delivery.json.data).sort()).toEqual(
      ['choices', 'consentHash', 'installationId', 'projectId', 'receiptId', 'versionId', 'versionNumber'].sort(),
    );
    expect(delivery.json.data).toEqual({
      projectId: t.project.id,
      receiptId: expect.any(String),
      versionId: t.version.id,
      versionNumber: 1,
      consentHash: t.version.consentHash,
      choices: { necessary: true, analytics: true, marketing: false },
      installationId: INSTALLATION,
    });

    // The attempt is recorded right after the receiver answers.
    const log = () => server.request('GET', webhookPath(t.project.id, '/deliveries'), { token: t.viewer.token });
    await expect.poll(async () => (await log()).body.deliveries.length).toBe(1);
    const [entry] = (await log()).body.deliveries;
    expect(entry).toMatchObject({ eventId, eventType: 'consent.updated', attempt: 1, status: 'succeeded', responseStatus: 200, error: null, nextRetryAt: null });
  });

  it('signs the next delivery with a rotated secret', async () => {
    const t = await sdkTeam(server);
    const oldSecret = await configure(server, t, receiver.url);
    const before = await consentReceipt(server, t);
    await receiver.until((all) => all.some((r) => r.json?.id === before));
    const rotated = await server.request('POST', webhookPath(t.project.id, '/secret'), { token: t.owner.token });
    const after = await consentReceipt(server, t);
    await receiver.until((all) => all.some((r) => r.json?.id === after));
    const delivery = receiver.received.find((r) => r.json?.id === after)!;
    expect(verifySignature(delivery, rotated.body.secret)).toBe(true);
    expect(verifySignature(delivery, oldSecret)).toBe(false);
  });

  it('writes no event for a project without an enabled webhook', async () => {
    const t = await sdkTeam(server);
    await consentReceipt(server, t);
    await server.request('PUT', webhookPath(t.project.id), { token: t.admin.token, body: { url: receiver.url, enabled: false } });
    await consentReceipt(server, t);
    expect(await server.services.db.prisma.webhookEvent.count({ where: { projectId: t.project.id } })).toBe(0);
  });

  it('sends a signed webhook.test on demand and reports the answer', async () => {
    const t = await team(server);
    const secret = await configure(server, t, receiver.url);
    const ok = await server.request('POST', webhookPath(t.project.id, '/test'), { token: t.admin.token });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ delivery: { status: 'succeeded', responseStatus: 200, durationMs: expect.any(Number) } });
    const sent = receiver.received.find((r) => r.headers['x-consent-event'] === 'webhook.test' && r.json?.data?.projectId === t.project.id)!;
    expect(verifySignature(sent, secret)).toBe(true);
    expect(sent.json).toMatchObject({ type: 'webhook.test', id: sent.headers['x-consent-delivery'] });

    receiver.behave(() => 500);
    const failed = await server.request('POST', webhookPath(t.project.id, '/test'), { token: t.admin.token });
    expect(failed.body.delivery).toMatchObject({ status: 'failed', responseStatus: 500, error: 'HTTP 500' });

    receiver.behave(() => 302);
    const redirected = await server.request('POST', webhookPath(t.project.id, '/test'), { token: t.admin.token });
    expect(redirected.body.delivery).toMatchObject({ status: 'failed', responseStatus: 302, error: expect.stringContaining('redirect') });
    receiver.behave(() => 200);

    await server.request('PUT', webhookPath(t.project.id), { token: t.admin.token, body: { url: 'http://127.0.0.1:1/closed' } });
    const refused = await server.request('POST', webhookPath(t.project.id, '/test'), { token: t.admin.token });
    expect(refused.body.delivery).toMatchObject({ status: 'failed', responseStatus: null, error: NO_ANSWER });

    const log = await server.request('GET', webhookPath(t.project.id, '/deliveries'), { token: t.viewer.token });
    expect(log.body.deliveries.map((d: { eventType: string; status: string }) => [d.eventType, d.status])).toEqual([
      ['webhook.test', 'failed'],
      ['webhook.test', 'failed'],
      ['webhook.test', 'failed'],
      ['webhook.test', 'succeeded'],
    ]);
  });
});

describe('retries, timeouts and giving up (moved clock)', () => {
  let server: TestServer;
  let receiver: Receiver;
  let now = new Date('2026-11-23T10:00:00.000Z');
  const base = 5000;
  beforeAll(async () => {
    server = await start({ webhookRetryBaseMs: base }, { now: () => now });
    // Drive deliveries by hand: the clock moves only when the test says so.
    await webhookWorkerOf(server.services)!.stop();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  const deliveries = async (t: Awaited<ReturnType<typeof team>>) =>
    (await server.request('GET', webhookPath(t.project.id, '/deliveries?limit=200'), { token: t.viewer.token })).body.deliveries;

  it('retries with exponential backoff and jitter until one delivery succeeds', async () => {
    const t = await sdkTeam(server);
    const secret = await configure(server, t, receiver.url);
    let failuresLeft = 3;
    receiver.behave(() => (failuresLeft-- > 0 ? 503 : 200));
    const eventId = await consentReceipt(server, t);

    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await runDue(server.services)).toEqual(['retrying']);
      expect(await runDue(server.services)).toEqual([]); // not due again until the backoff passes
      const [latest] = await deliveries(t);
      expect(latest).toMatchObject({ eventId, attempt, status: 'failed', responseStatus: 503 });
      const waited = new Date(latest.nextRetryAt).getTime() - now.getTime();
      expect(waited).toBeGreaterThanOrEqual(0.8 * base * 2 ** (attempt - 1));
      expect(waited).toBeLessThanOrEqual(1.2 * base * 2 ** (attempt - 1));
      now = new Date(latest.nextRetryAt);
    }
    expect(await runDue(server.services)).toEqual(['succeeded']);
    now = new Date(now.getTime() + 48 * 3_600_000);
    expect(await runDue(server.services)).toEqual([]);

    const forEvent = receiver.received.filter((r) => r.json?.id === eventId);
    expect(forEvent).toHaveLength(4);
    expect(forEvent.filter((r) => r.answered === 200)).toHaveLength(1);
    expect(forEvent.every((r) => verifySignature(r, secret) && r.headers['x-consent-delivery'] === eventId)).toBe(true);
    expect((await deliveries(t)).map((d: { attempt: number; status: string }) => `${d.attempt}:${d.status}`)).toEqual([
      '4:succeeded',
      '3:failed',
      '2:failed',
      '1:failed',
    ]);
  });

  /** Moves the clock from one due attempt to the next until no event of the project is pending. */
  async function deliverUntilSettled(projectId: string) {
    for (;;) {
      await runDue(server.services);
      const next = await server.services.db.prisma.webhookEvent.findFirst({
        where: { projectId, status: 'pending' },
        orderBy: { nextAttemptAt: 'asc' },
      });
      if (!next) return;
      now = next.nextAttemptAt;
    }
  }

  it('gives up 24 hours after the event and notifies admins once per failing streak', async () => {
    const t = await sdkTeam(server);
    await configure(server, t, receiver.url);
    receiver.behave(() => 500);
    const start = now;
    const first = await consentReceipt(server, t);
    const second = await consentReceipt(server, t);
    await deliverUntilSettled(t.project.id);
    const events = await server.services.db.prisma.webhookEvent.findMany({ where: { projectId: t.project.id } });
    expect(events.map((e) => e.status)).toEqual(['failed', 'failed']);
    for (const event of events) {
      expect(event.completedAt!.getTime() - start.getTime()).toBeLessThanOrEqual(24 * 3_600_000);
      expect(event.completedAt!.getTime() - start.getTime()).toBeGreaterThan(22 * 3_600_000);
    }
    // Backoff doubles from 5 s and is capped at an hour: about 33 attempts in 24 hours.
    expect(events[0]!.attempts).toBeGreaterThan(25);
    expect(events[0]!.attempts).toBeLessThan(40);
    expect(receiver.received.filter((r) => r.json?.id === first)).toHaveLength(events.find((e) => e.id === first)!.attempts);
    expect(receiver.received.filter((r) => r.json?.id === second)).toHaveLength(events.find((e) => e.id === second)!.attempts);
    const lastAttempt = (await deliveries(t)).find((d: { eventId: string }) => d.eventId === first);
    expect(lastAttempt).toMatchObject({ status: 'failed', nextRetryAt: null });

    const failing = () =>
      server.services.db.prisma.notification.findMany({ where: { projectId: t.project.id, type: 'consent.webhook_failing' } });
    const notified = await failing();
    expect(notified.map((n) => n.userId).sort()).toEqual([t.owner.id, t.admin.id].sort());
    expect(notified[0]).toMatchObject({ product: 'consent', organizationId: t.org.id });

    // A success ends the streak; the next permanent failure notifies again.
    receiver.behave(() => 200);
    await consentReceipt(server, t);
    expect(await runDue(server.services)).toEqual(['succeeded']);
    receiver.behave(() => 500);
    await consentReceipt(server, t);
    await deliverUntilSettled(t.project.id);
    expect(await failing()).toHaveLength(4);
    receiver.behave(() => 200);
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const t = await sdkTeam(server);
    await configure(server, t, receiver.url);
    receiver.behave(() => 'hold');
    const eventId = await consentReceipt(server, t);
    expect(await runDue(server.services, { timeoutMs: 300 })).toEqual(['retrying']);
    receiver.release();
    receiver.behave(() => 200);
    const [attempt] = await deliveries(t);
    expect(attempt).toMatchObject({ eventId, status: 'failed', responseStatus: null, error: NO_ANSWER });
  });

  it('pages through the delivery log newest first', async () => {
    const t = await sdkTeam(server);
    await configure(server, t, receiver.url);
    for (let i = 0; i < 5; i++) {
      await consentReceipt(server, t);
      await runDue(server.services);
      now = new Date(now.getTime() + 1000);
    }
    const all = await deliveries(t);
    expect(all).toHaveLength(5);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
      const page = await server.request('GET', webhookPath(t.project.id, `/deliveries${query}`), { token: t.viewer.token });
      expect(page.status).toBe(200);
      expect(page.body.deliveries.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.deliveries.map((d: { id: string }) => d.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.map((d: { id: string }) => d.id));
    const createdAt = all.map((d: { createdAt: string }) => d.createdAt);
    expect([...createdAt].sort().reverse()).toEqual(createdAt);

    for (const query of ['?limit=0', '?limit=201', '?limit=abc', '?cursor=nonsense']) {
      const bad = await server.request('GET', webhookPath(t.project.id, `/deliveries${query}`), { token: t.viewer.token });
      expect(bad.status, query).toBe(400);
      expect(bad.body.code).toBe('validation_failed');
    }
    expect((await server.request('GET', webhookPath(t.project.id, '/deliveries'), { token: t.outsider.token })).status).toBe(404);
  });
});

// Before the fix these were accepted outside production, and the test-send named the failure.
describe('SSRF guard in every environment (development server)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await start(); // NODE_ENV=test: not production
  });
  afterAll(() => server?.close());

  const INTERNAL = [
    'https://169.254.169.254/latest/meta-data/',
    'https://2852039166/', // decimal 169.254.169.254
    'https://0xa9fea9fe/', // hex
    'https://0251.0376.0251.0376/', // octal
    'https://[::ffff:a9fe:a9fe]/', // IPv4-mapped
    'https://[::a9fe:a9fe]/', // IPv4-compatible
    'https://[::7f00:1]/', // IPv4-compatible loopback
    'https://[64:ff9b::a9fe:a9fe]/', // NAT64
    'https://[2002:a9fe:a9fe::]/', // 6to4
    'https://[2001::a9fe:a9fe]/', // Teredo
    'https://10.1.2.3/',
    'https://172.20.0.1/',
    'https://192.168.1.1/',
    'https://100.64.0.1/', // CGNAT
    'https://[fe80::1]/',
    'https://[fd00:ec2::254]/', // unique-local (AWS metadata)
    'https://224.0.0.1/',
    'https://[ff02::1]/',
    'https://0.0.0.0/',
    'https://[::]/',
    // Cloud platforms' own hosts at public unicast addresses (src/webhooks/address.ts, docs/security.md).
    'https://168.63.129.16/', // Azure WireServer
    'https://[::ffff:a83f:8110]/', // the same, IPv4-mapped
    'https://161.26.0.10/', // IBM Cloud service network (DNS)
    'https://166.9.0.1/', // IBM Cloud private service endpoints
  ];

  it('the scanner refuses what webhooks refuse: one rule, with the cloud platforms’ public-unicast hosts', () => {
    // The scanner's guard proxy asks this function for every address a page reaches (src/scanner/worker.ts).
    for (const address of ['168.63.129.16', '::ffff:168.63.129.16', '161.26.0.11', '166.8.0.1', '166.11.255.254']) expect(isAllowedAddress(address), address).toBe(false);
    // Their neighbours are ordinary public addresses.
    for (const address of ['168.63.129.15', '168.63.129.17', '161.25.255.255', '161.27.0.1', '166.7.255.255', '166.12.0.0', '8.8.8.8']) expect(isAllowedAddress(address), address).toBe(true);
  });

  it('refuses URLs that are or resolve to private, link-local, metadata, CGNAT, unique-local, multicast or unspecified addresses, in any notation', async () => {
    const t = await team(server);
    for (const url of INTERNAL) {
      const put = await server.request('PUT', webhookPath(t.project.id), { token: t.admin.token, body: { url, enabled: true } });
      expect(put.status, url).toBe(400);
      expect(put.body.code).toBe('validation_failed');
      expect(put.body.details[0].path).toEqual(['url']);
      expect(put.text).not.toContain('169.254'); // what a name resolved to is never told
    }
    expect((await server.request('GET', webhookPath(t.project.id), { token: t.admin.token })).body.webhook).toBeNull();
    // Loopback stays allowed in development (tests and local receivers need it).
    for (const url of ['http://localhost:9/hook', 'http://127.0.0.1:9/hook', 'http://[::1]:9/hook', 'https://127.0.0.2/']) {
      expect((await server.request('PUT', webhookPath(t.project.id), { token: t.admin.token, body: { url } })).status, url).toBe(200);
    }
  });

  it('checks again at send: a stored internal address is never connected to, and every unreachable destination reads the same', async () => {
    const t = await team(server);
    await configure(server, t, 'http://127.0.0.1:1/closed');
    const testSend = () => server.request('POST', webhookPath(t.project.id, '/test'), { token: t.admin.token });
    const closedPort = await testSend();
    // As if the row held an address saved before the rule, or a name rebound since.
    await server.services.db.prisma.webhook.update({ where: { projectId: t.project.id }, data: { url: 'https://169.254.169.254/latest/meta-data/' } });
    const metadata = await testSend();
    await server.services.db.prisma.webhook.update({ where: { projectId: t.project.id }, data: { url: 'https://no-such-host.invalid/' } });
    const unknownHost = await testSend();
    for (const res of [closedPort, metadata, unknownHost]) {
      expect(res.status).toBe(200);
      expect(res.body.delivery).toMatchObject({ status: 'failed', responseStatus: null, error: NO_ANSWER });
    }
  });
});

describe('SSRF guard in production', () => {
  let server: TestServer;
  let receiver: Receiver;
  beforeAll(async () => {
    server = await start({ production: true, nodeEnv: 'production' });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('refuses http, and hosts that are or resolve to internal addresses', async () => {
    const t = await team(server);
    const refused = [
      `http://localhost:${receiver.port}/`,
      'https://localhost/',
      'https://127.0.0.1/',
      'https://0.0.0.0/',
      'https://10.1.2.3/',
      'https://172.20.0.1/',
      'https://192.168.1.1/',
      'https://100.64.0.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::1]/',
      'https://[fe80::1]/',
      'https://[fd00:ec2::254]/',
      'https://[::ffff:10.0.0.1]/',
    ];
    for (const url of refused) {
      const put = await server.request('PUT', webhookPath(t.project.id), { token: t.admin.token, body: { url, enabled: true } });
      expect(put.status, url).toBe(400);
      expect(put.body.details[0].path).toEqual(['url']);
    }
    const pub = await server.request('PUT', webhookPath(t.project.id), { token: t.admin.token, body: { url: 'https://93.184.215.14/hook', enabled: true } });
    expect(pub.status).toBe(200);
  });

  it('checks the address again when delivering (a host rebound to an internal address gets nothing)', async () => {
    const t = await team(server);
    await configure(server, t, 'https://93.184.215.14/hook');
    // As if DNS for the configured host now answered with this machine.
    await server.services.db.prisma.webhook.update({ where: { projectId: t.project.id }, data: { url: `http://localhost:${receiver.port}/` } });
    const test = await server.request('POST', webhookPath(t.project.id, '/test'), { token: t.admin.token });
    expect(test.body.delivery).toMatchObject({ status: 'failed', responseStatus: null, error: NO_ANSWER });
    expect(receiver.received).toHaveLength(0);
  });
});

describe('retry schedule (decisions.md: min(2^(n-1) × base, 1 h) ± 20 %)', () => {
  it('doubles from the base, caps at one hour, and jitters within ±20 %', () => {
    const base = 5000;
    for (const [retry, delay] of [[1, 5000], [2, 10_000], [3, 20_000], [10, 2_560_000], [11, 3_600_000], [40, 3_600_000]] as const) {
      expect(retryDelayMs(retry, base, () => 0.5), `retry ${retry}`).toBe(delay);
      expect(retryDelayMs(retry, base, () => 0)).toBe(Math.round(delay * 0.8));
      expect(retryDelayMs(retry, base, () => 1)).toBe(Math.round(delay * 1.2));
    }
  });
});
