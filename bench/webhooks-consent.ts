// What a project webhook costs the consent POST: the same load against POST /api/sdk/v1/consent with the
// project's webhook disabled, enabled with the delivery worker paused (the outbox insert alone), and
// enabled with deliveries running in the same process (as in production), alternating in one run.
//   npx tsx bench/webhooks-consent.ts                 (embedded database)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/webhooks-consent.ts
// CONCURRENCY (default 64), DURATION_MS (5000), ROUNDS (2). The receiver answers 200 at once.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { putWebhook } from '../src/webhooks/service.js';
import { startWebhookWorker, webhookWorkerOf } from '../src/webhooks/worker.js';
import { loadFromChild } from './lib/load.js';
import { benchProject, consentLoad, machine } from './lib/setup.js';

const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);

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

await setWebhook(false);
await load(); // warm-up
const runs: Record<'without' | 'outboxOnly' | 'with', { perSecond: number; p50Ms: number; p99Ms: number; errors: number }[]> = {
  without: [],
  outboxOnly: [],
  with: [],
};
for (let round = 0; round < ROUNDS; round++) {
  await setWebhook(false);
  runs.without.push(await load());
  await setWebhook(true);
  await webhookWorkerOf(server.services)!.stop();
  runs.outboxOnly.push(await load());
  startWebhookWorker(server.services);
  while ((await pendingEvents()) > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  const before = delivered;
  const result = await load();
  runs.with.push(result);
  console.error(`round ${round + 1}: ${result.requests} receipts with the webhook on, ${delivered - before} delivered during the run`);
  // Let the worker finish this round's events so the next "without" round is not sharing the machine with them.
  while ((await pendingEvents()) > 0) await new Promise((resolve) => setTimeout(resolve, 100));
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
