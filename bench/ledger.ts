// The receipts ledger's cost on the consent POST, in one run (docs/ledger.md; issue 32's goal: >= 90 %):
//   npx tsx bench/ledger.ts     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
//                                BENCH_DATABASE_URL= (empty) for the embedded database)
//
// POST /api/sdk/v1/consent at CONCURRENCY, rounds of DURATION_MS alternating between
//   sealing on:  each receipt queued for the ledger in its own transaction (ledger_pending) and the sealing
//                worker running at its default interval (5 s): checkpoints made, signed and stored while the
//                load runs, in this process and this database;
//   sealing off: the receipt writer's internal `ledger` switch off and no sealing worker (how the service ran
//                before the ledger).
// Reported: the best and median round of each, every round, CPU per request (this process, which serves and
// seals; on PostgreSQL also the bench database's backends, from /proc) and the load average. The machine is
// shared: read the ratios, not the absolute figures.
import { loadavg } from 'node:os';
import { ledgerSealWorker, sealDue, sealWorkerOf } from '../src/ledger/seal.js';
import { receiptWriter } from '../src/sdk/receipt-writer.js';
import type { Worker } from '../src/workers.js';
import { databaseCpuMeter } from './lib/cpu.js';
import { loadFromChild } from './lib/load.js';
import { benchProject, consentLoad, machine } from './lib/setup.js';

process.env.BENCH_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const DURATION_MS = Number(process.env.DURATION_MS ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

const bench = await benchProject();
const { server } = bench;
const { db } = server.services;
// The bench switches sealing itself: the server's own worker stops, one is started for each "on" round.
await sealWorkerOf(server.services)?.stop();
await sealDue(server.services);

const databaseName = db.kind === 'postgres' ? new URL(server.services.config.databaseUrl!).pathname.slice(1) : null;

const requests = consentLoad(bench, { necessary: true, analytics: true, marketing: false }, { action: 'custom', jurisdiction: 'DE' });
const writer = receiptWriter(server.services);
interface Round {
  perSecond: number;
  p99Ms: number;
  errors: number;
  checkpoints: number;
  serviceCpuUsPerRequest: number;
  databaseCpuUsPerRequest: number;
  loadAverage: number;
}
const checkpointCount = async () => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM ledger_checkpoints'))[0]!.n);

const post = async (sealing: boolean): Promise<Round> => {
  writer.ledger = sealing;
  const worker: Worker | undefined = sealing ? ledgerSealWorker(server.services) : undefined;
  const checkpointsBefore = await checkpointCount();
  const cpu = process.cpuUsage();
  const dbCpu = databaseCpuMeter(databaseName);
  const result = await loadFromChild({ port: server.port, connections: CONCURRENCY, durationMs: DURATION_MS, requests, expectStatus: 201 });
  const used = process.cpuUsage(cpu);
  const dbUsed = dbCpu.stop();
  await worker?.stop();
  const n = result.perSecond * (DURATION_MS / 1000);
  return {
    perSecond: Math.round(result.perSecond),
    p99Ms: Number(result.p99Ms.toFixed(1)),
    errors: result.errors,
    checkpoints: (await checkpointCount()) - checkpointsBefore,
    serviceCpuUsPerRequest: Math.round((used.user + used.system) / n),
    databaseCpuUsPerRequest: Math.round((dbUsed * 1000) / n),
    loadAverage: Number(loadavg()[0]!.toFixed(1)),
  };
};

await post(true);
await post(false);
const rounds: Record<'sealingOn' | 'sealingOff', Round[]> = { sealingOn: [], sealingOff: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const sealing of round % 2 ? [false, true] : [true, false]) rounds[sealing ? 'sealingOn' : 'sealingOff'].push(await post(sealing));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const summary = (name: keyof typeof rounds) => ({
  best: Math.max(...rounds[name].map((r) => r.perSecond)),
  median: median(rounds[name].map((r) => r.perSecond)),
  medianServiceCpuUs: median(rounds[name].map((r) => r.serviceCpuUsPerRequest)),
  medianDatabaseCpuUs: median(rounds[name].map((r) => r.databaseCpuUsPerRequest)),
  rounds: rounds[name],
});
const on = summary('sealingOn');
const off = summary('sealingOff');
// What the "on" rounds left waiting is sealed now: the run ends with every receipt in a checkpoint.
await sealDue(server.services);

// Sealing alone, steadier than the rounds: one round queues receipts with no sealer running, then one
// sealDue seals them all while nothing else runs; its CPU (service and database) per receipt sealed.
writer.ledger = true;
await loadFromChild({ port: server.port, connections: CONCURRENCY, durationMs: DURATION_MS, requests, expectStatus: 201 });
const [queued] = await db.query<{ n: string }>('SELECT count(*) AS n FROM ledger_pending');
const sealCpu = process.cpuUsage();
const sealDbCpu = databaseCpuMeter(databaseName);
await sealDue(server.services);
const sealUsed = process.cpuUsage(sealCpu);
const sealDbUsed = sealDbCpu.stop();
const sealAlone = {
  receipts: Number(queued!.n),
  serviceCpuUsPerReceipt: Number(((sealUsed.user + sealUsed.system) / Number(queued!.n)).toFixed(1)),
  databaseCpuUsPerReceipt: Number(((sealDbUsed * 1000) / Number(queued!.n)).toFixed(1)),
};
const [left] = await db.query<{ n: string }>('SELECT count(*) AS n FROM ledger_pending');
console.log(
  JSON.stringify(
    {
      machine: await machine(),
      database: db.kind,
      concurrency: CONCURRENCY,
      durationMs: DURATION_MS,
      sealIntervalMs: server.services.config.ledger.sealIntervalMs,
      sealingOn: on,
      sealingOff: off,
      ratioOfBest: Number((on.best / off.best).toFixed(3)),
      ratioOfMedians: Number((on.median / off.median).toFixed(3)),
      /** CPU per request (service + database) with sealing off / on: the cost independent of the load. */
      cpuRatio: Number(((off.medianServiceCpuUs + off.medianDatabaseCpuUs) / (on.medianServiceCpuUs + on.medianDatabaseCpuUs)).toFixed(3)),
      sealAlone,
      pendingAtEnd: Number(left!.n),
      loadAverage1m: Number(loadavg()[0]!.toFixed(1)),
    },
    null,
    2,
  ),
);
await server.close();
