import { afterEach, describe, expect, it } from 'vitest';
import { operator, organization, project } from './helpers/fixtures.js';
import { SHORT_DWELL_MS, scansPath, startScanSites } from './helpers/scan-sites.js';
import { dropDatabase, freshDatabaseUrl, onPostgres, send, type TestServer } from './helpers/server.js';
import { connectSql, freePort, spawnScanner, spawnService, type ServiceProcess } from './helpers/service-process.js';

// The scanner as a fleet of its own (docs/scaling.md "The scanner fleet"): an API process that only queues
// (SCANNER_CONCURRENCY=0) and two `npm run scanner` processes on one PostgreSQL. They share the queue one scan
// per organization at a time, and a worker killed with SIGKILL mid-scan hands its scan on when its lease runs out.

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function stopWhenDone(service: ServiceProcess): ServiceProcess {
  cleanups.push(() => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
    return service.exited;
  });
  return service;
}

const clientOf = (service: ServiceProcess) =>
  ({ request: (method: string, path: string, options?: object) => send(service.url, method, path, options) }) as TestServer;

/** The scan ids a process's `scan started` log lines name, with the attempt. */
const started = (service: ServiceProcess) =>
  service
    .output()
    .split('\n')
    .filter((line) => line.includes('"msg":"scan started"'))
    .map((line) => JSON.parse(line) as { scanId: string; attempt: number });

// Short enough that the test sees the hand-over, long enough that a loaded machine's heartbeat (every third) keeps it.
const LEASE_SECONDS = 10;

