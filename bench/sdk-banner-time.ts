// Time from `init` to the banner on screen, SDK v1 against v2 in the same run, in headless Chromium against
// the real service:
//   npx tsx bench/sdk-banner-time.ts [loads=20]
// The service runs in this process on the embedded database (or TEST_DATABASE_URL); the page is the v2 test
// site (test/e2e/site-v2.ts: another origin, a Google tag snippet, a blocked script and iframe), loading
// /sdk/v1/consent.js or /sdk/v2/consent.js with one script tag. Loads alternate v1, v2, v1, ... so that the
// machine's load hits both alike; the ratio v2/v1 is the figure to read. Cold: a fresh browser context per
// load (empty HTTP cache and storage). Warm: one context per SDK, storage cleared before each reload.
// Loopback only: these figures are the SDK's own cost plus one local round trip, not a real network's.
import type { Browser, Page } from 'playwright-core';
import { setupProject, startService } from '../test/e2e/harness.js';
import { launchChromiumForSites, startSiteV2 } from '../test/e2e/site-v2.js';

const loads = Number(process.argv[2] ?? 20);

interface Sample {
  initToReady: number;
  initToBanner: number;
}

async function sample(page: Page): Promise<Sample> {
  await page.waitForFunction(() => (window as any).bannerFrameAt);
  const t = await page.evaluate(() => ({ init: (window as any).initStartedAt, ready: (window as any).readyAt, frame: (window as any).bannerFrameAt }));
  if (!(await page.locator('#consent-sdk-root [data-consent="banner"]').isVisible())) throw new Error('banner not visible');
  return { initToReady: t.ready - t.init, initToBanner: t.frame - t.init };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

function report(name: string, samples: Sample[]) {
  const row = (label: string, pick: (s: Sample) => number) => {
    const v = samples.map(pick);
    return `  ${label.padEnd(22)} p50 ${percentile(v, 50).toFixed(1).padStart(6)} ms   p90 ${percentile(v, 90).toFixed(1).padStart(6)} ms   max ${Math.max(...v).toFixed(1).padStart(6)} ms`;
  };
  console.log(`${name} (${samples.length} loads)`);
  console.log(row('init → onReady', (s) => s.initToReady));
  console.log(row('init → banner frame', (s) => s.initToBanner));
}

const browser: Browser = await launchChromiumForSites();
const { server, serviceUrl } = await startService();
const site = await startSiteV2(serviceUrl);
try {
  const project = await setupProject(server, [site.origin]);
  const context = () => browser.newContext();
  const urls = { v1: site.page(project.key, { v1: true }), v2: site.page(project.key) };

  for (const url of Object.values(urls)) {
    // One unmeasured load each warms the service (first queries, JIT).
    const warmup = await context();
    const page = await warmup.newPage();
    await page.goto(url);
    await sample(page);
    await warmup.close();
  }

  const cold: Record<'v1' | 'v2', Sample[]> = { v1: [], v2: [] };
  for (let i = 0; i < loads; i++) {
    for (const sdk of ['v1', 'v2'] as const) {
      const ctx = await context();
      const page = await ctx.newPage();
      await page.goto(urls[sdk]);
      cold[sdk].push(await sample(page));
      await ctx.close();
    }
  }

  const warm: Record<'v1' | 'v2', Sample[]> = { v1: [], v2: [] };
  const pages: Record<string, Page> = {};
  for (const sdk of ['v1', 'v2'] as const) {
    pages[sdk] = await (await context()).newPage();
    await pages[sdk].goto(urls[sdk]);
    await sample(pages[sdk]);
  }
  for (let i = 0; i < loads; i++) {
    for (const sdk of ['v1', 'v2'] as const) {
      await pages[sdk]!.evaluate(() => localStorage.clear());
      await pages[sdk]!.reload();
      warm[sdk].push(await sample(pages[sdk]!));
    }
  }

  console.log(`Chromium ${browser.version()}, ${server.services.db.pglite ? 'embedded database' : 'PostgreSQL'}\n`);
  for (const [name, runs] of [['cold: fresh context per load', cold], ['warm: HTTP cache, no stored decision', warm]] as const) {
    report(`${name}, v1`, runs.v1);
    report(`${name}, v2`, runs.v2);
    const ratio = percentile(runs.v2.map((s) => s.initToBanner), 50) / percentile(runs.v1.map((s) => s.initToBanner), 50);
    console.log(`  v2/v1 init → banner frame p50: ${ratio.toFixed(2)}x\n`);
  }
} finally {
  await browser.close();
  await site.close();
  await server.close();
}
