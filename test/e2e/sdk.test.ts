// The browser SDK in real headless Chromium, against the running service, on a customer's page served from
// another origin. Each test gets a fresh browser context (empty storage and HTTP cache) and its own project.
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { launchChromium, NOTICE, sampleDraft, setupProject, startService, startSite, type Site } from './harness.js';

const ARTIFACTS = 'test-artifacts/sdk';

let server: TestServer;
let serviceUrl: string;
let site: Site;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Uncaught exceptions and console errors of the page: the SDK must never cause any. */
let pageErrors: string[];

beforeAll(async () => {
  browser = await launchChromium();
  ({ server, serviceUrl } = await startService());
  site = await startSite(serviceUrl);
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});

async function newPage(ctx: BrowserContext): Promise<Page> {
  const p = await ctx.newPage();
  p.on('pageerror', (err) => pageErrors.push(String(err)));
  p.on('console', (msg) => msg.type() === 'error' && !/Failed to load resource/.test(msg.text()) && pageErrors.push(msg.text()));
  return p;
}

beforeEach(async () => {
  pageErrors = [];
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await newPage(context);
});
afterEach(async () => {
  await context?.close();
});

const hook = (name: string) => `#consent-sdk-root [data-consent="${name}"]`;
const purpose = (key: string) => `#consent-sdk-root [data-purpose="${key}"]`;

/** Waits for init to settle; 'ready' or 'rejected:<code>'. */
async function settled(p: Page = page): Promise<string> {
  return (await p.waitForFunction(() => (window as any).sdkSettled)).jsonValue();
}
const hasConsent = (key: string, p: Page = page) => p.evaluate((k) => (window as any).consent.hasConsent(k), key);
const getConsent = (p: Page = page) => p.evaluate(() => (window as any).consent.getConsent());
const events = (p: Page = page) => p.evaluate(() => (window as any).sdkEvents);

/** What has keyboard focus: the data-consent / data-purpose hook inside the SDK, else the page element's id. */
function focused(p: Page = page): Promise<string> {
  return p.evaluate(() => {
    const host = document.getElementById('consent-sdk-root');
    const el = (document.activeElement === host ? host!.shadowRoot!.activeElement : document.activeElement) as HTMLElement | null;
    if (!el) return 'none';
    return el.dataset.consent ?? (el.dataset.purpose ? `purpose:${el.dataset.purpose}` : el.id || el.tagName.toLowerCase());
  });
}

/** Counts the receipts the page posts from now on. */
function countPosts(p: Page = page) {
  const posts: string[] = [];
  p.on('request', (req) => req.method() === 'POST' && req.url().endsWith('/api/sdk/v1/consent') && posts.push(req.url()));
  return posts;
}

