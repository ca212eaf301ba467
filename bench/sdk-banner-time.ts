// Time from `init` to the banner on screen, on a local page, in headless Chromium against the real service:
//   npx tsx bench/sdk-banner-time.ts [loads=20]
// The service runs in this process on the embedded database (or TEST_DATABASE_URL); the page is on another
// origin (127.0.0.1 vs localhost) and includes the SDK with one script tag, as a customer's site would.
// Cold: a fresh browser context per load (empty HTTP cache and storage). Warm: one context, storage cleared
// before each reload, so the SDK script and config come from the HTTP cache. Loopback only: these figures
// are the SDK's own cost plus one local round trip, not a real network's.
import type { Page } from 'playwright-core';
import { launchChromium, setupProject, startService, startSite } from '../test/e2e/harness.js';

const loads = Number(process.argv[2] ?? 20);

interface Sample {
  initToReady: number;
  initToBanner: number;
  navigationToBanner: number;
}

async function sample(page: Page): Promise<Sample> {
  await page.waitForFunction(() => (window as any).bannerFrameAt);
  const t = await page.evaluate(() => ({ init: (window as any).initStartedAt, ready: (window as any).readyAt, frame: (window as any).bannerFrameAt }));
  if (!(await page.locator('#consent-sdk-root [data-consent="banner"]').isVisible())) throw new Error('banner not visible');
  return { initToReady: t.ready - t.init, initToBanner: t.frame - t.init, navigationToBanner: t.frame };
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
  console.log(row('navigation → banner', (s) => s.navigationToBanner));
}

const browser = await launchChromium();
const { server, serviceUrl } = await startService();
const site = await startSite(serviceUrl);
try {
  const project = await setupProject(server, [site.origin]);
  const url = site.page(project.key);

  // One unmeasured load warms the service (first queries, JIT) so the runs compare like with like.
  const warmup = await browser.newContext();
  await (await warmup.newPage()).goto(url);
  await warmup.close();

  const cold: Sample[] = [];
  for (let i = 0; i < loads; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(url);
    cold.push(await sample(page));
    await context.close();
  }

  const warm: Sample[] = [];
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(url);
  await sample(page);
  for (let i = 0; i < loads; i++) {
    await page.evaluate(() => localStorage.clear());
    await page.reload();
    warm.push(await sample(page));
  }
  await context.close();

  console.log(`Chromium ${browser.version()}, ${server.services.db.pglite ? 'embedded database' : 'PostgreSQL'}\n`);
  report('cold: fresh context per load', cold);
  report('warm: HTTP cache, no stored decision', warm);
} finally {
  await browser.close();
  await site.close();
  await server.close();
}
