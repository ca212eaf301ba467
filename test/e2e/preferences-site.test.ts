// The hosted preferences page working for a site (extensions.md section 3), in real headless Chromium:
// a visitor decides on the site, changes their mind on /preferences opened with the site's installation in
// the URL fragment, and the site's next load finds the change through GET /api/sdk/v2/decision.
// Without the fragment handling the hosted page files its receipt under its own installation: the
// installationId and the site's decision assertions fail.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { launchChromium, setupProject, startService, startSite, type Site } from './harness.js';

let server: TestServer;
let serviceUrl: string;
let site: Site;
let browser: Browser;
let context: BrowserContext;
let pageErrors: string[];

beforeAll(async () => {
  browser = await launchChromium();
  ({ server, serviceUrl } = await startService());
  site = await startSite(serviceUrl);
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});
beforeEach(async () => {
  pageErrors = [];
  context = await browser.newContext();
});
afterEach(async () => {
  await context?.close();
});

async function newPage(): Promise<Page> {
  const p = await context.newPage();
  p.on('pageerror', (err) => pageErrors.push(String(err)));
  p.on('console', (msg) => msg.type() === 'error' && !/Failed to load resource/.test(msg.text()) && pageErrors.push(msg.text()));
  return p;
}

const hook = (name: string) => `#consent-sdk-root [data-consent="${name}"]`;
const purpose = (key: string) => `#consent-sdk-root [data-purpose="${key}"]`;

/** What the site page learns from the service for its own installation (the SDK v2 does this at init). */
function decisionSeenBySite(sitePage: Page, key: string) {
  return sitePage.evaluate(
    async ({ url, key }) => {
      const res = await fetch(`${url}/api/sdk/v2/decision`, {
        headers: { Authorization: `Bearer ${key}`, 'X-Consent-Installation': localStorage.getItem('consent:installationId')! },
      });
      return { status: res.status, body: await res.json() };
    },
    { url: serviceUrl, key },
  );
}

