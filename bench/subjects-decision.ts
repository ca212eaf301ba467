// GET /api/sdk/v2/decision for a signed-in installation (issue 47, docs/subjects.md): does a person with 10,000
// installations slow it down? Two subjects in one project, measured in the same run, rounds alternated:
//   - small: one installation, one receipt made while signed in;
//   - large: 10,000 installations linked to the subject, each with a receipt made while signed in (written with
//     SQL, as the receipt writer would store them, spread over the last ~3 hours).
// Each round loads /decision for an installation of one subject for ROUND_MS with CONNECTIONS keep-alive
// connections (bench/lib/load.ts in a child process) and reports requests/s, p50/p99 and CPU per request of the
// service (this process) and of the database's backends (PostgreSQL only). The figure: large ÷ small.
//
//   npx tsx bench/subjects-decision.ts [rounds=4]     BENCH_DATABASE_URL (default PostgreSQL on localhost; empty: embedded)
import { SignJWT } from 'jose';
import { send } from '../test/helpers/server.js';
import { databaseCpuMeter } from './lib/cpu.js';
import { loadFromChild, type LoadResult } from './lib/load.js';
import { BENCH_ORIGIN, benchProject, machine } from './lib/setup.js';

const ROUNDS = Number(process.argv[2] ?? 4);
const ROUND_MS = 5_000;
const CONNECTIONS = 8;
const INSTALLATIONS = 10_000;

process.env.BENCH_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const bench = await benchProject();
const { server, projectId, token, version, keyId } = bench;
const call = (method: string, path: string, options: Parameters<typeof send>[3] = {}) => send(server.url, method, path, options);
const db = server.services.db;

const made = await call('POST', `/api/platform/projects/${projectId}/subject-secret`, { token });
const secret = new TextEncoder().encode(made.body.secret as string);
const tokenFor = (sub: string) => new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setAudience(projectId).setIssuedAt().setExpirationTime('1h').sign(secret);
const sdk = { token: bench.secret, headers: { origin: BENCH_ORIGIN } };

async function signIn(installationId: string, sub: string) {
  const res = await call('POST', '/api/sdk/v2/identify', { ...sdk, body: { installationId, token: await tokenFor(sub) } });
  if (res.status !== 200) throw new Error(`identify: ${res.status} ${res.text}`);
  const receipt = await call('POST', '/api/sdk/v1/consent', {
    ...sdk,
    body: { versionId: version.id, consentHash: version.consentHash, choices: { analytics: true }, installationId, sdkVersion: 'bench' },
  });
  if (receipt.status !== 201) throw new Error(`consent: ${receipt.status} ${receipt.text}`);
  const [row] = await db.query<{ subject_hash: string }>('SELECT subject_hash FROM subject_links WHERE project_id = $1 AND installation_id = $2', [projectId, installationId]);
  return row!.subject_hash;
}

await signIn('small-person-0', 'small-person');
const large = await signIn('large-person-0', 'large-person');
// The rest of the large person's installations, each signed in and with a receipt made while signed in.
await db.query(
  `INSERT INTO subject_links (project_id, installation_id, subject_hash, linked_at)
   SELECT $1, 'large-person-' || n, $2, now() FROM generate_series(1, $3) AS n`,
  [projectId, large, INSTALLATIONS - 1],
);
await db.query(
  `INSERT INTO receipts (id, project_id, version_id, consent_hash, choices, installation_id, sdk_version, api_key_id, created_at, subject_hash)
   SELECT receipt_id(at), $1, $2, $3, '{"necessary": true, "analytics": false}', 'large-person-' || n, 'bench', $4, at, $5
     FROM (SELECT n, now() - interval '1 second' * n AS at FROM generate_series(1, $6) AS n) AS t`,
  [projectId, version.id, version.consentHash, keyId, large, INSTALLATIONS - 1],
);
if (db.kind === 'postgres') await db.query('ANALYZE receipts; ANALYZE subject_links; ANALYZE subjects');
const [counted] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM subject_links WHERE subject_hash = $1', [large]);

const request = (installationId: string) => ({
  fixed:
    `GET /api/sdk/v2/decision HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${bench.secret}\r\nOrigin: ${BENCH_ORIGIN}\r\n` +
    `X-Consent-Installation: ${installationId}\r\n\r\n`,
});
// An installation of the large person in the middle of the pack (its own receipt is not the newest).
const cases = { small: request('small-person-0'), large: request('large-person-5000') };

const port = Number(new URL(server.url).port);
const databaseName = db.kind === 'postgres' ? new URL(server.services.config.databaseUrl!).pathname.slice(1) : null;
interface Round extends LoadResult {
  serviceCpuUs: number;
  databaseCpuUs: number;
}
const rounds: Record<keyof typeof cases, Round[]> = { small: [], large: [] };
// Warm-up: plans, connections, caches.
for (const spec of Object.values(cases)) await loadFromChild({ port, connections: CONNECTIONS, durationMs: 1_000, requests: spec, expectStatus: 200 });
for (let round = 0; round < ROUNDS; round++) {
  const order = (round % 2 ? ['large', 'small'] : ['small', 'large']) as (keyof typeof cases)[];
  for (const name of order) {
    const cpu = process.cpuUsage();
    const dbCpu = databaseCpuMeter(databaseName);
    const result = await loadFromChild({ port, connections: CONNECTIONS, durationMs: ROUND_MS, requests: cases[name], expectStatus: 200 });
    const used = process.cpuUsage(cpu);
    const ok = result.requests - result.errors;
    rounds[name].push({ ...result, serviceCpuUs: (used.user + used.system) / ok, databaseCpuUs: (dbCpu.stop() * 1000) / ok });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const os = await import('node:os');
console.log(`${await machine()}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}, ${db.kind}`);
console.log(`large subject: ${counted!.n} installations, ${INSTALLATIONS} receipts; ${ROUNDS} rounds of ${ROUND_MS / 1000} s, ${CONNECTIONS} connections`);
for (const [name, list] of Object.entries(rounds)) {
  for (const r of list) {
    console.log(
      `${name.padEnd(5)} ${r.perSecond.toFixed(0).padStart(6)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  ` +
        `CPU service ${r.serviceCpuUs.toFixed(0)} µs + database ${r.databaseCpuUs.toFixed(0)} µs per request  errors ${r.errors}`,
    );
  }
}
const ratio = (pick: (r: Round) => number) => (median(rounds.large.map(pick)) / median(rounds.small.map(pick))).toFixed(2);
console.log(
  `large ÷ small, medians of rounds: req/s ${ratio((r) => r.perSecond)}, p50 ${ratio((r) => r.p50Ms)}, p99 ${ratio((r) => r.p99Ms)}, ` +
    `CPU service ${ratio((r) => r.serviceCpuUs)}, database ${ratio((r) => r.databaseCpuUs)}`,
);
await server.close();
