import { rmSync } from 'node:fs';
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { operator, organization, project } from './helpers/fixtures.js';
import { freshDatabaseUrl, onPostgres, send, type TestServer } from './helpers/server.js';
import { putDraft, publish } from './helpers/consent.js';
import { createKey } from './helpers/sdk.js';
import { connectSql, freePort, migratedDataDir, spawnService, type ServiceProcess } from './helpers/service-process.js';
import { startReceiver, verifySignature, type Receiver } from './helpers/webhook-receiver.js';

// The service as it runs in production: separate processes, killed and restarted.
// Embedded database on disk by default; PostgreSQL when TEST_DATABASE_URL is set.

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function database(): Promise<{ env: Record<string, string>; target: { databaseUrl?: string; dataDir?: string } }> {
  if (onPostgres) {
    const databaseUrl = (await freshDatabaseUrl())!;
    return { env: { DATABASE_URL: databaseUrl }, target: { databaseUrl } };
  }
  const dataDir = migratedDataDir('webhooks-');
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  return { env: { DATA_DIR: dataDir }, target: { dataDir } };
}

async function start(env: Record<string, string>, port?: number): Promise<ServiceProcess> {
  const service = await spawnService(env, port ?? (await freePort()));
  cleanups.push(() => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
    return service.exited;
  });
  return service;
}

/**
 * An operator, organization and project with a published consent version, a
 * publishable key and a webhook pointing at the receiver.
 */
async function projectWithWebhook(service: ServiceProcess, receiver: Receiver) {
  const client = clientOf(service);
  const owner = await operator(client);
  const org = await organization(client, owner);
  const proj = await project(client, owner, org.id);
  await putDraft(client, owner, proj.id);
  const version = await publish(client, owner, proj.id);
  const key = await createKey(client, owner.token, proj.id);
  const put = await client.request('PUT', `/api/platform/projects/${proj.id}/webhook`, {
    token: owner.token,
    body: { url: receiver.url, enabled: true },
  });
  expect(put.status).toBe(200);
  return { projectId: proj.id, secret: put.body.secret as string, version, key };
}

const clientOf = (service: ServiceProcess) =>
  ({ request: (method: string, path: string, options?: object) => send(service.url, method, path, options) }) as TestServer;

/**
 * Visitors' receipts through POST /api/sdk/v1/consent, `parallel` at a time,
 * spread over the given service processes; returns the receipt ids.
 */
async function postReceipts(services: ServiceProcess[], sdk: Awaited<ReturnType<typeof projectWithWebhook>>, count: number, parallel = 25) {
  const ids: string[] = [];
  for (let start = 0; start < count; start += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - start) }, async (_, i) => {
      const n = start + i;
      const posted = await clientOf(services[n % services.length]!).request('POST', '/api/sdk/v1/consent', {
        token: sdk.key.secret,
        body: {
          versionId: sdk.version.id,
          consentHash: sdk.version.consentHash,
          choices: { analytics: n % 2 === 0 },
          // One installation per visitor: the per-installation rate limit stays out of the way.
          installationId: `inst_${String(n).padStart(8, '0')}`,
        },
      });
      expect(posted.status, posted.text).toBe(201);
      return posted.body.id as string;
    });
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

async function receiver(behaviour?: Parameters<typeof startReceiver>[0]) {
  const started = await startReceiver(behaviour);
  cleanups.push(() => started.close());
  return started;
}

async function sql(target: { databaseUrl?: string; dataDir?: string }): Promise<pg.Client> {
  const client = await connectSql(target);
  cleanups.push(() => client.end().catch(() => {}));
  return client;
}

const eventStates = async (client: pg.Client, projectId: string) =>
  (
    await client.query<{ id: string; status: string; attempts: number; succeeded: number }>(
      `SELECT e.id, e.status, e.attempts,
              (SELECT count(*)::int FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'succeeded') AS succeeded
       FROM webhook_events e WHERE e.project_id = $1`,
      [projectId],
    )
  ).rows;

