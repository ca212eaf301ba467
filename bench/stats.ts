// Consent analytics, in one run:
//   npx tsx bench/stats.ts     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
//                               BENCH_DATABASE_URL= (empty) for the embedded database)
//   PARTS=write to run only some of the parts below (read, backfill, write; default all).
//
// 1. read: 10 million receipts' worth of rollup rows (a year of UTC days × the writer's 4 shards, 20 purpose
//    keys each, made with generate_series), then a year of daily buckets asked READS times over HTTP
//    (GET /receipts/stats, session auth included) and as a direct service call; median and p95 (target < 50 ms).
// 2. backfill: BACKFILL_RECEIPTS raw receipts inserted with generate_series, the rollup emptied, the
//    migration's backfill statement timed.
// 3. write: POST /api/sdk/v1/consent at CONCURRENCY with the rollup on and off (the receipt writer's
//    internal `rollup` switch), rounds alternating; the best round of each and every round's figure, CPU per
//    request (this process, which serves; on PostgreSQL also the database's backends of the bench database)
//    and the load average. Receipts carry an action and a jurisdiction, as SDK v2 sends them (GEO=0: without).
// The machine is shared: read ratios, not absolute figures.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { receiptWriter } from '../src/sdk/receipt-writer.js';
import { consentStats } from '../src/stats/service.js';
import { send } from '../test/helpers/server.js';
import { databaseCpuMs as databaseCpuOf } from './lib/cpu.js';
import { loadFromChild } from './lib/load.js';
import { benchProject, consentLoad, machine } from './lib/setup.js';

process.env.BENCH_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const READS = Number(process.env.READS ?? 50);
const BACKFILL_RECEIPTS = Number(process.env.BACKFILL_RECEIPTS ?? 200_000);
const PARTS = new Set((process.env.PARTS ?? 'read,backfill,write').split(','));
const GEO = process.env.GEO !== '0';
const RECEIPTS = 10_000_000;
const PURPOSES = 20;

const bench = await benchProject();
const { server, projectId, version, token } = bench;
const db = server.services.db;
const to = new Date().toISOString().slice(0, 10);
const from = new Date(Date.parse(to) - 364 * 86_400_000).toISOString().slice(0, 10);

// --- 1. read ----------------------------------------------------------------------------------------
let read: unknown;
if (PARTS.has('read')) {
  const perRow = Math.floor(RECEIPTS / (365 * 4));
  await db.query(
    `INSERT INTO consent_stats_daily (project_id, day, version_id, shard, receipts, accepted_all, rejected_all, customised, gpc, purposes)
     SELECT $1, d::date, $2, s, $3, $3 / 2, $3 / 4, $3 - $3 / 2 - $3 / 4, $3 / 10,
            (SELECT jsonb_object_agg('purpose_' || k, $3 / (k + 1)) FROM generate_series(1, $4) k)
     FROM generate_series($5::date, $6::date, interval '1 day') d, generate_series(0, 3) s`,
    [projectId, version.id, perRow, PURPOSES, from, to],
  );
  await db.query('ANALYZE consent_stats_daily');
  const stats = await consentStats(server.services, projectId, { from, to, interval: 'day' });
  const timings = (samples: number[]) => {
    samples.sort((a, b) => a - b);
    return { medianMs: Number(samples[Math.floor(samples.length / 2)]!.toFixed(1)), p95Ms: Number(samples[Math.floor(samples.length * 0.95)]!.toFixed(1)) };
  };
  const http: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < READS; i++) {
    let t = performance.now();
    const res = await send(server.url, 'GET', `/api/platform/projects/${projectId}/receipts/stats?from=${from}&to=${to}&interval=day`, { token });
    if (res.status !== 200) throw new Error(`stats answered ${res.status}`);
    http.push(performance.now() - t);
    t = performance.now();
    await consentStats(server.services, projectId, { from, to, interval: 'day' });
    direct.push(performance.now() - t);
  }
  read = { rollupRows: 365 * 4, receiptsCounted: stats.totals.receipts, buckets: stats.buckets.length, http: timings(http), serviceCall: timings(direct) };
  await db.query('DELETE FROM consent_stats_daily');
}

