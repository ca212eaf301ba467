// SDK v2 in real headless Chromium against the running service, on a customer's page from another origin
// (http://www.acme.test:<port>, see site-v2.ts). Each test gets a fresh browser context and its own project.
// Screenshots (1280, 390 and 320 px wide) go to test-artifacts/sdk-v2/.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { setupProject, startService, type SiteProject } from './harness.js';
import { launchChromiumForSites, startSiteV2, type PageOptions, type SiteV2 } from './site-v2.js';

const ARTIFACTS = 'test-artifacts/sdk-v2';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let server: TestServer;
let serviceUrl: string;
let site: SiteV2;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let pageErrors: string[];

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

async function newContext(options: Parameters<Browser['newContext']>[0] = {}) {
  context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  page.on('console', (msg) => msg.type() === 'error' && !/Failed to load resource/.test(msg.text()) && pageErrors.push(msg.text()));
}
beforeEach(async () => {
  pageErrors = [];
  await newContext();
});
afterEach(async () => {
  await context?.close();
  expect(pageErrors).toEqual([]);
});

// --- The project's experience (extensions.md section 2) ---

const TRANSLATIONS = {
  de: {
    notice: { title: 'Wir respektieren Ihre Privatsphäre', description: 'Wir verwenden Cookies für den Shop und, mit Ihrer Einwilligung, für Statistik und Werbung.', acceptLabel: 'Alle akzeptieren', rejectLabel: 'Alle ablehnen', manageLabel: 'Einstellungen' },
    categories: { Essential: { name: 'Notwendig' }, Marketing: { name: 'Marketing' } },
    purposes: { necessary: { name: 'Notwendig', description: 'Hält Shop und Warenkorb am Laufen.' }, analytics: { name: 'Statistik', description: 'Zählt Besuche.' }, ads: { name: 'Werbung', description: 'Zeigt passende Werbung.' } },
  },
  ar: {
    notice: { title: 'نحن نحترم خصوصيتك', description: 'نستخدم ملفات تعريف الارتباط لتشغيل المتجر، وبموافقتك لقياس الزيارات وعرض الإعلانات.', acceptLabel: 'قبول الكل', rejectLabel: 'رفض الكل', manageLabel: 'إدارة الخيارات' },
    categories: { Essential: { name: 'أساسي' }, Marketing: { name: 'التسويق' } },
    purposes: { necessary: { name: 'ضروري', description: 'يحافظ على عمل المتجر.' }, analytics: { name: 'التحليلات', description: 'يحصي الزيارات.' }, ads: { name: 'الإعلانات', description: 'يعرض إعلانات مناسبة.' } },
  },
};

function experience(over: Record<string, unknown> = {}) {
  return {
    defaultLocale: 'en',
    translations: TRANSLATIONS,
    privacyPolicyUrl: 'https://www.acme.test/privacy',
    reconsentAfterDays: 30,
    gpc: { optOutPurposes: ['ads'] },
    googleConsentMode: {
      enabled: true,
      signals: { ad_storage: ['ads'], ad_user_data: ['ads'], ad_personalization: ['ads'], analytics_storage: ['analytics'], functionality_storage: [], personalization_storage: [], security_storage: [] },
    },
    cookies: { analytics: ['_ga', '_ga_*'], ads: ['_gcl_au'] },
    theme: { colorScheme: 'light' },
    ...over,
  };
}

/** Sets and publishes the project's experience through the operator API (translations name categories by name here). */
async function withExperience(project: SiteProject, x = experience()): Promise<void> {
  const base = `/api/platform/projects/${project.projectId}/consent`;
  const { draft } = (await server.request('GET', base, { token: project.ownerToken })).body;
  const idOf = new Map(draft.categories.map((c: { id: string; name: string }) => [c.name, c.id]));
  const translations = Object.fromEntries(
    Object.entries(x.translations).map(([locale, t]) => [locale, { ...t, categories: Object.fromEntries(Object.entries(t.categories).map(([name, c]) => [idOf.get(name), c])) }]),
  );
  const put = await server.request('PUT', `${base}/experience`, { token: project.ownerToken, body: { ...x, translations } });
  if (put.status !== 200) throw new Error(`PUT experience: ${put.status} ${put.text}`);
  const published = await server.request('POST', `${base}/publish`, { token: project.ownerToken });
  if (published.status !== 201) throw new Error(`publish: ${published.status} ${published.text}`);
}

