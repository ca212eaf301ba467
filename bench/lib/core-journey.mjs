// The app side of bench/core-budget.ts, in a worker thread of its own so that its event loop holds only the core's
// work (the service runs on the main thread). Plain JavaScript: it runs the build an app gets (sdk/core/dist).
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';

const { createConsent } = await import(new URL('../../sdk/core/dist/index.mjs', import.meta.url).href);
const { serviceUrl, publicKey, launches } = workerData;

/** AsyncStorage's shape: every call answers on a later turn, as the native bridge does. */
function asyncStorage(map) {
  return {
    getItem: async (k) => map.get(k) ?? null,
    setItem: async (k, v) => void map.set(k, v),
    removeItem: async (k) => void map.delete(k),
  };
}
const never = () => new Promise(() => {});
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];

// The journey: first launch (config from the service), Accept all, the receipt acknowledged, the signals an app
// reads, Reject all, a second launch from storage. The event loop's longest delay is its longest synchronous task
// (on a loaded machine also the time the thread waited for a core: quote the load). The first journey is cold (the
// module compiled and run for the first time), the others warm.
// Node's fetch (undici) loads its own modules at its first call, tens of milliseconds an app's native fetch never
// spends: warmed once before anything is measured.
await (await fetch(serviceUrl + '/api/health')).arrayBuffer();
const errors = [];
const journeys = [];
let map;
for (let j = 0; j < 5; j++) {
  map = new Map();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const first = createConsent({ publicKey, apiBaseUrl: serviceUrl, adapters: { storage: asyncStorage(map) }, source: { platform: 'other' } });
  first.onError((e) => errors.push(e));
  await first.init();
  await first.acceptAll();
  await first.flush();
  first.firebaseConsent();
  first.webViewScript();
  await first.inAppKeys();
  await first.rejectAll();
  await first.flush();
  first.destroy();
  const again = createConsent({ publicKey, apiBaseUrl: serviceUrl, adapters: { storage: asyncStorage(map), fetch: never } });
  await again.init();
  again.destroy();
  loop.disable();
  journeys.push(loop.max / 1e6);
}
const longestTaskMs = { cold: journeys[0], warm: journeys.slice(1) };

// init() from storage, no network (a fetch that never answers), against JSON.parse of the stored config alone.
const configText = [...map].find(([k]) => k.endsWith(':config'))[1];
const initMs = [];
const parseMs = [];
for (let i = 0; i < launches; i++) {
  let t = performance.now();
  JSON.parse(configText);
  parseMs.push(performance.now() - t);
  const c = createConsent({ publicKey, apiBaseUrl: serviceUrl, adapters: { storage: asyncStorage(map), fetch: never } });
  t = performance.now();
  const state = await c.init();
  initMs.push(performance.now() - t);
  if (state.needsConsent || !state.ready) throw new Error('init from storage did not answer with the stored decision');
  c.destroy();
}
parentPort.postMessage({
  errors,
  longestTaskMs,
  configBytes: configText.length,
  init: { median: median(initMs), p95: p95(initMs), max: Math.max(...initMs) },
  parse: { median: median(parseMs), p95: p95(parseMs) },
});
