// A page in the app's WebView (extensions.md section 13): the app's @consent/core decided; a customer's page running
// the browser SDK v2 (site-v2.ts) in real Chromium, loaded through webViewUrl() or with webViewScript() injected
// before its scripts (page.addInitScript, as react-native-webview's injectedJavaScriptBeforeContentLoaded does),
// shows no banner and posts no receipt. Without either, the same page asks (the control).
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppState, AppStorage, loadCore, Network, until, type ConsentCore, type CoreModule } from '../helpers/core.js';
import type { TestServer } from '../helpers/server.js';
import { setupProject, startService, type SiteProject } from './harness.js';
import { launchChromiumForSites, startSiteV2, type SiteV2 } from './site-v2.js';

let server: TestServer;
let serviceUrl: string;
let site: SiteV2;
let browser: Browser;
let core: CoreModule;
let context: BrowserContext;
let page: Page;
let posts: string[];
const opened: ConsentCore[] = [];

beforeAll(async () => {
  [browser, { server, serviceUrl }, core] = await Promise.all([launchChromiumForSites(), startService(), loadCore()]);
  site = await startSiteV2(serviceUrl);
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});
beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  page = await context.newPage();
  posts = [];
  page.on('request', (r) => r.method() == 'POST' && r.url().includes('/api/sdk/v1/consent') && posts.push(r.url()));
});
afterEach(async () => {
  for (const c of opened.splice(0)) c.destroy();
  await context?.close();
});

const banner = '#consent-sdk-root [data-consent="banner"]';

async function appDecided(project: SiteProject, online: boolean) {
  const network = new Network();
  const storage = new AppStorage();
  const c = core.createConsent({ publicKey: project.key, apiBaseUrl: serviceUrl, adapters: { storage, fetch: network.fetch }, source: { platform: 'android' } });
  opened.push(c);
  await c.init();
  if (!online) network.goOffline();
  await c.save({ analytics: true });
  if (online) await until(() => c.getState().pendingReceipts, (n) => n == 0, 'the app receipt');
  return { c, installation: storage.slot('installation') as string };
}

/** The page's SDK finished init; what it shows and decided. */
async function pageState() {
  await page.waitForFunction(() => (window as any).sdkSettled);
  return {
    settled: await page.evaluate(() => (window as any).sdkSettled),
    banners: await page.locator(banner).count(),
    choices: await page.evaluate(() => (window as any).consent?.getConsent().choices),
    installation: await page.evaluate(() => localStorage.getItem('consent:installationId')),
  };
}

describe('a page in the app\'s WebView', () => {
  it('asks when the app hands it nothing (the control)', async () => {
    const project = await setupProject(server, [site.origin]);
    await appDecided(project, false);
    await page.goto(site.page(project.key));
    expect(await pageState()).toMatchObject({ settled: 'ready', banners: 1 });
  });

  it('with webViewScript() injected before load: no banner, the app\'s choices, nothing posted (the app was offline)', async () => {
    const project = await setupProject(server, [site.origin]);
    const app = await appDecided(project, false);
    await page.addInitScript(app.c.webViewScript());
    await page.goto(site.page(project.key));
    expect(await pageState()).toEqual({ settled: 'ready', banners: 0, choices: { necessary: true, analytics: true, ads: false }, installation: app.installation });
    await page.screenshot({ path: 'test-artifacts/core-webview-script.png' });
    // A moment for anything the page would still send: it sends nothing, and the service has no receipt.
    await page.waitForLoadState('networkidle');
    expect(posts).toEqual([]);
    expect(await project.receipts()).toEqual([]);
  });

  it('through webViewUrl(): the page adopts the installation and its decision, no banner, nothing posted', async () => {
    const project = await setupProject(server, [site.origin]);
    const app = await appDecided(project, true);
    const url = app.c.webViewUrl(site.page(project.key));
    expect(url).toBe(`${site.page(project.key)}#i=${app.installation}`);
    await page.goto(url);
    expect(await pageState()).toEqual({ settled: 'ready', banners: 0, choices: { necessary: true, analytics: true, ads: false }, installation: app.installation });
    await page.waitForLoadState('networkidle');
    expect(posts).toEqual([]);
    expect((await project.receipts()).map((r) => r.installationId)).toEqual([app.installation]);
  });

  it('a decision made in the page under the app\'s installation is adopted by the app at its next foreground', async () => {
    const project = await setupProject(server, [site.origin]);
    const network = new Network();
    const storage = new AppStorage();
    const appState = new AppState();
    const c = core.createConsent({ publicKey: project.key, apiBaseUrl: serviceUrl, adapters: { storage, fetch: network.fetch, appState: appState.adapter }, source: { platform: 'ios' } });
    opened.push(c);
    expect((await c.init()).needsConsent).toBe(true);
    await page.addInitScript(c.webViewScript());
    await page.goto(site.page(project.key));
    await page.locator('#consent-sdk-root [data-consent="accept-all"]').click();
    await until(() => project.receipts(), (r) => r.length == 1, "the page's receipt");
    expect((await project.receipts())[0]!.installationId).toBe(storage.slot('installation'));
    appState.set('active');
    await until(() => c.shouldShowBanner(), (shown) => !shown, 'the app to adopt the decision');
    expect(c.getState().choices).toEqual({ necessary: true, analytics: true, ads: true });
    // Asked once: the mark is gone.
    expect(network.sent.filter((r) => r.url.endsWith('/api/sdk/v2/decision'))).toHaveLength(1);
    expect(storage.slot('elsewhere')).toBeUndefined();
  });
});