// --- Page helpers ---

const hook = (name: string) => `#consent-sdk-root [data-consent="${name}"]`;
const purpose = (key: string) => `#consent-sdk-root [data-purpose="${key}"]`;

async function open(project: SiteProject, options: PageOptions = {}): Promise<void> {
  await page.goto(site.page(project.key, options));
  expect(await page.waitForFunction(() => (window as any).sdkSettled).then((h) => h.jsonValue())).toBe('ready');
}

const gtagLog = (): Promise<string[]> => page.evaluate(() => (window as any).gtagLog);
const ran = () => page.evaluate(() => (window as any).analyticsRan ?? 0);
const frameSrc = () => page.locator('#video').getAttribute('src');

/** Receipts the page posts: their JSON bodies, as the SDK sent them. */
function receiptsSent(): Record<string, unknown>[] {
  const sent: Record<string, unknown>[] = [];
  page.on('request', (req: Request) => req.method() === 'POST' && req.url().endsWith('/api/sdk/v1/consent') && sent.push(req.postDataJSON()));
  return sent;
}

/** The data-consent / data-purpose hook of what has keyboard focus, else the page element's id. */
function focused(): Promise<string> {
  return page.evaluate(() => {
    const host = document.getElementById('consent-sdk-root');
    const el = (document.activeElement === host ? host!.shadowRoot!.activeElement ?? host : document.activeElement) as HTMLElement | null;
    if (!el) return 'none';
    return el.dataset.consent ?? (el.dataset.purpose ? `purpose:${el.dataset.purpose}` : el.id || el.tagName.toLowerCase());
  });
}

async function screenshots(name: string) {
  // The banner slides in: shoot it where it comes to rest.
  await page.evaluate(() => Promise.all(document.getElementById('consent-sdk-root')!.shadowRoot!.getAnimations().map((a) => a.finished)));
  for (const width of [1280, 390, 320]) {
    await page.setViewportSize({ width, height: width > 400 ? 800 : 700 });
    await page.screenshot({ path: `${ARTIFACTS}/${name}-${width}.png` });
  }
}

/** axe-core, injected into the page, over the page and the SDK's open shadow root. */
async function axeViolations(): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const found = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n: any) => n.target.join(' ')).slice(0, 3) }));
  });
  return found.filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical').map((v: any) => `${v.id} (${v.impact}): ${v.nodes.join(', ')}`);
}

// --- Tests ---

