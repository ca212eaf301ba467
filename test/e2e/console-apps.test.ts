// Issue 45 in the console, in headless Chromium against the real service: receipts show where they came from,
// analytics split decisions by platform, and the install screen and the new key's dialog have an "App (React
// Native)" tab with the provider snippet for the project's key. Screenshots at 1280 and 390 px in
// test-artifacts/console/apps-*.png; axe-core on each.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putDraft, publish, type Version } from '../helpers/consent.js';
import { team } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { launchChromium } from './harness.js';
import { axeViolations, openScreen, screenshots, signedIn, startConsoleService } from './console-screens-helpers.js';

let browser: Browser;
let server: TestServer;
let serviceUrl: string;
let t: Awaited<ReturnType<typeof team>>;
let version: Version;
let key: string;
let sent = 0;

const projectPath = (screen: string) => `/orgs/${t.org.id}/projects/${t.project.id}${screen ? `/${screen}` : ''}`;

async function receipt(choices: Record<string, boolean>, source?: object) {
  const res = await server.request('POST', '/api/sdk/v1/consent', {
    token: key,
    body: { versionId: version.id, consentHash: version.consentHash, choices, installationId: `inst-apps-${String(sent++).padStart(4, '0')}`, ...(source && { source }) },
  });
  expect(res.status, res.text).toBe(201);
}

const ios = { sdk: 'react-native', sdkVersion: '0.1.0', platform: 'ios', appId: 'com.example.shop', appVersion: '2.3.1 (456)' };
const android = { sdk: 'react-native', sdkVersion: '0.1.0', platform: 'android', appId: 'com.example.shop' };
const web = { sdk: 'browser', sdkVersion: '2.0.0', platform: 'web' };

beforeAll(async () => {
  browser = await launchChromium();
  ({ server, serviceUrl } = await startConsoleService());
  t = await team(server);
  await putDraft(server, t.owner, t.project.id);
  version = await publish(server, t.owner, t.project.id);
  key = (await server.request('POST', `/api/platform/projects/${t.project.id}/api-keys`, { token: t.owner.token, body: { name: 'Shop' } })).body.secret;
  // Two iOS receipts that reject, one Android that accepts, two from the web, one from an SDK that says nothing.
  await receipt({ analytics: false, ads: false }, ios);
  await receipt({ analytics: false, ads: false }, ios);
  await receipt({ analytics: true, ads: true }, android);
  await receipt({ analytics: true, ads: true }, web);
  await receipt({ analytics: true, ads: false }, web);
  await receipt({ analytics: true, ads: true });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
});

