// SDK config throughput against a raw node:http server that returns the same bytes, measured in one run.
//   npx tsx bench/sdk-config.ts            (embedded database; BENCH_DATABASE_URL=postgres://... for PostgreSQL)
// Targets: 200 path >= 0.7x the raw server's requests/s, 304 path >= 0.8x, v2 200 (with ?locale= and with
// Accept-Language) >= 0.7x. Load comes from a child process
// (bench/lib/load.ts) over keep-alive connections; rounds alternate raw/service and the best of each counts.
// Compression on both sides: every request sends a browser's Accept-Encoding, the service answers brotli
// (made once per version) and the raw server replays those same compressed bytes (ACCEPT_ENCODING= to
// measure without: both sides then send the plain bytes).
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadFromChild, type LoadResult } from './lib/load.js';
import { BENCH_ORIGIN, benchProject, machine } from './lib/setup.js';

const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const ACCEPT_ENCODING = process.env.ACCEPT_ENCODING ?? 'gzip, deflate, br, zstd';

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
  // A visitor in California as Cloudflare reports one: the location is read when GEO_COUNTRY_HEADER=cf-ipcountry
  // and GEO_REGION_HEADER=cf-region-code are set (docs/jurisdictions.md), and ignored otherwise.
  { name: 'v2-200-geo', path: '/api/sdk/v2/config?locale=en', conditional: false, target: 0.7, headers: 'cf-ipcountry: US\r\ncf-region-code: CA\r\n' },
].filter((c) => !process.env.CASES || process.env.CASES.split(',').includes(c.name));

// What the service answers, captured once per path and coding (node:http, so the bytes stay as sent): the
// raw server replays exactly these bytes and headers, compressed when the client accepts it.
interface Captured {
  body: Buffer;
  headers: Record<string, string>;
  etag: string;
}
const captured = new Map<string, { plain: Captured; encoded: Captured }>();
function capture(path: string, acceptEncoding: string, extra: Record<string, string>): Promise<Captured> {
  const headers = { authorization: `Bearer ${secret}`, origin: BENCH_ORIGIN, ...extra, ...(acceptEncoding && { 'accept-encoding': acceptEncoding }) };
  return new Promise((resolve, reject) => {
    get(`${server.url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${path} answered ${res.statusCode}`));
        const kept: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) kept[name] = String(value);
        }
        resolve({ body: Buffer.concat(chunks), headers: kept, etag: kept.etag! });
      });
    }).on('error', reject);
  });
}
/** A case's extra request lines as headers (the raw server replays the answer captured with them). */
const extraHeaders = (c: Case) =>
  Object.fromEntries((c.headers ?? '').split('\r\n').filter(Boolean).map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
for (const c of CASES) {
  if (captured.has(c.path)) continue;
  captured.set(c.path, { plain: await capture(c.path, '', extraHeaders(c)), encoded: await capture(c.path, ACCEPT_ENCODING, extraHeaders(c)) });
}

const raw = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  // The cheapest honest choice: brotli when the client names it (what every browser sends).
  const both = captured.get(req.url!)!;
  const { body, headers, etag } = req.headers['accept-encoding']?.includes('br') ? both.encoded : both.plain;
  if (req.headers['if-none-match'] === etag) {
    const { 'content-length': _l, 'content-type': _t, 'content-encoding': _e, ...notModified } = headers;
    res.writeHead(304, notModified).end();
    return;
  }
  res.writeHead(200, headers).end(body);
});
await new Promise<void>((done) => raw.listen(0, '127.0.0.1', done));
const rawPort = (raw.address() as AddressInfo).port;

const request = (c: Case) =>
  `GET ${c.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\nOrigin: ${BENCH_ORIGIN}\r\n` +
  (c.conditional ? `If-None-Match: ${captured.get(c.path)!.encoded.etag}\r\n` : '') +
  (ACCEPT_ENCODING ? `Accept-Encoding: ${ACCEPT_ENCODING}\r\n` : '') +
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
const report: Record<string, unknown> = { machine: await machine(), database: server.services.db.kind, connections: CONNECTIONS, durationMs: DURATION_MS, rounds: ROUNDS, acceptEncoding: ACCEPT_ENCODING, bodyBytes: Object.fromEntries([...captured].map(([path, c]) => [path, { plain: c.plain.body.length, sent: c.encoded.body.length, encoding: c.encoded.headers['content-encoding'] ?? 'identity' }])) };

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
