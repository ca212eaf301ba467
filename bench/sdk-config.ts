// SDK config throughput against a raw node:http server that returns the same bytes, measured in one run.
//   npx tsx bench/sdk-config.ts            (embedded database; BENCH_DATABASE_URL=postgres://... for PostgreSQL)
// Targets: 200 path >= 0.7x the raw server's requests/s, 304 path >= 0.8x. Load comes from a child process
// (bench/lib/load.ts) over keep-alive connections; rounds alternate raw/service and the best of each counts.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadFromChild, type LoadResult } from './lib/load.js';
import { BENCH_ORIGIN, benchProject, machine } from './lib/setup.js';

const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

const bench = await benchProject();
const { server, secret, version } = bench;
const etag = `"${version.contentHash}"`;

// What the service answers, captured once: the raw server replays exactly these bytes and headers.
const sample = await fetch(`${server.url}/api/sdk/v1/config`, { headers: { authorization: `Bearer ${secret}`, origin: BENCH_ORIGIN } });
const body = Buffer.from(await sample.arrayBuffer());
const headers: Record<string, string> = {};
sample.headers.forEach((value, name) => {
  if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) headers[name] = value;
});
if (sample.status !== 200) throw new Error(`config answered ${sample.status}`);

const raw = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  if (req.headers['if-none-match'] === etag) {
    const { 'content-length': _l, 'content-type': _t, ...notModified } = headers;
    res.writeHead(304, notModified).end();
    return;
  }
  res.writeHead(200, headers).end(body);
});
await new Promise<void>((done) => raw.listen(0, '127.0.0.1', done));
const rawPort = (raw.address() as AddressInfo).port;

const request = (conditional: boolean) =>
  `GET /api/sdk/v1/config HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\nOrigin: ${BENCH_ORIGIN}\r\n` +
  (conditional ? `If-None-Match: ${etag}\r\n` : '') +
  '\r\n';

/** One load run, with the CPU time this process (the server under test) spent per answered request. */
async function measure(port: number, conditional: boolean): Promise<LoadResult & { cpuMicrosPerRequest: number }> {
  const cpu = process.cpuUsage();
  const result = await loadFromChild({
    port,
    connections: CONNECTIONS,
    durationMs: DURATION_MS,
    requests: { fixed: request(conditional) },
    expectStatus: conditional ? 304 : 200,
  });
  const used = process.cpuUsage(cpu);
  return { ...result, cpuMicrosPerRequest: (used.user + used.system) / result.requests };
}

const best = <R extends LoadResult>(results: R[]): R =>
  results.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
const report: Record<string, unknown> = { machine: await machine(), database: server.services.db.kind, connections: CONNECTIONS, durationMs: DURATION_MS, rounds: ROUNDS, bodyBytes: body.length };

for (const conditional of [false, true]) {
  const rawRuns: Awaited<ReturnType<typeof measure>>[] = [];
  const serviceRuns: Awaited<ReturnType<typeof measure>>[] = [];
  // Warm-up (JIT, caches) on both, then alternate so drift on a shared machine hits both alike.
  await measure(rawPort, conditional);
  await measure(server.port, conditional);
  for (let round = 0; round < ROUNDS; round++) {
    rawRuns.push(await measure(rawPort, conditional));
    serviceRuns.push(await measure(server.port, conditional));
  }
  const rawBest = best(rawRuns);
  const serviceBest = best(serviceRuns);
  const name = conditional ? '304' : '200';
  const target = conditional ? 0.8 : 0.7;
  const ratio = serviceBest.perSecond / rawBest.perSecond;
  report[name] = {
    rawPerSecond: Math.round(rawBest.perSecond),
    servicePerSecond: Math.round(serviceBest.perSecond),
    ratio: Number(ratio.toFixed(3)),
    target,
    pass: ratio >= target,
    // CPU per request is steadier than requests/s on a shared machine; its inverse ratio is the ceiling.
    rawCpuMicrosPerRequest: Math.round(rawBest.cpuMicrosPerRequest),
    serviceCpuMicrosPerRequest: Math.round(serviceBest.cpuMicrosPerRequest),
    serviceP50Ms: Number(serviceBest.p50Ms.toFixed(2)),
    serviceP99Ms: Number(serviceBest.p99Ms.toFixed(2)),
    errors: serviceRuns.reduce((n, r) => n + r.errors, 0) + rawRuns.reduce((n, r) => n + r.errors, 0),
    allRounds: { raw: rawRuns.map((r) => Math.round(r.perSecond)), service: serviceRuns.map((r) => Math.round(r.perSecond)) },
  };
}

console.log(JSON.stringify(report, null, 2));
raw.close();
await server.close();