describe('scanner processes on one PostgreSQL', () => {
  it('refuses to start on the embedded database, whose files belong to the API instance', async () => {
    const env = { DATABASE_URL: '', DATA_DIR: 'memory://', SCANNER_CONCURRENCY: '1' };
    await expect(spawnScanner(env)).rejects.toThrow(/exited \(1\)[\s\S]*npm run scanner needs DATABASE_URL \(PostgreSQL\)/);
  });

  it.skipIf(!onPostgres)(
    'share the queue one scan per organization, and a worker killed mid-scan hands its scan to the other within the lease (needs TEST_DATABASE_URL)',
    async () => {
      const databaseUrl = (await freshDatabaseUrl({ migrated: true }))!;
      cleanups.push(() => dropDatabase(databaseUrl));
      const api = stopWhenDone(await spawnService({ DATABASE_URL: databaseUrl, SCANNER_CONCURRENCY: '0', LOG_LEVEL: 'info' }, await freePort()));
      const client = clientOf(api);
      const owner = await operator(client);
      const [orgA, orgB] = [await organization(client, owner, { name: 'A', planId: 'growth' }), await organization(client, owner, { name: 'B' })];
      // Organization A queues two scans first (one per project: a project has one scan going at a time), B one after.
      const projects = [await project(client, owner, orgA.id, 'A1'), await project(client, owner, orgA.id, 'A2'), await project(client, owner, orgB.id, 'B1')];
      const sites = await startScanSites(api.url, 'unused');
      cleanups.push(() => sites.close());
      // Pages without the SDK and with no third-party host: each scan takes a few seconds, all of it on loopback.
      const urls = [`${sites.origin}/nosdk`, `${sites.origin}/nosdk?page=2`];
      const scanIds: string[] = [];
      for (const p of projects) {
        const queued = await client.request('POST', scansPath(p.id), { token: owner.token, body: { urls, followLinks: 0 } });
        expect(queued.status, queued.text).toBe(202);
        scanIds.push(queued.body.scan.id);
      }
      const [a1, a2, b1] = scanIds as [string, string, string];
      const sql = await connectSql({ databaseUrl });
      cleanups.push(() => sql.end().catch(() => {}));
      const states = async () =>
        (
          await sql.query<{ id: string; org: string; status: string; owner: string | null; attempts: number; leased: boolean }>(
            `SELECT s.id, p.organization_id AS org, s.status, s.lease_owner AS owner, s.attempts, s.lease_until > now() AS leased
             FROM scans s JOIN projects p ON p.id = s.project_id WHERE s.id = ANY($1) ORDER BY array_position($1, s.id)`,
            [scanIds],
          )
        ).rows;
      // The API instance queues and runs nothing.
      expect((await states()).map((s) => s.status)).toEqual(['queued', 'queued', 'queued']);

      const env = { DATABASE_URL: databaseUrl, SCANNER_CONCURRENCY: '1', SCANNER_LEASE_SECONDS: String(LEASE_SECONDS), SCANNER_DWELL_MS: String(SHORT_DWELL_MS) };
      // Started together: the first must not finish A's first scan before the second is up.
      const workers = (await Promise.all([spawnScanner(env), spawnScanner(env)])).map(stopWhenDone);
      // A lease owner is `host:pid:suffix` (src/scanner/worker.ts).
      const workerOf = (owner: string | null) => workers.find((w) => owner?.split(':')[1] === String(w.child.pid));

      // Both workers take a scan: the oldest of A and the scan of B, not A's two oldest. Never two of one organization.
      let running: Awaited<ReturnType<typeof states>> = [];
      const twoOfOneOrganization: string[][] = [];
      const look = async () => {
        const all = await states();
        running = all.filter((s) => s.status === 'running' && s.leased);
        if (new Set(running.map((s) => s.org)).size < running.length) twoOfOneOrganization.push(running.map((s) => s.id));
        return all;
      };
      await expect.poll(async () => (await look(), running.length), { timeout: 60_000, interval: 100 }).toBe(2);
      const both = running;
      // One of A's and B's, each on its own worker. Which of A's: its first, unless a loaded machine let one worker
      // finish it before the other was up (then A's second).
      expect(both.map((s) => s.org).sort()).toEqual([orgA.id, orgB.id].sort());
      const aRunning = both.find((s) => s.org === orgA.id)!.id;
      const victim = workerOf(both.find((s) => s.id === b1)!.owner)!;
      const survivor = workers.find((w) => w !== victim)!;
      expect(victim).toBeDefined();
      expect(workerOf(both.find((s) => s.id === aRunning)!.owner)).toBe(survivor);

      // Killed mid-scan: B's scan is still running under the dead worker's lease.
      victim.child.kill('SIGKILL');
      expect(await victim.exited).toBeNull();
      expect((await states()).find((s) => s.id === b1)).toMatchObject({ status: 'running', attempts: 1 });

      // The survivor finishes its A scan, takes B's when its lease has run out (its second and last attempt)
      // and A's other. With the default 90 s lease B's scan would still be waiting when this gives up.
      await expect
        .poll(async () => (await look()).map((s) => s.status), { timeout: 75_000, interval: 250 })
        .toEqual(['done', 'done', 'done']);
      expect(twoOfOneOrganization).toEqual([]);
      const done = await states();
      expect(done.find((s) => s.id === b1)!.attempts).toBe(2);
      expect(done.find((s) => s.id === a1)!.attempts).toBe(1);
      expect(done.find((s) => s.id === a2)!.attempts).toBe(1);
      // Log lines go out within a second (src/logger.ts); the killed worker's last ones never did.
      const survivorRan = () => started(survivor).map((s) => `${s.scanId} ${s.attempt}`);
      await expect.poll(survivorRan, { timeout: 10_000 }).toEqual(expect.arrayContaining([`${aRunning} 1`, `${b1} 2`]));
      expect([`${a1} 1`, `${a2} 1`, `${b1} 2`]).toEqual(expect.arrayContaining(survivorRan()));
      expect(api.output()).not.toContain('"msg":"scan started"');
      const report = await client.request('GET', scansPath(projects[2]!.id, `/${b1}`), { token: owner.token });
      expect(report.body.scan).toMatchObject({ status: 'done', attempts: 2 });
      expect(report.body.scan.pages.map((page: { url: string }) => page.url)).toEqual(urls);

      // SIGTERM stops a scanner process cleanly (nothing in progress here to hand back).
      survivor.child.kill('SIGTERM');
      expect(await survivor.exited).toBe(0);
    },
    240_000,
  );
});
