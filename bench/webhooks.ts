// Webhook delivery benchmark. Run from the repo root:
//   npx tsx bench/webhooks.ts                      (embedded database, in memory)
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/webhooks.ts   (a fresh PostgreSQL database)
// Options: --rate 500 (events/s offered), --seconds 10, --producers 32 (receipt transactions at once),
// --samples 1000 (outbox-cost transactions per variant), --backlog 5000 (events drained at full speed).
//
// It measures, with a local HTTP receiver that answers 200 at once:
//  1. the outbox cost on the receipt transaction, through the real receipt writer (src/sdk/receipt-writer.ts,
//     one receipt at a time, so one transaction each): a project without a webhook (the check finds none) against
//     one with an enabled webhook (the event row is written in the same transaction);
//  2. deliveries/s and lag from receipt commit to arrival at the receiver (p50/p99) at a steady offered rate;
//  3. how fast a backlog drains (the worker's ceiling on this machine).
// The service, the receiver and the load generator share one process, as small deployments do.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { uuidv7 } from 'uuidv7';
import { startServer } from '../src/server.js';
import { receiptWriter } from '../src/sdk/receipt-writer.js';
import { putWebhook } from '../src/webhooks/service.js';
import { startWebhookWorker, webhookWorkerOf } from '../src/webhooks/worker.js';
import { writerReceipt } from '../test/helpers/receipts.js';
import { freshDatabaseUrl } from '../test/helpers/server.js';

const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '10' },
    samples: { type: 'string', default: '1000' },
    backlog: { type: 'string', default: '5000' },
    producers: { type: 'string', default: '32' },
  },
});
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const SAMPLES = Number(args.samples);
const BACKLOG = Number(args.backlog);
const PRODUCERS = Number(args.producers);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, v) => sum + v, 0) / sorted.length;
  return { mean: round(mean), p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)) };
};
const round = (n: number) => Math.round(n * 100) / 100;

// --- receiver: records when each event id arrives -------------------------------------------------
// Keyed by receipt id (the receipt writer makes the event id), or by event id for backlog events.
const arrivals = new Map<string, number>();
let duplicates = 0;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const id = String(body.data?.receiptId ?? req.headers['x-consent-delivery']);
    if (arrivals.has(id)) duplicates++;
    else arrivals.set(id, performance.now());
    res.writeHead(200).end();
  });
});
await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

// --- service ---------------------------------------------------------------------------------------
const databaseUrl = await freshDatabaseUrl();
const server = await startServer({ port: 0, dataDir: 'memory://', databaseUrl, logLevel: 'silent', nodeEnv: 'test' });
const { services } = server;
const prisma = services.db.prisma;

async function projectFixture(withWebhook: boolean) {
  const user = await prisma.user.create({
    data: { email: `bench-${uuidv7()}@example.com`, name: 'Bench', passwordHash: 'x' },
  });
  const org = await prisma.organization.create({ data: { name: 'Bench', slug: `bench-${uuidv7()}` } });
  const project = await prisma.project.create({ data: { organizationId: org.id, name: 'Bench', slug: 'bench' } });
  const version = await prisma.consentVersion.create({
    data: { projectId: project.id, number: 1, config: {}, contentHash: 'c'.repeat(64), consentHash: 'h'.repeat(64), publishedById: user.id },
  });
  const key = await prisma.apiKey.create({ data: { projectId: project.id, prefix: 'pk_live_bench0', secretHash: uuidv7() } });
  if (withWebhook) await putWebhook(services, project.id, { url: receiverUrl, enabled: true });
  return { projectId: project.id, versionId: version.id, apiKeyId: key.id };
}
type Fixture = Awaited<ReturnType<typeof projectFixture>>;

/** A receipt through the real receipt writer, as the SDK consent route stores it; returns the receipt id. */
async function writeReceipt(fixture: Fixture): Promise<string> {
  const analytics = Math.random() < 0.5;
  const receipt = writerReceipt({
    projectId: fixture.projectId,
    versionId: fixture.versionId,
    versionNumber: 1,
    consentHash: 'h'.repeat(64),
    choices: { necessary: true, analytics },
    installationId: 'inst_bench_0001',
    sdkVersion: '1.0.0',
    decision: analytics ? 'acceptedAll' : 'rejectedAll',
    apiKeyId: fixture.apiKeyId,
    createdAt: services.now(),
  });
  await receiptWriter(services).write(receipt);
  return receipt.id;
}

const [withoutHook, withHook] = [await projectFixture(false), await projectFixture(true)];
console.log(`database: ${services.db.kind}; receiver ${receiverUrl}`);