describe('first visit, decision, return visit', () => {
  it('shows the banner, records Accept all as one receipt, and applies it on the next load without asking again', async () => {
    const project = await setupProject(server, [site.origin]);
    const posts = countPosts();
    await page.goto(site.page(project.key));
    expect(await settled()).toBe('ready');
    await expect.poll(() => page.locator(hook('banner')).isVisible()).toBe(true);
    expect(await page.locator(hook('banner')).textContent()).toContain(NOTICE.title);
    expect(await getConsent()).toEqual({
      choices: { necessary: false, analytics: false, ads: false },
      consentHash: project.version.consentHash,
      versionNumber: 1,
      needsConsent: true,
    });
    expect(await hasConsent('necessary')).toBe(false);

    await page.locator(hook('accept-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    expect(posts).toHaveLength(1);
    const receipts = await project.receipts();
    expect(receipts).toHaveLength(1);
    const installationId = await page.evaluate(() => localStorage.getItem('consent:installationId'));
    expect(receipts[0]).toMatchObject({
      versionNumber: 1,
      consentHash: project.version.consentHash,
      choices: { necessary: true, analytics: true, ads: true },
      installationId,
      sdkVersion: '1.0.0',
    });
    expect(installationId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const stored = JSON.parse((await page.evaluate((id) => localStorage.getItem(`consent:${id}`), project.projectId))!);
    expect(stored).toMatchObject({ consentHash: project.version.consentHash, versionNumber: 1, choices: { necessary: true, analytics: true, ads: true } });
    for (const key of ['necessary', 'analytics', 'ads']) expect(await hasConsent(key)).toBe(true);
    expect(await hasConsent('unknown_purpose')).toBe(false);

    await page.reload();
    expect(await settled()).toBe('ready');
    expect(await page.locator('#consent-sdk-root').count()).toBe(1);
    expect(await page.locator(hook('banner')).count()).toBe(0);
    expect(await events()).toEqual([{ type: 'ready', analytics: true, state: expect.objectContaining({ needsConsent: false }) }]);
    expect(await hasConsent('analytics')).toBe(true);
    // Nothing is re-posted after ready without a visitor action.
    await page.waitForTimeout(300);
    expect(posts).toHaveLength(1);
    expect(await project.receipts()).toHaveLength(1);
    expect(pageErrors).toEqual([]);
  });

  it('records Reject all with only the required purposes granted', async () => {
    const project = await setupProject(server, [site.origin]);
    await page.goto(site.page(project.key));
    await page.locator(hook('reject-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    const [receipt] = await project.receipts();
    expect(receipt!.choices).toEqual({ necessary: true, analytics: false, ads: false });
    expect(await getConsent()).toMatchObject({ choices: { necessary: true, analytics: false, ads: false }, needsConsent: false });
  });

  it('saves per-purpose choices from the dialog, where required purposes are on and cannot be turned off', async () => {
    const project = await setupProject(server, [site.origin]);
    await page.goto(site.page(project.key));
    await page.locator(hook('manage')).click();
    const dialog = page.locator(hook('dialog'));
    await dialog.waitFor();
    expect(await page.locator(hook('banner')).count()).toBe(0);
    expect(await dialog.getAttribute('role')).toBe('dialog');
    expect(await dialog.getAttribute('aria-modal')).toBe('true');
    expect(await page.locator(purpose('necessary')).isChecked()).toBe(true);
    expect(await page.locator(purpose('necessary')).isDisabled()).toBe(true);
    expect(await dialog.textContent()).toContain('Always on');
    expect(await page.locator(purpose('analytics')).isChecked()).toBe(false);
    expect(await page.locator(purpose('ads')).isChecked()).toBe(false);
    // Labels come from the notice and the purposes; the checkbox is named by its purpose.
    expect(await page.getByRole('checkbox', { name: /Analytics/ }).count()).toBe(1);
    expect(await page.getByRole('dialog', { name: NOTICE.title }).count()).toBe(1);

    await page.locator(purpose('analytics')).check();
    await page.locator(hook('save')).click();
    await dialog.waitFor({ state: 'detached' });
    const [receipt] = await project.receipts();
    expect(receipt!.choices).toEqual({ necessary: true, analytics: true, ads: false });
    expect(await hasConsent('analytics')).toBe(true);
    expect(await hasConsent('ads')).toBe(false);
    expect(await page.locator(hook('banner')).count()).toBe(0);

    // showPreferences reopens the dialog with the stored choices.
    await page.evaluate(() => (window as any).consent.showPreferences());
    expect(await page.locator(purpose('analytics')).isChecked()).toBe(true);
    expect(await page.locator(purpose('ads')).isChecked()).toBe(false);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await project.receipts()).toHaveLength(1);
  });

  it('works the same from the ES module build', async () => {
    const project = await setupProject(server, [site.origin]);
    await page.goto(site.page(project.key, { module: true }));
    expect(await settled()).toBe('ready');
    await page.locator(hook('accept-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    expect(await hasConsent('ads')).toBe(true);
    expect(await project.receipts()).toHaveLength(1);
  });
});

describe('a new publish', () => {
  /** The visitor comes back later: same local storage, empty HTTP cache (the config may be cached for 60 s). */
  async function comeBack(): Promise<Page> {
    const state = await context.storageState();
    await context.close();
    context = await browser.newContext({ storageState: state });
    return newPage(context);
  }

  it('asks again when consentHash changed, and not when only branding changed', async () => {
    const project = await setupProject(server, [site.origin]);
    await page.goto(site.page(project.key));
    await page.locator(hook('accept-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });

    const branding = sampleDraft();
    branding.notice = { ...branding.notice, acceptLabel: 'Allow everything', primaryColor: '#7a1f5c' };
    branding.purposes.reverse().forEach((p, i) => (p.sortOrder = i));
    const v2 = await project.publish(branding);
    expect(v2.consentHash).toBe(project.version.consentHash);
    expect(v2.contentHash).not.toBe(project.version.contentHash);
    page = await comeBack();
    await page.goto(site.page(project.key));
    expect(await settled()).toBe('ready');
    expect(await getConsent()).toMatchObject({ versionNumber: 2, needsConsent: false, choices: { analytics: true } });
    expect(await page.locator(hook('banner')).count()).toBe(0);

    const surface = sampleDraft();
    surface.purposes[1]!.description = 'Counts visits and measures how long pages take to load.';
    const v3 = await project.publish(surface);
    expect(v3.consentHash).not.toBe(project.version.consentHash);
    page = await comeBack();
    await page.goto(site.page(project.key));
    expect(await settled()).toBe('ready');
    await page.locator(hook('banner')).waitFor();
    expect(await getConsent()).toEqual({ choices: { necessary: false, analytics: false, ads: false }, consentHash: v3.consentHash, versionNumber: 3, needsConsent: true });
    expect(await hasConsent('analytics')).toBe(false);
    await page.locator(hook('reject-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    const receipts = await project.receipts();
    expect(receipts.map((r) => [r.versionNumber, r.choices.analytics])).toEqual([
      [3, false],
      [1, true],
    ]);
  });
});

describe('errors', () => {
  it('reports origin_not_allowed through onError when the page origin is not allowed, and shows nothing', async () => {
    const project = await setupProject(server, ['https://other-shop.example']);
    await page.goto(site.page(project.key));
    expect(await settled()).toBe('rejected:origin_not_allowed');
    expect(await events()).toEqual([{ type: 'error', code: 'origin_not_allowed', status: 403 }]);
    expect(await page.locator('#consent-sdk-root').count()).toBe(0);
    expect(await project.receipts()).toHaveLength(0);
    expect(pageErrors).toEqual([]);
  });

  it('reports invalid_key for an unknown key', async () => {
    await page.goto(site.page(`pk_live_${'Z'.repeat(32)}`));
    expect(await settled()).toBe('rejected:invalid_key');
    expect(await events()).toEqual([{ type: 'error', code: 'invalid_key', status: 401 }]);
    expect(pageErrors).toEqual([]);
  });

  it('keeps the stored decision and grants nothing when a receipt cannot be sent', async () => {
    const project = await setupProject(server, [site.origin]);
    await page.goto(site.page(project.key));
    await page.locator(hook('reject-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    const before = await page.evaluate((id) => localStorage.getItem(`consent:${id}`), project.projectId);

    await page.route('**/api/sdk/v1/consent', (route) => route.abort('internetdisconnected'));
    await page.evaluate(() => (window as any).consent.showPreferences());
    await page.locator(hook('accept-all')).click();
    await expect.poll(() => page.locator('#consent-sdk-root [role="alert"]').textContent()).toContain('could not be saved');
    expect(await page.locator(hook('dialog')).isVisible()).toBe(true);
    expect((await events()).filter((e: { type: string }) => e.type === 'error')).toEqual([{ type: 'error', code: 'network_error', status: 0 }]);
    expect(await page.evaluate((id) => localStorage.getItem(`consent:${id}`), project.projectId)).toBe(before);
    expect(await hasConsent('analytics')).toBe(false);
    expect(await project.receipts()).toHaveLength(1);

    // Back online, the same dialog records the choice.
    await page.unroute('**/api/sdk/v1/consent');
    await page.locator(hook('accept-all')).click();
    await page.locator(hook('dialog')).waitFor({ state: 'detached' });
    expect(await hasConsent('analytics')).toBe(true);
    expect(await project.receipts()).toHaveLength(2);
    expect(pageErrors).toEqual([]);
  });
});

describe('keyboard only', () => {
  it('reaches the banner with Tab, opens the dialog, traps focus in it, toggles with Space, closes with Escape, saves with Enter', async () => {
    const project = await setupProject(server, [site.origin]);
    await page.goto(site.page(project.key));
    expect(await settled()).toBe('ready');

    // Tab through the page: the banner's buttons come after the page's own controls.
    const seen: string[] = [];
    for (let i = 0; i < 8 && !seen.includes('accept-all'); i++) {
      await page.keyboard.press('Tab');
      seen.push(await focused());
    }
    expect(seen).toEqual(['home', 'a', 'page-button', 'reject-all', 'manage', 'accept-all']);
    // The focus ring is visible on keyboard focus.
    const outline = await page.evaluate(() => {
      const el = document.getElementById('consent-sdk-root')!.shadowRoot!.activeElement!;
      const style = getComputedStyle(el);
      return { style: style.outlineStyle, width: parseFloat(style.outlineWidth) };
    });
    expect(outline.style).not.toBe('none');
    expect(outline.width).toBeGreaterThanOrEqual(2);

    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('manage');
    await page.keyboard.press('Enter');
    await page.locator(hook('dialog')).waitFor();
    expect(await focused()).toBe('dialog');

    // Tab cycles inside the dialog: close, the optional toggles, the three buttons, then close again.
    const cycle: string[] = [];
    for (let i = 0; i < 7; i++) {
      await page.keyboard.press('Tab');
      cycle.push(await focused());
    }
    expect(cycle).toEqual(['close', 'purpose:analytics', 'purpose:ads', 'reject-all', 'accept-all', 'save', 'close']);
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('save');

    // Escape closes without deciding; the banner is back and focus returns to Manage.
    await page.keyboard.press('Escape');
    await page.locator(hook('dialog')).waitFor({ state: 'detached' });
    await page.locator(hook('banner')).waitFor();
    expect(await focused()).toBe('manage');
    expect(await project.receipts()).toHaveLength(0);

    await page.keyboard.press('Space');
    await page.locator(hook('dialog')).waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('purpose:analytics');
    await page.keyboard.press('Space');
    expect(await page.locator(purpose('analytics')).isChecked()).toBe(true);
    for (let i = 0; i < 4; i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('save');
    await page.keyboard.press('Enter');
    await page.locator(hook('dialog')).waitFor({ state: 'detached' });
    const [receipt] = await project.receipts();
    expect(receipt!.choices).toEqual({ necessary: true, analytics: true, ads: false });
    expect(pageErrors).toEqual([]);
  });
});

describe('Global Privacy Control', () => {
  it('keeps optional purposes off before anything can read consent, says so, and posts nothing by itself', async () => {
    await context.addInitScript(() => Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true, configurable: true }));
    const project = await setupProject(server, [site.origin]);
    const posts = countPosts();
    await page.goto(site.page(project.key));
    expect(await settled()).toBe('ready');
    const [ready] = await events();
    expect(ready).toEqual({ type: 'ready', analytics: false, state: expect.objectContaining({ choices: { necessary: false, analytics: false, ads: false }, needsConsent: true }) });
    const gpcLine = "Your browser's Global Privacy Control signal was honoured";
    expect(await page.locator(hook('banner')).textContent()).toContain(gpcLine);
    await page.locator(hook('manage')).click();
    expect(await page.locator(hook('dialog')).textContent()).toContain(gpcLine);
    expect(await page.locator(purpose('analytics')).isChecked()).toBe(false);
    expect(await page.locator(purpose('ads')).isChecked()).toBe(false);
    await page.waitForTimeout(300);
    expect(posts).toHaveLength(0);

    // The visitor's own explicit choice is recorded and applies.
    await page.locator(purpose('ads')).check();
    await page.locator(hook('save')).click();
    await page.locator(hook('dialog')).waitFor({ state: 'detached' });
    expect((await project.receipts())[0]!.choices).toEqual({ necessary: true, analytics: false, ads: true });
    expect(await hasConsent('ads')).toBe(true);
    expect(await hasConsent('analytics')).toBe(false);
  });
});

describe('blocked storage', () => {
  it('fails closed when localStorage throws: init resolves, nothing is granted, the banner works for the page life', async () => {
    await context.addInitScript(() => {
      Object.defineProperty(window, 'localStorage', {
        get() {
          throw new DOMException('The operation is insecure.', 'SecurityError');
        },
      });
    });
    const project = await setupProject(server, [site.origin]);
    await page.goto(site.page(project.key));
    expect(await settled()).toBe('ready');
    await page.locator(hook('banner')).waitFor();
    expect(await hasConsent('analytics')).toBe(false);
    await page.locator(hook('accept-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    expect(await hasConsent('analytics')).toBe(true);
    const [receipt] = await project.receipts();
    expect(receipt!.installationId).toMatch(/^[A-Za-z0-9_-]{22}$/);

    // Nothing could be stored: the next page load asks again.
    await page.reload();
    expect(await settled()).toBe('ready');
    await page.locator(hook('banner')).waitFor();
    expect(await hasConsent('analytics')).toBe(false);
    expect(pageErrors).toEqual([]);
  });

  it('fails closed when writing throws (quota exceeded), and keeps one installation id for the page life', async () => {
    await context.addInitScript(() => {
      Storage.prototype.setItem = () => {
        throw new DOMException('Quota exceeded', 'QuotaExceededError');
      };
    });
    const project = await setupProject(server, [site.origin]);
    await page.goto(site.page(project.key));
    expect(await settled()).toBe('ready');
    await page.locator(hook('reject-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    await page.evaluate(() => (window as any).consent.showPreferences());
    await page.locator(hook('accept-all')).click();
    await page.locator(hook('dialog')).waitFor({ state: 'detached' });
    expect(await hasConsent('ads')).toBe(true);
    const receipts = await project.receipts();
    expect(receipts).toHaveLength(2);
    expect(receipts[0]!.installationId).toBe(receipts[1]!.installationId);
    expect(pageErrors).toEqual([]);
  });
});

describe('the hosted preferences page', () => {
  it('opens the preferences dialog for the key, and saving records a receipt', async () => {
    const project = await setupProject(server); // its own origin needs no allowlist entry
    await page.goto(`${serviceUrl}/preferences?key=${project.key}`);
    const dialog = page.locator(hook('dialog'));
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain(NOTICE.title);
    expect(await focused()).toBe('dialog');
    await page.locator(purpose('ads')).check();
    await page.locator(hook('save')).click();
    await dialog.waitFor({ state: 'detached' });
    const [receipt] = await project.receipts();
    expect(receipt!.choices).toEqual({ necessary: true, analytics: false, ads: true });
    expect(pageErrors).toEqual([]);
  });
});

describe('layout and looks', () => {
  it('is isolated from the page CSS, leaks none, and does not move the page content', async () => {
    const project = await setupProject(server, [site.origin]);
    // Where the page's content sits before the SDK script runs at all.
    const withoutSdk = await browser.newPage();
    await withoutSdk.route('**/sdk/v1/consent.js', (route) => route.abort());
    await withoutSdk.goto(site.page(project.key, { hostileCss: true }));
    const boxBefore = await withoutSdk.locator('#content').boundingBox();
    const pageButtonBefore = await withoutSdk.locator('#page-button').evaluate((el) => getComputedStyle(el).backgroundColor);
    await withoutSdk.close();

    await page.goto(site.page(project.key, { hostileCss: true }));
    await page.locator(hook('banner')).waitFor();
    expect(await page.locator('#content').boundingBox()).toEqual(boxBefore);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
    // The page's `button{background:#c00!important}` does not reach the SDK; primaryColor does.
    const accept = await page.locator(hook('accept-all')).evaluate((el) => {
      const s = getComputedStyle(el);
      return { background: s.backgroundColor, font: s.fontFamily };
    });
    expect(accept.background).toBe('rgb(31, 78, 121)');
    expect(accept.font).not.toContain('Georgia');
    expect(await page.locator(hook('banner')).locator('h2').isVisible()).toBe(true);
    // And the SDK's styles do not reach the page.
    expect(await page.locator('#page-button').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(pageButtonBefore);
  });

  for (const width of [1280, 375, 320]) {
    it(`fits a ${width} px wide viewport (screenshots in ${ARTIFACTS})`, async () => {
      const project = await setupProject(server, [site.origin]);
      await page.setViewportSize({ width, height: width > 400 ? 800 : 640 });
      await page.goto(site.page(project.key));
      const banner = page.locator(hook('banner'));
      await banner.waitFor();
      const fits = (selector: string) =>
        page.locator(selector).evaluate((el) => {
          const r = el.getBoundingClientRect();
          return r.left >= 0 && r.right <= innerWidth && el.scrollWidth <= el.clientWidth;
        });
      expect(await fits(hook('banner'))).toBe(true);
      await page.screenshot({ path: `${ARTIFACTS}/banner-${width}.png` });
      await page.locator(hook('manage')).click();
      await page.locator(hook('dialog')).waitFor();
      expect(await fits(hook('dialog'))).toBe(true);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: `${ARTIFACTS}/dialog-${width}.png` });
    });
  }
});
