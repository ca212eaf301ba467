// What a project webhook costs the consent POST: the same load against POST /api/sdk/v1/consent with the
// project's webhook disabled, enabled with the delivery worker paused (the outbox insert alone), and
// enabled with deliveries running in the same process (as in production), alternating in one run.
//   npx tsx bench/webhooks-consent.ts                 (embedded database)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/webhooks-consent.ts
// CONCURRENCY (default 64), DURATION_MS (5000), ROUNDS (3, each running the three cases in rotated order).
// The receiver answers 200 at once.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { putWebhook } from '../src/webhooks/service.js';
import { startWebhookWorker, webhookWorkerOf } from '../src/webhooks/worker.js';
import { loadFromChild } from './lib/load.js';
import { benchProject, consentLoad, machine } from './lib/setup.js';

const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

let delivered = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    delivered++;
    res.writeHead(200).end();
  });
});
await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

// nodeEnv test: the receiver is on this machine (production would refuse it, rightly).
const bench = await benchProject({ nodeEnv: 'test' });
const { server, projectId } = bench;
const setWebhook = (enabled: boolean) => putWebhook(server.services, projectId, { url: receiverUrl, enabled });

const requests = consentLoad(bench, { necessary: true, analytics: true, marketing: false });
const load = () => loadFromChild({ port: server.port, connections: CONCURRENCY, durationMs: DURATION_MS, requests, expectStatus: 201 });

const pendingEvents = async () =>
  Number((await server.services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_events WHERE status = 'pending'`))[0]!.n);

type Case = 'without' | 'outboxOnly' | 'with';
const runs: Record<Case, { perSecond: number; p50Ms: number; p99Ms: number; errors: number }[]> = {
  without: [],
  outboxOnly: [],
  with: [],
};
let workerRunning = true;
const drain = async () => {
  while ((await pendingEvents()) > 0) await new Promise((resolve) => setTimeout(resolve, 100));
};
/** Puts the webhook and the worker in the case's state; nothing left over from the case before runs during it. */
async function prepare(name: Case) {
  if (!workerRunning) {
    startWebhookWorker(server.services);
    workerRunning = true;
  }
  await setWebhook(true);
  await drain(); // events of an earlier case are delivered before this one is measured
  if (name === 'without') await setWebhook(false);
  if (name === 'outboxOnly') {
    await webhookWorkerOf(server.services)!.stop();
    workerRunning = false;
  }
}
const cases: Case[] = ['without', 'outboxOnly', 'with'];

await prepare('without');
await load(); // warm-up
// The receipts table grows through the run: rotating the order (round r starts with case r mod 3) keeps
// any case from always running on the largest table.
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < cases.length; i++) {
    const name = cases[(round + i) % cases.length]!;
    await prepare(name);
    const before = delivered;
    const result = await load();
    runs[name].push(result);
    console.error(`round ${round + 1} ${name}: ${Math.round(result.perSecond)} receipts/s, ${result.errors} unexpected statuses, ${delivered - before} delivered during the run`);
  }
}

const best = (list: typeof runs.with) => list.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
const summary = (list: typeof runs.with) => {
  const b = best(list);
  return {
    receiptsPerSecond: Math.round(b.perSecond),
    p50Ms: Number(b.p50Ms.toFixed(1)),
    p99Ms: Number(b.p99Ms.toFixed(1)),
    errors: list.reduce((n, r) => n + r.errors, 0),
    rounds: list.map((r) => Math.round(r.perSecond)),
  };
};
console.log(
  JSON.stringify(
    {
      machine: await machine(),
      loadAverage1m: Number((await import('node:os')).loadavg()[0]!.toFixed(1)),
      database: server.services.db.kind,
      concurrency: CONCURRENCY,
      durationMs: DURATION_MS,
      webhookDisabled: summary(runs.without),
      webhookEnabledWorkerPaused: summary(runs.outboxOnly),
      webhookEnabled: summary(runs.with),
      throughputRatio: {
        outboxOnly: Number((best(runs.outboxOnly).perSecond / best(runs.without).perSecond).toFixed(3)),
        withDeliveries: Number((best(runs.with).perSecond / best(runs.without).perSecond).toFixed(3)),
      },
      delivered,
    },
    null,
    2,
  ),
);
await server.close();
receiver.closeAllConnections();
receiver.close();
process.exit(0);
