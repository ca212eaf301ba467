// What a scan gives the operator beyond its findings (docs/scanner.md "Inventory", "Cookie declaration", "Report
// and proof"): one scan of a small shop in Chromium, then its classified inventory, the finding for a host no
// catalogue knows, the HTML report as a to-do list at desktop and phone widths, and the public cookie declaration,
// over REST and filled into a privacy page's `data-consent-declaration` element by the SDK.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, sampleDraft, setupProject, startService, type SiteProject } from './e2e/harness.js';
import { shortDwell, scansPath, scanToEnd } from './helpers/scan-sites.js';
import type { TestServer } from './helpers/server.js';

// A host in no catalogue (a second loopback address, reached by name through the scanner's resolver).
const UNKNOWN_HOST = 'pixel.unknown-ads.test';
// Another such host, whose request EasyPrivacy names as tracking by its query (`&ev=PageView&`, a general rule).
const BEACON_HOST = 'beacon.unknown-ads.test';
// A widget in a frame of its own (another host no catalogue knows) that keeps an analytics key in its localStorage.
const FRAME_HOST = 'widget.unknown-ads.test';
const SCREENSHOTS = process.env.SCAN_REPORT_SCREENSHOTS; // a folder: the report's screenshots are written there


async function listen(server: Server, host: string): Promise<number> {
  await new Promise<void>((done) => server.listen(0, host, done));
  return (server.address() as AddressInfo).port;
}

