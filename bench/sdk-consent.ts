// Consent POST throughput on PostgreSQL against plain `pg` doing the same writes, in one run (issue 41's goal).
//   npx tsx bench/sdk-consent.ts     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
//                                     BENCH_DATABASE_URL= measures the embedded database, service only)
//
// Cases, each writing a receipt, its ledger batch, its rollup and its consent.updated outbox row (the project has an
// enabled webhook; the delivery worker is stopped so only the writes are measured; the ledger's sealer runs as in
// production and seals both sides' batches):
//   service      POST /api/sdk/v1/consent through HTTP, 201 after the commit (only 201s count);
//   pg grouped   plain `pg` at its best: the service's group commit without the service (rows that arrive
//                while MAX_FLUSHES (1) statement is in flight share the next one, <= 256 rows, the writer's own prepared
//                statement writing the same rows: receipts, ledger batch, rollup, outbox; autocommit): this
//                database's limit here for the same rows;
//   pg per-row   (PER_ROW=1) plain `pg`, the same statement for each receipt alone.
// At each connection count (CONNECTIONS, default "32,128") the cases alternate, ROUNDS times, the order rotated each
// round, each round preceded by the machine's load average. Reported per connection count: each round's figures,
// the median of the per-round ratios service ÷ pg grouped, the service's CPU per receipt (this process's user+system
// time during its rounds: the load comes from a child process) and the database's CPU per receipt.
import { loadavg } from 'node:os';
import pg from 'pg';
import { writerReceipt } from '../test/helpers/receipts.js';
import { batchStatement, MAX_BATCH, MAX_FLUSHES, type NewReceipt } from '../src/sdk/receipt-writer.js';
import { databaseCpuMeter } from './lib/cpu.js';
import { loadFromChild, type LoadResult } from './lib/load.js';
import { benchProject, consentLoad, machine, serviceModule } from './lib/setup.js';

if (process.env.BENCH_DATABASE_URL === undefined) process.env.BENCH_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
if (process.env.BENCH_DATABASE_URL === '') delete process.env.BENCH_DATABASE_URL;
const embedded = !process.env.BENCH_DATABASE_URL;
const CONNECTIONS = (process.env.CONNECTIONS ?? process.env.CONCURRENCY ?? '32,128').split(',').map(Number);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const POOL_SIZE = Number(process.env.DATABASE_POOL_SIZE ?? 20);
const PER_ROW = process.env.PER_ROW === '1';
// The writer's own group commit: as many statements in flight, as many rows in one.
const MAX_IN_FLIGHT = MAX_FLUSHES;

// The service as `npm start` runs it (dist/); BENCH_FROM_SOURCE=1 runs src/ through tsx.
const built = process.env.BENCH_FROM_SOURCE !== '1';
const bench = await benchProject({}, { built });
const { server, version, keyId, projectId } = bench;
const choices = { necessary: true, analytics: true, marketing: false };
await server.services.db.query(
  `INSERT INTO webhooks (project_id, url, enabled, secret, secret_prefix) VALUES ($1, 'https://hooks.example/bench', true, 'whsec_bench', 'whsec_be')`,
  [projectId],
);
const { webhookWorkerOf } = await serviceModule<typeof import('../src/webhooks/worker.js')>('webhooks/worker.js', built);
await webhookWorkerOf(server.services)?.stop();
const databaseName = embedded ? null : new URL(server.services.config.databaseUrl!).pathname.slice(1);

const pool = embedded ? undefined : new pg.Pool({ connectionString: server.services.config.databaseUrl, max: POOL_SIZE });

let n = 0;
/** A receipt as recordConsent makes it (src/sdk/consent.ts). */
function nextRow(prefix: string): NewReceipt {
  return writerReceipt({
    projectId,
    versionId: version.id,
    versionNumber: version.number,
    consentHash: version.consentHash,
    choices,
    installationId: `${prefix}-${n++}`,
    sdkVersion: '1.0.0',
    apiKeyId: keyId,
  });
}

/** The receipt writer's own statement (prepared, as the writer prepares it), in a shard of its own. */
const write = (rows: NewReceipt[], shard: number) => {
  const { sql, params } = batchStatement(rows, shard, { ledger: true, rollup: true });
  return pool!.query({ name: 'bench-store-receipts', text: sql, values: params });
};

