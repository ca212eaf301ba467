import { afterEach, describe, expect, it } from 'vitest';
import { readKeys } from '../verify/ledger.mjs';
import { verifyExport } from '../verify/verify-export.mjs';
import { putDraft, publish } from './helpers/consent.js';
import { operator, organization, project } from './helpers/fixtures.js';
import { TEST_LEDGER_SIGNING_KEY } from './helpers/ledger.js';
import { createKey } from './helpers/sdk.js';
import { dropDatabase, freshDatabaseUrl, onPostgres, send, type TestServer } from './helpers/server.js';
import { connectSql, freePort, spawnService, type ServiceProcess } from './helpers/service-process.js';

// The ledger's promise under the worst a deployment does: two service processes writing and sealing on one
// PostgreSQL, one of them killed with SIGKILL in the middle of the load. Every receipt a visitor was told
// was stored (201) must end up in exactly one checkpoint within a minute, and so must every receipt that
// committed without its answer reaching anyone (the killed process's last batch).

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await spawnService(env, await freePort());
  cleanups.push(() => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
    return service.exited;
  });
  return service;
}

const clientOf = (service: ServiceProcess) =>
  ({ request: (method: string, path: string, options?: object) => send(service.url, method, path, options) }) as TestServer;

describe('the ledger with two service processes on one PostgreSQL', () => {
  it.skipIf(!onPostgres)('seals every committed receipt into exactly one checkpoint within a minute when one process is killed mid-load (needs TEST_DATABASE_URL)', async () => {
    const databaseUrl = (await freshDatabaseUrl({ migrated: true }))!;
    cleanups.push(() => dropDatabase(databaseUrl));
    const env = {
      DATABASE_URL: databaseUrl,
      LEDGER_SIGNING_KEY: TEST_LEDGER_SIGNING_KEY,
      // Both seal often, so the kill is likely to land inside a sealing transaction too.
      LEDGER_SEAL_INTERVAL_MS: '200',
      RATE_LIMIT_SDK_CONSENT_PER_MINUTE: '1000000',
      RATE_LIMIT_SDK_CONSENT_PER_ADDRESS_PER_MINUTE: '1000000',
    };
    const [survivor, victim] = await Promise.all([start(env), start(env)]);

    const client = clientOf(survivor);
    const owner = await operator(client);
    const org = await organization(client, owner);
    const proj = await project(client, owner, org.id);
    await putDraft(client, owner, proj.id);
    const version = await publish(client, owner, proj.id);
    const key = await createKey(client, owner.token, proj.id);

    // Visitors post to both processes, 16 at a time each, until the survivor has acknowledged 1,500.
    const acknowledged: string[] = [];
    let posted = 0;
    let killed = false;
    let survivorAcks = 0;
    const visitor = async (target: ServiceProcess, isVictim: boolean) => {
      while (survivorAcks < 1500 && !(isVictim && killed)) {
        const n = posted++;
        try {
          const res = await clientOf(target).request('POST', '/api/sdk/v1/consent', {
            token: key.secret,
            body: { versionId: version.id, consentHash: version.consentHash, choices: { analytics: n % 2 === 0 }, installationId: `inst_${n}` },
          });
          if (res.status === 201) {
            acknowledged.push(res.body.id);
            if (!isVictim) survivorAcks++;
          }
        } catch {
          // The killed process: no answer, so nothing was promised.
        }
      }
    };
    const load = [...Array.from({ length: 16 }, () => visitor(survivor, false)), ...Array.from({ length: 16 }, () => visitor(victim, true))];
    // Kill once the victim has acknowledged receipts and sealed some: mid-load, mid-sealing.
    const sql = await connectSql({ databaseUrl });
    cleanups.push(() => sql.end().catch(() => {}));
    await expect
      .poll(async () => Number((await sql.query('SELECT count(*) AS n FROM ledger_checkpoints WHERE project_id = $1', [proj.id])).rows[0].n), { timeout: 60_000, interval: 50 })
      .toBeGreaterThanOrEqual(3);
    victim.child.kill('SIGKILL');
    killed = true;
    expect(await victim.exited).toBeNull();
    await Promise.all(load);
    const acknowledgedCount = acknowledged.length;
    expect(acknowledgedCount).toBeGreaterThanOrEqual(1500);

    // Within a minute, nothing waits to be sealed any more.
    await expect
      .poll(async () => Number((await sql.query('SELECT count(*) AS n FROM ledger_pending_batches WHERE project_id = $1', [proj.id])).rows[0].n), {
        timeout: 60_000,
        interval: 250,
      })
      .toBe(0);

    const count = async (query: string) => Number((await sql.query(query, [proj.id])).rows[0].n);
    const receipts = await count('SELECT count(*) AS n FROM receipts WHERE project_id = $1');
    const sealedIds = 'SELECT s.receipt_id FROM ledger_checkpoints AS c, unnest(c.receipt_ids) AS s(receipt_id) WHERE c.project_id = $1';
    const leaves = await count(`SELECT count(*) AS n FROM (${sealedIds}) AS l`);
    const distinctLeaves = await count(`SELECT count(DISTINCT receipt_id) AS n FROM (${sealedIds}) AS l`);
    const sealedByCheckpoints = await count('SELECT coalesce(sum(count), 0) AS n FROM ledger_checkpoints WHERE project_id = $1');
    // Every committed receipt (acknowledged or not) sealed once; the counts agree three ways.
    expect({ leaves, distinctLeaves, sealedByCheckpoints }).toEqual({ leaves: receipts, distinctLeaves: receipts, sealedByCheckpoints: receipts });
    const sealed = new Set(
      (await sql.query<{ receipt_id: string }>(sealedIds, [proj.id])).rows.map((r) => r.receipt_id),
    );
    expect(acknowledged.filter((id) => !sealed.has(id))).toEqual([]);
    expect(new Set(acknowledged).size).toBe(acknowledgedCount);

    // And the whole ledger verifies from its export: one chain, every receipt's inclusion, the counts.
    const res = await fetch(`${survivor.url}/api/platform/projects/${proj.id}/receipts/export?format=ledger`, { headers: { authorization: `Bearer ${owner.token}` } });
    const keys = readKeys((await clientOf(survivor).request('GET', '/.well-known/consent-ledger-keys.json')).body);
    const result = await verifyExport((await res.text()).trimEnd().split('\n'), keys);
    expect(result.problems).toEqual([]);
    expect(result.receipts).toBe(receipts);
    console.info(`ledger-process: ${acknowledgedCount} acknowledged, ${receipts} committed, ${result.checkpoints} checkpoints`);
  }, 240_000);
});