describe('the console and apps (issue 45)', () => {
  it('receipts show their source in words; an older SDK’s say it was not said', async () => {
    const viewer = await signedIn(browser, serviceUrl, t.viewer);
    const { page } = viewer;
    await openScreen(page, serviceUrl, projectPath('receipts'), 'Receipts');
    await page.getByRole('columnheader', { name: 'Source' }).waitFor();
    const sources = await page.locator('tbody tr').evaluateAll((rows) =>
      rows.map((row) => {
        const headers = [...row.closest('table')!.querySelectorAll('thead th')].map((th) => th.textContent);
        return row.querySelectorAll('td')[headers.indexOf('Source')]!.textContent;
      }),
    );
    // Newest first.
    expect(sources).toEqual([
      'Not said (older SDK)',
      'Web · Browser SDK 2.0.0',
      'Web · Browser SDK 2.0.0',
      'Android app com.example.shop · React Native SDK 0.1.0',
      'iOS app com.example.shop 2.3.1 (456) · React Native SDK 0.1.0',
      'iOS app com.example.shop 2.3.1 (456) · React Native SDK 0.1.0',
    ]);
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'apps-receipts');
    expect(viewer.errors).toEqual([]);
    await viewer.close();
  });

  it('analytics split receipts by platform and filter the decisions to one platform', async () => {
    const viewer = await signedIn(browser, serviceUrl, t.viewer);
    const { page } = viewer;
    await openScreen(page, serviceUrl, projectPath('analytics'), 'Analytics');
    const split = page.getByLabel('Receipts by platform');
    await split.waitFor();
    // Most first; a tie in the order the service lists them (code-unit order).
    expect(await split.textContent()).toBe(
      'By platform: iOS 33.3% (2) · Web 33.3% (2) · Android 16.7% (1) · Not said (older SDKs) 16.7% (1). Choose a platform above to see its decisions alone.',
    );
    const platform = page.locator('label').filter({ hasText: /^Platform/ }).locator('select');
    await platform.selectOption({ label: 'iOS' });
    await page.getByRole('button', { name: 'Show' }).click();
    // Only the two iOS receipts, both rejecting: every tile counts of 2.
    await page.locator('.totals').getByText('2 of 2').first().waitFor();
    await page.locator('.totals').getByText('0 of 2').first().waitFor();
    expect(await page.locator('tfoot tr td').first().textContent()).toBe('2');
    expect(await page.getByLabel('Receipts by platform').count()).toBe(0); // one platform: nothing to split
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'apps-analytics-ios');
    await platform.selectOption({ label: 'Android' });
    await page.getByRole('button', { name: 'Show' }).click();
    await page.locator('.totals').getByText('1 of 1').first().waitFor();
    expect(viewer.errors).toEqual([]);
    await viewer.close();
  });

  it('the install screen has an "App (React Native)" tab with the provider snippet; arrow keys move between the tabs', async () => {
    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    await openScreen(page, serviceUrl, projectPath(''), t.project.name);
    const tabs = page.getByRole('tablist', { name: 'Where the SDK runs' });
    const website = tabs.getByRole('tab', { name: 'Website' });
    const app = tabs.getByRole('tab', { name: 'App (React Native)' });
    expect(await website.getAttribute('aria-selected')).toBe('true');
    await page.getByLabel('App.tsx (React Native)', { exact: true }).waitFor({ state: 'hidden' });
    await website.focus();
    await page.keyboard.press('ArrowRight');
    expect(await app.getAttribute('aria-selected')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('App (React Native)');
    const snippet = (await page.getByLabel('App.tsx (React Native)', { exact: true }).textContent())!;
    expect(snippet).toContain("import { ConsentProvider, useConsent } from '@consent/react-native';");
    expect(snippet).toContain(`<ConsentProvider publicKey="PASTE_YOUR_PUBLISHABLE_KEY_HERE" apiBaseUrl="${serviceUrl}" storage={AsyncStorage}>`);
    expect(snippet).toContain('ConsentBanner');
    expect(await page.getByLabel('Install the packages', { exact: true }).textContent()).toBe(
      'npm install @consent/react-native @consent/core @react-native-async-storage/async-storage',
    );
    // The website's snippet is hidden now, and back with a click.
    await page.getByLabel('SDK v2 snippet (with a placeholder for the key)', { exact: true }).waitFor({ state: 'hidden' });
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'apps-install-tab');
    await website.click();
    await page.getByLabel('SDK v2 snippet (with a placeholder for the key)', { exact: true }).waitFor();
    expect(owner.errors).toEqual([]);
    await owner.close();
  });

  it('a new key’s dialog offers the app snippet filled in with the key', async () => {
    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    await openScreen(page, serviceUrl, projectPath('keys'), 'API keys');
    await page.getByLabel(/^Name/).fill('Shop app');
    await page.getByRole('button', { name: 'Create key' }).click();
    const created = page.getByRole('dialog', { name: 'Key “Shop app” created' });
    const secret = await created.getByRole('textbox', { name: 'Publishable key' }).inputValue();
    await created.getByRole('tab', { name: 'App (React Native)' }).click();
    const snippet = (await created.getByLabel('App.tsx (React Native)', { exact: true }).textContent())!;
    expect(snippet).toContain(`<ConsentProvider publicKey="${secret}" apiBaseUrl="${serviceUrl}" storage={AsyncStorage}>`);
    await created.getByRole('button', { name: 'Copy: App.tsx (React Native)' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(snippet);
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'apps-key-created');
    await created.getByRole('button', { name: 'I have stored it' }).click();
    expect(owner.errors).toEqual([]);
    await owner.close();
  });
});
