// What an Idempotency-Key costs the consent POST (issue 45: within 10 % of the write path's throughput), in one run.
//   npx tsx bench/sdk-consent-idempotency.ts   (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
//                                               BENCH_DATABASE_URL= measures the embedded database)
//
// Two cases against the same service, through HTTP from a child process, each request a new receipt (its ledger
// batch, rollup and consent.updated outbox row; the project has an enabled webhook, the delivery worker is stopped):
//   without   POST /api/sdk/v1/consent as the v1 SDK sends it;
//   with key  the same with `Idempotency-Key: <a key no request used before>` (the receipt writer takes it in the
//             receipt's own statement: one more index insert per receipt, and a batch statement with the keys' CTE).
// At each connection count (CONNECTIONS, default "32") the cases alternate ROUNDS times (default 5), the order
// rotated each round, each DURATION_MS long (default 5000). Reported: each round's receipts per second, p99, the
// service's CPU per receipt (this process's user+system time: the load comes from a child) and the database's, the
// per-round ratio with ÷ without, and their median.
import { loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import { databaseCpuMeter } from './lib/cpu.js';
import { loadFromChild } from './lib/load.js';
import { benchProject, consentLoad, machine, serviceModule } from './lib/setup.js';

if (process.env.BENCH_DATABASE_URL === undefined) process.env.BENCH_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
if (process.env.BENCH_DATABASE_URL === '') delete process.env.BENCH_DATABASE_URL;
const embedded = !process.env.BENCH_DATABASE_URL;
const CONNECTIONS = (process.env.CONNECTIONS ?? '32').split(',').map(Number);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);

// The service as `npm start` runs it (dist/); BENCH_FROM_SOURCE=1 runs src/ through tsx.
const built = process.env.BENCH_FROM_SOURCE !== '1';
const bench = await benchProject({}, { built });
const { server, projectId } = bench;
await server.services.db.query(
  `INSERT INTO webhooks (project_id, url, enabled, secret, secret_prefix) VALUES ($1, 'https://hooks.example/bench', true, 'whsec_bench', 'whsec_be')`,
  [projectId],
);
const { webhookWorkerOf } = await serviceModule<typeof import('../src/webhooks/worker.js')>('webhooks/worker.js', built);
await webhookWorkerOf(server.services)?.stop();
const databaseName = embedded ? null : new URL(server.services.config.databaseUrl!).pathname.slice(1);

const plain = consentLoad(bench, { necessary: true, analytics: true, marketing: false });
/** The same request with a key made of a prefix new to this round and the request's number: never a repeat. */
const keyed = () => ({
  template: plain.template.replace('Content-Type:', `Idempotency-Key: ${randomUUID()}-${plain.marker}\r\nContent-Type:`),
  marker: plain.marker,
});

interface Round {
  perSecond: number;
  p99Ms: number;
  errors: number;
  cpuMicrosPerReceipt: number;
  databaseCpuMicrosPerReceipt?: number;
  loadAverage1m: number;
}

async function measured(connections: number, requests: { template: string; marker: string }): Promise<Round> {
  const loadAverage1m = Number(loadavg()[0]!.toFixed(1));
  const database = databaseCpuMeter(databaseName);
  const cpu = process.cpuUsage();
  const result = await loadFromChild({ port: server.port, connections, durationMs: DURATION_MS, requests, expectStatus: 201 });
  const { user, system } = process.cpuUsage(cpu);
  const databaseMs = database.stop();
  const receipts = result.perSecond * (DURATION_MS / 1000);
  return {
    perSecond: Math.round(result.perSecond),
    p99Ms: Number(result.p99Ms.toFixed(1)),
    errors: result.errors,
    cpuMicrosPerReceipt: Math.round((user + system) / receipts),
    ...(databaseName && { databaseCpuMicrosPerReceipt: Math.round((databaseMs * 1000) / receipts) }),
    loadAverage1m,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const report: Record<string, unknown> = {};
for (const connections of CONNECTIONS) {
  const cases = { without: () => measured(connections, plain), withKey: () => measured(connections, keyed()) };
  const names = Object.keys(cases) as (keyof typeof cases)[];
  for (const name of names) await cases[name](); // warm-up of each
  const runs: Record<string, Round[]> = { without: [], withKey: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!;
      runs[name]!.push(await cases[name]());
    }
  }
  const ratios = runs.withKey!.map((r, i) => r.perSecond / runs.without![i]!.perSecond);
  const medianOf = (name: string, field: keyof Round) => median(runs[name]!.map((r) => r[field] as number));
  report[`${connections} connections`] = {
    ...runs,
    ratioWithKeyPerRound: ratios.map((r) => Number(r.toFixed(3))),
    medianRatioWithKey: Number(median(ratios).toFixed(3)),
    medianCpuMicrosPerReceipt: { without: medianOf('without', 'cpuMicrosPerReceipt'), withKey: medianOf('withKey', 'cpuMicrosPerReceipt') },
    ...(databaseName && {
      medianDatabaseCpuMicrosPerReceipt: {
        without: medianOf('without', 'databaseCpuMicrosPerReceipt'),
        withKey: medianOf('withKey', 'databaseCpuMicrosPerReceipt'),
      },
    }),
    medianP99Ms: { without: medianOf('without', 'p99Ms'), withKey: medianOf('withKey', 'p99Ms') },
  };
}
const [stored] = await server.services.db.query<{ keys: number }>('SELECT count(*)::int AS keys FROM sdk_idempotency_keys WHERE project_id = $1', [projectId]);
console.log(
  JSON.stringify(
    {
      machine: await machine(),
      service: built ? 'dist (npm start)' : 'src (tsx)',
      database: embedded ? 'embedded' : 'postgresql',
      durationMs: DURATION_MS,
      rounds: ROUNDS,
      keysStored: stored!.keys,
      ...report,
    },
    null,
    2,
  ),
);
await server.close();
