// Receipts at scale (issue 33): for each size in SCALES, a fresh PostgreSQL database gets N receipts over
// PROJECTS projects, loaded with COPY (two years of timestamps in time order, uuidv7 ids of those times, project
// sizes Zipf-distributed so the first project is the large one: ~12% of all receipts over 2,000 projects,
// realistic choices, actions, locales, jurisdictions and returning installations), the daily rollup backfilled
// with the migrations' own statements, then VACUUM ANALYZE (autovacuum's steady state). On that database:
//   - consent POST throughput (POST /api/sdk/v1/consent at CONCURRENCY, ROUNDS rounds, CPU µs per request),
//   - the large project's first receipts page and a cursor page 90% of the way down it (newest first),
//   - its whole export (CSV) in rows per second, with the live heap and RSS peaks,
//   - its stats for a year (GET /receipts/stats, daily buckets),
//   - GET /api/sdk/v2/decision for installations of it,
//   - disk: the receipts table and each index, per million receipts.
// Reads are READS sequential HTTP requests each (session or key auth included): median and p95.
//   SCALES=1000000 npx tsx bench/receipts-scale.ts       (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
//   SCALES=1000000,10000000 compares in one run; PROJECTS=2000; KEEP=1 keeps each database (dropped by default).
// The machine is shared: read the ratios between sizes of one run, with the load average printed beside them.
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { dropDatabase, send } from '../test/helpers/server.js';
import { loadFromChild } from './lib/load.js';
import { loadReceipts, verifyLoad } from './lib/receipts-load.js';
import { BENCH_ORIGIN, benchProject, consentLoad, machine } from './lib/setup.js';

if (typeof globalThis.gc !== 'function') {
  // The export's live heap needs --expose-gc: run again with it.
  const run = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(run.status ?? 1);
}
const gc = globalThis.gc as () => void;
process.env.BENCH_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const SCALES = (process.env.SCALES ?? '1000000').split(',').map(Number);
const PROJECTS = Number(process.env.PROJECTS ?? 2000);
const READS = Number(process.env.READS ?? 30);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const KEEP = process.env.KEEP === '1';
const CHUNK = Number(process.env.CHUNK ?? 1_000_000);
const LOAD_WORKERS = Number(process.env.LOAD_WORKERS ?? 2);
const INDEX_WORKERS = Number(process.env.INDEX_WORKERS ?? 2);
const DAY_MS = 86_400_000;
const SPAN_MS = 730 * DAY_MS;

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
const load = () => Number(loadavg()[0]!.toFixed(1));