describe('Google Consent Mode and blocked tags', () => {
  it('writes the default before the Google tag runs, runs the blocked script and iframe after Accept, then updates', async () => {
    const project = await setupProject(server, [site.origin]);
    await withExperience(project);
    const sent = receiptsSent();
    await open(project);
    // First visit: nothing stored yet, so the default comes at init, before any decision; nothing blocked ran.
    expect(await ran()).toBe(0);
    expect(await frameSrc()).toBeNull();
    await page.locator(hook('accept-all')).click();
    await expect.poll(ran).toBe(1);
    await expect.poll(frameSrc).toBe('/frame');
    await page.frameLocator('#video').locator('#video').waitFor();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ locale: 'en', gpc: false, sdkVersion: '2.0.0', source: { sdk: 'browser', sdkVersion: '2.0.0', platform: 'web' }, choices: { necessary: true, analytics: true, ads: true } });
    expect(await page.evaluate(() => (window as any).changes)).toEqual([{ necessary: true, analytics: true, ads: true }]);
    let log = await gtagLog();
    expect(log.slice(-2)).toEqual(['consent update analytics_storage=granted', 'event page_view analytics_storage=granted']);

    // Returning visitor: the default is written synchronously at script evaluation, before the page's Google
    // tag reads consent; the update follows at init; the blocked script runs once, after the update.
    await page.reload();
    await page.waitForFunction(() => (window as any).sdkSettled);
    await expect.poll(ran).toBe(1);
    log = await gtagLog();
    expect(log).toEqual([
      'consent default analytics_storage=denied',
      'config G-TEST analytics_storage=denied',
      'consent update analytics_storage=granted',
      'event page_view analytics_storage=granted',
    ]);

    // A script added after load runs too, at once since analytics is granted.
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.type = 'text/plain';
      s.dataset.consent = 'analytics';
      s.textContent = 'window.lateRan = true';
      document.body.append(s);
    });
    await expect.poll(() => page.evaluate(() => (window as any).lateRan)).toBe(true);
  });

  it('on a first visit, the script tag\'s data-google-consent-mode writes the default before the next tag runs', async () => {
    const project = await setupProject(server, [site.origin]);
    await withExperience(project);
    for (const value of ['', 'true']) {
      // A fresh context: nothing stored, the visitor's very first page.
      await context.close();
      await newContext();
      await open(project, { consentModeAttribute: value });
      expect((await gtagLog()).slice(0, 2)).toEqual(['consent default analytics_storage=denied', 'config G-TEST analytics_storage=denied']);
      const commands = await page.evaluate(() => (window as any).dataLayer.map((a: IArguments) => Array.from(a)).filter((a: unknown[]) => a[0] === 'consent'));
      expect(commands).toEqual([
        [
          'consent',
          'default',
          { ad_storage: 'denied', ad_user_data: 'denied', ad_personalization: 'denied', analytics_storage: 'denied', functionality_storage: 'denied', personalization_storage: 'denied', security_storage: 'granted', wait_for_update: 500 },
        ],
      ]);
      await page.locator(hook('accept-all')).click();
      await expect.poll(async () => (await gtagLog()).at(-1)).toBe('event page_view analytics_storage=granted');
    }
    // Without the attribute (or with another value) the first page's default waits for the configuration.
    for (const value of [undefined, 'false']) {
      await context.close();
      await newContext();
      await open(project, { consentModeAttribute: value });
      expect((await gtagLog()).slice(0, 2)).toEqual(['config G-TEST analytics_storage=undefined', 'consent default analytics_storage=denied']);
    }
  });

  it('the module form: init({ googleConsentMode: true }) writes the default before init returns, on a first visit', async () => {
    const project = await setupProject(server, [site.origin]);
    await withExperience(project);
    await open(project, { module: true, consentModeOption: true });
    expect(await page.evaluate(() => (window as any).consentAfterInit)).toEqual(['default']);
    // Once only: the configuration's own default is not written again.
    const kinds = await page.evaluate(() => (window as any).dataLayer.filter((a: IArguments) => a[0] === 'consent').map((a: IArguments) => a[1]));
    expect(kinds).toEqual(['default']);
  });

  it('after Reject all, no blocked script, iframe or late script runs, and Google signals stay denied', async () => {
    const project = await setupProject(server, [site.origin]);
    await withExperience(project);
    await open(project);
    await page.locator(hook('reject-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.type = 'text/plain';
      s.dataset.consent = 'analytics';
      s.textContent = 'window.lateRan = true';
      document.body.append(s);
    });
    await page.waitForTimeout(200);
    expect(await ran()).toBe(0);
    expect(await page.evaluate(() => (window as any).lateRan)).toBeUndefined();
    expect(await frameSrc()).toBeNull();
    expect((await gtagLog()).at(-1)).toBe('consent update analytics_storage=denied');
  });
});

