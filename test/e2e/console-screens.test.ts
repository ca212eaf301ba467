// console-screens' screens of the operator console in headless Chromium against the real service: versions,
// keys, origins, webhook, receipts, analytics, notifications, billing, members, audit. Data is made through the
// operator and SDK APIs (receipts on past days by moving the service's clock); every action then goes through
// the console. Each screen: its content, an axe-core scan (no serious or critical violation) and screenshots at
// 1280 and 390 px in test-artifacts/console/. A Viewer meets no enabled control it may not use.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putDraft, publish, type Version } from '../helpers/consent.js';
import { operator, organization, project as createProject, team, type Operator } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { launchChromium } from './harness.js';
import {
  axeViolations,
  clock,
  downloadedText,
  enabledControls,
  openScreen,
  screenshots,
  settle,
  signedIn,
  startConsoleService,
  type ConsolePage,
} from './console-screens-helpers.js';

const DAY = 86_400_000;

let browser: Browser;
let server: TestServer;
let serviceUrl: string;
let receiver: Receiver;
let t: Awaited<ReturnType<typeof team>>;
let versions: Version[];
let key: string;
let empty: { id: string; organizationId: string };
let receiptCount = 0;

const api = (who: Operator, method: string, path: string, body?: unknown) => server.request(method, path, { token: who.token, body });
const projectApi = (rest: string) => `/api/platform/projects/${t.project.id}${rest}`;
const projectPath = (screen: string, projectId = t.project.id, orgId = t.org.id) => `/orgs/${orgId}/projects/${projectId}/${screen}`;
const emptyPath = (screen: string) => projectPath(screen, empty.id, empty.organizationId);
const orgPath = (screen: string) => `/orgs/${t.org.id}/${screen}`;

async function receipt(choices: Record<string, boolean>, extra: Record<string, unknown> = {}) {
  const v = versions.at(-1)!;
  const res = await server.request('POST', '/api/sdk/v1/consent', {
    token: key,
    body: { versionId: v.id, consentHash: v.consentHash, choices, installationId: `inst-${String(receiptCount++).padStart(4, '0')}-abcdef`, sdkVersion: '2.0.0', ...extra },
  });
  expect(res.status, res.text).toBe(201);
}

beforeAll(async () => {
  browser = await launchChromium();
  ({ server, serviceUrl } = await startConsoleService());
  receiver = await startReceiver();
  t = await team(server);
  await putDraft(server, t.owner, t.project.id);
  const first = await publish(server, t.owner, t.project.id);
  await putDraft(server, t.owner, t.project.id, { notice: { title: 'Your privacy, your choice', description: 'We ask before measuring visits or showing ads.' } });
  versions = [first, await publish(server, t.owner, t.project.id)];
  key = (await api(t.owner, 'POST', projectApi('/api-keys'), { name: 'Storefront' })).body.secret;
  const old = await api(t.owner, 'POST', projectApi('/api-keys'), { name: 'Old theme' });
  await api(t.owner, 'DELETE', projectApi(`/api-keys/${old.body.apiKey.id}`));
  await api(t.admin, 'PUT', projectApi('/allowed-origins'), { origins: ['https://shop.example', 'https://*.shop.example'] });
  expect((await api(t.admin, 'PUT', projectApi('/webhook'), { url: receiver.url, enabled: true })).status).toBe(200);
  // Two weeks of answers, a few a day, more accepting as time goes on; some browsers send GPC.
  // A day's receipts are posted together (the service commits them in one group) while the clock stands on that day.
  for (let day = 13; day >= 1; day--) {
    clock.offsetMs = -day * DAY;
    await Promise.all(
      Array.from({ length: 3 + (day % 4) }, (_, i) => {
        const accept = (i + day) % 3 !== 0;
        return receipt({ necessary: true, analytics: accept, ads: accept && i % 2 === 0 }, { gpc: i === 0 && day % 2 === 0, locale: i % 2 ? 'de' : 'en' });
      }),
    );
  }
  clock.offsetMs = 0;
  // Today: more than a page (50) of receipts.
  await Promise.all(Array.from({ length: 55 }, (_, i) => receipt({ necessary: true, analytics: i % 3 !== 0, ads: i % 5 === 0 }, { gpc: i % 7 === 0 })));
  // The newest: a receipt that says what the visitor did (SDK v2 sends `action`).
  await receipt({ necessary: true, analytics: false, ads: false }, { action: 'reject_all' });
  // The free plan has room for one project: the empty one is in a second organization.
  empty = await createProject(server, t.owner, (await organization(server, t.owner, { name: 'Acme Labs' })).id, 'Blog');
  // Deliveries of the receipts above reach the receiver; wait for a few so the table has rows.
  await receiver.until((received) => received.length >= 3, 30_000);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await server?.close();
});