interface Timing {
  medianMs: number;
  p95Ms: number;
}
async function timed(reads: number, read: (i: number) => Promise<void>): Promise<Timing> {
  const samples: number[] = [];
  for (let i = 0; i < reads; i++) {
    const t = performance.now();
    await read(i);
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { medianMs: Number(samples[Math.floor(samples.length / 2)]!.toFixed(2)), p95Ms: Number(samples[Math.floor(samples.length * 0.95)]!.toFixed(2)) };
}

async function runScale(n: number) {
  const bench = await benchProject();
  const url = bench.server.services.config.databaseUrl!;
  try {
    return await measure(n, bench, url);
  } finally {
    await bench.server.close();
    if (!KEEP) await dropDatabase(url);
  }
}

async function measure(n: number, bench: Awaited<ReturnType<typeof benchProject>>, url: string) {
  const { server, projectId, version, keyId, token, secret } = bench;
  const db = server.services.db;
  const started = performance.now();

  // --- the projects: the bench project is the largest (index 0), the others get a copy of its version.
  const [{ organization_id: org }] = (await db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = $1', [projectId])) as [
    { organization_id: string },
  ];
  await db.query(
    `INSERT INTO projects (id, organization_id, name, slug) SELECT gen_random_uuid()::text, $1, 'Site ' || i, 'site-' || i FROM generate_series(1, $2) i`,
    [org, PROJECTS - 1],
  );
  const others = await db.query<{ id: string; project_id: string }>(
    `INSERT INTO consent_versions (id, project_id, number, config, content_hash, consent_hash, published_by_id)
     SELECT gen_random_uuid()::text, p.id, 1, v.config, v.content_hash, v.consent_hash, v.published_by_id
     FROM projects p, consent_versions v WHERE v.id = $1 AND p.id <> $2 RETURNING id, project_id`,
    [version.id, projectId],
  );
  const projects = [{ id: projectId, versionId: version.id }, ...others.map((row) => ({ id: row.project_id, versionId: row.id }))];
  // --- the load: generated by PostgreSQL (bench/lib/receipts-load.ts), indexes rebuilt after it, the rollup
  // summed from the generated rows as the migrations' backfill would compute it from the stored ones.
  const end = Date.now() - DAY_MS;
  const begin = end - SPAN_MS;
  const loaded = await loadReceipts({
    url,
    n,
    projects,
    apiKeyId: keyId,
    consentHash: version.consentHash,
    begin,
    end,
    chunk: CHUNK,
    workers: LOAD_WORKERS,
    indexWorkers: INDEX_WORKERS,
    keepIndexes: process.env.KEEP_INDEXES === '1',
    fkChecks: process.env.FK_CHECKS === '1',
    spareBytes: Number(process.env.DISK_SPARE_GB ?? 10) * 2 ** 30,
    log: (line) => console.error(`[${n.toLocaleString('en')}] ${line}`),
  });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const verified = process.env.VERIFY === '1' ? await verifyLoad(url, (name) => readFileSync(new URL(`../prisma/migrations/${name}/migration.sql`, import.meta.url), 'utf8')) : undefined;

  // Sizes summed over the partitions when receipts is partitioned (leaves: pg_partition_tree, or the relation itself).
  const sizes = await client.query<{ name: string; bytes: string }>(
    `WITH leaves AS (
       SELECT r AS root, COALESCE((SELECT array_agg(relid) FROM pg_partition_tree(r) WHERE isleaf), ARRAY[r]) AS parts
         FROM (SELECT 'receipts'::regclass AS r UNION ALL SELECT indexrelid::regclass FROM pg_index WHERE indrelid = 'receipts'::regclass) x
     )
     SELECT CASE WHEN root = 'receipts'::regclass THEN 'receipts (heap + TOAST)' ELSE root::text END AS name,
            (SELECT sum(CASE WHEN root = 'receipts'::regclass THEN pg_table_size(p) ELSE pg_relation_size(p) END) FROM unnest(parts) p)::text AS bytes
       FROM leaves
     UNION ALL SELECT 'receipts total', (SELECT sum(pg_total_relation_size(p)) FROM leaves, unnest(parts) p WHERE root = 'receipts'::regclass)::text
     UNION ALL SELECT 'consent_stats_daily total', pg_total_relation_size('consent_stats_daily')::text
     UNION ALL SELECT 'database', pg_database_size(current_database())::text`,
  );
  const largeCount = loaded.perProject[0]!;
  // Installations of the large project for /decision: one receipt's installation at each of 1,000 times spread
  // over the two years (the former loader kept the first 1,000 it drew, all from the first weeks at 100 M).
  const decisionInstallations = (
    await client.query<{ installation_id: string }>(
      `SELECT (SELECT installation_id FROM receipts WHERE project_id = $1 AND created_at >= t ORDER BY created_at LIMIT 1) AS installation_id
         FROM generate_series(to_timestamp($2::float8 / 1000), to_timestamp($3::float8 / 1000), make_interval(secs => ($3::float8 - $2::float8) / 1000 / 1000)) t`,
      [projectId, begin, end - DAY_MS],
    )
  ).rows
    .map((row) => row.installation_id)
    .filter(Boolean);
  // 90% of the way down the newest-first pages: the position 10% from the oldest.
  const [deep] = (
    await client.query<{ created_at: Date; id: string }>(
      'SELECT created_at, id FROM receipts WHERE project_id = $1 ORDER BY created_at, id OFFSET $2 LIMIT 1',
      [projectId, Math.floor(largeCount * 0.1)],
    )
  ).rows as [{ created_at: Date; id: string }];
  const deepCursor = Buffer.from(JSON.stringify([deep.created_at.toISOString(), deep.id])).toString('base64url');
  await client.end();

  const base = `/api/platform/projects/${projectId}/receipts`;
  const ok = (res: { status: number; text: string }, what: string) => {
    if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text.slice(0, 200)}`);
  };
  const loadBeforeReads = load();
  const firstPage = await timed(READS, async () => ok(await send(server.url, 'GET', `${base}?limit=50`, { token }), 'first page'));
  const deepPage = await timed(READS, async () => ok(await send(server.url, 'GET', `${base}?limit=50&cursor=${deepCursor}`, { token }), 'deep page'));
  const to = new Date(end).toISOString().slice(0, 10);
  const from = new Date(end - 364 * DAY_MS).toISOString().slice(0, 10);
  let counted = 0;
  const stats = await timed(READS, async () => {
    const res = await send(server.url, 'GET', `${base}/stats?from=${from}&to=${to}&interval=day`, { token });
    ok(res, 'stats');
    counted = res.body.totals.receipts;
  });
  const decision = await timed(READS, async (i) => {
    const res = await send(server.url, 'GET', '/api/sdk/v2/decision', {
      token: secret,
      headers: { origin: BENCH_ORIGIN, 'x-consent-installation': decisionInstallations[i % decisionInstallations.length]! },
    });
    ok(res, 'decision');
    if (!res.body.decision) throw new Error('decision: an installation of the load had none');
  });

  // --- the large project's whole export: once for speed, once with memory sampled (live heap after a full GC
  // every 250 ms, and RSS; the forced collections slow that one down).
  const exportAll = async () => {
    const res = await fetch(`${server.url}${base}/export?format=csv`, { headers: { authorization: `Bearer ${token}` } });
    let lines = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
    if (lines - 1 !== largeCount) throw new Error(`export: ${lines - 1} rows, expected ${largeCount}`);
  };
  let t0 = performance.now();
  await exportAll();
  const exportSeconds = (performance.now() - t0) / 1000;
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  let heapPeak = heapBefore;
  let rssPeak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    gc();
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  }, 250);
  t0 = performance.now();
  await exportAll();
  const sampledSeconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);

  // --- consent POSTs last (they add receipts): each round its throughput and this process's CPU per request.
  const requests = consentLoad(bench, { necessary: true, analytics: true, marketing: false }, { action: 'custom', jurisdiction: 'DE', locale: 'de' });
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const cpu = process.cpuUsage();
    const result = await loadFromChild({ port: server.port, connections: CONCURRENCY, durationMs: DURATION_MS, requests, expectStatus: 201 });
    const used = process.cpuUsage(cpu);
    const answered = result.perSecond * (DURATION_MS / 1000);
    rounds.push({ perSecond: Math.round(result.perSecond), p99Ms: Number(result.p99Ms.toFixed(1)), cpuUsPerRequest: Math.round((used.user + used.system) / answered), errors: result.errors, load: load() });
  }

  const bytes = Object.fromEntries(sizes.rows.map((row) => [row.name, Number(row.bytes)]));
  const result = {
    receipts: n,
    projects: PROJECTS,
    largeProjectReceipts: largeCount,
    load: {
      partitioned: loaded.partitioned,
      partitionsCreated: loaded.partitionsCreated,
      fkChecks: loaded.fkChecks,
      seconds: loaded.seconds,
      indexSeconds: loaded.indexSeconds,
      generateRowsPerSecond: loaded.rowsPerSecond,
      rowsPerSecondOverall: Math.round(n / loaded.seconds.total),
      diskFreeBeforeGb: Number((loaded.diskFreeBefore / 2 ** 30).toFixed(1)),
      diskPeakUseGb: Number(((loaded.diskFreeBefore - loaded.diskFreeMin) / 2 ** 30).toFixed(1)),
    },
    verified,
    loadAverageBeforeReads: loadBeforeReads,
    firstPage,
    deepPage,
    statsYear: { ...stats, receiptsCounted: counted },
    decision,
    export: {
      rows: largeCount,
      seconds: Number(exportSeconds.toFixed(1)),
      rowsPerSecond: Math.round(largeCount / exportSeconds),
      secondsWithForcedGcs: Number(sampledSeconds.toFixed(1)),
      liveHeapGrowthMb: mb(heapPeak - heapBefore),
      rssPeakMb: mb(rssPeak),
    },
    consentPost: { concurrency: CONCURRENCY, rounds, best: Math.max(...rounds.map((r) => r.perSecond)) },
    diskMb: Object.fromEntries(Object.entries(bytes).map(([name, value]) => [name, mb(value)])),
    diskMbPerMillionReceipts: mb((bytes['receipts total']! / n) * 1e6),
    totalSeconds: Math.round((performance.now() - started) / 1000),
  };
  return result;
}

const results = [];
for (const n of SCALES) {
  const result = await runScale(n);
  console.error(JSON.stringify(result)); // each size as soon as it is done
  results.push(result);
}
console.log(JSON.stringify({ machine: await machine(), results }, null, 2));