describe('hosted preferences for a site', () => {
  it('records under the site installation from #i=, starting from the site decision, and the site follows', async () => {
    const project = await setupProject(server, [site.origin]);
    const sitePage = await newPage();
    await sitePage.goto(site.page(project.key));
    await sitePage.locator(hook('accept-all')).click();
    await sitePage.waitForFunction(() => (window as any).sdkSettled === 'ready');
    await sitePage.waitForFunction(() => (window as any).consent.getConsent());
    const installation = await sitePage.evaluate(() => localStorage.getItem('consent:installationId'));
    expect(installation).toMatch(/^[A-Za-z0-9_-]{8,64}$/);
    // The banner closes and getConsent() answers before the SDK's consent POST has been acknowledged: the service
    // knows the decision once that POST committed (CI on PostgreSQL asked in between once and got null).
    await expect
      .poll(async () => (await decisionSeenBySite(sitePage, project.key)).body.decision?.choices ?? null, { timeout: 10_000 })
      .toEqual({ necessary: true, analytics: true, ads: true });

    // The visitor follows the site's "privacy preferences" link: the installation rides in the fragment.
    const requested: string[] = [];
    const preferences = await newPage();
    preferences.on('request', (request) => requested.push(request.url()));
    await preferences.goto(`${serviceUrl}/preferences?key=${project.key}#i=${installation}`);
    const dialog = preferences.locator(hook('dialog'));
    await dialog.waitFor();
    // It starts from the site's decision (all accepted there), not from nothing.
    expect(await preferences.locator(purpose('ads')).isChecked()).toBe(true);
    await preferences.locator(purpose('ads')).uncheck();
    await preferences.locator(hook('save')).click();
    await dialog.waitFor({ state: 'detached' });
    // The fragment never went to a server.
    expect(requested.filter((url) => url.includes(installation!) && !url.includes('#'))).toEqual([]);

    await expect.poll(async () => (await project.receipts()).length, { timeout: 10_000 }).toBe(2);
    const receipts = await project.receipts();
    expect(receipts.map((receipt) => receipt.installationId)).toEqual([installation, installation]);
    expect(receipts[0]!.choices).toEqual({ necessary: true, analytics: true, ads: false });

    // The site's next load follows the change.
    await sitePage.reload();
    await sitePage.waitForFunction(() => (window as any).sdkSettled === 'ready');
    const after = await decisionSeenBySite(sitePage, project.key);
    expect(after.body.decision).toEqual({
      versionId: project.version.id,
      consentHash: project.version.consentHash,
      choices: { necessary: true, analytics: true, ads: false },
      createdAt: expect.any(String),
    });

    // The site's id was used only for that page: without #i= the hosted page has an installation of its own.
    await preferences.close({ runBeforeUnload: true });
    const own = await newPage();
    await own.goto(`${serviceUrl}/preferences?key=${project.key}`);
    await own.locator(hook('dialog')).waitFor();
    await own.locator(hook('save')).click();
    await own.locator(hook('dialog')).waitFor({ state: 'detached' });
    await expect.poll(async () => (await project.receipts()).length, { timeout: 10_000 }).toBe(3);
    const [latest] = await project.receipts();
    expect(latest!.installationId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(latest!.installationId).not.toBe(installation);
    expect(pageErrors).toEqual([]);
  });

  it('gives a visitor of the hosted page one installation id per project, so two operators cannot link them', async () => {
    // Two unrelated operators (an organization each); the visitor saves on both hosted pages in one browser.
    const [a, b] = [await setupProject(server, [site.origin]), await setupProject(server, [site.origin])];
    const saveAt = async (project: typeof a, fragment = '') => {
      const page = await newPage();
      await page.goto(`${serviceUrl}/preferences?key=${project.key}${fragment}`);
      const dialog = page.locator(hook('dialog'));
      await dialog.waitFor();
      await page.locator(purpose('analytics')).check();
      await page.locator(hook('save')).click();
      await dialog.waitFor({ state: 'detached' });
      await page.close();
      const [latest] = await project.receipts();
      return latest!.installationId;
    };
    const atA = await saveAt(a);
    const atB = await saveAt(b);
    expect(atA).not.toBe(atB);
    // The same project keeps its id on the next visit.
    expect(await saveAt(a)).toBe(atA);

    // What B could try with the id it saw and A's public key: /decision knows no decision of that id at A.
    const decision = (key: string, installation: string) =>
      server.request('GET', '/api/sdk/v2/decision', { token: key, headers: { 'x-consent-installation': installation } });
    expect((await decision(a.key, atB)).body).toEqual({ decision: null });
    expect((await decision(a.key, atA)).body.decision.choices).toMatchObject({ analytics: true });

    // An id the site passes in the fragment still wins over the page's own.
    expect(await saveAt(b, '#i=site_installation_for_b')).toBe('site_installation_for_b');
    expect(pageErrors).toEqual([]);
  });

  it('answers /decision with null for an installation without receipts, and refuses a bad installation header', async () => {
    const project = await setupProject(server, [site.origin]);
    const call = (installation?: string) =>
      server.request('GET', '/api/sdk/v2/decision', {
        token: project.key,
        headers: installation === undefined ? {} : { 'x-consent-installation': installation },
      });
    const none = await call('fresh_installation_01');
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ decision: null });
    expect(none.headers.get('cache-control')).toBe('no-store');
    for (const bad of [undefined, 'short', 'has spaces in it', 'x'.repeat(65)]) {
      const refused = await call(bad);
      expect(refused.status, String(bad)).toBe(400);
      expect(refused.body).toEqual({ error: expect.any(String), code: 'invalid_body' });
    }
    const foreign = await server.request('GET', '/api/sdk/v2/decision', {
      token: project.key,
      headers: { 'x-consent-installation': 'fresh_installation_01', origin: 'https://evil.example' },
    });
    expect(foreign.body.code).toBe('origin_not_allowed');
    expect((await server.request('GET', '/api/sdk/v2/decision', { headers: { 'x-consent-installation': 'fresh_installation_01' } })).status).toBe(401);
  });
});
