// The walk of issue 15, in headless Chromium against the real service: a new operator signs up, creates an
// organization and a project, writes and publishes the consent configuration, creates a publishable key
// (copying the secret shown once) and lists the site's origin, all in the console; then a real customer page
// on another origin (http://www.acme.test:<port>, test/e2e/site-v2.ts) loads SDK v2 with that key and a
// visitor answers the banner; the receipt shows in the console's receipts table, the analytics chart and
// table count it, and the inbox says the project is live.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import {
  consolePage,
  createOrganization,
  createProject,
  newAccount,
  openConsentEditor,
  publish,
  shotOnFailure,
  signUp,
  writePurposes,
  type ConsoleEnv,
} from './console-harness.js';
import { axeViolations, screenshots, settle } from './console-screens-helpers.js';
import { startService } from './harness.js';
import { launchChromiumForSites, startSiteV2, type SiteV2 } from './site-v2.js';

let env: ConsoleEnv;
let browser: Browser;
let server: TestServer;
let site: SiteV2;

beforeAll(async () => {
  // Chromium resolving *.acme.test to loopback, so the customer's page is an origin of its own.
  browser = await launchChromiumForSites();
  const service = await startService();
  server = service.server;
  env = { browser, server, serviceUrl: service.serviceUrl, close: async () => {} };
  site = await startSiteV2(env.serviceUrl);
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});

const nav = (name: string) => ({ name, exact: true });

describe('from sign-up to a first receipt', () => {
  it('a new operator goes live and sees the visitor’s answer in receipts and analytics', async () => {
    const { context, page, problems } = await consolePage(env);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.serviceUrl });

    // Sign up, organization, project, configuration: console-core's screens.
    await signUp(page, env, newAccount());
    await createOrganization(page, env, 'Acme');
    await createProject(page, 'Shop');
    await openConsentEditor(page);
    await writePurposes(page, {
      categories: ['Essential', 'Marketing'],
      purposes: [
        { key: 'necessary', name: 'Necessary', description: 'Keeps the shop and your basket working.', required: true, category: 'Essential' },
        { key: 'analytics', name: 'Analytics', description: 'Counts visits so we know which pages help.', category: 'Marketing' },
        { key: 'ads', name: 'Advertising', description: 'Shows ads that match your interests.', category: 'Marketing' },
      ],
      notice: { title: 'We value your privacy', description: 'We use cookies to run the shop and, with your consent, to measure visits and show ads.' },
    });
    await publish(page);
    const menu = page.getByRole('navigation', { name: 'Console' });

    // The version is there, with its evidence.
    await menu.getByRole('link', nav('Versions')).click();
    await settle(page, 'Versions');
    await page.getByRole('heading', { name: 'Version 1' }).waitFor();

    // A key: the secret once, copied to the clipboard as an operator would, to paste into the site.
    await menu.getByRole('link', nav('API keys')).click();
    await settle(page, 'API keys');
    await page.getByLabel(/^Name/).fill('Storefront');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    const key = await page.evaluate(() => navigator.clipboard.readText());
    expect(key).toMatch(/^pk_live_[A-Za-z0-9]{32}$/);
    await page.getByRole('button', { name: 'I have stored it' }).click();

    // The site's origin, pasted as an address with a path.
    await menu.getByRole('link', nav('Origins')).click();
    await settle(page, 'Allowed origins');
    await page.getByLabel('Origin', { exact: true }).fill(`${site.origin}/products/mugs`);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();

    // Nothing recorded yet.
    await menu.getByRole('link', nav('Receipts')).click();
    await settle(page, 'Receipts');
    await page.getByText('No receipt yet.').waitFor();

    // A visitor on the customer's page, with SDK v2 from the service, accepts everything.
    const visitor = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const shop = await visitor.newPage();
    await shop.goto(site.page(key));
    await shop.waitForFunction(() => (window as any).sdkSettled !== undefined);
    expect(await shop.evaluate(() => (window as any).sdkSettled)).toBe('ready');
    await shop.locator('#consent-sdk-root [data-consent="accept-all"]').click();
    await shop.waitForFunction(() => (window as any).changes.length === 1);
    await visitor.close();

    // The receipt, in the table.
    await page.getByRole('button', { name: 'Refresh' }).click();
    const row = page.locator('tbody tr');
    await shotOnFailure(page, 'walk-receipts', () => row.first().waitFor());
    expect(await row.count()).toBe(1);
    expect(await row.first().textContent()).toMatch(/v1.*✓ ads.*analytics granted.*necessary granted/);
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'walk-receipts');

    // The analytics: one receipt today, accepted all, drawn in the charts and counted in the table.
    await menu.getByRole('link', nav('Analytics')).click();
    await settle(page, 'Analytics');
    await page.locator('.chart canvas').first().waitFor();
    const totals = page.locator('tfoot tr td');
    expect(await totals.nth(0).textContent()).toBe('1'); // receipts
    expect(await totals.nth(1).textContent()).toBe('1'); // accepted all
    await page.getByText('100.0%').first().waitFor(); // accepted all, in the totals
    const today = page.locator('tbody tr').last();
    expect(await today.locator('td').first().textContent()).toBe('1');
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'walk-analytics');

    // The inbox says the project is live; the header's link counts it as unread.
    await page.goto(`${env.serviceUrl}/console/notifications`);
    await settle(page, 'Notifications');
    await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: /^Notifications\W*\d+ unread$/ }).waitFor();
    await page.getByRole('link', { name: 'Shop is live: first consent receipt recorded' }).click();
    await settle(page, 'Receipts');

    expect(problems).toEqual([]);
    await context.close();
  }, 300_000); // a long walk on a loaded machine
});
