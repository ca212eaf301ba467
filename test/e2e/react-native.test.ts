// @consent/react-native in real headless Chromium at phone size (390x844), against the real service: the demo app
// (sdk/react-native/demo) rendered through react-native-web, since no device or emulator exists here. What a person
// does with it is clicked through: the banner, Reject all, the receipt the operator sees, the preferences sheet, a
// purpose switched on, and the app's own state following. Right-to-left, headless mode, keyboard focus and axe-core
// too. Screenshots go to test-artifacts/react-native/.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { SignJWT } from 'jose';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { launchChromium, sampleDraft, setupProject, startService, type SiteProject } from './harness.js';
import { bundleDemo, startDemoServer, type DemoServer } from './react-native-app.js';
import { REACT_NATIVE_VERSION } from '../../sdk/react-native/src/version.js';

const ARTIFACTS = 'test-artifacts/react-native';
// The service reads the device's location as behind a CDN; a test plays the CDN with these headers (opt-out below).
const GEO = { countryHeader: 'cf-ipcountry', regionHeader: 'cf-region-code' };
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PHONE = { width: 390, height: 844 };

let server: TestServer;
let serviceUrl: string;
let demo: DemoServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let pageErrors: string[];
/** Console errors a test expects (the browser logs every refused request). */
let expectedErrors: RegExp[];

beforeAll(async () => {
  const [bundle] = await Promise.all([bundleDemo(), (async () => ({ server, serviceUrl } = await startService({ geo: GEO })))()]);
  demo = await startDemoServer(bundle);
  browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await demo?.close();
  await server?.close();
});
beforeEach(async () => {
  pageErrors = [];
  expectedErrors = [];
  context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  page.on('console', (msg) => msg.type() === 'error' && !expectedErrors.some((e) => e.test(msg.text())) && pageErrors.push(msg.text()));
});
afterEach(async () => {
  await context?.close();
  expect(pageErrors).toEqual([]);
});

// --- The project: its experience has an Arabic translation, a privacy policy and the operator's colour ---

const ARABIC = {
  notice: { title: 'نحن نحترم خصوصيتك', description: 'نستخدم ملفات تعريف الارتباط لتشغيل المتجر، وبموافقتك لقياس الزيارات وعرض الإعلانات.', acceptLabel: 'قبول الكل', rejectLabel: 'رفض الكل', manageLabel: 'إدارة الخيارات' },
  categories: { Essential: { name: 'أساسي' }, Marketing: { name: 'التسويق' } },
  purposes: { necessary: { name: 'ضروري', description: 'يحافظ على عمل المتجر.' }, analytics: { name: 'التحليلات', description: 'يحصي الزيارات.' }, ads: { name: 'الإعلانات', description: 'يعرض إعلانات مناسبة.' } },
};

/** A project with the sample purposes, the demo's origin allowed, and an experience with Arabic, published. */
async function appProject(over: { experience?: Record<string, unknown>; primaryColor?: string } = {}): Promise<SiteProject> {
  const draftOf = sampleDraft();
  if (over.primaryColor) draftOf.notice.primaryColor = over.primaryColor;
  const project = await setupProject(server, [demo.origin], draftOf);
  const base = `/api/platform/projects/${project.projectId}/consent`;
  const { draft } = (await server.request('GET', base, { token: project.ownerToken })).body;
  const idOf = new Map(draft.categories.map((c: { id: string; name: string }) => [c.name, c.id]));
  const categories = Object.fromEntries(Object.entries(ARABIC.categories).map(([name, c]) => [idOf.get(name), c]));
  const experience = {
    defaultLocale: 'en',
    translations: { ar: { ...ARABIC, categories } },
    privacyPolicyUrl: 'https://www.acme.test/privacy',
    theme: { colorScheme: 'light', borderRadius: 12 },
    googleConsentMode: {
      enabled: true,
      signals: { analytics_storage: ['analytics'], ad_storage: ['ads'], ad_user_data: ['ads'], ad_personalization: ['ads'], functionality_storage: [], personalization_storage: [], security_storage: [] },
    },
    ...over.experience,
  };
  const put = await server.request('PUT', `${base}/experience`, { token: project.ownerToken, body: experience });
  if (put.status !== 200) throw new Error(`PUT experience: ${put.status} ${put.text}`);
  const published = await server.request('POST', `${base}/publish`, { token: project.ownerToken });
  if (published.status !== 201) throw new Error(`publish: ${published.status} ${published.text}`);
  return project;
}

