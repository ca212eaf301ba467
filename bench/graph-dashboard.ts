// The 20-project dashboard on the nested graph: one POST /graphql against the REST calls it replaces
// (per project GET /consent, /api-keys, /webhook, /receipts?limit=5), in alternating rounds.
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/graph-dashboard.ts
// (without BENCH_DATABASE_URL: the embedded database). Each project has a published version, a key
// and 1,000 receipts (generate_series).
import { performance } from 'node:perf_hooks';
import { loadConfig, type Config } from '../src/config.js';
import { startServer } from '../src/server.js';
import { freshDatabaseUrl, send } from '../test/helpers/server.js';
import { publishVersion } from '../test/helpers/versions.js';
import { machine } from './lib/setup.js';

const PROJECTS = 20;
const ROUNDS = Number(process.env.ROUNDS ?? 10);
const PER_ROUND = 10;

const adminUrl = process.env.BENCH_DATABASE_URL;
if (adminUrl) process.env.TEST_DATABASE_URL = adminUrl;
const server = await startServer({
  port: 0,
  dataDir: 'memory://',
  databaseUrl: adminUrl ? await freshDatabaseUrl() : undefined,
  logLevel: (process.env.LOG_LEVEL as Config['logLevel']) ?? 'silent',
  nodeEnv: 'production',
  billingWebhookSecret: 'bench',
  rateLimits: { ...loadConfig().rateLimits, registerPerHour: 1000 },
});
const call = (method: string, path: string, options: Parameters<typeof send>[3] = {}) => send(server.url, method, path, options);
try {
  const email = `bench-${Date.now()}@example.com`;
  await call('POST', '/api/platform/auth/register', { body: { email, password: 'correct horse battery', name: 'Bench' } });
  const token = (await call('POST', '/api/platform/auth/login', { body: { email, password: 'correct horse battery' } })).body.token as string;
  const orgId = (await call('POST', '/api/platform/orgs', { token, body: { name: 'Bench' } })).body.organization.id as string;
  const prisma = server.services.db.prisma;
  // Past the free plan's one project: the bench is about reading them.
  for (let i = 0; i < PROJECTS; i++) await prisma.project.create({ data: { organizationId: orgId, name: `Shop ${i}`, slug: `shop-${i}` } });
  const projects = await prisma.project.findMany({ where: { organizationId: orgId }, select: { id: true } });
  for (const { id } of projects) {
    const version = await publishVersion({ services: server.services, request: call }, { token }, id);
    const key = await call('POST', `/api/platform/projects/${id}/api-keys`, { token, body: { name: 'bench' } });
    await server.services.db.query(
      `INSERT INTO receipts (id, project_id, version_id, consent_hash, choices, installation_id, api_key_id, created_at)
       SELECT receipt_id(at), $1, $2, $3, '{"necessary": true, "analytics": true}', 'install-' || i, $4, at
       FROM generate_series(1, 1000) AS i, LATERAL (SELECT timestamptz '2026-11-01' + i * interval '1 minute' AS at) AS t`,
      [id, version.id, version.consentHash, key.body.apiKey.id],
    );
  }

  const dashboard = `query($id: ID!) { organization(id: $id) { name projects { id name
    consent { hasUnpublishedChanges latestVersion { number } }
    apiKeys(first: 5) { edges { node { prefix } } }
    webhook { url }
    receipts(first: 5) { edges { node { id choices createdAt } } } } } }`;
  const graph = async () => {
    const res = await call('POST', '/graphql', { token, body: { query: dashboard, variables: { id: orgId } } });
    if (res.status !== 200 || res.body.errors) throw new Error(res.text);
  };
  const rest = async () => {
    await Promise.all(
      projects.flatMap(({ id }) =>
        ['/consent', '/api-keys', '/webhook', '/receipts?limit=5'].map(async (path) => {
          const res = await call('GET', `/api/platform/projects/${id}${path}`, { token });
          if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
        }),
      ),
    );
  };
  const timings = { graph: [] as number[], rest: [] as number[] };
  const time = async (name: keyof typeof timings, run: () => Promise<void>) => {
    for (let i = 0; i < PER_ROUND; i++) {
      const started = performance.now();
      await run();
      timings[name].push(performance.now() - started);
    }
  };
  await time('graph', graph); // warm-up
  await time('rest', rest);
  timings.graph.length = timings.rest.length = 0;
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2) {
      await time('rest', rest);
      await time('graph', graph);
    } else {
      await time('graph', graph);
      await time('rest', rest);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)]!;
  console.log(`${await machine()}, ${server.services.db.kind}, ${PROJECTS} projects × 1,000 receipts, ${ROUNDS} alternating rounds × ${PER_ROUND}`);
  console.log(`graph dashboard (1 request):     median ${median(timings.graph).toFixed(1)} ms, p95 ${p95(timings.graph).toFixed(1)} ms`);
  console.log(`REST equivalent (${PROJECTS * 4} requests): median ${median(timings.rest).toFixed(1)} ms, p95 ${p95(timings.rest).toFixed(1)} ms`);
  console.log(`ratio REST / graph (median): ${(median(timings.rest) / median(timings.graph)).toFixed(2)}x`);
} finally {
  await server.close();
  if (adminUrl) {
    const pg = (await import('pg')).default;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${new URL(server.services.config.databaseUrl!).pathname.slice(1)}" WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}