/** True once the event of every receipt has been answered 200 (one pass: the receiver checks on every request). */
const allAnswered = (receiptIds: string[]) => (received: Receiver['received']) => {
  const ok = new Set(received.filter((r) => r.answered === 200).map((r) => r.json.data.receiptId as string));
  return receiptIds.every((id) => ok.has(id));
};

describe('a service process', () => {
  it('loses nothing when killed with SIGKILL mid-delivery: pending and leased events are delivered after restart', async () => {
    const db = await database();
    const hook = await receiver(() => 'hold');
    const port = await freePort();
    let service = await start(db.env, port);
    const sdk = await projectWithWebhook(service, hook);
    const { projectId, secret } = sdk;

    // More events than one instance sends at once: some are in flight (leased), the rest wait in the outbox.
    const ids = await postReceipts([service], sdk, 100);
    await hook.until((received) => received.length >= 20);

    service.child.kill('SIGKILL');
    expect(await service.exited).toBeNull();
    hook.behave(() => 200);

    service = await start(db.env, port);
    // Leases of the killed process run out after the request timeout plus a margin.
    await hook.until(allAnswered(ids), 90_000);

    const client = await sql(db.target);
    await expect.poll(async () => (await eventStates(client, projectId)).filter((e) => e.status === 'succeeded').length, { timeout: 10_000 }).toBe(100);
    for (const event of await eventStates(client, projectId)) expect(event.succeeded).toBe(1);
    expect(hook.received.every((r) => verifySignature(r, secret))).toBe(true);
  }, 180_000);

  it('finishes in-flight deliveries on SIGTERM and records them before it exits', async () => {
    const db = await database();
    const hook = await receiver(() => 'hold');
    const port = await freePort();
    let service = await start(db.env, port);
    const sdk = await projectWithWebhook(service, hook);
    const ids = await postReceipts([service], sdk, 5);
    await hook.until((received) => received.length === 5);

    service.child.kill('SIGTERM');
    // Once it stops accepting requests it is shutting down; then the receiver answers.
    await expect.poll(() => fetch(`${service.url}/api/ready`).then(() => 'up', () => 'down'), { timeout: 10_000 }).toBe('down');
    hook.release(200);
    expect(await service.exited).toBe(0);

    service = await start(db.env, port);
    const client = await sql(db.target);
    const states = await eventStates(client, sdk.projectId);
    expect(states.map((e) => [e.status, e.attempts, e.succeeded])).toEqual(ids.map(() => ['succeeded', 1, 1]));
    expect(hook.received).toHaveLength(5);
  }, 120_000);
});

describe('two service processes on one PostgreSQL', () => {
  it.skipIf(!onPostgres)('deliver each event exactly once under load (needs TEST_DATABASE_URL: the embedded database serves one process)', async () => {
    const db = await database();
    const hook = await receiver();
    const instances = await Promise.all([start(db.env), start(db.env)]);
    const sdk = await projectWithWebhook(instances[0], hook);
    const { projectId } = sdk;

    // 1,000 receipts posted to both instances while both deliver.
    const ids = await postReceipts(instances, sdk, 1000);
    await hook.until(allAnswered(ids), 60_000);
    const client = await sql(db.target);
    await expect.poll(async () => (await eventStates(client, projectId)).filter((e) => e.status === 'succeeded').length, { timeout: 10_000 }).toBe(ids.length);

    const perEvent = new Map<string, number>();
    for (const request of hook.received) perEvent.set(request.json.id, (perEvent.get(request.json.id) ?? 0) + 1);
    const twice = [...perEvent].filter(([, count]) => count > 1).map(([id]) => id);
    const attempts = twice.length
      ? (await client.query('SELECT event_id, attempt, status, error, created_at FROM webhook_deliveries WHERE event_id = ANY($1)', [twice])).rows
      : [];
    expect(twice, `sent more than once: ${JSON.stringify(attempts)}`).toEqual([]);
    expect(hook.received).toHaveLength(ids.length);
  }, 120_000);
});