// --- Page helpers: by role and name, as a person (and a screen reader) finds things ---

async function openApp(project: SiteProject, options: { locale?: string; headless?: boolean; refuseDecisionWrites?: boolean; subjectToken?: string } = {}): Promise<void> {
  await page.goto(demo.page({ publicKey: project.key, apiBaseUrl: serviceUrl, ...options }));
  await expect.poll(status).not.toBe('Loading…');
}

const status = () => page.getByTestId('analytics-status').textContent();
/** What the demo app would hand React Native Firebase's setConsent() (useFirebaseConsent). */
const firebase = () => page.getByTestId('firebase-status').textContent();
const signals = (analytics: boolean, ads: boolean) =>
  `Firebase: analytics_storage=${analytics} ad_storage=${ads} ad_user_data=${ads} ad_personalization=${ads}`;
const banner = () => page.getByTestId('consent-banner');
const sheet = () => page.getByRole('dialog');

/** Waits until nothing on the page is animating (the sheet slides in), so a screenshot shows where things rest. */
async function settled(): Promise<void> {
  await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running'));
}

async function shoot(name: string): Promise<void> {
  await settled();
  await page.screenshot({ path: `${ARTIFACTS}/${name}.png` });
}

/** axe-core's violations (every impact) inside `scope`, as `rule (impact): targets`. */
async function axeViolations(scope: Locator): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  return scope.evaluate(async (el) => {
    const result = await (window as any).axe.run(el, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(' ')).slice(0, 3).join(', ')}`);
  });
}

/** The test id (react-native-web writes testID as data-testid) or role and label of what has keyboard focus. */
function focused(): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return 'body';
    return el.closest('[data-testid]')?.getAttribute('data-testid') ?? `${el.getAttribute('role') ?? el.tagName.toLowerCase()}:${el.getAttribute('aria-label') ?? ''}`;
  });
}

/** The operator's view of the project's receipts (newest first), once there are `count` of them. */
async function receiptsOnceThere(project: SiteProject, count: number) {
  await expect.poll(async () => (await project.receipts()).length).toBe(count);
  return project.receipts();
}

// --- Tests ---

describe('the default banner and preferences sheet', () => {
  it('banner, Reject all, the receipt, the sheet, a purpose switched on and saved: the app follows, and a relaunch remembers', async () => {
    const project = await appProject();
    await openApp(project);

    // First launch: the banner, over the app, with the notice's texts and the privacy policy.
    await expect.poll(() => banner().isVisible()).toBe(true);
    expect(await status()).toBe('Analytics: off');
    const reject = banner().getByRole('button', { name: 'Reject all' });
    const accept = banner().getByRole('button', { name: 'Accept all' });
    expect(await banner().getByRole('heading', { name: 'We value your privacy' }).isVisible()).toBe(true);
    expect(await banner().getByRole('link', { name: 'Privacy policy' }).isVisible()).toBe(true);
    expect(await banner().getByRole('button', { name: 'Manage choices' }).isVisible()).toBe(true);
    // The banner is labelled by its title (a region for screen readers).
    expect(await banner().getAttribute('role')).toBe('region');
    expect(await banner().getAttribute('aria-labelledby')).toBe('consent-banner-title');
    // Reject all and Accept all have equal weight: the same size, colours and type, side by side.
    const [rejectBox, acceptBox] = [await reject.boundingBox(), await accept.boundingBox()];
    expect(rejectBox!.width).toBeCloseTo(acceptBox!.width, 0);
    expect(rejectBox!.height).toBeCloseTo(acceptBox!.height, 0);
    expect(rejectBox!.y).toBeCloseTo(acceptBox!.y, 0);
    const look = (button: Locator) =>
      button.evaluate((el) => {
        const box = getComputedStyle(el);
        const text = getComputedStyle(el.querySelector('div, span') ?? el);
        return [box.backgroundColor, box.borderColor, box.borderRadius, text.color, text.fontSize, text.fontWeight].join(' ');
      });
    expect(await look(reject)).toBe(await look(accept));
    // The banner sits on the bottom edge of the phone's screen and fits its width.
    const bannerBox = (await banner().boundingBox())!;
    expect(bannerBox.y + bannerBox.height).toBeCloseTo(PHONE.height, 0);
    expect(bannerBox.width).toBeCloseTo(PHONE.width, 0);
    expect(await axeViolations(banner())).toEqual([]);
    await shoot('banner');
    // The keyboard reaches the banner first, in reading order.
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Tab');
      order.push(await focused());
    }
    expect(order).toEqual(['consent-privacy-policy', 'consent-reject-all', 'consent-accept-all', 'consent-manage']);

    // Reject all: the banner goes, the app's analytics stays off, and the operator sees the receipt.
    await reject.click();
    await expect.poll(() => banner().count()).toBe(0);
    expect(await status()).toBe('Analytics: off');
    expect(await firebase()).toBe(signals(false, false));
    const [rejected] = await receiptsOnceThere(project, 1);
    // Where it came from: this package, on the platform React Native reports (web here), with the app's id and version.
    expect(rejected).toMatchObject({
      choices: { necessary: true, analytics: false, ads: false },
      versionNumber: 2,
      source: { sdk: 'react-native', sdkVersion: REACT_NATIVE_VERSION, platform: 'web', appId: 'com.acme.shop', appVersion: '1.4.0' },
    });

    // The app's own button opens the preferences sheet, which starts from that decision.
    const opener = page.getByRole('button', { name: 'Privacy settings' });
    await opener.focus();
    await opener.press('Enter');
    await expect.poll(() => sheet().isVisible()).toBe(true);
    expect(await sheet().getAttribute('aria-modal')).toBe('true');
    expect(await sheet().getAttribute('aria-label')).toBe('Privacy preferences');
    expect(await sheet().getByRole('heading', { name: 'Privacy preferences' }).isVisible()).toBe(true);
    const necessary = sheet().getByRole('switch', { name: 'Necessary' });
    const analytics = sheet().getByRole('switch', { name: 'Analytics' });
    const ads = sheet().getByRole('switch', { name: 'Advertising' });
    expect([await necessary.isChecked(), await necessary.isDisabled()]).toEqual([true, true]);
    expect([await analytics.isChecked(), await analytics.isDisabled()]).toEqual([false, false]);
    expect(await ads.isChecked()).toBe(false);
    expect(await sheet().getByText('Always on').count()).toBe(1);
    expect(await sheet().getByRole('heading', { name: 'Marketing' }).isVisible()).toBe(true);
    // Focus is inside the sheet and stays there: Tab and Shift+Tab cycle through its controls only.
    const inside = () => page.evaluate(() => !!document.activeElement?.closest('[role="dialog"]'));
    expect(await inside()).toBe(true);
    const seen = new Set<string>();
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      expect(await inside()).toBe(true);
      seen.add(await focused());
    }
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Shift+Tab');
      expect(await inside()).toBe(true);
    }
    expect([...seen]).toEqual(expect.arrayContaining(['consent-close', 'consent-privacy-policy', 'consent-purpose-analytics', 'consent-purpose-ads', 'consent-save']));
    expect(await axeViolations(sheet())).toEqual([]);
    await shoot('sheet');

    // Analytics on, Save: the sheet closes, focus goes back to the app's button, and the app's analytics is on.
    await analytics.click();
    expect(await analytics.isChecked()).toBe(true);
    await sheet().getByRole('button', { name: 'Save choices' }).click();
    await expect.poll(() => sheet().count()).toBe(0);
    await expect.poll(status).toBe('Analytics: on');
    expect(await firebase()).toBe(signals(true, false));
    expect(await focused()).toBe('open-privacy-settings');
    const [saved] = await receiptsOnceThere(project, 2);
    expect(saved).toMatchObject({ choices: { necessary: true, analytics: true, ads: false } });
    expect(saved!.installationId).toBe(rejected!.installationId);

    // The next launch answers from AsyncStorage: no banner, analytics on, nothing sent again.
    await page.reload();
    await expect.poll(status).toBe('Analytics: on');
    expect(await banner().count()).toBe(0);
    expect(await project.receipts()).toHaveLength(2);
  });

  it('a double tap on Accept all records one decision', async () => {
    const project = await appProject();
    await openApp(project);
    // Two presses in the same moment, before the first decision can have been stored: two clicks in one task, so
    // that nothing runs in between (a real double tap leaves a few milliseconds, which the storage may or may not need).
    await banner().getByRole('button', { name: 'Accept all' }).evaluate((button: HTMLElement) => {
      button.click();
      button.click();
    });
    await expect.poll(status).toBe('Analytics: on');
    await receiptsOnceThere(project, 1);
    // The queue is empty once the service acknowledged: nothing more is on its way.
    await expect.poll(() => page.getByTestId('pending').textContent()).toBe('Pending receipts: 0');
    expect(await project.receipts()).toHaveLength(1);
  });

  it('a full disk: the decision holds for this run and is sent, and the app hears that it could not be stored', async () => {
    const project = await appProject();
    await openApp(project, { refuseDecisionWrites: true });
    await banner().getByRole('button', { name: 'Manage choices' }).click();
    await expect.poll(() => sheet().isVisible()).toBe(true);
    await sheet().getByRole('switch', { name: 'Analytics' }).click();
    await sheet().getByRole('button', { name: 'Save choices' }).click();
    await expect.poll(() => sheet().count()).toBe(0);
    await expect.poll(status).toBe('Analytics: on');
    await expect.poll(() => page.getByTestId('last-error').textContent()).toBe('Last error: storage_unwritable');
    const [saved] = await receiptsOnceThere(project, 1);
    expect(saved).toMatchObject({ choices: { necessary: true, analytics: true, ads: false } });
  });

  it("the theme: dark, the operator's colour with the text colour that contrasts, square corners", async () => {
    const project = await appProject({ experience: { theme: { colorScheme: 'dark', borderRadius: 0 } }, primaryColor: '#f2c230' });
    await openApp(project);
    await expect.poll(() => banner().isVisible()).toBe(true);
    const look = (el: Locator) => el.evaluate((e) => [getComputedStyle(e).backgroundColor, getComputedStyle(e).borderTopLeftRadius]);
    expect(await look(banner())).toEqual(['rgb(28, 28, 30)', '0px']);
    const accept = banner().getByRole('button', { name: 'Accept all' });
    expect(await look(accept)).toEqual(['rgb(242, 194, 48)', '0px']);
    expect(await accept.getByText('Accept all').evaluate((e) => getComputedStyle(e).color)).toBe('rgb(0, 0, 0)');
    expect(await axeViolations(banner())).toEqual([]);
    await shoot('banner-dark');
  });

  it('right-to-left: an Arabic translation is shown mirrored, in the banner and the sheet', async () => {
    const project = await appProject();
    await openApp(project, { locale: 'ar' });
    await expect.poll(() => banner().isVisible()).toBe(true);
    expect(await banner().evaluate((el) => getComputedStyle(el).direction)).toBe('rtl');
    const title = banner().getByRole('heading', { name: ARABIC.notice.title });
    // The first action (Reject all) is at the start edge, the right one; the title is set from the right.
    const reject = (await banner().getByRole('button', { name: 'رفض الكل' }).boundingBox())!;
    const accept = (await banner().getByRole('button', { name: 'قبول الكل' }).boundingBox())!;
    expect(reject.x).toBeGreaterThan(accept.x);
    expect(await title.evaluate((el) => getComputedStyle(el).textAlign)).toBe('right');
    const bannerBox = (await banner().boundingBox())!;
    const titleRight = await title.evaluate((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      return range.getBoundingClientRect().right;
    });
    expect(bannerBox.x + bannerBox.width - titleRight).toBeLessThan(30);
    // The built-in words are Arabic too (the service's ui strings for ar).
    expect(await banner().getByRole('link', { name: 'سياسة الخصوصية' }).count()).toBe(1);
    expect(await axeViolations(banner())).toEqual([]);
    await shoot('banner-rtl');

    await banner().getByRole('button', { name: 'إدارة الخيارات' }).click();
    await expect.poll(() => sheet().isVisible()).toBe(true);
    // Each switch is at the start edge's opposite, the left, beside its purpose's name.
    const name = (await sheet().getByText('التحليلات', { exact: true }).boundingBox())!;
    const toggle = (await sheet().getByRole('switch', { name: 'التحليلات' }).boundingBox())!;
    expect(toggle.x).toBeLessThan(name.x);
    expect(await axeViolations(sheet())).toEqual([]);
    await shoot('sheet-rtl');
  });
});

describe('a signed-in person (extensions.md section 14)', () => {
  it('the banner and the sheet say the choice applies on their signed-in devices; signed out, they do not', async () => {
    const project = await appProject();
    const made = await server.request('POST', `/api/platform/projects/${project.projectId}/subject-secret`, { token: project.ownerToken });
    expect(made.status, made.text).toBe(200);
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('member-42').setAudience(project.projectId).setIssuedAt()
      .setExpirationTime('1h').sign(new TextEncoder().encode(made.body.secret));
    const scope = 'You are signed in: your choice applies on every device where you are signed in to your account.';
    await openApp(project);
    await expect.poll(() => banner().isVisible()).toBe(true);
    expect(await banner().getByText(scope).count()).toBe(0);
    await openApp(project, { subjectToken: token });
    await expect.poll(() => banner().getByText(scope).count()).toBe(1);
    await shoot('banner-signed-in');
    await page.getByTestId('open-privacy-settings').click();
    await expect.poll(() => sheet().getByText(scope).count()).toBe(1);
    expect(await axeViolations(sheet())).toEqual([]);
  });
});

describe('jurisdictions', () => {
  it('California (opt-out): optional purposes on until "Do Not Sell or Share", which turns them off and is recorded', async () => {
    const project = await appProject();
    await context.route(`${serviceUrl}/**`, (route) => route.continue({ headers: { ...route.request().headers(), 'cf-ipcountry': 'US', 'cf-region-code': 'CA' } }));
    await openApp(project);
    await expect.poll(() => banner().isVisible()).toBe(true);
    expect(await status()).toBe('Analytics: on');
    const doNotSell = banner().getByRole('button', { name: 'Do Not Sell or Share My Personal Information' });
    const ok = banner().getByRole('button', { name: 'Got it' });
    expect(await banner().getByRole('button', { name: 'Reject all' }).count()).toBe(0);
    // Equal weight: the same width, one above the other.
    expect((await doNotSell.boundingBox())!.width).toBeCloseTo((await ok.boundingBox())!.width, 0);
    expect(await axeViolations(banner())).toEqual([]);
    await shoot('banner-opt-out');
    await doNotSell.click();
    await expect.poll(() => banner().count()).toBe(0);
    await expect.poll(status).toBe('Analytics: off');
    const [receipt] = await receiptsOnceThere(project, 1);
    expect(receipt).toMatchObject({ jurisdiction: 'US-CA', action: 'opt_out', choices: { necessary: true, analytics: false, ads: false } });
  });

  it('California (opt-out): "Got it" closes the notice without a receipt, and it stays closed on the next launch', async () => {
    const project = await appProject();
    await context.route(`${serviceUrl}/**`, (route) => route.continue({ headers: { ...route.request().headers(), 'cf-ipcountry': 'US', 'cf-region-code': 'CA' } }));
    await openApp(project);
    await banner().getByRole('button', { name: 'Got it' }).click();
    await expect.poll(() => banner().count()).toBe(0);
    expect(await status()).toBe('Analytics: on');
    await page.reload();
    await expect.poll(status).toBe('Analytics: on');
    expect(await banner().count()).toBe(0);
    expect(await project.receipts()).toEqual([]);
  });
});

describe('faults', () => {
  it('a revoked key: the decision stays in force from storage, and the app hears why through useConsent().error', async () => {
    const project = await appProject();
    await openApp(project);
    await banner().getByRole('button', { name: 'Accept all' }).click();
    await receiptsOnceThere(project, 1);
    const keys = `/api/platform/projects/${project.projectId}/api-keys`;
    const [key] = (await server.request('GET', keys, { token: project.ownerToken })).body.apiKeys;
    expect((await server.request('DELETE', `${keys}/${key.id}`, { token: project.ownerToken })).status).toBe(200);
    expectedErrors = [/status of 403 \(Forbidden\)/];
    await page.reload();
    await expect.poll(() => page.getByTestId('last-error').textContent()).toBe('Last error: revoked_key');
    expect(await status()).toBe('Analytics: on');
    expect(await banner().count()).toBe(0);
  });
});

describe('headless mode', () => {
  it('draws nothing of its own; the app\'s banner decides through the hook and the receipt is recorded', async () => {
    const project = await appProject();
    await openApp(project, { headless: true });
    const own = page.getByTestId('own-banner');
    await expect.poll(() => own.isVisible()).toBe(true);
    expect(await banner().count()).toBe(0);
    // The app's own button: the hook's acceptAll().
    await own.getByRole('button', { name: 'Fine' }).click();
    await expect.poll(() => own.count()).toBe(0);
    await expect.poll(status).toBe('Analytics: on');
    expect(await firebase()).toBe(signals(true, true));
    const [accepted] = await receiptsOnceThere(project, 1);
    expect(accepted).toMatchObject({ choices: { necessary: true, analytics: true, ads: true } });
    // showPreferences() in headless mode opens nothing: the app draws its own preferences too.
    await page.getByRole('button', { name: 'Privacy settings' }).click();
    expect(await sheet().count()).toBe(0);
  });
});
