// The operator console's initial load (issue 15: at most 250 KB of gzipped JS): the JS a signed-in operator's
// browser fetches until the organization's project list is interactive, and the time from navigation to that
// moment, on loopback, in headless Chromium against the real service:
//   npx tsx bench/console-load.ts [loads=15]
// Bytes: every script the page requested (index.html's entry, its modulepreloads, the lazy screen), counted
// as the build's .gz copies (the budget's unit) and as sent (brotli, Chromium's first choice). Time: cold loads
// (fresh browser context: empty HTTP cache, the session cookie set first) alternate with the baseline, a
// navigation to a same-origin static document of the service (/api/openapi.json, 20 KB of JSON), so the
// machine's load hits both alike; the ratio console/baseline is the figure to compare between runs.
import { readFileSync, statSync } from 'node:fs';
import type { Browser, BrowserContext } from 'playwright-core';
import { launchChromium, startService } from '../test/e2e/harness.js';

const loads = Number(process.argv[2] ?? 15);
const PASSWORD = 'correct horse battery staple';

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

const browser: Browser = await launchChromium();
const { server, serviceUrl } = await startService();
try {
  const email = `bench-${Date.now()}@example.com`;
  await server.request('POST', '/api/platform/auth/register', { body: { email, password: PASSWORD, name: 'Bench' } });
  const { token } = (await server.request('POST', '/api/platform/auth/login', { body: { email, password: PASSWORD } })).body;
  const { organization } = (await server.request('POST', '/api/platform/orgs', { token, body: { name: 'Bench', planId: 'growth' } })).body;
  for (const name of ['Shop', 'Blog', 'Docs']) await server.request('POST', `/api/platform/orgs/${organization.id}/projects`, { token, body: { name } });
  const projectList = `${serviceUrl}/console/orgs/${organization.id}`;

  /** A fresh context signed in with the console cookie (the login itself is not measured). */
  async function signedIn(): Promise<BrowserContext> {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${serviceUrl}/api/openapi.json`);
    const status = await page.evaluate(
      async ({ email, password }) =>
        (await fetch('/api/platform/auth/login?session=cookie', { method: 'POST', headers: { 'content-type': 'application/json', 'x-consent-console': '1' }, body: JSON.stringify({ email, password }) })).status,
      { email, password: PASSWORD },
    );
    if (status !== 200) throw new Error(`login ${status}`);
    await page.close();
    return context;
  }

  async function consoleLoad() {
    const context = await signedIn();
    const page = await context.newPage();
    const scripts: { url: string; sent: number }[] = [];
    page.on('response', async (response) => {
      if (response.request().resourceType() !== 'script') return;
      const sent = Number(response.headers()['content-length'] ?? (await response.body()).length);
      scripts.push({ url: new URL(response.url()).pathname, sent });
    });
    await page.goto(projectList);
    // Interactive: the project links are in the page and the app handles a click (React has hydrated them).
    const handle = await page.waitForFunction(
      () => {
        const link = document.querySelector<HTMLAnchorElement>('ul[aria-label="Projects"] a');
        return link && link.offsetParent !== null ? performance.now() : 0;
      },
      undefined,
      { polling: 'raf' },
    );
    const ms = (await handle.jsonValue()) as number;
    await context.close();
    return { ms, scripts };
  }

  async function baselineLoad() {
    const context = await signedIn();
    const page = await context.newPage();
    await page.goto(`${serviceUrl}/api/openapi.json`);
    const ms = await page.evaluate(() => performance.now());
    await context.close();
    return ms;
  }

  await consoleLoad(); // warms the service (first queries, JIT) and the OS file cache
  await baselineLoad();
  const consoleMs: number[] = [];
  const baselineMs: number[] = [];
  let scripts: { url: string; sent: number }[] = [];
  for (let i = 0; i < loads; i++) {
    const load = await consoleLoad();
    consoleMs.push(load.ms);
    scripts = load.scripts;
    baselineMs.push(await baselineLoad());
  }

  const dist = new URL('../console/dist/', import.meta.url);
  const gz = (path: string) => statSync(new URL(`${path.replace(/^\/console\//, '')}.gz`, dist)).size;
  const raw = (path: string) => readFileSync(new URL(path.replace(/^\/console\//, ''), dist)).length;
  const unique = [...new Map(scripts.map((s) => [s.url, s])).values()];
  const sum = (pick: (s: { url: string; sent: number }) => number) => unique.reduce((total, s) => total + pick(s), 0);
  console.log(`Initial load of ${projectList.replace(serviceUrl, '')}: ${unique.length} scripts`);
  for (const s of unique) console.log(`  ${s.url.padEnd(48)} ${(raw(s.url) / 1024).toFixed(1).padStart(7)} KiB  gzip ${(gz(s.url) / 1024).toFixed(1).padStart(6)} KiB  sent (br) ${(s.sent / 1024).toFixed(1).padStart(6)} KiB`);
  console.log(`  total: ${(sum((s) => raw(s.url)) / 1024).toFixed(1)} KiB minified, ${(sum((s) => gz(s.url)) / 1024).toFixed(1)} KiB gzip (budget 250 KB), ${(sum((s) => s.sent) / 1024).toFixed(1)} KiB sent as brotli`);
  const p50c = percentile(consoleMs, 50);
  const p50b = percentile(baselineMs, 50);
  console.log(`navigation → interactive project list (${loads} cold loads): p50 ${p50c.toFixed(1)} ms, p90 ${percentile(consoleMs, 90).toFixed(1)} ms`);
  console.log(`baseline navigation to /api/openapi.json: p50 ${p50b.toFixed(1)} ms, p90 ${percentile(baselineMs, 90).toFixed(1)} ms`);
  console.log(`ratio console/baseline (p50): ${(p50c / p50b).toFixed(2)}x`);
} finally {
  await browser.close();
  await server.close();
}
