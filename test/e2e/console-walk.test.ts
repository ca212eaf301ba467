// The walk of issues 15 and 28, in headless Chromium against the real service: a new operator signs up, creates
// an organization and a project, writes and publishes the consent configuration and creates a publishable key,
// all in the console; the key-created dialog offers the install snippet filled in with the key, which goes, as
// copied and unedited, into a real customer page on another origin (http://shop.acme.test:<port>, served here).
// Before its origin is allowed the go-live checklist says the service refused it, and why; once it is allowed
// (saved as it is added), a visitor sees the banner and accepts, and the checklist turns done. The receipt shows
// in the receipts table with the purposes' names and the decision in words, the analytics count it (day one: the
// counts, no month of lone dots), and the inbox says the project is live.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
import { launchChromiumForSites } from './site-v2.js';

let env: ConsoleEnv;
let browser: Browser;
let server: TestServer;
let site: { origin: string; server: Server; snippet: string };

beforeAll(async () => {
  // Chromium resolving *.acme.test to loopback, so the customer's page is an origin of its own.
  browser = await launchChromiumForSites();
  const service = await startService();
  server = service.server;
  env = { browser, server, serviceUrl: service.serviceUrl, close: async () => {} };
  // The customer's page: whatever snippet the operator pasted, in its <head>, and some content.
  const page = createServer((req, res) => {
    if (req.url !== '/' && !req.url?.startsWith('/products/')) return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Acme mugs</title>
${site.snippet}
</head>
<body><main><h1>Handmade mugs</h1><p>Stoneware, 350 ml.</p></main></body>
</html>`);
  });
  await new Promise<void>((done) => page.listen(0, '127.0.0.1', done));
  site = { origin: `http://shop.acme.test:${(page.address() as AddressInfo).port}`, server: page, snippet: '' };
});

afterAll(async () => {
  await browser?.close();
  await new Promise((done) => (site?.server ? site.server.close(done) : done(undefined)));
  await server?.close();
});

const nav = (name: string) => ({ name, exact: true });

describe('from sign-up to a first receipt', () => {
  it('a new operator goes live from the console’s own snippet and sees the visitor’s answer in receipts and analytics', async () => {
    const { context, page, problems } = await consolePage(env);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.serviceUrl });
    // The first visit asks for nothing that is missing (the favicon is the console's own).
    const missing: string[] = [];
    page.on('response', (response) => response.status() === 404 && missing.push(response.url()));

    // Sign up, organization, project, configuration: console-core's screens.
    await signUp(page, env, newAccount());
    expect(missing).toEqual([]);
    await createOrganization(page, env, 'Acme');
    await createProject(page, 'Shop');
    const step = (id: string) => page.locator(`[data-step="${id}"]`);
    await step('sdk').getByText(/Create a key first/).waitFor();
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

    // A key: the dialog shows it once with the snippet filled in; Copy copies exactly the snippet shown.
    await menu.getByRole('link', nav('API keys')).click();
    await settle(page, 'API keys');
    await page.getByLabel(/^Name/).fill('Storefront');
    await page.getByRole('button', { name: 'Create key' }).click();
    const created = page.getByRole('dialog', { name: 'Key “Storefront” created' });
    const shown = (await created.getByLabel('Install snippet', { exact: true }).textContent())!;
    await created.getByRole('button', { name: /^Copy snippet/ }).click();
    await created.getByText('Copied.').waitFor();
    site.snippet = await page.evaluate(() => navigator.clipboard.readText());
    expect(site.snippet).toBe(shown);
    const key = /publicKey: '([^']+)'/.exec(site.snippet)![1]!;
    expect(key).toMatch(/^pk_live_[A-Za-z0-9]{32}$/);
    await created.getByRole('button', { name: 'I have stored it' }).click();

    // The snippet pasted as it is, on a site whose origin is not allowed yet: the checklist says what was refused.
    const visit = async () => {
      const visitor = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const shop = await visitor.newPage();
      await shop.goto(`${site.origin}/products/mugs`);
      return { visitor, shop };
    };
    const refused = await visit();
    await menu.getByRole('link', nav('Home')).click();
    await page.getByRole('heading', { name: 'Go-live checklist' }).waitFor();
    await shotOnFailure(page, 'walk-refused', () => step('sdk').getByText(`Refused a page on ${site.origin}`).waitFor({ timeout: 30_000 }));
    expect(await step('sdk').textContent()).toMatch(/that origin is not allowed/);
    expect(await step('sdk').getAttribute('class')).toBe('todo problem');
    expect(await refused.shop.locator('#consent-sdk-root [data-consent="accept-all"]').count()).toBe(0);
    await refused.visitor.close();
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'walk-checklist-refused');

    // The checklist leads to the origins; adding the site's origin (pasted as an address with a path) saves it.
    await step('sdk').getByRole('link', { name: 'Set allowed origins' }).click();
    await settle(page, 'Allowed origins');
    await page.getByLabel('Origin', { exact: true }).fill(`${site.origin}/products/mugs`);
    await page.getByRole('button', { name: 'Add and save' }).click();
    await page.getByRole('status').getByText(`Saved: ${site.origin} is allowed.`).waitFor();

    // Nothing recorded yet.
    await menu.getByRole('link', nav('Receipts')).click();
    await settle(page, 'Receipts');
    await page.getByText('No receipt yet.').waitFor();

    // A visitor on the customer's page sees the banner and accepts everything.
    const { visitor, shop } = await visit();
    await shop.locator('#consent-sdk-root [data-consent="accept-all"]').click();
    await shop.locator('#consent-sdk-root [data-consent="banner"]').waitFor({ state: 'hidden' });

    // The checklist turns done: the SDK loaded the configuration, the first receipt is in.
    await menu.getByRole('link', nav('Home')).click();
    await page.getByRole('heading', { name: 'Go-live checklist' }).waitFor();
    await shotOnFailure(page, 'walk-live', () => page.locator('.badge', { hasText: /^Live$/ }).waitFor({ timeout: 30_000 }));
    for (const id of ['published', 'origins', 'key', 'sdk', 'receipt']) expect(await step(id).getAttribute('class')).toBe('done');
    await visitor.close();
    await screenshots(page, 'walk-checklist-live');

    // The receipt, in the table: the purposes by name, the decision in words.
    await menu.getByRole('link', nav('Receipts')).click();
    await settle(page, 'Receipts');
    const row = page.locator('tbody tr');
    await shotOnFailure(page, 'walk-receipts', () => row.first().waitFor());
    expect(await row.count()).toBe(1);
    expect(await row.first().textContent()).toMatch(/v1.*Accepted all.*✓ Advertising ads granted.*✓ Analytics analytics granted.*✓ Necessary necessary granted/);
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'walk-receipts');

    // The analytics on day one: the counts beside the shares, a note instead of a month of lone dots.
    await menu.getByRole('link', nav('Analytics')).click();
    await settle(page, 'Analytics');
    await page.locator('.chart canvas').first().waitFor();
    expect(await page.locator('.chart canvas').count()).toBe(1); // the receipts per day (bars); no rate lines yet
    await page.getByRole('note').getByText(/Only one day has receipts so far/).waitFor();
    const totals = page.locator('tfoot tr td');
    expect(await totals.nth(0).textContent()).toBe('1'); // receipts
    expect(await totals.nth(1).textContent()).toBe('1'); // accepted all
    expect((await page.locator('.totals').textContent())!.replace(/\s+/g, ' ')).toContain('Accepted all100.0% 1 of 1');
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
    expect(missing).toEqual([]);
    await context.close();
  }, 300_000); // a long walk on a loaded machine
});