/** Every screen of console-screens, with its address and heading. */
const SCREENS = () => [
  { name: 'versions', path: projectPath('versions'), heading: 'Versions' },
  { name: 'keys', path: projectPath('keys'), heading: 'API keys' },
  { name: 'origins', path: projectPath('origins'), heading: 'Allowed origins' },
  { name: 'webhook', path: projectPath('webhook'), heading: 'Webhook' },
  { name: 'receipts', path: projectPath('receipts'), heading: 'Receipts' },
  { name: 'analytics', path: projectPath('analytics'), heading: 'Analytics' },
  { name: 'notifications', path: '/notifications', heading: 'Notifications' },
  { name: 'billing', path: orgPath('billing'), heading: 'Billing' },
  { name: 'members', path: orgPath('members'), heading: 'Members' },
  { name: 'audit', path: orgPath('audit'), heading: 'Audit log' },
];

/** The select of a label starting with `text` (a label's text also holds its options, so getByLabel is ambiguous). */
const select = (page: ConsolePage['page'], text: string) => page.locator('label').filter({ hasText: new RegExp(`^${text}`) }).locator('select');

async function check(session: ConsolePage, name: string) {
  expect(await axeViolations(session.page), `${name}: axe`).toEqual([]);
  await screenshots(session.page, name);
}

describe('every screen as the Owner', () => {
  it('shows its content, passes axe-core and is photographed at 1280 and 390 px', async () => {
    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    for (const screen of SCREENS()) {
      await openScreen(page, serviceUrl, screen.path, screen.heading);
      if (screen.name === 'analytics') await page.locator('.chart canvas').first().waitFor();
      if (screen.name === 'webhook') await page.getByRole('cell', { name: 'consent.updated' }).first().waitFor();
      // The project last opened stays in the sidebar on the organization's screens (issue 28).
      if (['billing', 'members', 'audit'].includes(screen.name)) {
        const nav = page.getByRole('navigation', { name: 'Console' });
        await nav.getByRole('list', { name: 'Shop' }).getByRole('link', { name: 'Receipts', exact: true }).waitFor();
      }
      await check(owner, screen.name);
    }
    expect(owner.errors).toEqual([]);
    expect(owner.forbidden).toEqual([]);
    await owner.close();
  }, 180_000); // ten screens at two widths each, on a machine shared with other browser files

  it('empty states: a project with nothing published, no key, no webhook, no receipt', async () => {
    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    const cases = [
      ['versions', 'Versions', 'Nothing published yet.'],
      ['keys', 'API keys', 'No key yet.'],
      ['origins', 'Allowed origins', 'No origin listed yet.'],
      ['webhook', 'Webhook', 'Set up the webhook'],
      ['receipts', 'Receipts', 'No receipt yet.'],
      ['analytics', 'Analytics', 'No receipt in this range.'],
    ] as const;
    for (const [screen, heading, text] of cases) {
      await openScreen(page, serviceUrl, emptyPath(screen), heading);
      await page.getByText(text).first().waitFor();
      expect(await axeViolations(page), `${screen} (empty): axe`).toEqual([]);
      if (screen === 'receipts' || screen === 'analytics') await screenshots(page, `${screen}-empty`);
    }
    expect(owner.errors).toEqual([]);
    await owner.close();
  });

  it('error states: an API error is shown in words with a retry', async () => {
    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    // The receipts query fails on the way (the service is fine): the screen says so and offers a retry.
    await page.route('**/graphql', async (route) => {
      const body = route.request().postData() ?? '';
      if (body.includes('ReceiptsPage')) return route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: 'Service unavailable', code: 'service_unavailable' }) });
      return route.continue();
    });
    await page.goto(`${serviceUrl}/console${projectPath('receipts')}`);
    const alert = page.getByRole('alert');
    await alert.getByText('The service answered 503. Try again in a moment.').waitFor();
    await page.unroute('**/graphql');
    await alert.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('table').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    // A filter the API refuses: its message, in words.
    await page.getByLabel('Installation').fill('x'.repeat(300));
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(async () => (await page.getByRole('alert').allTextContents()).join(' ')).toMatch(/installationId|Installation|at most|characters|valid/i);
    await owner.close();
  });

  it('a screen whose code does not arrive says so in words, and trying again reloads it', async () => {
    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    await page.route('**/console/assets/receipts-*.js', (route) => route.abort('connectionreset'));
    await page.goto(`${serviceUrl}/console${projectPath('receipts')}`);
    const alert = page.getByRole('alert');
    await alert.getByText('This part of the console could not load').waitFor();
    await alert.getByText(/Its code did not arrive/).waitFor();
    // The frame stays usable around it: the navigation still leads elsewhere.
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Versions' }).isVisible()).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'receipts-code-missing');
    await page.unroute('**/console/assets/receipts-*.js');
    await alert.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('heading', { level: 1, name: 'Receipts' }).waitFor();
    await page.getByRole('table').waitFor();
    expect(owner.errors.filter((e) => !/receipts-.*\.js/.test(e))).toEqual([]);
    await owner.close();
  });
});