// --- 1. outbox cost (worker stopped so deliveries do not compete) -----------------------------------
await webhookWorkerOf(services)!.stop();
const variants = {
  'receipt, project without webhook': () => writeReceipt(withoutHook),
  'receipt + outbox row, webhook on': () => writeReceipt(withHook),
};
const timings: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
for (let warm = 0; warm < 50; warm++) for (const run of Object.values(variants)) await run();
for (let i = 0; i < SAMPLES; i++) {
  // Rotate the order so drift (autovacuum, a busy neighbour) hits every variant alike.
  const names = Object.keys(variants);
  for (let k = 0; k < names.length; k++) {
    const name = names[(i + k) % names.length]!;
    const started = performance.now();
    await variants[name as keyof typeof variants]();
    timings[name]!.push(performance.now() - started);
  }
}
console.log('\n1. Receipt writer latency (ms), sequential (one transaction per receipt):');
console.table(Object.fromEntries(Object.entries(timings).map(([name, values]) => [name, stats(values)])));
await prisma.webhookEvent.deleteMany({});
arrivals.clear();

// --- 2. steady rate --------------------------------------------------------------------------------
startWebhookWorker(services);
const committed = new Map<string, number>();
const total = RATE * SECONDS;
const started = performance.now();
let offered = 0;
const inFlight = new Set<Promise<void>>();
// At most --producers receipt transactions at once, as a server's request concurrency would allow;
// when the database cannot keep up, the committed rate falls below the offered one.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
while (offered < total) {
  const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * RATE));
  for (; offered < due && inFlight.size < PRODUCERS; offered++) {
    // The writer wakes the worker after its commit, as the route does.
    const p = writeReceipt(withHook).then((id) => {
      committed.set(id, performance.now());
    });
    const tracked = p.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  }
  await new Promise((resolve) => setTimeout(resolve, 5));
}
await Promise.all(inFlight);
const producedIn = (performance.now() - started) / 1000;
loopDelay.disable();
while (arrivals.size < committed.size) await new Promise((resolve) => setTimeout(resolve, 20));
const deliveredIn = (Math.max(...arrivals.values()) - started) / 1000;
const lags = [...committed].map(([id, at]) => arrivals.get(id)! - at);
console.log(`\n2. Offered ${RATE}/s for ${SECONDS} s: ${committed.size} receipts committed in ${producedIn.toFixed(2)} s`);
console.table({
  'receipts/s committed': round(committed.size / producedIn),
  'deliveries/s': round(arrivals.size / deliveredIn),
  'lag p50 (ms)': stats(lags).p50,
  'lag p99 (ms)': stats(lags).p99,
  'lag max (ms)': round(Math.max(...lags)),
  'duplicates at receiver': duplicates,
  'event-loop delay p99 (ms)': round(loopDelay.percentile(99) / 1e6),
  'event-loop delay max (ms)': round(loopDelay.max / 1e6),
});

// --- 3. backlog drain --------------------------------------------------------------------------------
await webhookWorkerOf(services)!.stop();
arrivals.clear();
const backlogRows = Array.from({ length: BACKLOG }, () => {
  const id = uuidv7();
  return { id, payload: { id, type: 'consent.updated', createdAt: new Date().toISOString(), data: { projectId: withHook.projectId } } };
});
for (let i = 0; i < backlogRows.length; i += 1000) {
  await services.db.query(
    `INSERT INTO webhook_events (id, project_id, type, payload) SELECT e.id, $1, 'consent.updated', e.payload
     FROM jsonb_to_recordset($2::jsonb) AS e(id text, payload jsonb)`,
    [withHook.projectId, JSON.stringify(backlogRows.slice(i, i + 1000))],
  );
}
const drainStart = performance.now();
startWebhookWorker(services);
while (arrivals.size < BACKLOG) await new Promise((resolve) => setTimeout(resolve, 20));
const drainSeconds = (performance.now() - drainStart) / 1000;
const pendingCount = () => prisma.webhookEvent.count({ where: { status: 'pending' } });
while ((await pendingCount()) > 0) await new Promise((resolve) => setTimeout(resolve, 100));
const recordedSeconds = (performance.now() - drainStart) / 1000;
console.log(`\n3. Backlog of ${BACKLOG} events:`);
console.table({
  'deliveries/s (arrival)': round(BACKLOG / drainSeconds),
  'deliveries/s (recorded)': round(BACKLOG / recordedSeconds),
  'duplicates at receiver': duplicates,
});

await server.close();
receiver.closeAllConnections();
receiver.close();
process.exit(0); // the delivery agent's keep-alive sockets would hold the process a while