/** Plain-pg group commit: the receipt writer's queue (src/sdk/receipt-writer.ts) without Prisma or HTTP. */
class GroupCommit {
  private queue: { row: NewReceipt; done: () => void; failed: (e: unknown) => void }[] = [];
  private inFlight = 0;
  private busyShards = new Set<number>();
  private scheduled = false;
  add(row: NewReceipt): Promise<void> {
    return new Promise((done, failed) => {
      this.queue.push({ row, done, failed });
      this.schedule();
    });
  }
  private schedule() {
    if (this.scheduled || this.inFlight >= MAX_IN_FLIGHT || !this.queue.length) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      while (this.inFlight < MAX_IN_FLIGHT && this.queue.length) void this.flush(this.queue.splice(0, MAX_BATCH));
    });
  }
  private async flush(batch: GroupCommit['queue']) {
    this.inFlight++;
    // A rollup shard no running statement holds, from MAX_IN_FLIGHT up: the service's writer uses those below.
    let shard = MAX_IN_FLIGHT;
    while (this.busyShards.has(shard)) shard++;
    this.busyShards.add(shard);
    try {
      await write(batch.map((b) => b.row), shard);
      for (const b of batch) b.done();
    } catch (error) {
      for (const b of batch) b.failed(error);
    } finally {
      this.busyShards.delete(shard);
      this.inFlight--;
      this.schedule();
    }
  }
}

interface Result {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** `connections` writers in this process, each waiting for its row's commit before the next. */
async function plain(connections: number, writeOne: (row: NewReceipt) => Promise<unknown>, prefix: string): Promise<Result> {
  const deadline = performance.now() + DURATION_MS;
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const t = performance.now();
        try {
          await writeOne(nextRow(prefix));
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { perSecond: latencies.length / ((performance.now() - started) / 1000), p50Ms: at(0.5), p99Ms: at(0.99), errors };
}

interface Round extends Result {
  loadAverage1m: number;
  /** The service's process CPU per stored receipt (service rounds only). */
  cpuMicrosPerReceipt?: number;
  databaseCpuMicrosPerReceipt?: number;
}

const grouped = new GroupCommit();
const requests = consentLoad(bench, choices);
/** Runs one case, with the CPU it cost: this process's (the service's, for the service case) and the database's. */
async function measured(run: () => Promise<Result | LoadResult>): Promise<Round> {
  const loadAverage1m = Number(loadavg()[0]!.toFixed(1));
  const database = databaseCpuMeter(databaseName);
  const cpu = process.cpuUsage();
  const result = await run();
  const { user, system } = process.cpuUsage(cpu);
  const databaseMs = database.stop();
  const receipts = result.perSecond * (DURATION_MS / 1000);
  return {
    perSecond: result.perSecond,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    errors: result.errors,
    loadAverage1m,
    cpuMicrosPerReceipt: Math.round((user + system) / receipts),
    databaseCpuMicrosPerReceipt: databaseName ? Math.round((databaseMs * 1000) / receipts) : undefined,
  };
}
function cases(connections: number): Record<string, () => Promise<Round>> {
  return {
    service: () => measured(() => loadFromChild({ port: server.port, connections, durationMs: DURATION_MS, requests, expectStatus: 201 })),
    ...(!embedded && { pgGrouped: () => measured(() => plain(connections, (row) => grouped.add(row), 'grouped')) }),
    ...(!embedded && PER_ROW && { pgPerRow: () => measured(() => plain(connections, (row) => write([row], 2 * MAX_IN_FLIGHT), 'per-row')) }),
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const report: Record<string, unknown> = {};
for (const connections of CONNECTIONS) {
  const byName = cases(connections);
  const names = Object.keys(byName);
  for (const name of names) await byName[name]!(); // warm-up of each
  const runs: Record<string, Round[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!;
      runs[name]!.push(await byName[name]!());
    }
  }
  const rounds = (name: string) =>
    runs[name]!.map((r) => ({
      perSecond: Math.round(r.perSecond),
      p99Ms: Number(r.p99Ms.toFixed(1)),
      cpuMicrosPerReceipt: r.cpuMicrosPerReceipt,
      databaseCpuMicrosPerReceipt: r.databaseCpuMicrosPerReceipt,
      loadAverage1m: r.loadAverage1m,
      errors: r.errors,
    }));
  const ratios = runs.pgGrouped ? runs.service!.map((r, i) => r.perSecond / runs.pgGrouped![i]!.perSecond) : [];
  report[`${connections} connections`] = {
    ...Object.fromEntries(names.map((name) => [name, rounds(name)])),
    ...(ratios.length && {
      ratioVsGroupedPerRound: ratios.map((r) => Number(r.toFixed(3))),
      medianRatioVsGrouped: Number(median(ratios).toFixed(3)),
    }),
    serviceMedianCpuMicrosPerReceipt: median(runs.service!.map((r) => r.cpuMicrosPerReceipt!)),
    serviceMedianP99Ms: Number(median(runs.service!.map((r) => r.p99Ms)).toFixed(1)),
  };
}
console.log(
  JSON.stringify(
    { machine: await machine(), service: built ? 'dist (npm start)' : 'src (tsx)', database: embedded ? 'embedded' : 'postgresql', poolSize: POOL_SIZE, durationMs: DURATION_MS, rounds: ROUNDS, ...report },
    null,
    2,
  ),
);
await pool?.end();
await server.close();
