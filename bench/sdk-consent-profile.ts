// Where the consent POST's CPU goes: a V8 CPU profile of the service under load, summarised by layer.
//   npx tsx bench/sdk-consent-profile.ts   (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
//                                           BENCH_DATABASE_URL= for the embedded database;
//                                           IDEMPOTENCY_KEY=1 sends each request with a new Idempotency-Key)
//
// The service runs in this process; the load (CONCURRENCY connections, DURATION_MS) comes from a child process.
// After a warm-up, node:inspector's profiler records the service's JavaScript while the load runs; every sample's
// self time is charged to a layer by the script it ran in (its package, or our folder) and, for our code and the
// pg driver, by the function. The raw profile is written to scratch/ for Chrome DevTools or speedscope.
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session, type Profiler } from 'node:inspector/promises';
import { loadFromChild } from './lib/load.js';
import { benchProject, consentLoad, machine } from './lib/setup.js';

if (process.env.BENCH_DATABASE_URL === undefined) process.env.BENCH_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
if (process.env.BENCH_DATABASE_URL === '') delete process.env.BENCH_DATABASE_URL;
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const DURATION_MS = Number(process.env.DURATION_MS ?? 10_000);

// The service as `npm start` runs it (dist/); BENCH_FROM_SOURCE=1 runs src/ through tsx.
const bench = await benchProject({}, { built: process.env.BENCH_FROM_SOURCE !== '1' });
const { server } = bench;
const plain = consentLoad(bench, { necessary: true, analytics: true, marketing: false });
const keyed = process.env.IDEMPOTENCY_KEY === '1';
/** Each round's keys: a prefix new to the round and the request's number, never a repeat. */
const requests = () =>
  keyed ? { ...plain, template: plain.template.replace('Content-Type:', `Idempotency-Key: ${randomUUID()}-${plain.marker}\r\nContent-Type:`) } : plain;
const load = () => loadFromChild({ port: server.port, connections: CONCURRENCY, durationMs: DURATION_MS, requests: requests(), expectStatus: 201 });

await load(); // warm-up: JIT, caches, the key and version in memory
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 200 });
await session.post('Profiler.start');
const cpuBefore = process.cpuUsage();
const result = await load();
const cpu = process.cpuUsage(cpuBefore);
const { profile } = await session.post('Profiler.stop');
session.disconnect();

mkdirSync('scratch', { recursive: true });
const file = `scratch/sdk-consent-${Date.now()}.cpuprofile`;
writeFileSync(file, JSON.stringify(profile));

/** The layer a script belongs to: a package under node_modules, a folder of ours, or V8/Node itself. */
function layerOf(url: string, functionName: string): string {
  if (!url) return functionName === '(garbage collector)' ? 'GC' : functionName === '(idle)' || functionName === '(program)' ? functionName : 'native';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const ours = /\/(src|rest|schema|verify)\/(?:([^/]+)\/)?/.exec(url);
  if (ours) return `${ours[1]}/${ours[2] && !ours[2].includes('.') ? ours[2] : ''}`;
  return url;
}

const nodes = new Map(profile.nodes.map((n: Profiler.ProfileNode) => [n.id, n]));
const selfMicros = new Map<number, number>();
const deltas = profile.timeDeltas ?? [];
profile.samples?.forEach((id: number, i: number) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (deltas[i] ?? 0)));
const byLayer = new Map<string, number>();
const byFunction = new Map<string, number>();
let total = 0;
for (const [id, micros] of selfMicros) {
  const { callFrame } = nodes.get(id)!;
  const layer = layerOf(callFrame.url, callFrame.functionName);
  if (layer === '(idle)') continue;
  total += micros;
  byLayer.set(layer, (byLayer.get(layer) ?? 0) + micros);
  const where = `${layer} ${callFrame.functionName || '(anonymous)'}:${callFrame.lineNumber + 1}`;
  byFunction.set(where, (byFunction.get(where) ?? 0) + micros);
}
const receipts = result.perSecond * (DURATION_MS / 1000);
const perReceipt = (micros: number) => Number((micros / receipts).toFixed(1));
const top = (map: Map<string, number>, n: number) =>
  Object.fromEntries([...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => [k, perReceipt(v)]));

console.log(
  JSON.stringify(
    {
      machine: await machine(),
      database: process.env.BENCH_DATABASE_URL ? 'postgresql' : 'embedded',
      concurrency: CONCURRENCY,
      idempotencyKey: keyed,
      receiptsPerSecond: Math.round(result.perSecond),
      p99Ms: Number(result.p99Ms.toFixed(1)),
      errors: result.errors,
      processCpuMicrosPerReceipt: perReceipt(cpu.user + cpu.system),
      sampledMicrosPerReceipt: perReceipt(total),
      microsPerReceiptByLayer: top(byLayer, 25),
      topFunctions: top(byFunction, 40),
      profile: file,
    },
    null,
    2,
  ),
);
await server.close();
