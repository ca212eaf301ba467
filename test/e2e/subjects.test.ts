// One decision for a signed-in person (issue 47, docs/subjects.md) in real headless Chromium: two browser contexts
// are two devices of one person on the operator's site (SDK v2). The operator's backend signs subject tokens
// with jose, as docs/subjects.md shows; the page hands them to client.identify(token).
// Screenshots go to test-artifacts/subjects/.
import { mkdirSync } from 'node:fs';
import { SignJWT } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_IN_UI_STRINGS } from '../../src/consent/ui-strings.js';
import type { TestServer } from '../helpers/server.js';
import { setupProject, startService, type SiteProject } from './harness.js';
import { launchChromiumForSites, startSiteV2, type SiteV2 } from './site-v2.js';

const ARTIFACTS = 'test-artifacts/subjects';
const SCOPE = BUILT_IN_UI_STRINGS.en!.signedInScope;

let server: TestServer;
let serviceUrl: string;
let site: SiteV2;
let browser: Browser;
const contexts: BrowserContext[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  browser = await launchChromiumForSites();
  ({ server, serviceUrl } = await startService());
  site = await startSiteV2(serviceUrl);
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
  expect(pageErrors.splice(0)).toEqual([]);
});

/** A device: a browser context of its own (its own storage, so its own installation), with the site open. */
async function device(project: SiteProject): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  page.on('console', (msg) => msg.type() === 'error' && !/Failed to load resource/.test(msg.text()) && pageErrors.push(msg.text()));
  await open(page, project);
  return page;
}

async function open(page: Page, project: SiteProject) {
  await page.goto(site.page(project.key));
  await page.waitForFunction(() => (window as any).sdkSettled === 'ready');
}

const banner = (page: Page) => page.locator('#consent-sdk-root [data-consent="banner"]');
const choices = (page: Page) => page.evaluate(() => (window as any).consent.getConsent().choices as Record<string, boolean>);
const identify = (page: Page, token: string) => page.evaluate((t) => (window as any).consent.identify(t).then(() => 'ok', (e: { code: string }) => e.code), token);
const forget = (page: Page) => page.evaluate(() => (window as any).consent.forget());

async function subjectProject() {
  const project = await setupProject(server, [site.origin]);
  const made = await server.request('POST', `/api/platform/projects/${project.projectId}/subject-secret`, { token: project.ownerToken });
  expect(made.status, made.text).toBe(200);
  // The operator's backend, after the person signed in.
  const tokenFor = (sub: string) =>
    new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setAudience(project.projectId).setIssuedAt().setExpirationTime('1h')
      .sign(new TextEncoder().encode(made.body.secret));
  /** Waits until the service holds `count` receipts (the banner closes before the consent POST is acknowledged). */
  const receipts = async (count: number) => {
    await expect.poll(async () => (await project.receipts()).length, { timeout: 10_000 }).toBe(count);
    return project.receipts();
  };
  return { project, tokenFor, receipts };
}

describe('one decision for a signed-in person, across devices', () => {
  it('a second device adopts the person’s decision with no banner and no receipt; the banner says so; forget() unlinks', async () => {
    const { project, tokenFor, receipts } = await subjectProject();

    // Laptop: signs in, then rejects all. While signed in, the banner says the choice applies on their devices.
    const laptop = await device(project);
    await expect.poll(() => banner(laptop).isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await banner(laptop).textContent()).not.toContain(SCOPE);
    expect(await identify(laptop, await tokenFor('customer-1001'))).toBe('ok');
    await expect.poll(async () => (await banner(laptop).textContent()) ?? '', { timeout: 10_000 }).toContain(SCOPE);
    await laptop.screenshot({ path: `${ARTIFACTS}/laptop-signed-in-banner.png` });
    await laptop.locator('#consent-sdk-root [data-consent="reject-all"]').click();
    await expect.poll(() => banner(laptop).isVisible(), { timeout: 10_000 }).toBe(false);
    const [rejected] = await receipts(1);
    expect(rejected!.choices).toEqual({ necessary: true, analytics: false, ads: false });

    // Phone: not signed in, it asks; signed in, the person's decision applies at once, and nothing is recorded.
    const phone = await device(project);
    await expect.poll(() => banner(phone).isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await identify(phone, await tokenFor('customer-1001'))).toBe('ok');
    await expect.poll(() => banner(phone).isVisible(), { timeout: 10_000 }).toBe(false);
    expect(await choices(phone)).toEqual({ necessary: true, analytics: false, ads: false });
    expect(await phone.evaluate(() => (window as any).analyticsRan ?? 0)).toBe(0);
    expect(await project.receipts()).toHaveLength(1);
    // The next page load: no banner, and the preferences say the choice follows the person.
    await open(phone, project);
    expect(await banner(phone).isVisible()).toBe(false);
    await phone.locator('#settings').click();
    await expect.poll(async () => (await phone.locator('#consent-sdk-root [data-consent="dialog"]').textContent()) ?? '', { timeout: 10_000 }).toContain(SCOPE);
    await phone.screenshot({ path: `${ARTIFACTS}/phone-preferences.png` });
    await phone.keyboard.press('Escape');

    // The person changes their mind on the phone: the laptop follows at its next load.
    await phone.locator('#settings').click();
    await phone.locator('#consent-sdk-root [data-consent="accept-all"]').click();
    await receipts(2);
    await open(laptop, project);
    expect(await choices(laptop)).toEqual({ necessary: true, analytics: true, ads: true });
    expect(await banner(laptop).isVisible()).toBe(false);

    // Signed out, the phone keeps its own decision and no longer follows the person.
    await forget(phone);
    await laptop.locator('#settings').click();
    await laptop.locator('#consent-sdk-root [data-consent="reject-all"]').click();
    await receipts(3);
    await open(phone, project);
    expect(await choices(phone)).toEqual({ necessary: true, analytics: true, ads: true });
    await phone.locator('#settings').click();
    expect(await phone.locator('#consent-sdk-root [data-consent="dialog"]').textContent()).not.toContain(SCOPE);
  });

  it('after sign-in the newer of the device’s own decision and the person’s wins, and both receipts stay', async () => {
    const { project, tokenFor, receipts } = await subjectProject();
    const home = await device(project);
    expect(await identify(home, await tokenFor('customer-2002'))).toBe('ok');
    await home.locator('#consent-sdk-root [data-consent="reject-all"]').click();
    await receipts(1);

    // On the work computer, before signing in, the person accepts: that decision is newer.
    const work = await device(project);
    await work.locator('#consent-sdk-root [data-consent="accept-all"]').click();
    await receipts(2);
    expect(await identify(work, await tokenFor('customer-2002'))).toBe('ok');
    expect(await choices(work)).toEqual({ necessary: true, analytics: true, ads: true });
    await open(home, project);
    expect(await choices(home)).toEqual({ necessary: true, analytics: true, ads: true });
    expect((await receipts(2)).map((r) => r.choices.analytics).sort()).toEqual([false, true]);

    // A token the service refuses changes nothing on the device.
    const stranger = await device(project);
    expect(await identify(stranger, 'not-a-token')).toBe('invalid_subject_token');
    await expect.poll(() => banner(stranger).isVisible(), { timeout: 10_000 }).toBe(true);
  });
});
