// The receipts ledger's cost on the consent POST, in one run (docs/ledger.md; issue 32's goal: >= 90 %):
//   npx tsx bench/ledger.ts     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
//                                BENCH_DATABASE_URL= (empty) for the embedded database)
//
// POST /api/sdk/v1/consent at CONCURRENCY, rounds of DURATION_MS alternating between three modes:
//   sealing on:  each receipt queued for the ledger in its own transaction (ledger_pending_batches) and the sealing
//                worker running at its default interval (5 s): checkpoints made, signed and stored while the
//                load runs, in this process and this database;
//   queued only: receipts queued as above but no sealing worker (what the POST itself pays; the queue is sealed
//                after the round, outside the measurement);
//   sealing off: the receipt writer's internal `ledger` switch off and no sealing worker (how the service ran
//                before the ledger).
// Reported: the best and median round of each, every round, CPU per request (this process, which serves and
// seals; on PostgreSQL also the bench database's backends, from /proc), WAL bytes per request on PostgreSQL and
// the load average. The machine is shared: read the ratios, not the absolute figures.
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
  walBytesPerRequest: number | null;
  loadAverage: number;
}
type Mode = 'sealingOn' | 'queuedOnly' | 'sealingOff';
const checkpointCount = async () => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM ledger_checkpoints'))[0]!.n);

// WAL written by the whole cluster (the bench's database is the one at work): PostgreSQL only.
const walPosition = async () =>
  db.kind === 'postgres' ? BigInt((await db.query<{ lsn: string }>("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn AS lsn"))[0]!.lsn) : null;

const post = async (mode: Mode): Promise<Round> => {
  writer.ledger = mode !== 'sealingOff';
  const worker: Worker | undefined = mode === 'sealingOn' ? ledgerSealWorker(server.services) : undefined;
  const walBefore = await walPosition();
  const checkpointsBefore = await checkpointCount();
  const cpu = process.cpuUsage();
  const dbCpu = databaseCpuMeter(databaseName);
  const result = await loadFromChild({ port: server.port, connections: CONCURRENCY, durationMs: DURATION_MS, requests, expectStatus: 201 });
  const used = process.cpuUsage(cpu);
  const dbUsed = dbCpu.stop();
  const walAfter = await walPosition();
  await worker?.stop();
  const n = result.perSecond * (DURATION_MS / 1000);
  return {
    perSecond: Math.round(result.perSecond),
    p99Ms: Number(result.p99Ms.toFixed(1)),
    errors: result.errors,
    checkpoints: (await checkpointCount()) - checkpointsBefore,
    serviceCpuUsPerRequest: Math.round((used.user + used.system) / n),
    databaseCpuUsPerRequest: Math.round((dbUsed * 1000) / n),
    walBytesPerRequest: walBefore === null || walAfter === null ? null : Math.round(Number(walAfter - walBefore) / n),
    loadAverage: Number(loadavg()[0]!.toFixed(1)),
  };
};

// A queued-only round leaves its receipts waiting: sealed between rounds, so every round starts with an empty queue.
const measured = async (mode: Mode) => {
  const round = await post(mode);
  await sealDue(server.services);
  return round;
};
const MODES: Mode[] = ['sealingOn', 'queuedOnly', 'sealingOff'];
for (const mode of MODES) await measured(mode);
const rounds: Record<Mode, Round[]> = { sealingOn: [], queuedOnly: [], sealingOff: [] };
// Each round rotates the order, so no mode always follows the same one.
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < MODES.length; i++) {
    const mode = MODES[(round + i) % MODES.length]!;
    rounds[mode].push(await measured(mode));
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const summary = (name: keyof typeof rounds) => ({
  best: Math.max(...rounds[name].map((r) => r.perSecond)),
  median: median(rounds[name].map((r) => r.perSecond)),
  medianServiceCpuUs: median(rounds[name].map((r) => r.serviceCpuUsPerRequest)),
  medianDatabaseCpuUs: median(rounds[name].map((r) => r.databaseCpuUsPerRequest)),
  medianWalBytes: db.kind === 'postgres' ? median(rounds[name].map((r) => r.walBytesPerRequest!)) : null,
  rounds: rounds[name],
});
const on = summary('sealingOn');
const queuedOnly = summary('queuedOnly');
const off = summary('sealingOff');
const cpuOf = (s: typeof on) => s.medianServiceCpuUs + s.medianDatabaseCpuUs;

// Sealing alone, steadier than the rounds: one round queues receipts with no sealer running, then one
// sealDue seals them all while nothing else runs; its CPU (service and database) per receipt sealed.
writer.ledger = true;
await loadFromChild({ port: server.port, connections: CONCURRENCY, durationMs: DURATION_MS, requests, expectStatus: 201 });
const waitingCount = "SELECT (SELECT coalesce(sum(count), 0) FROM ledger_pending_batches) + (SELECT count(*) FROM ledger_pending) AS n";
const [queued] = await db.query<{ n: string }>(waitingCount);
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
const [left] = await db.query<{ n: string }>(waitingCount);
console.log(
  JSON.stringify(
    {
      machine: await machine(),
      database: db.kind,
      concurrency: CONCURRENCY,
      durationMs: DURATION_MS,
      sealIntervalMs: server.services.config.ledger.sealIntervalMs,
      sealingOn: on,
      queuedOnly,
      sealingOff: off,
      ratioOfBest: Number((on.best / off.best).toFixed(3)),
      ratioOfMedians: Number((on.median / off.median).toFixed(3)),
      queuedOnlyRatioOfMedians: Number((queuedOnly.median / off.median).toFixed(3)),
      /** CPU per request (service + database) with sealing off / on: the cost independent of the load. */
      cpuRatio: Number((cpuOf(off) / cpuOf(on)).toFixed(3)),
      queuedOnlyCpuRatio: Number((cpuOf(off) / cpuOf(queuedOnly)).toFixed(3)),
      sealAlone,
      pendingAtEnd: Number(left!.n),
      loadAverage1m: Number(loadavg()[0]!.toFixed(1)),
    },
    null,
    2,
  ),
);
await server.close();
