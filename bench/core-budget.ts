// @consent/core's budgets (extensions.md section 13), in one run:
//   npm run build:sdk && npx tsx bench/core-budget.ts [launches=200]
// - size: the core without TCF (dist/index.mjs and the chunks it imports statically), min and gzip level 9, against
//   12 KiB; the IAB chunk (dist/tcf.mjs, loaded only for TCF and US opt-out projects) beside it;
// - init() from storage: a second launch over an AsyncStorage-shaped store (every call a later turn) holding the
//   config and decision of a real service's answer, the network never answering; median and p95 against 5 ms, with
//   JSON.parse of the stored config alone in the same rounds as the floor;
// - the journey's longest synchronous task: the event loop's longest delay (perf_hooks, 1 ms resolution) in a
//   worker that runs only the app's side (first launch, Accept all, receipt, Firebase and in-app signals, WebView
//   script, Reject all, second launch), against 16 ms (a frame).
// The journey runs for a project without TCF and for one with TCF (the IAB chunk imported, a TC string encoded and
// decoded; the vendor list from test/fixtures/tcf, served by a loopback GVL host).
// The service runs in this process (embedded database unless BENCH_DATABASE_URL), the app in the worker.
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { send } from '../test/helpers/server.js';
import { startGvlServer } from '../test/helpers/tcf-gvl-server.js';
import { benchProject } from './lib/setup.js';

const launches = Number(process.argv[2] ?? 200);
const dist = (name: string) => new URL(`../sdk/core/dist/${name}`, import.meta.url);

function coreSize() {
  const index = readFileSync(dist('index.mjs'), 'utf8');
  // Chunks the core imports statically (shared with the IAB chunk) are part of it; import('./tcf.mjs') is not.
  const chunks = [...index.matchAll(/from"\.\/(chunk-[\w-]+\.mjs)"/g)].map((m) => m[1]!);
  const files = [index, ...chunks.map((c) => readFileSync(dist(c), 'utf8'))];
  const min = files.reduce((s, f) => s + Buffer.byteLength(f), 0);
  const gz = files.reduce((s, f) => s + gzipSync(f, { level: 9 }).length, 0);
  const tcf = readFileSync(dist('tcf.mjs'));
  return { files: ['index.mjs', ...chunks], min, gz, tcf: { min: tcf.length, gz: gzipSync(tcf, { level: 9 }).length } };
}

const size = coreSize();
console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores`);
console.log(`core without TCF (${size.files.join(' + ')}): ${size.min} B min, ${size.gz} B gzip (budget 12,288: ${size.gz <= 12288 ? 'met' : 'MISSED'})`);
console.log(`IAB chunk tcf.mjs: ${size.tcf.min} B min, ${size.tcf.gz} B gzip (outside the budget)`);

const gvl = await startGvlServer({ version: 1 });
const bench = await benchProject({ tcf: { gvlUrl: gvl.gvlUrl, acProvidersUrl: gvl.acProvidersUrl, minRefreshSeconds: 300 } } as never);
/** The same project with TCF enabled (docs/tcf.md) and published: its next journey is a TCF app's. */
async function enableTcf(): Promise<void> {
  const call = (method: string, path: string, body?: unknown) => send(bench.server.url, method, path, { token: bench.token, body });
  const tcf = { enabled: true, cmpId: 300, cmpVersion: 2, publisherCountryCode: 'FR', vendors: [1, 2], googleAtps: [89], specialFeatures: [1], restrictions: [], publisher: null, purposeMap: { marketing: [1, 2, 3, 4], analytics: [1, 8, 9] } };
  const put = await call('PUT', `/api/platform/projects/${bench.projectId}/consent/experience`, { tcf });
  if (put.status != 200) throw new Error('TCF experience: ' + put.text);
  const published = await call('POST', `/api/platform/projects/${bench.projectId}/consent/publish`);
  if (published.status != 201) throw new Error('publish: ' + published.text);
}
const journey = (publicKey: string) =>
  new Promise<any>((resolve, reject) => {
    const w = new Worker(new URL('./lib/core-journey.mjs', import.meta.url), { workerData: { serviceUrl: bench.server.url, publicKey, launches } });
    w.once('message', resolve).once('error', reject);
  });
try {
  const result = await journey(bench.secret);
  await enableTcf();
  const tcfResult = await journey(bench.secret);
  if (result.errors.length) console.log('errors during the journey:', result.errors);
  const ms = (x: number) => x.toFixed(3) + ' ms';
  console.log(`stored config: ${result.configBytes} B`);
  console.log(
    `init() from storage, ${launches} launches: median ${ms(result.init.median)}, p95 ${ms(result.init.p95)}, max ${ms(result.init.max)} (budget 5 ms: ${result.init.p95 <= 5 ? 'met' : 'MISSED'}); ` +
      `JSON.parse of the config alone: median ${ms(result.parse.median)} (init ÷ parse ${(result.init.median / result.parse.median).toFixed(1)}×)`,
  );
  const { cold, warm } = result.longestTaskMs as { cold: number; warm: number[] };
  console.log(`journey's longest synchronous task: cold ${ms(cold)}, warm ${warm.map(ms).join(', ')} (budget 16 ms: ${Math.max(cold, ...warm) <= 16 ? 'met' : 'MISSED'})`);
  if (tcfResult.errors.length) console.log('errors during the TCF journey:', tcfResult.errors);
  const t = tcfResult.longestTaskMs as { cold: number; warm: number[] };
  console.log(`with TCF: init() from storage median ${ms(tcfResult.init.median)}, p95 ${ms(tcfResult.init.p95)}; longest task cold ${ms(t.cold)}, warm ${t.warm.map(ms).join(', ')}`);
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
} finally {
  await bench.server.close();
  await gvl.close();
}
