// SDK config throughput against a raw node:http server that returns the same bytes, measured in one run.
//   npx tsx bench/sdk-config.ts            (embedded database; BENCH_DATABASE_URL=postgres://... for PostgreSQL)
// Targets: 200 path >= 0.7x the raw server's requests/s, 304 path >= 0.8x, v2 200 (with ?locale= and with
// Accept-Language) >= 0.7x. Load comes from a child process
// (bench/lib/load.ts) over keep-alive connections; rounds alternate raw/service and the best of each counts.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadFromChild, type LoadResult } from './lib/load.js';
import { BENCH_ORIGIN, benchProject, machine } from './lib/setup.js';

const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

const bench = await benchProject();
const { server, secret } = bench;

// The answers measured. v2 (extensions.md section 3) resolves a locale per request; `CASES=v2-200` runs one.
interface Case {
  name: string;
  path: string;
  conditional: boolean;
  target: number;
  headers?: string;
}
const CASES: Case[] = [
  { name: '200', path: '/api/sdk/v1/config', conditional: false, target: 0.7 },
  { name: '304', path: '/api/sdk/v1/config', conditional: true, target: 0.8 },
  { name: 'v2-200', path: '/api/sdk/v2/config?locale=de', conditional: false, target: 0.7 },
  { name: 'v2-200-accept-language', path: '/api/sdk/v2/config', conditional: false, target: 0.7, headers: 'Accept-Language: de-DE,de;q=0.9,en;q=0.5\r\n' },
].filter((c) => !process.env.CASES || process.env.CASES.split(',').includes(c.name));

// What the service answers, captured once per path: the raw server replays exactly these bytes and headers.
interface Captured {
  body: Buffer;
  headers: Record<string, string>;
  etag: string;
}
const captured = new Map<string, Captured>();
for (const { path } of CASES) {
  if (captured.has(path)) continue;
  const sample = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${secret}`, origin: BENCH_ORIGIN } });
  if (sample.status !== 200) throw new Error(`${path} answered ${sample.status}`);
  const headers: Record<string, string> = {};
  sample.headers.forEach((value, name) => {
    if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) headers[name] = value;
  });
  captured.set(path, { body: Buffer.from(await sample.arrayBuffer()), headers, etag: headers.etag! });
}

const raw = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  const { body, headers, etag } = captured.get(req.url!)!;
  if (req.headers['if-none-match'] === etag) {
    const { 'content-length': _l, 'content-type': _t, ...notModified } = headers;
    res.writeHead(304, notModified).end();
    return;
  }
  res.writeHead(200, headers).end(body);
});
await new Promise<void>((done) => raw.listen(0, '127.0.0.1', done));
const rawPort = (raw.address() as AddressInfo).port;

const request = (c: Case) =>
  `GET ${c.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\nOrigin: ${BENCH_ORIGIN}\r\n` +
  (c.conditional ? `If-None-Match: ${captured.get(c.path)!.etag}\r\n` : '') +
  (c.headers ?? '') +
  '\r\n';

/** One load run, with the CPU time this process (the server under test) spent per answered request. */
async function measure(port: number, c: Case): Promise<LoadResult & { cpuMicrosPerRequest: number }> {
  const cpu = process.cpuUsage();
  const result = await loadFromChild({
    port,
    connections: CONNECTIONS,
    durationMs: DURATION_MS,
    requests: { fixed: request(c) },
    expectStatus: c.conditional ? 304 : 200,
  });
  const used = process.cpuUsage(cpu);
  return { ...result, cpuMicrosPerRequest: (used.user + used.system) / result.requests };
}

const best = <R extends LoadResult>(results: R[]): R =>
  results.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
const report: Record<string, unknown> = { machine: await machine(), database: server.services.db.kind, connections: CONNECTIONS, durationMs: DURATION_MS, rounds: ROUNDS, bodyBytes: Object.fromEntries([...captured].map(([path, c]) => [path, c.body.length])) };

for (const c of CASES) {
  const rawRuns: Awaited<ReturnType<typeof measure>>[] = [];
  const serviceRuns: Awaited<ReturnType<typeof measure>>[] = [];
  // Warm-up (JIT, caches) on both, then alternate so drift on a shared machine hits both alike.
  await measure(rawPort, c);
  await measure(server.port, c);
  for (let round = 0; round < ROUNDS; round++) {
    rawRuns.push(await measure(rawPort, c));
    serviceRuns.push(await measure(server.port, c));
  }
  const rawBest = best(rawRuns);
  const serviceBest = best(serviceRuns);
  const { name, target } = c;
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
