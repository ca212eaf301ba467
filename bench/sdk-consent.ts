// Consent POST throughput on PostgreSQL against plain `pg` inserts of the same rows, in one run.
//   npx tsx bench/sdk-consent.ts     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
// Target: the service records >= 0.5x the rows/s of plain pg at 64 concurrency, every row durable
// (committed) before its 201. The plain-pg side uses a pool as large as the service's (DATABASE_POOL_SIZE,
// default 20), 64 concurrent writers, one INSERT (autocommit) per row.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { loadFromChild } from './lib/load.js';
import { benchProject, consentLoad, machine } from './lib/setup.js';

process.env.BENCH_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const POOL_SIZE = Number(process.env.DATABASE_POOL_SIZE ?? 20);

const bench = await benchProject();
const { server, version, keyId, projectId } = bench;
const choices = { necessary: true, analytics: true, marketing: false };

// Plain pg: the same row the service stores, one autocommit INSERT each.
const pool = new pg.Pool({ connectionString: server.services.config.databaseUrl, max: POOL_SIZE });
async function plainPg(): Promise<{ perSecond: number; p99Ms: number }> {
  const deadline = performance.now() + DURATION_MS;
  const latencies: number[] = [];
  const started = performance.now();
  let n = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const t = performance.now();
        await pool.query(
          `INSERT INTO receipts (id, project_id, version_id, consent_hash, choices, installation_id, sdk_version, api_key_id, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [randomUUID(), projectId, version.id, version.consentHash, JSON.stringify(choices), `plain-${n++}`, '1.0.0', keyId, new Date()],
        );
        latencies.push(performance.now() - t);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / ((performance.now() - started) / 1000), p99Ms: latencies[Math.floor(latencies.length * 0.99)]! };
}

const requests = consentLoad(bench, choices);
const service = () => loadFromChild({ port: server.port, connections: CONCURRENCY, durationMs: DURATION_MS, requests, expectStatus: 201 });

// Warm up both, then alternate.
await service();
await plainPg();
const plainRuns = [];
const serviceRuns = [];
for (let round = 0; round < ROUNDS; round++) {
  plainRuns.push(await plainPg());
  serviceRuns.push(await service());
}
const bestPlain = plainRuns.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
const bestService = serviceRuns.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
const ratio = bestService.perSecond / bestPlain.perSecond;
console.log(
  JSON.stringify(
    {
      machine: await machine(),
      concurrency: CONCURRENCY,
      poolSize: POOL_SIZE,
      durationMs: DURATION_MS,
      plainPg: { rowsPerSecond: Math.round(bestPlain.perSecond), p99Ms: Number(bestPlain.p99Ms.toFixed(1)), rounds: plainRuns.map((r) => Math.round(r.perSecond)) },
      service: {
        rowsPerSecond: Math.round(bestService.perSecond),
        p50Ms: Number(bestService.p50Ms.toFixed(1)),
        p99Ms: Number(bestService.p99Ms.toFixed(1)),
        errors: serviceRuns.reduce((n, r) => n + r.errors, 0),
        statuses: bestService.statuses,
        rounds: serviceRuns.map((r) => Math.round(r.perSecond)),
      },
      ratio: Number(ratio.toFixed(3)),
      target: 0.5,
      pass: ratio >= 0.5,
    },
    null,
    2,
  ),
);
await pool.end();
await server.close();
