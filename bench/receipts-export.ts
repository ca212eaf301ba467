// Receipts export in constant memory: 1,000,000 receipts streamed as CSV and NDJSON while memory is
// sampled; a smaller export (100,000) in the same run shows memory does not grow with size.
//   npx tsx bench/receipts-export.ts     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
// The live heap (heapUsed right after a forced full GC, every 250 ms) is the figure that shows what the
// export holds; RSS is reported too but also counts memory V8 keeps after collecting it.
import { spawnSync } from 'node:child_process';
import { send } from '../test/helpers/server.js';
import { benchProject, machine } from './lib/setup.js';

if (typeof globalThis.gc !== 'function') {
  // Measuring the live heap needs --expose-gc: run again with it.
  const run = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(run.status ?? 1);
}
const gc = globalThis.gc as () => void;
process.env.BENCH_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.ROWS ?? 1_000_000);
const SMALL = Number(process.env.SMALL_ROWS ?? 100_000);

const bench = await benchProject();
const { server, version, keyId } = bench;
const db = server.services.db;

// A second project for the small export, same owner.
const owner = await db.query<{ user_id: string; organization_id: string }>(
  `SELECT m.user_id, p.organization_id FROM projects p JOIN memberships m ON m.organization_id = p.organization_id WHERE p.id = $1`,
  [bench.projectId],
);
const smallProject = (await db.query<{ id: string }>(
  `INSERT INTO projects (id, organization_id, name, slug) VALUES (gen_random_uuid()::text, $1, 'Small', 'small') RETURNING id`,
  [owner[0]!.organization_id],
))[0]!.id;
const smallVersion = (await db.query<{ id: string }>(
  `INSERT INTO consent_versions (id, project_id, number, config, content_hash, consent_hash, published_by_id)
   SELECT gen_random_uuid()::text, $1, 1, config, content_hash, consent_hash, published_by_id FROM consent_versions WHERE id = $2 RETURNING id`,
  [smallProject, version.id],
))[0]!.id;

async function insertReceipts(projectId: string, versionId: string, rows: number) {
  const started = performance.now();
  // Fast SQL: one statement per 200k rows, created_at spread over a day.
  for (let offset = 0; offset < rows; offset += 200_000) {
    await db.query(
      `INSERT INTO receipts (id, project_id, version_id, consent_hash, choices, installation_id, sdk_version, api_key_id, created_at)
       SELECT receipt_id(at), $1, $2, $3, '{"necessary":true,"analytics":true,"marketing":false}'::jsonb,
              'installation-' || i, '1.0.0', $4, at
       FROM generate_series($5::int, $6::int) AS i, LATERAL (SELECT now() - interval '1 day' + (i * interval '1 millisecond') * 80 AS at) AS t`,
      [projectId, versionId, version.consentHash, keyId, offset, Math.min(rows, offset + 200_000) - 1],
    );
  }
  return (performance.now() - started) / 1000;
}

const token = (await db.query<{ token: string }>('SELECT 1 AS token'))[0] && (await login());
async function login() {
  const email = (await db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [owner[0]!.user_id]))[0]!.email;
  const res = await send(server.url, 'POST', '/api/platform/auth/login', { body: { email, password: 'correct horse battery' } });
  return res.body.token as string;
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/** Streams one export, pausing the reader for a moment half-way (backpressure), sampling RSS throughout. */
async function exportOnce(projectId: string, format: 'csv' | 'ndjson', expectedRows: number) {
  gc();
  const rssBefore = process.memoryUsage().rss;
  const liveBefore = process.memoryUsage().heapUsed;
  let peakRss = rssBefore;
  let peakLive = liveBefore;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    gc();
    peakLive = Math.max(peakLive, process.memoryUsage().heapUsed);
  }, 250);
  const started = performance.now();
  const res = await fetch(`${server.url}/api/platform/projects/${projectId}/receipts/export?format=${format}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const reader = res.body!.getReader();
  let bytes = 0;
  let lines = 0;
  let paused = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    for (let i = 0; i < value.length; i++) if (value[i] === 10) lines++;
    if (!paused && lines > expectedRows / 2) {
      paused = true;
      await new Promise((r) => setTimeout(r, 2000)); // a slow client: the server must wait, not buffer
    }
  }
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  const rows = format === 'csv' ? lines - 1 : lines;
  if (rows !== expectedRows) throw new Error(`${format}: expected ${expectedRows} rows, got ${rows}`);
  return {
    format,
    rows,
    megabytes: mb(bytes),
    seconds: Number(seconds.toFixed(1)),
    rowsPerSecond: Math.round(rows / (seconds - 2)),
    liveHeapBeforeMb: mb(liveBefore),
    liveHeapPeakMb: mb(peakLive),
    liveHeapGrowthMb: mb(peakLive - liveBefore),
    rssBeforeMb: mb(rssBefore),
    rssPeakMb: mb(peakRss),
  };
}

const insertedSmall = await insertReceipts(smallProject, smallVersion, SMALL);
const insertedLarge = await insertReceipts(bench.projectId, version.id, ROWS);
const results = [];
for (const format of ['csv', 'ndjson'] as const) {
  results.push({ project: 'small', ...(await exportOnce(smallProject, format, SMALL)) });
  results.push({ project: 'large', ...(await exportOnce(bench.projectId, format, ROWS)) });
}
console.log(
  JSON.stringify(
    {
      machine: await machine(),
      database: db.kind,
      insertSeconds: { small: Number(insertedSmall.toFixed(1)), large: Number(insertedLarge.toFixed(1)) },
      exports: results,
    },
    null,
    2,
  ),
);
await server.close();
