import { existsSync, mkdirSync, statSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './e2e/harness.js';
import { evidencePath, NOTICE, publish, putDraft, type Version } from './helpers/consent.js';
import { team } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';

// The html evidence page as an auditor sees it: rendered by a real browser,
// screenshot kept in test-artifacts/ (gitignored) for a look by eye.
const ARTIFACTS = new URL('../test-artifacts/', import.meta.url);

let server: TestServer;
let browser: Browser;
let t: Awaited<ReturnType<typeof team>>;
let version: Version;

beforeAll(async () => {
  server = await startTestServer();
  t = await team(server);
  await putDraft(server, t.admin, t.project.id, {
    categories: [
      { ref: 'essential', name: 'Essential', sortOrder: 0 },
      { ref: 'stats', name: 'Statistics', sortOrder: 1 },
      { ref: 'marketing', name: 'Marketing', sortOrder: 2 },
    ],
    purposes: [
      { key: 'necessary', name: 'Necessary', description: 'Session, basket and security cookies that keep the shop working.', required: true, categoryId: 'essential', sortOrder: 0 },
      { key: 'analytics', name: 'Analytics', description: 'Anonymous visit counts and page performance.', required: false, categoryId: 'stats', sortOrder: 1 },
      { key: 'ads', name: 'Advertising <b>partners</b>', description: 'Personalised ads from our partners, measured across sites.', required: false, categoryId: 'marketing', sortOrder: 2 },
    ],
  });
  version = await publish(server, t.admin, t.project.id);
  version = await publish(server, t.admin, t.project.id);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the html evidence page in a browser', () => {
  it('shows the version, the publisher and every hash, loads nothing else, and prints', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 }, deviceScaleFactor: 1 });
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.setExtraHTTPHeaders({ authorization: `Bearer ${t.viewer.token}` });
    const url = server.url + evidencePath(t.project.id, `/${version.id}?format=html`);
    const response = await page.goto(url);
    expect(response?.status()).toBe(200);

    const { evidence } = (await server.request('GET', evidencePath(t.project.id, `/${version.id}`), { token: t.viewer.token })).body;
    const visible = async (text: string) => page.getByText(text, { exact: false }).first().isVisible();
    expect(await page.locator('.version-badge b').innerText()).toBe('2');
    expect(await page.locator('h1').innerText()).toBe(t.project.name);
    for (const hash of Object.values(evidence.hashes) as string[]) expect(await visible(hash)).toBe(true);
    expect(await visible(t.admin.email)).toBe(true);
    expect(await visible(NOTICE.title)).toBe(true);
    // Operator markup is shown as text, never rendered.
    expect(await visible('Advertising <b>partners</b>')).toBe(true);
    expect(await page.locator('td b').count()).toBe(0);
    // Every recomputation the page did agrees.
    expect(await page.locator('td.ok').count()).toBe(3);
    expect(requests).toEqual([url]);

    mkdirSync(ARTIFACTS, { recursive: true });
    const screenshot = new URL('evidence.png', ARTIFACTS);
    await page.screenshot({ path: screenshot.pathname, fullPage: true });
    expect(existsSync(screenshot)).toBe(true);

    await page.emulateMedia({ media: 'print' });
    await page.screenshot({ path: new URL('evidence-print.png', ARTIFACTS).pathname, fullPage: true });
    const pdf = await page.pdf({ format: 'A4' });
    expect(pdf.subarray(0, 4).toString()).toBe('%PDF');
    expect(statSync(screenshot).size).toBeGreaterThan(10_000);
    await page.close();
  });
});