describe('withdrawal, expiry and GPC', () => {
  it('removes the withdrawn purpose’s cookies on this host and the parent domain, and unloads its iframe', async () => {
    const project = await setupProject(server, [site.origin]);
    await withExperience(project);
    await open(project);
    await page.locator(hook('accept-all')).click();
    await expect.poll(frameSrc).toBe('/frame');
    await page.evaluate(() => {
      document.cookie = '_ga=GA1.1.1; path=/; domain=acme.test';
      document.cookie = '_ga_ABC123=GS1.1; path=/';
      document.cookie = '_gcl_au=1.1; path=/; domain=acme.test';
      document.cookie = 'basket=3; path=/';
    });
    await page.locator('#settings').click();
    await page.locator(purpose('analytics')).click();
    await page.locator(purpose('ads')).click();
    await page.locator(hook('save')).click();
    await page.locator(hook('dialog')).waitFor({ state: 'detached' });
    expect(await page.evaluate(() => document.cookie)).toBe('basket=3');
    expect((await context.cookies()).map((c) => c.name)).toEqual(['basket']);
    expect(await frameSrc()).toBe('about:blank');
    expect((await gtagLog()).at(-1)).toBe('consent update analytics_storage=denied');
  });

  it('asks again once reconsentAfterDays have passed (faked clock)', async () => {
    const project = await setupProject(server, [site.origin]);
    await withExperience(project); // 30 days
    await page.clock.install({ time: new Date() });
    await open(project);
    await page.locator(hook('accept-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    await page.clock.setSystemTime(Date.now() + 29 * 86_400_000);
    await open(project);
    expect(await page.locator(hook('banner')).count()).toBe(0);
    expect(await ran()).toBe(1);
    await page.clock.setSystemTime(Date.now() + 31 * 86_400_000);
    await open(project);
    await page.locator(hook('banner')).waitFor();
    expect(await ran()).toBe(0);
    expect(await page.evaluate(() => (window as any).consent.getConsent().needsConsent)).toBe(true);
  });

  it('under Global Privacy Control, denies the opt-out purposes even on Accept all and records gpc: true', async () => {
    await context.addInitScript(() => Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true }));
    const project = await setupProject(server, [site.origin]);
    await withExperience(project);
    const sent = receiptsSent();
    await open(project);
    expect(await page.locator(`${hook('banner')} .gpc`).count()).toBe(1);
    await page.locator(hook('accept-all')).click();
    await expect.poll(ran).toBe(1);
    expect(sent[0]).toMatchObject({ gpc: true, choices: { necessary: true, analytics: true, ads: false } });
    expect(await frameSrc()).toBeNull();
    const receipts = await project.receipts();
    expect(receipts[0]!.choices).toEqual({ necessary: true, analytics: true, ads: false });
    expect(receipts[0]).toMatchObject({ gpc: true, locale: 'en' });
  });
});

