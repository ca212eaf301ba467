// The site scanner's cost on this machine (docs/scanner.md):
//   npx tsx bench/scanner.ts [rounds=2] [contexts=1,4,8]
// 1. Pages scanned per minute: the four fixture pages of test/helpers/scan-sites.ts (a shop blocking through
//    the SDK, a leaky one, one without the SDK, an about page), each scanned as the worker does (three visits in
//    fresh contexts through the guard proxy, observations, banner clicks), against a baseline in the same run:
//    the same pages loaded once each in a fresh context with nothing observed (a plain `page.goto` to `load`).
//    Rounds alternate scanner and baseline so the machine's load hits both alike. CPU per page is Node's own
//    (process.cpuUsage: the proxy, Playwright's protocol) plus Chromium's (every process of the browser tree,
//    from /proc).
// 2. Memory per concurrent browser context: PSS of Chromium's process tree (smaps_rollup, shared pages
//    counted once) with N contexts open on the shop page, against the browser with none.
// The service runs in this process on the embedded database (or TEST_DATABASE_URL) and serves the SDK.
import { readdirSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { loadCatalogue } from '../src/scanner/catalogue.js';
import { findChromium, SCANNER_CHROMIUM_ARGS } from '../src/scanner/chromium.js';
import { VISIT_KINDS, visitPage } from '../src/scanner/visit.js';
import { isAllowedAddress } from '../src/webhooks/address.js';
import { setupProject, startService } from '../test/e2e/harness.js';
import { startScanSites } from '../test/helpers/scan-sites.js';

const rounds = Number(process.argv[2] ?? 2);
const contextCounts = (process.argv[3] ?? '1,4,8').split(',').map(Number);
const TICKS = 100; // USER_HZ on Linux

/** Every process under `root` (Chromium's renderers, GPU and network services). */
function tree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const pids = [root];
  for (let i = 0; i < pids.length; i++) for (const [pid, ppid] of parent) if (ppid === pids[i]) pids.push(pid);
  return pids;
}

const read = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};
/** CPU seconds (user + system) of the processes alive now, children they reaped included. */
function treeCpu(root: number): number {
  let ticks = 0;
  for (const pid of tree(root)) {
    const fields = read(`/proc/${pid}/stat`).split(') ')[1]?.split(' ') ?? [];
    ticks += Number(fields[11] ?? 0) + Number(fields[12] ?? 0) + Number(fields[13] ?? 0) + Number(fields[14] ?? 0);
  }
  return ticks / TICKS;
}
const treePssMb = (root: number) => tree(root).reduce((sum, pid) => sum + Number(/Pss:\s+(\d+)/.exec(read(`/proc/${pid}/smaps_rollup`))?.[1] ?? 0), 0) / 1024;
const nodeCpu = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

const executablePath = findChromium();
if (!executablePath) throw new Error('Chromium not found (CHROMIUM_PATH or chromium on PATH)');
const browserServer = await chromium.launchServer({ executablePath, args: SCANNER_CHROMIUM_ARGS });
const browser = await chromium.connect(browserServer.wsEndpoint());
const chromePid = browserServer.process().pid!;
const { server, serviceUrl } = await startService();
const project = await setupProject(server);
const sites = await startScanSites(serviceUrl, project.key);
try {
  await server.request('PUT', `/api/platform/projects/${project.projectId}/allowed-origins`, { token: project.ownerToken, body: { origins: [sites.origin] } });
  const pages = ['/good', '/leaky', '/nosdk', '/about'].map((path) => sites.origin + path);
  loadCatalogue(serviceUrl); // parsed once per process, as in the worker
  const options = {
    policy: { allowAddress: (address: string) => isAllowedAddress(address, true), resolve: sites.resolve },
    timeoutMs: 30_000,
    maxBytes: 20 * 1024 * 1024,
    dwellMs: Number(process.env.SCANNER_DWELL_MS ?? 3000),
    isProjectKey: () => true,
  };

  const measure = async (run: () => Promise<void>) => {
    const [wall, cpuNode, cpuChrome] = [performance.now(), nodeCpu(), treeCpu(chromePid)];
    await run();
    return { seconds: (performance.now() - wall) / 1000, node: nodeCpu() - cpuNode, chrome: treeCpu(chromePid) - cpuChrome };
  };
  const scan = () =>
    measure(async () => {
      for (const url of pages) for (const kind of VISIT_KINDS) await visitPage(browser, url, kind, options);
    });
  const baseline = () =>
    measure(async () => {
      for (const url of pages) {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(url, { waitUntil: 'load' });
        await context.close();
      }
    });

  await scan(); // warm-up: the service's first queries, the SDK file, Chromium's caches
  await baseline();
  const totals = { scan: { seconds: 0, node: 0, chrome: 0 }, baseline: { seconds: 0, node: 0, chrome: 0 } };
  for (let i = 0; i < rounds; i++) {
    for (const [name, run] of [['scan', scan], ['baseline', baseline]] as const) {
      const m = await run();
      for (const key of ['seconds', 'node', 'chrome'] as const) totals[name][key] += m[key];
    }
  }
  const n = rounds * pages.length;
  const line = (name: string, t: { seconds: number; node: number; chrome: number }) =>
    `  ${name.padEnd(28)} ${((n / t.seconds) * 60).toFixed(1).padStart(6)} pages/min   ${((t.seconds / n) * 1000).toFixed(0).padStart(5)} ms/page   CPU/page: node ${((t.node / n) * 1000).toFixed(0)} ms, chromium ${((t.chrome / n) * 1000).toFixed(0)} ms`;
  console.log(`Pages scanned per minute, ${n} pages in ${rounds} rounds (Chromium ${browser.version()}, one scan at a time)`);
  console.log(line('scanner (3 visits per page)', totals.scan));
  console.log(line('baseline (1 plain load)', totals.baseline));
  console.log(`  ratio scanner/baseline: ${(totals.scan.seconds / totals.baseline.seconds).toFixed(2)}x time, ${((totals.scan.node + totals.scan.chrome) / (totals.baseline.node + totals.baseline.chrome)).toFixed(2)}x CPU`);

  console.log('\nMemory per concurrent browser context (PSS of the Chromium process tree, the shop page open in each)');
  const idle = treePssMb(chromePid);
  console.log(`  no context: ${idle.toFixed(0)} MB`);
  for (const count of contextCounts) {
    const contexts = await Promise.all(Array.from({ length: count }, () => browser.newContext()));
    await Promise.all(
      contexts.map(async (context) => {
        const page = await context.newPage();
        await page.goto(pages[0]!, { waitUntil: 'load' });
        await page.locator('[data-consent="banner"]').waitFor();
      }),
    );
    const pss = treePssMb(chromePid);
    console.log(`  ${String(count).padStart(2)} contexts: ${pss.toFixed(0)} MB, ${((pss - idle) / count).toFixed(1)} MB per context`);
    await Promise.all(contexts.map((context) => context.close()));
  }
} finally {
  await browser.close();
  await browserServer.close();
  await sites.close();
  await server.close();
}
