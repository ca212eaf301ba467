// Consent POST throughput on PostgreSQL against plain `pg` doing the same writes, in one run.
//   npx tsx bench/sdk-consent.ts     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
//
// Three cases at the same concurrency (64), each writing a receipt and its consent.updated outbox row
// (the project has an enabled webhook; the delivery worker is stopped so only the writes are measured):
//   service      POST /api/sdk/v1/consent through HTTP, 201 after the commit (only 201s count);
//   pg grouped   plain `pg` at its best: the service's group commit without the service (rows that arrive
//                while up to 4 statements are in flight share the next one, <= 256 rows, one multi-row
//                statement writing receipts and outbox rows together, autocommit): this database's limit here;
//   pg per-row   plain `pg`, one autocommit statement per receipt (receipt + outbox row in one statement).
// Both plain-pg sides use a pool as large as the service's (DATABASE_POOL_SIZE, default 20). Rounds rotate the
// order of the cases; the best round of each is reported, with every round's figure.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { receiptId } from '../src/receipts/ids.js';
import { webhookWorkerOf } from '../src/webhooks/worker.js';
import { loadFromChild } from './lib/load.js';
import { benchProject, consentLoad, machine } from './lib/setup.js';

process.env.BENCH_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const POOL_SIZE = Number(process.env.DATABASE_POOL_SIZE ?? 20);
const MAX_BATCH = 256;
const MAX_IN_FLIGHT = 4;

const bench = await benchProject();
const { server, version, keyId, projectId } = bench;
const choices = { necessary: true, analytics: true, marketing: false };
await server.services.db.query(
  `INSERT INTO webhooks (project_id, url, enabled, secret, secret_prefix) VALUES ($1, 'https://hooks.example/bench', true, 'whsec_bench', 'whsec_be')`,
  [projectId],
);
await webhookWorkerOf(server.services)?.stop();

const pool = new pg.Pool({ connectionString: server.services.config.databaseUrl, max: POOL_SIZE });

interface Row {
  id: string;
  installationId: string;
  createdAt: string;
  payload: string;
}
let n = 0;
function nextRow(prefix: string): Row {
  const now = new Date();
  const id = receiptId(now); // a uuidv7 of its createdAt, as the service makes them (the database checks it)
  const createdAt = now.toISOString();
  const installationId = `${prefix}-${n++}`;
  const eventId = randomUUID();
  const data = { projectId, receiptId: id, versionId: version.id, versionNumber: version.number, consentHash: version.consentHash, choices, installationId };
  return { id, installationId, createdAt, payload: JSON.stringify({ id: eventId, type: 'consent.updated', createdAt, data }) };
}

// One statement writes the receipts and their outbox rows (a CTE): one round trip, one commit.
const WRITE_SQL = `
  WITH r AS (
    INSERT INTO receipts (id, project_id, version_id, consent_hash, choices, installation_id, sdk_version, api_key_id, created_at)
    SELECT id, $1, $2, $3, $4::jsonb, installation_id, '1.0.0', $5, created_at::timestamptz
    FROM unnest($6::text[], $7::text[], $8::text[]) AS x(id, installation_id, created_at)
  )
  INSERT INTO webhook_events (id, project_id, type, payload, created_at, next_attempt_at)
  SELECT p->>'id', $1, 'consent.updated', p, (p->>'createdAt')::timestamptz, (p->>'createdAt')::timestamptz
  FROM unnest($9::jsonb[]) AS p`;
const write = (rows: Row[]) =>
  pool.query(WRITE_SQL, [
    projectId,
    version.id,
    version.consentHash,
    JSON.stringify(choices),
    keyId,
    rows.map((r) => r.id),
    rows.map((r) => r.installationId),
    rows.map((r) => r.createdAt),
    rows.map((r) => r.payload),
  ]);

/** Plain-pg group commit: the receipt writer's queue (src/sdk/receipt-writer.ts) without Prisma or HTTP. */
class GroupCommit {
  private queue: { row: Row; done: () => void; failed: (e: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;
  add(row: Row): Promise<void> {
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
    try {
      await write(batch.map((b) => b.row));
      for (const b of batch) b.done();
    } catch (error) {
      for (const b of batch) b.failed(error);
    } finally {
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

/** CONCURRENCY writers in this process, each waiting for its row's commit before the next. */
async function plain(writeOne: (row: Row) => Promise<unknown>, prefix: string): Promise<Result> {
  const deadline = performance.now() + DURATION_MS;
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
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

const grouped = new GroupCommit();
const requests = consentLoad(bench, choices);
const cases: Record<string, () => Promise<Result>> = {
  service: () => loadFromChild({ port: server.port, connections: CONCURRENCY, durationMs: DURATION_MS, requests, expectStatus: 201 }),
  pgGrouped: () => plain((row) => grouped.add(row), 'grouped'),
  pgPerRow: () => plain((row) => write([row]), 'per-row'),
};
const names = Object.keys(cases);

// Warm-up of each, then rounds in rotated order (round r starts with case r mod 3).
for (const name of names) await cases[name]!();
const runs: Record<string, Result[]> = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < names.length; i++) {
    const name = names[(round + i) % names.length]!;
    runs[name]!.push(await cases[name]!());
  }
}
const best = (name: string) => runs[name]!.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
const summary = (name: string) => ({
  rowsPerSecond: Math.round(best(name).perSecond),
  p50Ms: Number(best(name).p50Ms.toFixed(1)),
  p99Ms: Number(best(name).p99Ms.toFixed(1)),
  errors: runs[name]!.reduce((sum, r) => sum + r.errors, 0),
  rounds: runs[name]!.map((r) => Math.round(r.perSecond)),
});
const [load1] = (await import('node:os')).loadavg();
console.log(
  JSON.stringify(
    {
      machine: await machine(),
      loadAverage1m: Number(load1!.toFixed(1)),
      concurrency: CONCURRENCY,
      poolSize: POOL_SIZE,
      durationMs: DURATION_MS,
      rounds: ROUNDS,
      service: summary('service'),
      pgGrouped: summary('pgGrouped'),
      pgPerRow: summary('pgPerRow'),
      ratioVsGrouped: Number((best('service').perSecond / best('pgGrouped').perSecond).toFixed(3)),
      ratioVsPerRow: Number((best('service').perSecond / best('pgPerRow').perSecond).toFixed(3)),
    },
    null,
    2,
  ),
);
await pool.end();
await server.close();