describe('versions', () => {
  it('lists versions newest first with their publisher and downloads the evidence as json, html and csv', async () => {
    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    await openScreen(page, serviceUrl, projectPath('versions'), 'Versions');
    const headings = await page.getByRole('heading', { level: 2 }).allTextContents();
    expect(headings).toEqual(['Version 2', 'Version 1']);
    await page.getByText(versions[1]!.consentHash).waitFor();
    await page.getByText(`(${t.owner.email})`).first().waitFor();
    for (const format of ['json', 'html', 'csv']) {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: `${format.toUpperCase()} evidence of version 2` }).click(),
      ]);
      expect(download.suggestedFilename()).toBe(`consent-evidence-${t.project.slug}-v2.${format}`);
      const text = await downloadedText(download);
      if (format === 'json') expect(JSON.parse(text).evidence.version.number).toBe(2);
      if (format === 'html') expect(text).toMatch(/^<!doctype html>/i);
      if (format === 'csv') expect(text).toContain(versions[1]!.consentHash);
    }
    // The package's facts load when opened.
    await page.getByText('Receipts and package hash').first().click();
    await page.getByText('Receipts recorded').waitFor();
    expect(owner.errors).toEqual([]);
    await owner.close();
  });
});

describe('keys', () => {
  it('the Owner creates a key, sees the secret once with a copy button, and revokes a key after confirming', async () => {
    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    await openScreen(page, serviceUrl, projectPath('keys'), 'API keys');
    await page.getByLabel(/^Name/).fill('Checkout page');
    await page.getByRole('button', { name: 'Create key' }).click();
    // The key-created dialog: the key, and the install snippet filled in with it, each copied exactly as shown.
    const created = page.getByRole('dialog', { name: 'Key “Checkout page” created' });
    const secretField = created.getByRole('textbox', { name: 'Publishable key' });
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^pk_live_[A-Za-z0-9]{32}$/);
    await created.getByRole('button', { name: 'Copy key' }).click();
    await created.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    const snippet = (await created.getByLabel('Install snippet', { exact: true }).textContent())!;
    expect(snippet).toBe(
      `<script src="${serviceUrl}/sdk/v2/consent.js"></script>\n<script>ConsentSDK.init({ publicKey: '${secret}', apiBaseUrl: '${serviceUrl}' });</script>`,
    );
    await created.getByRole('button', { name: /^Copy snippet/ }).click();
    await created.getByText('Copied.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(snippet);
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'key-created');
    await created.getByRole('button', { name: 'I have stored it' }).click();
    await created.waitFor({ state: 'hidden' });
    expect(await page.getByText(secret).count()).toBe(0);
    // The list shows it by prefix only; the key works on the SDK API.
    await page.getByRole('cell', { name: 'Checkout page', exact: true }).waitFor();
    expect((await server.request('GET', '/api/sdk/v1/config', { token: secret })).status).toBe(200);

    await page.getByRole('button', { name: 'Revoke Checkout page' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke “Checkout page”?' });
    await dialog.waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await server.request('GET', '/api/sdk/v1/config', { token: secret })).status).toBe(200);
    await page.getByRole('button', { name: 'Revoke Checkout page' }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('row', { name: /Checkout page/ }).getByText(/^Revoked/).waitFor();
    expect((await server.request('GET', '/api/sdk/v1/config', { token: secret })).status).toBe(403);
    expect(owner.errors).toEqual([]);
    await owner.close();
  });

  it('with Google Consent Mode on, the new key’s snippet says so on the script tag; the home shows a placeholder, never a key prefix', async () => {
    // The Blog project (nothing published): its draft experience decides.
    expect((await api(t.owner, 'PUT', `/api/platform/projects/${empty.id}/consent/experience`, { googleConsentMode: { enabled: true, signals: {} } })).status).toBe(200);
    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    await openScreen(page, serviceUrl, emptyPath('keys'), 'API keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    const created = page.getByRole('dialog', { name: /created$/ });
    const secret = await created.getByRole('textbox', { name: 'Publishable key' }).inputValue();
    const snippet = (await created.getByLabel('Install snippet', { exact: true }).textContent())!;
    expect(snippet).toContain(`<script src="${serviceUrl}/sdk/v2/consent.js" data-google-consent-mode></script>`);
    expect(snippet).toContain(`publicKey: '${secret}'`);
    await created.getByRole('button', { name: 'I have stored it' }).click();

    await openScreen(page, serviceUrl, `/orgs/${empty.organizationId}/projects/${empty.id}`, 'Blog');
    const snippets = (await page.locator('main pre').allTextContents()).join('\n');
    expect(snippets).toContain("publicKey: 'PASTE_YOUR_PUBLISHABLE_KEY_HERE'");
    expect(snippets).toContain('data-google-consent-mode');
    expect(snippets).not.toContain(secret.slice(0, 14));
    expect(snippets).not.toContain('…');
    await page.locator('[data-step="sdk"]').getByText(/No request from your site yet/).waitFor();
    expect(owner.errors).toEqual([]);
    await owner.close();
  });

  it('an Admin sees the keys without create or revoke', async () => {
    const admin = await signedIn(browser, serviceUrl, t.admin);
    await openScreen(admin.page, serviceUrl, projectPath('keys'), 'API keys');
    await admin.page.getByRole('cell', { name: 'Storefront' }).waitFor();
    expect(await admin.page.getByRole('button', { name: /Create key|Revoke/ }).count()).toBe(0);
    await admin.page.getByText('Only Owners create and revoke keys.').waitFor();
    await admin.close();
  });
});

describe('origins', () => {
  it('an Admin adds and removes origins, each saved at once; a path is refused; the switch saves too', async () => {
    const admin = await signedIn(browser, serviceUrl, t.admin);
    const { page } = admin;
    const saved = async () => (await api(t.viewer, 'GET', projectApi('/allowed-origins'))).body;
    await openScreen(page, serviceUrl, projectPath('origins'), 'Allowed origins');
    await page.getByLabel('Origin', { exact: true }).fill('ftp://nope');
    await page.getByRole('button', { name: 'Add and save' }).click();
    await page.getByRole('alert').getByText(/Enter an origin such as/).waitFor();
    // Adding saves: no second button to forget, nothing lost by leaving the screen.
    await page.getByLabel('Origin', { exact: true }).fill('https://blog.example/some/page');
    await page.getByRole('button', { name: 'Add and save' }).click();
    await page.getByRole('status').getByText('Saved: https://blog.example is allowed.').waitFor();
    expect(await saved()).toEqual({ enforce: true, origins: ['https://shop.example', 'https://*.shop.example', 'https://blog.example'] });
    expect(await page.getByRole('button', { name: /Save changes/ }).count()).toBe(0);
    await page.getByRole('button', { name: 'Remove https://*.shop.example' }).click();
    await page.getByRole('status').getByText('Saved: https://*.shop.example removed.').waitFor();
    expect(await saved()).toEqual({ enforce: true, origins: ['https://shop.example', 'https://blog.example'] });
    await page.getByLabel('Only allow the listed origins (recommended)').uncheck();
    await page.getByRole('status').getByText('Saved: enforcement is off.').waitFor();
    expect((await saved()).enforce).toBe(false);
    // Leaving and coming back shows what is saved.
    await openScreen(page, serviceUrl, projectPath('origins'), 'Allowed origins');
    await page.getByText('https://blog.example', { exact: true }).waitFor();
    expect(await page.getByLabel('Only allow the listed origins (recommended)').isChecked()).toBe(false);
    await screenshots(page, 'origins-saved');
    await api(t.admin, 'PUT', projectApi('/allowed-origins'), { enforce: true });
    // Back as they were for the other tests.
    await api(t.admin, 'PUT', projectApi('/allowed-origins'), { origins: ['https://shop.example', 'https://*.shop.example'] });
    expect(admin.errors).toEqual([]);
    await admin.close();
  });
});

describe('webhook', () => {
  it('an Admin sends a test and sees the result; only the Owner rotates the secret, shown once', async () => {
    const admin = await signedIn(browser, serviceUrl, t.admin);
    await openScreen(admin.page, serviceUrl, projectPath('webhook'), 'Webhook');
    await admin.page.getByRole('button', { name: 'Send test event' }).click();
    await admin.page.getByText(/Delivered: your endpoint answered HTTP 200 in \d+ ms\./).waitFor();
    await admin.page.getByRole('cell', { name: 'webhook.test' }).first().waitFor();
    expect(await admin.page.getByRole('button', { name: 'Rotate signing secret' }).count()).toBe(0);
    await admin.page.getByText('Only Owners rotate the signing secret.').waitFor();
    // A failing endpoint: the result says what it answered.
    receiver.behave(() => 500);
    await admin.page.getByRole('button', { name: 'Send test event' }).click();
    await admin.page.getByText(/Not delivered: your endpoint answered HTTP 500/).waitFor();
    receiver.behave(() => 200);
    await screenshots(admin.page, 'webhook-test-failed');
    await admin.close();

    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    await openScreen(page, serviceUrl, projectPath('webhook'), 'Webhook');
    const before = (await api(t.owner, 'GET', projectApi('/webhook'))).body.webhook.secretPrefix;
    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    const secret = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    const after = (await api(t.owner, 'GET', projectApi('/webhook'))).body.webhook.secretPrefix;
    expect(after).not.toBe(before);
    expect(secret.startsWith(after)).toBe(true);
    await page.getByText(`${after}…`).waitFor();
    expect(owner.errors).toEqual([]);
    await owner.close();
  });

  it('creates a webhook on a project that has none; the secret comes once', async () => {
    const owner = await signedIn(browser, serviceUrl, t.owner); // the second organization is the Owner's alone
    const { page } = owner;
    await openScreen(page, serviceUrl, emptyPath('webhook'), 'Webhook');
    await page.getByLabel('Endpoint URL').fill('https://10.0.0.1/hook');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('alert').filter({ hasText: 'The webhook could not be saved' }).getByText(/Must reach a public address/).waitFor();
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/blog`);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    expect(await page.getByRole('textbox', { name: 'Signing secret' }).inputValue()).toMatch(/^whsec_/);
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    await owner.close();
  });
});

describe('receipts', () => {
  it('pages forwards and back, filters by installation and by day, and exports csv and ndjson', async () => {
    const viewer = await signedIn(browser, serviceUrl, t.viewer);
    const { page } = viewer;
    await openScreen(page, serviceUrl, projectPath('receipts'), 'Receipts');
    const rows = () => page.locator('tbody tr').count();
    expect(await rows()).toBe(50);
    // Purpose names (with their keys) and what the visitor did, in words (issue 28).
    const newest = page.locator('tbody tr').first();
    // The names come with the versions, a query of their own that may answer after the receipts.
    await expect.poll(() => newest.textContent()).toMatch(/Rejected all.*✕ Advertising ads.*✕ Analytics analytics.*✓ Necessary necessary/);
    expect(await page.locator('tbody tr').nth(1).textContent()).toContain('Not said (older SDK)');
    const firstPageTop = await page.locator('tbody tr').first().textContent();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Page 2').waitFor();
    await expect.poll(() => page.locator('tbody tr').first().textContent()).not.toBe(firstPageTop);
    expect(await rows()).toBe(Math.min(50, receiptCount - 50));
    await page.getByRole('button', { name: 'Previous' }).click();
    await expect.poll(() => page.locator('tbody tr').first().textContent()).toBe(firstPageTop);

    await page.getByLabel('Installation').fill('inst-0003-abcdef');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(rows).toBe(1);
    await page.getByRole('button', { name: 'Clear' }).click();
    // Yesterday only (UTC days).
    const yesterday = new Date(Date.now() - DAY).toISOString().slice(0, 10);
    await page.getByLabel('From (UTC day)').fill(yesterday);
    await page.getByLabel('To (UTC day, included)').fill(yesterday);
    await page.getByRole('button', { name: 'Apply' }).click();
    const expected = (await api(t.viewer, 'GET', projectApi(`/receipts?limit=200&from=${yesterday}T00:00:00.000Z&to=${new Date(Date.parse(yesterday) + DAY).toISOString()}`))).body.receipts.length;
    expect(expected).toBeGreaterThan(0);
    await expect.poll(rows).toBe(expected);

    for (const format of ['csv', 'ndjson']) {
      await select(page, 'Export format').selectOption(format);
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download export' }).click()]);
      expect(download.suggestedFilename()).toMatch(new RegExp(`\\.${format}$`));
      const lines = (await downloadedText(download)).trim().split('\n');
      expect(lines.length).toBe(format === 'csv' ? expected + 1 : expected);
      await page.getByRole('status').getByText(`Downloaded ${download.suggestedFilename()}.`).waitFor();
    }
    expect(viewer.errors).toEqual([]);
    expect(viewer.forbidden).toEqual([]);
    await viewer.close();
  });
});

describe('analytics', () => {
  it('charts the range with uPlot and gives the same numbers in a table; filters by version and interval', async () => {
    const viewer = await signedIn(browser, serviceUrl, t.viewer);
    const { page } = viewer;
    await openScreen(page, serviceUrl, projectPath('analytics'), 'Analytics');
    expect(await page.locator('.chart canvas').count()).toBe(3);
    for (const name of ['Opt-in rate per purpose', 'Accepted, customised or rejected', 'Share of browsers sending Global Privacy Control']) {
      await page.getByRole('img', { name: new RegExp(`^${name}\\.`) }).waitFor();
    }
    const stats = (await api(t.viewer, 'GET', projectApi('/receipts/stats'))).body;
    const total = page.locator('tfoot tr');
    expect(await total.locator('td').first().textContent()).toBe(String(stats.totals.receipts));
    expect(stats.totals.receipts).toBe(receiptCount);
    expect(await page.locator('tbody tr').count()).toBe(30);
    // Tiles give the count beside the share; two weeks of data draw the trends (no day-one note).
    await page.locator('.totals').getByText(`${stats.totals.rejectedAll} of ${stats.totals.receipts}`).waitFor();
    await page.locator('.totals').getByText(`${stats.totals.gpc} of ${stats.totals.receipts}`).waitFor();
    expect(await page.getByText(/receipts so far/).count()).toBe(0);
    // The canvas really drew something (not a blank box).
    const inked = await page.locator('.chart canvas').first().evaluate((canvas: HTMLCanvasElement) => {
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
      return n;
    });
    expect(inked).toBeGreaterThan(1000);

    await select(page, 'Per').selectOption('week');
    await select(page, 'Version').selectOption({ label: 'Version 1' });
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('No receipt in this range.').waitFor(); // every receipt answered version 2
    await select(page, 'Version').selectOption({ label: 'Version 2' });
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('columnheader', { name: 'Week from' }).waitFor();
    expect(await total.locator('td').first().textContent()).toBe(String(receiptCount));
    expect(viewer.errors).toEqual([]);
    await viewer.close();
  });
});

describe('notifications', () => {
  it('lists the inbox with links to the screens, marks one and then all read', async () => {
    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    await openScreen(page, serviceUrl, '/notifications', 'Notifications');
    const unread = (await api(t.owner, 'GET', '/api/platform/notifications')).body.unreadCount;
    expect(unread).toBeGreaterThan(1);
    const main = page.locator('main');
    await main.getByText(`${unread} unread`).waitFor();
    // The header's badge counts the same and follows every mark.
    const badge = page.getByTestId('unread-badge').locator('[aria-hidden="true"]');
    await expect.poll(() => badge.textContent()).toBe(String(unread));
    // The version notification leads to the versions screen.
    const versionLink = page.getByRole('link', { name: /Version 2 .*published|published.*2/i }).first();
    expect(await versionLink.getAttribute('href')).toBe(`/console${projectPath('versions')}`);
    await page.getByRole('button', { name: /^Mark as read/ }).first().click();
    await main.getByText(`${unread - 1} unread`).waitFor();
    await expect.poll(() => badge.textContent()).toBe(String(unread - 1));
    await page.getByRole('button', { name: 'Mark all as read' }).click();
    await expect.poll(async () => (await api(t.owner, 'GET', '/api/platform/notifications')).body.unreadCount).toBe(0);
    await expect.poll(() => page.getByRole('button', { name: /^Mark as read/ }).count()).toBe(0);
    await expect.poll(() => page.getByTestId('unread-badge').count()).toBe(0);
    expect(owner.errors).toEqual([]);
    await owner.close();
  });
});

describe('billing', () => {
  it('the Owner starts a trial, opens the checkout, and cancels after confirming; a Viewer only reads', async () => {
    const viewer = await signedIn(browser, serviceUrl, t.viewer);
    await openScreen(viewer.page, serviceUrl, orgPath('billing'), 'Billing');
    await viewer.page.getByText('Only Owners start trials, subscribe or cancel.').waitFor();
    expect(await viewer.page.getByRole('button').filter({ hasText: /trial|Subscribe|Cancel/ }).count()).toBe(0);
    await viewer.close();

    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    await openScreen(page, serviceUrl, orgPath('billing'), 'Billing');
    await page.getByText('No subscription: the organization is on the free plan.').waitFor();
    await page.getByRole('button', { name: 'Start 14-day trial of Starter' }).click();
    await page.getByText(/Trial of Starter until/).waitFor();
    await page.getByRole('button', { name: 'Cancel subscription' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel subscription' }).click();
    await page.getByText(/then back to Free/).waitFor();
    await screenshots(page, 'billing-trial-canceled');
    await page.getByRole('button', { name: 'Subscribe monthly to Growth' }).click();
    await page.waitForURL(/\/billing\/mock-checkout\//);
    await page.getByRole('button', { name: 'Pay' }).click();
    await expect.poll(async () => (await api(t.owner, 'GET', `/api/platform/orgs/${t.org.id}/billing`)).body.plan.id, { timeout: 15_000 }).toBe('growth');
    await openScreen(page, serviceUrl, orgPath('billing'), 'Billing');
    await page.getByText(/Active, billed every month/).waitFor();
    expect(owner.errors).toEqual([]);
    await owner.close();
  });
});

describe('members', () => {
  it('the Owner invites a member who accepts, changes a role, meets the last-Owner rule in words, and removes a member', async () => {
    const newcomer = await operator(server, 'Newcomer');
    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    await openScreen(page, serviceUrl, orgPath('members'), 'Members');
    const addForm = page.getByRole('form', { name: 'Invite a member' });
    await addForm.getByLabel(/^E-mail/).fill('nobody-registered@example.com');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'The invitation could not be sent' }).waitFor();
    await addForm.getByLabel(/^E-mail/).fill(newcomer.email);
    await addForm.getByRole('combobox').selectOption('ADMIN');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await page.getByText(`${newcomer.email} is invited as Admin: they become a member when they accept.`).waitFor();
    // Pending, not a member: listed under Pending invitations only.
    await page.getByRole('table', { name: 'Pending invitations' }).getByRole('cell', { name: newcomer.email, exact: true }).waitFor();
    expect(await server.services.db.query('SELECT 1 FROM memberships WHERE user_id = $1', [newcomer.id])).toEqual([]);

    // The invitee accepts above their inbox.
    const invitee = await signedIn(browser, serviceUrl, newcomer);
    await openScreen(invitee.page, serviceUrl, '/notifications', 'Notifications');
    await invitee.page.getByRole('button', { name: `Accept the invitation to ${t.org.name}` }).click();
    await invitee.page.getByText(`You are now a member of ${t.org.name}.`).waitFor();
    expect(invitee.errors).toEqual([]);
    await invitee.close();

    await page.reload();
    await page.getByRole('table', { name: 'Members' }).getByRole('cell', { name: newcomer.email, exact: true }).waitFor();
    await page.getByLabel('Role of Newcomer').selectOption('VIEWER');
    await page.getByRole('button', { name: 'Save role of Newcomer' }).click();
    await expect.poll(async () => (await server.services.db.query<{ role: string }>('SELECT role FROM memberships WHERE user_id = $1', [newcomer.id]))[0]?.role).toBe('VIEWER');

    // The only Owner steps down: refused, in the API's words.
    await page.getByLabel('Role of Owner').selectOption('ADMIN');
    await page.getByRole('button', { name: 'Save role of Owner' }).click();
    await page.getByRole('alert').getByText('An organization keeps at least one OWNER: make another member OWNER first').waitFor();
    expect(await page.getByLabel('Role of Owner').inputValue()).toBe('OWNER');
    await screenshots(page, 'members-last-owner');

    await page.getByRole('button', { name: 'Remove Newcomer' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove member' }).click();
    await page.getByRole('cell', { name: newcomer.email }).waitFor({ state: 'detached' });
    expect(owner.errors).toEqual([]);
    await owner.close();
  });

  it('an Admin reads the members without any control to change them', async () => {
    const admin = await signedIn(browser, serviceUrl, t.admin);
    await openScreen(admin.page, serviceUrl, orgPath('members'), 'Members');
    await admin.page.getByRole('cell', { name: t.viewer.email }).waitFor();
    expect(await enabledControls(admin.page)).toEqual([]);
    await admin.close();
  });
});

describe('audit log', () => {
  it('filters by action and project, pages, and exports the filtered CSV', async () => {
    const admin = await signedIn(browser, serviceUrl, t.admin);
    const { page } = admin;
    await openScreen(page, serviceUrl, orgPath('audit'), 'Audit log');
    await select(page, 'Action').selectOption('api_key.revoked');
    await page.getByRole('button', { name: 'Apply' }).click();
    // The unfiltered rows stay until the filtered answer replaces them: wait for that answer, not for any row.
    const actionCells = page.locator('tbody tr td[data-action]');
    await expect.poll(async () => new Set(await actionCells.evaluateAll((cells) => cells.map((c) => c.getAttribute('data-action'))))).toEqual(new Set(['api_key.revoked']));
    const actions = await actionCells.allTextContents();
    expect(actions.length).toBeGreaterThan(0);
    // In words, and the key by its name and prefix instead of an id.
    expect(actions.every((text) => text.startsWith('Revoked a publishable key'))).toBe(true);
    await page.locator('tbody').getByText(/^key “Old theme” \(pk_live_[A-Za-z0-9]{6}…\)$/).waitFor();
    expect(await select(page, 'Action').locator('option:checked').textContent()).toBe('Revoked a publishable key');
    await page.locator('tbody tr').first().locator('summary').click();
    await page.locator('tbody tr').first().locator('.changes').getByText('(none)').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    const lines = (await downloadedText(download)).trim().split('\n');
    expect(lines[0]).toContain('actorEmail');
    expect(lines.length - 1).toBe(actions.length);
    await select(page, 'Project').selectOption({ label: 'Shop' });
    await select(page, 'Action').selectOption('consent.published');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(2);
    expect(admin.errors).toEqual([]);
    await admin.close();
  });
});

describe('a Viewer', () => {
  // Controls a Viewer may use: they read, filter, page, download or leave. Anything else enabled is a bug.
  const READ_ONLY = [
    /^button\[(button|submit)\]: (Refresh|Previous|Next|Apply|Clear|Show|Try again|Download export|Download CSV|Mark as read: .*|Mark all as read)$/,
    /^button\[button\]: (JSON|HTML|CSV) evidence of version \d+$/,
    // Filters of the lists and the export's format.
    /^input\[date\]: (From|To) \(UTC day/,
    /^input\[text\]: Installation$/,
    /^select\[select-one\]: (Show|Product|Export format|Per|Version|Platform)$/,
    // console-core's: copy a snippet, switch the editor's tabs and the preview's view.
    /^button\[button\]: (Copy(: .+)?|Purposes and notice|Experience|Banner|Preferences)$/,
    // The install screen's tabs (issue 45): which snippet is shown.
    /^button\[button\]: (Website|App \(React Native\))$/,
    /^select\[select-one\]: Preview language$/,
  ];

  it('finds on every screen, console-core’s too, no enabled control it may not use, and clicking each meets no 403', async () => {
    const viewer = await signedIn(browser, serviceUrl, t.viewer);
    const { page } = viewer;
    const screens = [
      { path: `/orgs/${t.org.id}`, heading: /.+/ },
      { path: `/orgs/${t.org.id}/projects/${t.project.id}`, heading: /.+/ },
      { path: projectPath('consent'), heading: /.+/ },
      ...SCREENS().filter((s) => s.name !== 'members' && s.name !== 'audit'),
    ];
    const offending: string[] = [];
    for (const screen of screens) {
      await openScreen(page, serviceUrl, screen.path, screen.heading);
      const controls = await enabledControls(page);
      for (const control of controls) if (!READ_ONLY.some((allowed) => allowed.test(control))) offending.push(`${screen.path}: ${control}`);
      // Press every enabled button (downloads and paging included): none may be refused.
      // By label and occurrence, read once: a click can add or remove buttons, which would shift an index.
      const buttons = page.locator('main button:enabled');
      const labels = (await buttons.allTextContents()).map((text) => text.trim());
      const seen = new Map<string, number>();
      for (const label of labels) {
        const occurrence = seen.get(label) ?? 0;
        seen.set(label, occurrence + 1);
        const exact = new RegExp(`^\\s*${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
        const button = (label ? buttons.filter({ hasText: exact }) : buttons.filter({ hasNotText: /\S/ })).nth(occurrence);
        if (!(await button.count()) || !(await button.isVisible())) continue;
        // The label read above decides, not the button's text now: a button can vanish at any moment (marking one
        // read removes it once the answer lands), and reading a gone button waits out the whole test timeout.
        if (/evidence|Download/.test(label)) {
          await Promise.all([page.waitForEvent('download'), button.click()]);
        } else {
          await button.click({ timeout: 5_000 }).catch(async (error: unknown) => {
            if (await button.count()) throw error;
          });
        }
        await page.waitForFunction(() => !document.querySelector('.state.loading'));
        if (!page.url().includes(screen.path.split('/').pop()!)) await openScreen(page, serviceUrl, screen.path, screen.heading);
      }
    }
    expect(offending).toEqual([]);
    expect(viewer.forbidden).toEqual([]);
    // Members and the audit log are not in a Viewer's navigation, and their addresses say "Not found".
    const nav = await page.getByRole('navigation', { name: 'Console' }).textContent();
    expect(nav).not.toMatch(/Members|Audit log/);
    await openScreen(page, serviceUrl, orgPath('audit'), 'Not found');
    expect(viewer.forbidden).toEqual([]);
    expect(viewer.errors).toEqual([]);
    await viewer.close();
  }, 240_000);

  it('sees the read-only screens as they are (screenshots)', async () => {
    const viewer = await signedIn(browser, serviceUrl, t.viewer);
    for (const screen of SCREENS().filter((s) => ['keys', 'origins', 'webhook', 'billing'].includes(s.name))) {
      await openScreen(viewer.page, serviceUrl, screen.path, screen.heading);
      if (screen.name === 'webhook') await settle(viewer.page, 'Webhook');
      await screenshots(viewer.page, `${screen.name}-viewer`);
    }
    await viewer.close();
  });
});
