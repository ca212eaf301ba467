// What an Idempotency-Key costs the consent POST (issue 45: within 10 % of the write path's throughput), in one run.
//   npx tsx bench/sdk-consent-idempotency.ts   (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
//                                               BENCH_DATABASE_URL= measures the embedded database)
//
// Three cases against the same service, through HTTP from a child process, each request a new receipt (its ledger
// batch, rollup and consent.updated outbox row; the project has an enabled webhook, the delivery worker is stopped),
// installation ids scattered over their index as visitors' random ids are:
//   without        POST /api/sdk/v1/consent as the v1 SDK sends it;
//   withKey        the same with an Idempotency-Key as our SDKs make it, a UUID v7: time-ordered, so the key's
//                  index grows at its edge (here the round's start and the request's number);
//   withRandomKey  the same with a key as any client may send, a UUID v4: each insert on a random page of the index.
// The writer takes a key in the receipt's own statement: one more row and primary-key insert per receipt.
// At each connection count (CONNECTIONS, default "32") the cases alternate ROUNDS times (default 30), the order
// rotated each round, each DURATION_MS long (default 2000): on these shared cores one round's throughput swings by
// a third either way, and many short paired rounds give a median that holds between runs where five 5 s rounds
// did not (0.86 and 0.94 from one build). Reported: each round's receipts per second, p99, the service's CPU per
// receipt (this process's user+system time: the load comes from a child) and the database's; the per-round
// throughput ratio keyed ÷ without, its quartiles; and the medians of the per-round CPU ratios.
// Then, where the load's noise does not reach (`alone`, ALONE_ROUNDS alternating rounds, default 8): the receipt
// writer by itself, waves of 16 receipts without and with keys, its database CPU per receipt; and `recordConsent`
// by itself (every check, the body's hash) with the writer answering at once, its CPU per request.
import { loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import { databaseCpuMeter } from './lib/cpu.js';
import { loadFromChild } from './lib/load.js';
import { writerReceipt } from '../test/helpers/receipts.js';
import { BENCH_ORIGIN, benchProject, consentLoad, machine, serviceModule } from './lib/setup.js';

if (process.env.BENCH_DATABASE_URL === undefined) process.env.BENCH_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
if (process.env.BENCH_DATABASE_URL === '') delete process.env.BENCH_DATABASE_URL;
const embedded = !process.env.BENCH_DATABASE_URL;
const CONNECTIONS = (process.env.CONNECTIONS ?? '32').split(',').map(Number);
const DURATION_MS = Number(process.env.DURATION_MS ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 30);

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

type Requests = { template: string; marker: string; scatteredMarker: string };
const SCATTERED = '%%%%%%%%%%%%';
const load = consentLoad(bench, { necessary: true, analytics: true, marketing: false });
/** Without a key; installation ids scattered over their index as visitors' random ids are (a counter appends). */
const plain: Requests = { ...load, template: load.template.replace(`bench-${load.marker}`, `bench-${SCATTERED}`), scatteredMarker: SCATTERED };
const withKey = (key: string): Requests => ({ ...plain, template: plain.template.replace('Content-Type:', `Idempotency-Key: ${key}\r\nContent-Type:`) });
/** Keys as our SDKs send them (UUID v7, time-ordered): the round's start in milliseconds, then the request's number. */
const orderedKey = () => withKey(`${Date.now()}-${plain.marker}`);
/** Keys as any client may send them (UUID v4): each on a random page of the index, new to the round. */
const randomKey = () => withKey(`${SCATTERED}-${randomUUID()}`);

interface Round {
  perSecond: number;
  p99Ms: number;
  errors: number;
  cpuMicrosPerReceipt: number;
  databaseCpuMicrosPerReceipt?: number;
  loadAverage1m: number;
}

async function measured(connections: number, requests: Requests): Promise<Round> {
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

/** The value below which a share `q` of the values lie (linear between neighbours). */
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low]! + (sorted[Math.min(low + 1, sorted.length - 1)]! - sorted[low]!) * (at - low);
};
const median = (values: number[]) => quantile(values, 0.5);
const round3 = (value: number) => Number(value.toFixed(3));