describe('a scan report: inventory, unknown hosts, the HTML to-do list, the cookie declaration', () => {
  let server: TestServer;
  let serviceUrl: string;
  let project: SiteProject;
  let site: Server;
  let pixel: Server;
  let origin: string;
  let scan: any;
  let report: any;
  let browser: Browser;

  beforeAll(async () => {
    let resolve: (host: string) => Promise<string[]> = async () => [];
    // The shop writes nothing late: a short dwell window (test/helpers/scan-sites.ts).
    ({ server, serviceUrl } = await startService(shortDwell(), { scannerNetwork: { resolve: (host) => resolve(host) } }));
    project = await setupProject(server);
    pixel = createServer((req, res) => {
      if (req.url === '/frame.html') return void res.writeHead(200, { 'Content-Type': 'text/html' }).end("<!doctype html><title>Widget</title><script>localStorage.setItem('CLID', '1')</script>");
      res.writeHead(200, { 'Content-Type': 'image/gif' }).end();
    });
    const pixelPort = await listen(pixel, '127.0.0.2');
    resolve = async (host) => ([UNKNOWN_HOST, BEACON_HOST, FRAME_HOST].includes(host) ? ['127.0.0.2'] : host === 'localhost' ? ['127.0.0.1'] : []);
    const sdk = `<script src="${serviceUrl}/sdk/v2/consent.js"></script>
<script>ConsentSDK.init({ publicKey: ${JSON.stringify(project.key)}, apiBaseUrl: ${JSON.stringify(serviceUrl)} });</script>`;
    site = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://site').pathname;
      const html = (body: string) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>${sdk}</head><body>${body}</body></html>`);
      if (path === '/ga.js') return void res.writeHead(200, { 'Content-Type': 'text/javascript' }).end("document.cookie = '_ga=GA1.1.1; max-age=63072000; path=/';");
      // Analytics waits for consent (set only after Accept all); an unknown pixel loads before any decision.
      if (path === '/shop')
        return void html(`<h1>Shop</h1><script type="text/plain" data-consent="analytics" data-src="/ga.js"></script><img alt="" src="http://${UNKNOWN_HOST}:${pixelPort}/p.gif"><img alt="" src="http://${BEACON_HOST}:${pixelPort}/shop-assets/v1?id=1&ev=PageView&noscript=1"><iframe title="Widget" src="http://${FRAME_HOST}:${pixelPort}/frame.html"></iframe>`);
      if (path === '/privacy') return void html('<h1>Privacy</h1><div data-consent-declaration aria-busy="true">Loading the cookie list…</div>');
      res.writeHead(404).end();
    });
    origin = `http://127.0.0.1:${await listen(site, '127.0.0.1')}`;
    await server.request('PUT', `/api/platform/projects/${project.projectId}/allowed-origins`, { token: project.ownerToken, body: { origins: [origin] } });
    ({ scan, report } = await scanToEnd(server, project, [`${origin}/shop`]));
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    for (const s of [site, pixel]) {
      s?.closeAllConnections();
      await new Promise((done) => (s ? s.close(done) : done(undefined)));
    }
  });

  it('classifies every cookie, storage key and third-party host in the inventory, also a cookie seen only after Accept all', () => {
    const shop = `${origin}/shop`;
    // `_ga` waits for consent: no finding names it, yet the inventory classifies it.
    expect(report.findings.filter((f: any) => f.subject.name === '_ga' && f.type !== 'unmapped')).toEqual([]);
    const ga = report.inventory.find((i: any) => i.kind === 'cookie' && i.name === '_ga');
    expect(ga).toMatchObject({ category: 'analytics', vendor: 'Google', party: 'first', where: ['127.0.0.1'], setBy: [`${origin}/ga.js`], visits: ['accept'], pages: [shop] });
    expect(ga.description).toMatch(/\S/);
    // Two years asked for; Chromium keeps a cookie at most 400 days.
    expect(ga.lifetime.kind).toBe('expires');
    expect(ga.lifetime.seconds).toBeGreaterThan(390 * 86_400);
    expect(report.inventory).toContainEqual(
      expect.objectContaining({ kind: 'storage', name: `consent:${project.projectId}`, category: 'necessary', lifetime: { kind: 'persistent', seconds: null }, visits: ['reject', 'accept'] }),
    );
    expect(report.inventory).toContainEqual(
      expect.objectContaining({ kind: 'host', name: UNKNOWN_HOST, category: 'unknown', vendor: null, party: 'third', where: ['image'], visits: ['before', 'reject', 'accept'] }),
    );
    // The SDK's own origin is classified too: once, whatever the number of visits and requests.
    expect(report.inventory.filter((i: any) => i.kind === 'host' && i.name === 'localhost')).toEqual([expect.objectContaining({ category: 'necessary' })]);
  });

  it('reports a request to a host no catalogue or tracker list knows, before any decision, as unclassified_request', () => {
    expect(report.findings.filter((f: any) => f.type === 'unclassified_request')).toEqual([
      expect.objectContaining({ pageUrl: `${origin}/shop`, subject: { kind: 'request', name: UNKNOWN_HOST }, category: 'unknown', evidence: expect.objectContaining({ visit: 'before' }) }),
      expect.objectContaining({ pageUrl: `${origin}/shop`, subject: { kind: 'request', name: FRAME_HOST }, category: 'unknown' }),
    ]);
    expect(report.summary.findings.unclassified_request).toBe(2);
  });

  it('classifies with EasyPrivacy a request to a host the catalogue does not know, quoting the rule: before_consent', () => {
    // The rule matched the full URL (its query) as the browser sent it; the report keeps the URL without its query.
    expect(report.findings.filter((f: any) => f.type === 'before_consent' && f.subject.kind === 'request')).toEqual([
      expect.objectContaining({
        pageUrl: `${origin}/shop`,
        subject: { kind: 'request', name: BEACON_HOST },
        category: 'analytics',
        description: 'Listed as tracking by EasyPrivacy',
        evidence: expect.objectContaining({
          visit: 'before',
          source: 'easyprivacy',
          matched: '&ev=PageView&',
          request: expect.objectContaining({ url: expect.stringMatching(new RegExp(`^http://${BEACON_HOST}:\\d+/shop-assets/v1$`)), tracker: '&ev=PageView&' }),
        }),
      }),
    ]);
    // Every Reject all visit sent it too (the page never holds it back): after_reject as well.
    expect(report.findings.filter((f: any) => f.type === 'after_reject' && f.subject.kind === 'request').map((f: any) => f.subject.name)).toEqual([BEACON_HOST]);
    expect(report.inventory).toContainEqual(expect.objectContaining({ kind: 'host', name: BEACON_HOST, category: 'analytics', source: 'easyprivacy', matched: '&ev=PageView&' }));
    // The report names the list it used: where it came from, its date and its hash.
    expect(report.trackerList).toEqual({ source: expect.stringContaining('EasyPrivacy'), licence: expect.stringContaining('GPL-3.0'), date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('reads the storage of frames of other origins, as the EDPS collector does: an analytics key a widget keeps is before_consent, third party', () => {
    const frameOrigin = `http://${FRAME_HOST}:${(pixel.address() as AddressInfo).port}`;
    expect(report.findings.filter((f: any) => f.type === 'before_consent' && f.subject.kind === 'storage')).toEqual([
      expect.objectContaining({
        pageUrl: `${origin}/shop`,
        subject: { kind: 'storage', name: 'CLID' },
        category: 'analytics',
        evidence: expect.objectContaining({ visit: 'before', storage: { area: 'local', key: 'CLID', origin: frameOrigin, party: 'third' } }),
      }),
    ]);
    expect(report.inventory).toContainEqual(expect.objectContaining({ kind: 'storage', name: 'CLID', category: 'analytics', party: 'third', where: [`localStorage (${frameOrigin})`] }));
    // The page's own storage is listed as before, without an origin.
    const pageKeys = report.pages[0].visits.find((v: any) => v.kind === 'accept').storage.filter((s: any) => !s.origin).map((s: any) => s.key);
    expect(pageKeys).toContain(`consent:${project.projectId}`);
  });

  it('serves the HTML report as a to-do list, readable at 1280 px and 390 px without words broken', async () => {
    const res = await server.request('GET', `${scansPath(project.projectId, `/${scan.id}`)}?format=html`, { token: project.ownerToken });
    expect(res.status).toBe(200);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.setContent(res.text);
      // Counts first: the to-do table names each finding type with its count, then a line per page.
      const todo = await page.locator('table').first().innerText();
      expect(todo).toMatch(/Request to a host no catalogue or tracker list knows, before any decision\s+2/);
      expect(todo).toMatch(/Set or sent before any decision\s+2/);
      expect(todo).toMatch(/Cookie listed in no purpose\s+1/);
      await expect(page.locator('li.pageline').first().innerText()).resolves.toMatch(/before: HTTP 200/);
      // Evidence is folded; the inventory describes `_ga`; observations are listed once with their visits.
      expect(await page.locator('li.finding details').count()).toBe(report.findings.length);
      expect(await page.locator('li.finding details[open]').count()).toBe(0);
      await expect(page.getByRole('row').filter({ hasText: '_ga' }).first().innerText()).resolves.toContain('Google');
      // The pixel was requested in all three visits: one observation row, seen in before, reject and accept.
      const pixelRows = page.locator('details tr', { hasText: '/p.gif' });
      expect(await pixelRows.count()).toBe(1);
      expect(await pixelRows.textContent()).toMatch(/before, reject, accept$/);
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        // Nothing wider than the screen (wide tables scroll in their own box), and no rule breaks ordinary words.
        const layout = await page.evaluate(() => ({
          overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          breakAll: [...document.querySelectorAll('td, th, p, li')].filter((el) => getComputedStyle(el).wordBreak === 'break-all').length,
        }));
        expect(layout).toEqual({ overflow: 0, breakAll: 0 });
        if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/scan-report-${width}.png`, fullPage: true });
      }
    } finally {
      await context.close();
    }
  });

  it('answers the cookie declaration: the live purposes with the cookies the scan saw, cacheable, key and origin checked', async () => {
    // The operator maps `_ga` (the scan's suggestion) and publishes: the declaration follows the live version.
    await server.request('POST', `/api/platform/projects/${project.projectId}/consent/experience/cookies`, { token: project.ownerToken, body: { cookies: [{ name: '_ga', purposeKey: 'analytics' }] } });
    await project.publish(sampleDraft());
    const path = '/api/sdk/v2/cookie-declaration?locale=en';
    const headers = { Authorization: `Bearer ${project.key}`, Origin: origin };
    const res = await server.request('GET', path, { headers });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=600');
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    expect(res.body).toMatchObject({ projectId: project.projectId, version: { number: 2 }, locale: 'en', scan: { id: scan.id, reportHash: scan.reportHash } });
    const analytics = res.body.purposes.find((p: any) => p.key === 'analytics');
    expect(analytics).toMatchObject({ name: 'Analytics', items: [expect.objectContaining({ name: '_ga', kind: 'cookie', vendor: 'Google', party: 'first', lifetime: '1 year', seen: true })] });
    // The SDK's own storage keys are in no purpose's list: declared apart, as necessary; so is the widget frame's key
    // (third party, kept on the page's visitors' devices all the same).
    expect(res.body.unassigned.map((i: any) => [i.kind, i.name, i.category])).toEqual([
      ['storage', 'CLID', 'analytics'],
      ['storage', `consent:${project.projectId}`, 'necessary'],
      ['storage', 'consent:installationId', 'necessary'],
    ]);
    expect(res.body.variesByLanguage).toBeUndefined();

    const again = await server.request('GET', path, { headers: { ...headers, 'If-None-Match': res.headers.get('etag')! } });
    expect(again.status).toBe(304);
    expect((await server.request('GET', path, { headers: { Origin: origin } })).status).toBe(401);
    expect((await server.request('GET', path, { headers: { ...headers, Origin: 'https://elsewhere.example' } })).body.code).toBe('origin_not_allowed');
  });

  it('fills a privacy page’s data-consent-declaration element through the SDK', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${origin}/privacy`);
      const declaration = page.locator('[data-consent-declaration]');
      await declaration.locator('table').first().waitFor();
      await expect(declaration.getAttribute('aria-busy')).resolves.toBeNull();
      const analytics = declaration.locator('section[data-consent-purpose="analytics"]');
      await expect(analytics.locator('h3').innerText()).resolves.toBe('Analytics');
      await expect(analytics.getByRole('row').filter({ hasText: '_ga' }).innerText()).resolves.toMatch(/_ga\s+Google\s+.+\s+1 year\s+Cookie/);
    } finally {
      await context.close();
    }
  });
});
