// Consent POST while PostgreSQL is made slow: latency, statuses and the service's memory per added delay.
//   npx tsx bench/db-slow.ts     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
// A TCP proxy (test/helpers/tcp-proxy.ts) between the service and PostgreSQL holds every chunk DELAYS ms
// (each way). Many connections keep more receipts waiting than the bounds allow, so the run shows what
// the bounds do: latency stays near DATABASE_WAIT_MS, the excess is refused with 503, memory stays flat.
import { loadFromChild } from './lib/load.js';
import { benchProject, consentLoad, machine } from './lib/setup.js';
import { startTcpProxy } from '../test/helpers/tcp-proxy.js';

const adminUrl = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 512);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const DELAYS = (process.env.DELAYS ?? '0,50,200').split(',').map(Number);
const ROUNDS = Number(process.env.ROUNDS ?? 2);

const proxy = await startTcpProxy(adminUrl.hostname, Number(adminUrl.port || 5432));
// Everything the service does with the database, set-up included, goes through the proxy.
process.env.BENCH_DATABASE_URL = proxy.url(adminUrl.toString());
const bench = await benchProject();
const requests = consentLoad(bench, { necessary: true, analytics: true, marketing: false });

async function round(delayMs: number) {
  proxy.delay(delayMs);
  let rssMax = 0;
  let heapMax = 0;
  const sample = setInterval(() => {
    const { rss, heapUsed } = process.memoryUsage();
    rssMax = Math.max(rssMax, rss);
    heapMax = Math.max(heapMax, heapUsed);
  }, 50);
  const result = await loadFromChild({ port: bench.server.port, connections: CONNECTIONS, durationMs: DURATION_MS, requests, expectStatus: 201 });
  clearInterval(sample);
  proxy.delay(0);
  return {
    delayMs,
    perSecond: Math.round(result.perSecond),
    p50Ms: Number(result.p50Ms.toFixed(1)),
    p99Ms: Number(result.p99Ms.toFixed(1)),
    statuses: result.statuses,
    rssMaxMiB: Math.round(rssMax / 2 ** 20),
    heapMaxMiB: Math.round(heapMax / 2 ** 20),
  };
}

const rounds = [await round(0)]; // warm-up, listed first
for (let r = 0; r < ROUNDS; r++) for (const delay of DELAYS) rounds.push(await round(delay));
// Every 201 must be a stored receipt.
const [stored] = await bench.server.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM receipts');
console.log(
  JSON.stringify(
    {
      machine: await machine(),
      connections: CONNECTIONS,
      durationMs: DURATION_MS,
      databaseWaitMs: bench.server.services.config.databaseWaitMs,
      receiptQueueLimit: bench.server.services.config.receiptQueueLimit,
      rounds,
      acknowledged: rounds.reduce((n, r) => n + (r.statuses[201] ?? 0), 0),
      storedReceipts: stored!.n,
    },
    null,
    2,
  ),
);
await bench.server.close();
await proxy.close();