const report: Record<string, unknown> = {};
for (const connections of CONNECTIONS) {
  const cases = {
    without: () => measured(connections, plain),
    withKey: () => measured(connections, orderedKey()),
    withRandomKey: () => measured(connections, randomKey()),
  };
  const names = Object.keys(cases) as (keyof typeof cases)[];
  for (const name of names) await cases[name](); // warm-up of each
  const runs = Object.fromEntries(names.map((name) => [name, [] as Round[]])) as Record<keyof typeof cases, Round[]>;
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!;
      runs[name].push(await cases[name]());
    }
  }
  const medianOf = (field: keyof Round) => Object.fromEntries(names.map((name) => [name, median(runs[name].map((r) => r[field] as number))]));
  /** Per keyed case: the median over rounds of keyed ÷ without (each round ran them back to back), and the quartiles. */
  const paired = (field: keyof Round, quartiles = false) =>
    Object.fromEntries(
      (['withKey', 'withRandomKey'] as const).map((name) => {
        const ratios = runs[name].map((r, i) => (r[field] as number) / (runs.without[i]![field] as number));
        return [name, quartiles ? [0.25, 0.5, 0.75].map((q) => round3(quantile(ratios, q))) : round3(median(ratios))];
      }),
    );
  report[`${connections} connections`] = {
    ...runs,
    throughputRatioQuartiles: paired('perSecond', true),
    medianPerSecond: medianOf('perSecond'),
    medianCpuMicrosPerReceipt: medianOf('cpuMicrosPerReceipt'),
    cpuPerReceiptRatio: paired('cpuMicrosPerReceipt'),
    ...(databaseName && {
      medianDatabaseCpuMicrosPerReceipt: medianOf('databaseCpuMicrosPerReceipt'),
      databaseCpuPerReceiptRatio: paired('databaseCpuMicrosPerReceipt'),
    }),
    medianP99Ms: medianOf('p99Ms'),
  };
}
// Alone: the same work without HTTP and the load generator, each case alternating with the other.
const ALONE_ROUNDS = Number(process.env.ALONE_ROUNDS ?? 8);
const { receiptWriter } = await serviceModule<typeof import('../src/sdk/receipt-writer.js')>('sdk/receipt-writer.js', built);
const { recordConsent } = await serviceModule<typeof import('../src/sdk/consent.js')>('sdk/consent.js', built);
const { requestHashOf } = await serviceModule<typeof import('../src/sdk/idempotency.js')>('sdk/idempotency.js', built);
const writer = receiptWriter(server.services);
const bodyOf = () => ({
  versionId: bench.version.id,
  consentHash: bench.version.consentHash,
  choices: { necessary: true, analytics: true, marketing: false },
  installationId: `alone-${randomUUID()}`,
  timestamp: new Date().toISOString(),
  sdkVersion: '1.0.0',
});
/** Database CPU per receipt of 300 waves of 16 receipts written by the writer itself, with these keys. */
async function writerAlone(key: () => string | null): Promise<number> {
  const [version] = await server.services.db.query<{ number: number }>('SELECT number FROM consent_versions WHERE id = $1', [bench.version.id]);
  const database = databaseCpuMeter(databaseName);
  const waves = 300;
  for (let wave = 0; wave < waves; wave++) {
    await Promise.all(
      Array.from({ length: 16 }, () => {
        const body = bodyOf();
        const idempotencyKey = key();
        return writer.write(
          writerReceipt({
            ...body,
            projectId,
            versionNumber: version!.number,
            apiKeyId: bench.keyId,
            idempotency: idempotencyKey === null ? null : { key: idempotencyKey, requestHash: requestHashOf(body) },
          }),
        );
      }),
    );
  }
  return Math.round((database.stop() * 1000) / (waves * 16));
}
/** CPU per request of 20,000 `recordConsent` calls in a row, the writer answering at once. */
async function recordConsentAlone(withKey: boolean): Promise<number> {
  const prefix = randomUUID();
  const cpu = process.cpuUsage();
  const calls = 20_000;
  for (let i = 0; i < calls; i++) {
    await recordConsent(server.services, { token: bench.secret, origin: BENCH_ORIGIN, address: '127.0.0.1' }, bodyOf(), withKey ? `${prefix}-${i}` : null);
  }
  const { user, system } = process.cpuUsage(cpu);
  return Number(((user + system) / calls).toFixed(1));
}
/** Alternating rounds of each variant after a warm-up of each: medians, and the median added per round to the first. */
async function alone<V extends string>(measure: (variant: V) => Promise<number>, variants: V[]) {
  for (const variant of variants) await measure(variant);
  const runs = new Map(variants.map((variant) => [variant, [] as number[]]));
  for (let round = 0; round < ALONE_ROUNDS; round++) for (const variant of variants) runs.get(variant)!.push(await measure(variant));
  const [base, ...others] = variants;
  return {
    ...Object.fromEntries(variants.map((variant) => [variant, median(runs.get(variant)!)])),
    addedPerRound: Object.fromEntries(others.map((v) => [v, round3(median(runs.get(v)!.map((value, i) => value - runs.get(base!)![i]!)))])),
  };
}
const keyOf = { without: () => null, withKey: uuidv7, withRandomKey: randomUUID };
const aloneReport = {
  ...(databaseName && { writerDatabaseCpuMicrosPerReceipt: await alone((v) => writerAlone(keyOf[v]), ['without', 'withKey', 'withRandomKey']) }),
  // Last: the writer is replaced by one that stores nothing.
  recordConsentCpuMicros: await alone(((writer.write = async () => undefined), (v) => recordConsentAlone(v === 'withKey')), ['without', 'withKey']),
};

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
      alone: aloneReport,
    },
    null,
    2,
  ),
);
await server.close();