describe('languages, schemes and screenshots', () => {
  it('shows German from <html lang="de">, with the privacy policy link', async () => {
    const project = await setupProject(server, [site.origin]);
    await withExperience(project);
    const sent = receiptsSent();
    await open(project, { lang: 'de' });
    const banner = page.locator(hook('banner'));
    await expect.poll(() => banner.textContent()).toContain('Wir respektieren Ihre Privatsphäre');
    expect(await page.locator(hook('accept-all')).textContent()).toBe('Alle akzeptieren');
    expect(await page.locator(`${hook('banner')} a[part=link]`).getAttribute('href')).toBe('https://www.acme.test/privacy');
    await screenshots('banner-de');
    await page.locator(hook('manage')).click();
    expect(await page.locator(hook('save')).textContent()).toBe('Auswahl speichern');
    await screenshots('dialog-de');
    await page.locator(hook('save')).click();
    await expect.poll(() => sent.length).toBe(1);
    expect(sent[0]!.locale).toBe('de');
    await expect.poll(async () => (await project.receipts())[0]).toMatchObject({ locale: 'de', gpc: false });
  });

  it('shows Arabic right to left', async () => {
    const project = await setupProject(server, [site.origin]);
    await withExperience(project);
    await open(project, { lang: 'ar' });
    await page.locator(hook('banner')).waitFor();
    expect(await page.locator('#consent-sdk-root .w').getAttribute('dir')).toBe('rtl');
    expect(await page.locator(hook('banner')).evaluate((el) => getComputedStyle(el).direction)).toBe('rtl');
    expect(await page.locator(hook('accept-all')).textContent()).toBe('قبول الكل');
    await screenshots('banner-ar');
    await page.locator(hook('manage')).click();
    // The SDK's own words in Arabic too (built in; they were English before).
    expect(await page.locator(hook('save')).textContent()).toBe('حفظ الاختيارات');
    expect(await page.locator(hook('close')).getAttribute('aria-label')).toBe('إغلاق');
    expect(await page.locator(`${hook('dialog')} em`).textContent()).toBe(' · مفعّلة دائمًا');
    expect(await page.locator(`${hook('dialog')} [data-consent="privacy-policy"]`).textContent()).toBe('سياسة الخصوصية');
    // Not one Latin letter in the dialog but the company's name.
    const words = await page.locator(hook('dialog')).evaluate((el) => (el as HTMLElement).innerText.replace('Acme GmbH', ''));
    expect(words).not.toMatch(/[A-Za-z]/);
    await screenshots('dialog-ar');
    expect(await axeViolations()).toEqual([]);
  });

  it('draws the dark scheme, and auto follows the browser', async () => {
    const project = await setupProject(server, [site.origin]);
    await withExperience(project, experience({ theme: { colorScheme: 'dark', borderRadius: 12 } }));
    await open(project);
    const background = () => page.locator(hook('banner')).evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(await background()).toBe('rgb(29, 30, 33)');
    await screenshots('banner-dark');
    await page.locator(hook('manage')).click();
    await screenshots('dialog-dark');
    expect(await axeViolations()).toEqual([]);

    // A new context: the config URL does not name the key (it travels in Authorization) and the service sends
    // no `Vary: Authorization`, so this browser's HTTP cache would hand the first project's answer to the second.
    await context.close();
    await newContext({ colorScheme: 'dark' });
    const auto = await setupProject(server, [site.origin]);
    await withExperience(auto, experience({ theme: { colorScheme: 'auto' } }));
    await open(auto);
    expect(await background()).toBe('rgb(29, 30, 33)');
    await page.emulateMedia({ colorScheme: 'light' });
    await open(auto);
    expect(await background()).toBe('rgb(255, 255, 255)');
  });

  it('lets the page theme it with custom properties and ::part()', async () => {
    const project = await setupProject(server, [site.origin]);
    await withExperience(project);
    await open(project);
    await page.addStyleTag({ content: 'consent-sdk{--cs-bg:#fffbe6;--cs-radius:0px} consent-sdk::part(button){text-transform:uppercase}' });
    const banner = page.locator(hook('banner'));
    expect(await banner.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(255, 251, 230)');
    expect(await banner.evaluate((el) => getComputedStyle(el).borderRadius)).toBe('0px');
    expect(await page.locator(hook('accept-all')).evaluate((el) => getComputedStyle(el).textTransform)).toBe('uppercase');
    await screenshots('banner-en');
    await page.locator(hook('manage')).click();
    await screenshots('dialog-en');
  });
});

describe('hosted preferences page', () => {
  it('a decision made on the page from preferencesUrl() is adopted at the next init, asking /decision only then', async () => {
    const project = await setupProject(server, [site.origin]);
    await withExperience(project);
    await open(project);
    await page.locator(hook('reject-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    const url = await page.evaluate(() => (window as any).consent.preferencesUrl());
    const installationId = await page.evaluate(() => localStorage.getItem('consent:installationId'));
    expect(url).toBe(`${serviceUrl}/preferences?key=${encodeURIComponent(project.key)}#i=${installationId}`);

    // The hosted page (the service's origin, its own storage) records under the site's installation.
    const hosted = await context.newPage();
    await hosted.goto(url);
    await hosted.locator(hook('dialog')).waitFor();
    await hosted.locator(purpose('analytics')).click();
    await hosted.locator(hook('save')).click();
    await hosted.locator(hook('dialog')).waitFor({ state: 'detached' });
    await hosted.close();
    const [latest] = await project.receipts();
    expect(latest).toMatchObject({ installationId, choices: { necessary: true, analytics: true, ads: false } });

    const asked: string[] = [];
    page.on('request', (req) => req.url().includes('/api/sdk/v2/decision') && asked.push(req.headers()['x-consent-installation'] ?? ''));
    await open(project);
    expect(asked).toEqual([installationId]);
    expect(await page.evaluate(() => (window as any).consent.hasConsent('analytics'))).toBe(true);
    await expect.poll(ran).toBe(1);
    expect(await page.locator(hook('banner')).count()).toBe(0);
    // Without another visit to the hosted page, never again.
    await open(project);
    expect(asked).toHaveLength(1);
    expect(await ran()).toBe(1);
  });
});

describe('accessibility', () => {
  it('keyboard only: the banner comes first, and focus is where it should be after every step', async () => {
    await newContext({ reducedMotion: 'reduce' });
    const project = await setupProject(server, [site.origin]);
    await withExperience(project);
    await open(project);
    expect(await page.locator(hook('banner')).evaluate((el) => getComputedStyle(el).animationName)).toBe('none');
    expect(await axeViolations()).toEqual([]);

    await page.keyboard.press('Tab');
    expect(await focused()).toBe('privacy-policy');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('reject-all');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('accept-all');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('manage');
    await page.keyboard.press('Enter');
    expect(await focused()).toBe('dialog');
    expect(await axeViolations()).toEqual([]);
    // Escape: back to the banner's manage button.
    await page.keyboard.press('Escape');
    expect(await focused()).toBe('manage');
    await page.keyboard.press('Enter');
    for (const expected of ['close', 'privacy-policy', 'purpose:analytics', 'purpose:ads', 'reject-all', 'accept-all', 'save', 'close']) {
      await page.keyboard.press('Tab');
      expect(await focused()).toBe(expected);
    }
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('save');
    for (let i = 0; i < 4; i++) await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('purpose:analytics');
    await page.keyboard.press('Space');
    expect(await page.locator(purpose('analytics')).getAttribute('aria-checked')).toBe(null);
    expect(await page.locator(purpose('analytics')).isChecked()).toBe(true);
    for (let i = 0; i < 4; i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('save');
    await page.keyboard.press('Enter');
    await page.locator(hook('dialog')).waitFor({ state: 'detached' });
    // Decided from the dialog opened from the banner: focus is not lost to <body>; the next Tab goes on
    // into the page, at its start.
    expect(await focused()).toBe('root');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('home');
    expect(await ran()).toBe(1);

    // Reopened from the page's own button: focus comes back to that button after Escape and after Save.
    await page.locator('#settings').focus();
    await page.keyboard.press('Enter');
    expect(await focused()).toBe('dialog');
    await page.keyboard.press('Escape');
    expect(await focused()).toBe('settings');
    await page.keyboard.press('Enter');
    await page.locator(hook('save')).focus();
    await page.keyboard.press('Enter');
    await page.locator(hook('dialog')).waitFor({ state: 'detached' });
    expect(await focused()).toBe('settings');
  });

  it('a decision in the banner puts focus back where it was in the page', async () => {
    const project = await setupProject(server, [site.origin]);
    await withExperience(project);
    await open(project);
    await page.locator('#page-button').focus();
    for (const expected of ['products', 'home', 'manage']) {
      await page.keyboard.press('Shift+Tab');
      expect(await focused()).toBe(expected);
    }
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('accept-all');
    await page.keyboard.press('Enter');
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    // Where focus was when it entered the banner (Shift+Tab from the first link), not <body>.
    expect(await focused()).toBe('home');
  });
});
