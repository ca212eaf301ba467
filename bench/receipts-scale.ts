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
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { V7Generator } from 'uuidv7';
import { dropDatabase, send } from '../test/helpers/server.js';
import { loadFromChild } from './lib/load.js';
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
const DAY_MS = 86_400_000;
const SPAN_MS = 730 * DAY_MS;

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
const load = () => Number(loadavg()[0]!.toFixed(1));

/** Project weights ∝ 1/(k+1) (Zipf, s = 1): a few large sites and a long tail, as hosted consent looks. */
function zipf(projects: number): Float64Array {
  const cumulative = new Float64Array(projects);
  let sum = 0;
  for (let k = 0; k < projects; k++) cumulative[k] = sum += 1 / (k + 1);
  for (let k = 0; k < projects; k++) cumulative[k]! /= sum;
  return cumulative;
}
function pick(cumulative: Float64Array): number {
  const r = Math.random();
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const LOCALES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pl', 'pt-BR'];
const PLACES = ['DE', 'FR', 'GB', 'ES', 'IT', 'NL', 'PL', 'US-CA', 'US-VA', 'US', 'BR', 'CA'];
// How visitors answer: accept all, reject all, some, GPC (the SDK records its own receipt for it).
const ANSWERS = [
  { share: 0.55, choices: '{"necessary": true, "analytics": true, "marketing": true}', action: 'accept_all', gpc: 'f' },
  { share: 0.27, choices: '{"necessary": true, "analytics": false, "marketing": false}', action: 'reject_all', gpc: 'f' },
  { share: 0.14, choices: '{"necessary": true, "analytics": true, "marketing": false}', action: 'custom', gpc: 'f' },
  { share: 0.04, choices: '{"necessary": true, "analytics": false, "marketing": false}', action: 'gpc', gpc: 't' },
];
const answerAt = (r: number) => {
  for (const answer of ANSWERS) if ((r -= answer.share) < 0) return answer;
  return ANSWERS[0]!;
};

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
  const { server, projectId, version, keyId, token, secret } = bench;
  const db = server.services.db;
  const url = server.services.config.databaseUrl!;
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
  const cumulative = zipf(projects.length);
  // Returning visitors: about 1.4 receipts per installation over two years.
  const installations = projects.map((_, k) => Math.max(1, Math.round((n * (cumulative[k]! - (k ? cumulative[k - 1]! : 0))) / 1.4)));
  const decisionInstallations: string[] = [];
  const installationId = (k: number, i: number) => `${k.toString(36)}-${i.toString(36)}`.padStart(22, '0');

  // --- COPY, in time order as the service would have written them.
  const ids = new V7Generator();
  const end = Date.now() - DAY_MS;
  const begin = end - SPAN_MS;
  function* rows(): Generator<string> {
    const CHUNK = 5000;
    for (let i = 0; i < n; i += CHUNK) {
      let chunk = '';
      for (let j = i; j < Math.min(n, i + CHUNK); j++) {
        const at = begin + Math.floor((j / n) * SPAN_MS);
        const k = pick(cumulative);
        const project = projects[k]!;
        const installation = installationId(k, Math.floor(Math.random() * installations[k]!));
        if (k === 0 && decisionInstallations.length < 1000 && Math.random() < 0.01) decisionInstallations.push(installation);
        const answer = answerAt(Math.random());
        const sdk = Math.random() < 0.7; // v2 SDKs send locale, jurisdiction and action; v1 ones do not
        chunk +=
          `${ids.generateOrResetCore(at, 10_000)}\t${project.id}\t${project.versionId}\t${version.consentHash}\t${answer.choices}\t${installation}\t` +
          `${sdk ? '2.0.0' : '1.0.0'}\t${keyId}\t${new Date(at).toISOString()}\t${sdk ? LOCALES[j % LOCALES.length] : '\\N'}\t` +
          `${sdk ? answer.gpc : '\\N'}\t${sdk ? PLACES[(j * 7) % PLACES.length] : '\\N'}\t${sdk ? answer.action : '\\N'}\t\\N\n`;
      }
      yield chunk;
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let t0 = performance.now();
  await pipeline(
    Readable.from(rows()),
    client.query(
      copyFrom(
        `COPY receipts (id, project_id, version_id, consent_hash, choices, installation_id, sdk_version, api_key_id, created_at, locale, gpc, jurisdiction, action, gpp) FROM STDIN`,
      ),
    ),
  );
  const copySeconds = (performance.now() - t0) / 1000;
  // The rollup of what was loaded: the two migrations' backfill statements, as an upgrade would run them.
  t0 = performance.now();
  const { readFileSync } = await import('node:fs');
  for (const name of ['20261128000000_consent_stats', '20261130200000_consent_stats_actions']) {
    const sql = readFileSync(new URL(`../prisma/migrations/${name}/migration.sql`, import.meta.url), 'utf8');
    await client.query(sql.slice(sql.indexOf('-- Backfill')));
  }
  const rollupSeconds = (performance.now() - t0) / 1000;
  t0 = performance.now();
  await client.query('VACUUM ANALYZE receipts');
  await client.query('VACUUM ANALYZE consent_stats_daily');
  const vacuumSeconds = (performance.now() - t0) / 1000;

  const sizes = await client.query<{ name: string; bytes: string }>(
    `SELECT 'receipts (heap + TOAST)' AS name, pg_table_size('receipts')::text AS bytes
     UNION ALL SELECT indexrelid::regclass::text, pg_relation_size(indexrelid)::text FROM pg_index WHERE indrelid = 'receipts'::regclass
     UNION ALL SELECT 'receipts total', pg_total_relation_size('receipts')::text
     UNION ALL SELECT 'consent_stats_daily total', pg_total_relation_size('consent_stats_daily')::text`,
  );
  const [{ count: large }] = (await client.query<{ count: string }>('SELECT count(*)::text AS count FROM receipts WHERE project_id = $1', [projectId])).rows as [
    { count: string },
  ];
  const largeCount = Number(large);
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
  t0 = performance.now();
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
    loadSeconds: { copy: Number(copySeconds.toFixed(1)), rollupBackfill: Number(rollupSeconds.toFixed(1)), vacuumAnalyze: Number(vacuumSeconds.toFixed(1)) },
    copyRowsPerSecond: Math.round(n / copySeconds),
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
  await server.close();
  if (!KEEP) await dropDatabase(url);
  return result;
}

const results = [];
for (const n of SCALES) {
  const result = await runScale(n);
  console.error(JSON.stringify(result)); // each size as soon as it is done
  results.push(result);
}
console.log(JSON.stringify({ machine: await machine(), results }, null, 2));
