// The IAB TCF banner against the same page without TCF, in one run (extensions.md section 11, docs/tcf.md):
//   npx rollup -c sdk/rollup.config.mjs && npx tsx bench/sdk-tcf.ts [loads=12]
// Sizes: what a TCF page loads before its banner (stub.js + consent.js + tcf.js) against consent.js alone, min,
// gzip and brotli. Times, in headless Chromium on the loopback news site of test/e2e/tcf-site.ts (another origin
// than the service; the service's TCF routes played with the published shapes), navigation start to:
//   - first visit: the first TC string an ad tag hears (`cmpuishown`, the banner is on screen; on a first visit
//     the CMP API sends no `tcloaded`, as the banner shows), against the core's banner (`onReady`) without TCF;
//   - returning visit: `tcloaded`, against `onReady` without TCF.
// Loads alternate TCF, no TCF, TCF, ... so that the machine's load hits both alike; cold first visits use a fresh
// context each (empty cache and storage). Loopback only: the SDK's own cost plus local round trips.
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { launchChromiumForSites } from '../test/e2e/site-v2.js';
import { defaultPublished, startTcfSite, type TcfSite } from '../test/e2e/tcf-site.js';

const loads = Number(process.argv[2] ?? 12);

function sizes(files: string[]) {
  const bytes = files.map((f) => readFileSync(new URL(`../sdk/dist/v2/${f}`, import.meta.url)));
  const sum = (f: (b: Buffer) => number) => bytes.reduce((s, b) => s + f(b), 0);
  return {
    min: sum((b) => b.length),
    gz: sum((b) => gzipSync(b, { level: 9 }).length),
    br: sum((b) => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length),
  };
}

/** Navigation start to the first TC string (`status`) with TCF, or to onReady without. */
async function measure(page: Page, site: TcfSite, tcf: boolean, status: string): Promise<number> {
  site.published = { ...defaultPublished(), tcf };
  await page.goto(site.siteOrigin + '/');
  if (!tcf) {
    await page.waitForFunction(() => (window as unknown as { readyAt?: number }).readyAt);
    return page.evaluate(() => (window as unknown as { readyAt: number }).readyAt);
  }
  await page.waitForFunction((s) => (window as unknown as { tcfEvents: { eventStatus: string }[] }).tcfEvents.some((e) => e.eventStatus === s), status);
  return page.evaluate((s) => (window as unknown as { tcfEvents: { eventStatus: string; at: number }[] }).tcfEvents.find((e) => e.eventStatus === s)!.at, status);
}

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;

async function firstVisits(browser: Browser, site: TcfSite) {
  const out = { tcf: [] as number[], plain: [] as number[] };
  for (let i = 0; i < loads * 2; i++) {
    const tcf = i % 2 == 0;
    const context = await browser.newContext();
    const page = await context.newPage();
    out[tcf ? 'tcf' : 'plain'].push(await measure(page, site, tcf, 'cmpuishown'));
    await context.close();
  }
  return out;
}

async function returningVisits(browser: Browser, site: TcfSite) {
  const out = { tcf: [] as number[], plain: [] as number[] };
  for (const tcf of [true, false]) {
    const context = await browser.newContext();
    const page = await context.newPage();
    // Decide once, then reload: the stored decision (and TC string) answers at once.
    await measure(page, site, tcf, 'cmpuishown');
    await page.locator('[data-consent="accept-all"]').click();
    await page.waitForFunction(() => (window as unknown as { consent?: { getConsent(): { needsConsent: boolean } } }).consent?.getConsent().needsConsent === false);
    await page.waitForTimeout(200); // the receipt and the stored string
    for (let i = 0; i < loads; i++) out[tcf ? 'tcf' : 'plain'].push(await measure(page, site, tcf, 'tcloaded'));
    await context.close();
  }
  return out;
}

const site = await startTcfSite();
const browser = await launchChromiumForSites();
try {
  const kib = (n: number) => (n / 1024).toFixed(1) + ' KiB';
  const withTcf = sizes(['stub.js', 'consent.js', 'tcf.js']);
  const without = sizes(['consent.js']);
  console.log('Bytes before the banner      min        gzip       brotli');
  console.log(`  with TCF (stub+core+tcf)   ${kib(withTcf.min).padStart(9)}  ${kib(withTcf.gz).padStart(9)}  ${kib(withTcf.br).padStart(9)}`);
  console.log(`  without TCF (core)         ${kib(without.min).padStart(9)}  ${kib(without.gz).padStart(9)}  ${kib(without.br).padStart(9)}`);
  console.log(`  ratio (gzip)               ${(withTcf.gz / without.gz).toFixed(2)}x`);
  const first = await firstVisits(browser, site);
  const returning = await returningVisits(browser, site);
  const row = (label: string, r: { tcf: number[]; plain: number[] }) =>
    `  ${label.padEnd(40)} TCF p50 ${p50(r.tcf).toFixed(0).padStart(5)} ms   without p50 ${p50(r.plain).toFixed(0).padStart(5)} ms   ratio ${(p50(r.tcf) / p50(r.plain)).toFixed(2)}x`;
  console.log(`\nNavigation start to the first signal (${loads} loads each)`);
  console.log(row('first visit: cmpuishown vs banner', first));
  console.log(row('returning visit: tcloaded vs onReady', returning));
} finally {
  await browser.close();
  await site.close();
}