// --- 2. backfill --------------------------------------------------------------------------------------
let backfill: unknown;
if (PARTS.has('backfill')) {
  await db.query(
    `INSERT INTO receipts (id, project_id, version_id, consent_hash, choices, installation_id, api_key_id, created_at, gpc)
     SELECT receipt_id(at), $1, $2, $3,
            jsonb_build_object('necessary', true, 'analytics', i % 2 = 0, 'marketing', i % 3 = 0),
            'installation-' || i, $4, at, CASE WHEN i % 5 = 0 THEN true END
     FROM generate_series(1, $5) i, LATERAL (SELECT now() - (i % 365) * interval '1 day' AS at) AS t`,
    [projectId, version.id, version.consentHash, bench.keyId, BACKFILL_RECEIPTS],
  );
  await db.query('DELETE FROM consent_stats_daily');
  const migration = readFileSync(join(import.meta.dirname, '../prisma/migrations/20261128000000_consent_stats/migration.sql'), 'utf8');
  let t0 = performance.now();
  await db.query(migration.slice(migration.indexOf('-- Backfill')));
  const backfillMs = performance.now() - t0;
  backfill = { receipts: BACKFILL_RECEIPTS, ms: Math.round(backfillMs), receiptsPerSecond: Math.round(BACKFILL_RECEIPTS / (backfillMs / 1000)) };
}

// --- 3. write -------------------------------------------------------------------------------------------
const databaseName = db.kind === 'postgres' ? new URL(server.services.config.databaseUrl!).pathname.slice(1) : null;
/** CPU time (ms) of the PostgreSQL backends serving the bench database. */
const databaseCpuMs = () => databaseCpuOf(databaseName);
const extras = GEO ? { action: 'custom', jurisdiction: 'DE' } : {};
const requests = consentLoad(bench, { necessary: true, analytics: true, marketing: false }, extras);
const writer = receiptWriter(server.services);
interface Round {
  perSecond: number;
  serviceCpuUsPerRequest: number;
  databaseCpuUsPerRequest: number;
  loadAverage: number;
}
const post = async (rollup: boolean): Promise<Round> => {
  writer.rollup = rollup;
  const cpu = process.cpuUsage();
  const dbCpu = databaseCpuMs();
  const result = await loadFromChild({ port: server.port, connections: CONCURRENCY, durationMs: DURATION_MS, requests, expectStatus: 201 });
  const used = process.cpuUsage(cpu);
  const n = result.perSecond * (DURATION_MS / 1000);
  return {
    perSecond: Math.round(result.perSecond),
    serviceCpuUsPerRequest: Math.round((used.user + used.system) / n),
    databaseCpuUsPerRequest: Math.round(((databaseCpuMs() - dbCpu) * 1000) / n),
    loadAverage: Number(loadavg()[0]!.toFixed(1)),
  };
};
let write: unknown;
if (PARTS.has('write')) {
  await post(true);
  await post(false);
  const rounds: Record<'withRollup' | 'withoutRollup', Round[]> = { withRollup: [], withoutRollup: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const rollup of round % 2 ? [false, true] : [true, false]) rounds[rollup ? 'withRollup' : 'withoutRollup'].push(await post(rollup));
  }
  writer.rollup = true;
  const best = (name: keyof typeof rounds) => Math.max(...rounds[name].map((r) => r.perSecond));
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const summary = (name: keyof typeof rounds) => ({
    best: best(name),
    median: median(rounds[name].map((r) => r.perSecond)),
    medianServiceCpuUs: median(rounds[name].map((r) => r.serviceCpuUsPerRequest)),
    medianDatabaseCpuUs: median(rounds[name].map((r) => r.databaseCpuUsPerRequest)),
    rounds: rounds[name],
  });
  const withRollup = summary('withRollup');
  const withoutRollup = summary('withoutRollup');
  write = {
    database: db.kind,
    geoFields: GEO,
    concurrency: CONCURRENCY,
    durationMs: DURATION_MS,
    withRollup,
    withoutRollup,
    ratioOfBest: Number((withRollup.best / withoutRollup.best).toFixed(3)),
    ratioOfMedians: Number((withRollup.median / withoutRollup.median).toFixed(3)),
    /** CPU per request (service + database) without the rollup / with it: the cost independent of the load. */
    cpuRatio: Number(
      (
        (withoutRollup.medianServiceCpuUs + withoutRollup.medianDatabaseCpuUs) /
        (withRollup.medianServiceCpuUs + withRollup.medianDatabaseCpuUs)
      ).toFixed(3),
    ),
  };
}
console.log(
  JSON.stringify(
    {
      machine: await machine(),
      database: db.kind,
      loadAverage1m: Number(loadavg()[0]!.toFixed(1)),
      read,
      backfill,
      write,
    },
    null,
    2,
  ),
);
await server.close();
