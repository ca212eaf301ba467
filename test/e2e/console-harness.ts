// What the console's browser tests share (and console-screens' end-to-end test reuses): the real service with
// the built console, a Chromium page that records every console error, failed request and CSP violation, and
// page helpers that drive the console as an operator does (labels and roles, no test ids).
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.js';
import { launchChromium, startService } from './harness.js';

export const ARTIFACTS = 'test-artifacts/console';
export const CONSOLE_PASSWORD = 'correct horse battery staple';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface ConsoleEnv {
  browser: Browser;
  server: TestServer;
  serviceUrl: string;
  close(): Promise<void>;
}

/** The service (with console/dist built by the test setup) on http://localhost:<port>, and Chromium. */
export async function startConsole(): Promise<ConsoleEnv> {
  const [browser, { server, serviceUrl }] = await Promise.all([launchChromium(), startService()]);
  mkdirSync(ARTIFACTS, { recursive: true });
  return {
    browser,
    server,
    serviceUrl,
    close: async () => {
      await browser.close();
      await server.close();
    },
  };
}

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Console errors, page errors, CSP violations and 5xx answers seen so far (a test expects none). */
  problems: string[];
}

/** A fresh browser profile (its own cookies) with one page, at a viewport width. */
export async function consolePage(env: ConsoleEnv, width = 1280): Promise<ConsolePage> {
  const context = await env.browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    // A refused sign-in or a 4xx the screen shows is an expected answer; the browser logs the request anyway.
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 500) problems.push(`${response.status()} ${response.url()}`);
  });
  return { context, page, problems };
}

export const consoleUrl = (env: ConsoleEnv, path = '/') => `${env.serviceUrl}/console${path}`;

export interface Account {
  name: string;
  email: string;
  password: string;
}

export function newAccount(name = 'Olivia Operator'): Account {
  return { name, email: `op-${Math.random().toString(36).slice(2, 10)}@example.com`, password: CONSOLE_PASSWORD };
}

/** Signs up through the form; ends on "New organization" (signed in with the cookie). */
export async function signUp(page: Page, env: ConsoleEnv, account: Account): Promise<void> {
  await page.goto(consoleUrl(env, '/sign-up'));
  await page.getByLabel('Name').fill(account.name);
  await page.getByLabel('E-mail').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'New organization' }).waitFor();
}

/** Signs in through the form; ends on the console's first screen. */
export async function signIn(page: Page, env: ConsoleEnv, account: Pick<Account, 'email' | 'password'>, path = '/'): Promise<void> {
  await page.goto(consoleUrl(env, `/sign-in${path === '/' ? '' : `?next=${encodeURIComponent(path)}`}`));
  await page.getByLabel('E-mail').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.endsWith('/sign-in'));
  await page.locator('main#main h1').first().waitFor();
}

/** From anywhere signed in: creates an organization and ends on its project list. Returns its id. */
export async function createOrganization(page: Page, env: ConsoleEnv, name: string): Promise<string> {
  await page.goto(consoleUrl(env, '/orgs/new'));
  await page.getByLabel('Organization name').fill(name);
  await page.getByRole('button', { name: 'Create organization' }).click();
  await shotOnFailure(page, 'create-organization', () => page.getByRole('heading', { name: 'Projects' }).waitFor());
  return /\/orgs\/([^/]+)/.exec(new URL(page.url()).pathname)![1]!;
}

/** On an organization's project list: creates a project and ends on its home. Returns its id. */
export async function createProject(page: Page, name: string): Promise<string> {
  await page.getByLabel('Project name').fill(name);
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.getByRole('heading', { name: 'Go-live checklist' }).waitFor();
  return /\/projects\/([^/]+)/.exec(new URL(page.url()).pathname)![1]!;
}

export interface PurposeInput {
  key: string;
  name: string;
  description: string;
  required?: boolean;
  category: string;
}

/** Opens the consent editor of a project (through the navigation). */
export async function openConsentEditor(page: Page): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Consent' }).click();
  await page.getByRole('heading', { name: 'Publish' }).waitFor();
}

/** In the consent editor: adds categories, purposes and the notice title/text, then saves the draft. */
export async function writePurposes(page: Page, draft: { categories: string[]; purposes: PurposeInput[]; notice: { title: string; description: string } }): Promise<void> {
  const categories = page.locator('ul[aria-labelledby="categories-title"] > li');
  for (const name of draft.categories) {
    const before = await categories.count();
    await page.getByRole('button', { name: 'Add category' }).click();
    await categories.nth(before).getByLabel('Category name').fill(name);
  }
  const purposes = page.locator('ul[aria-labelledby="purposes-title"] > li');
  for (const purpose of draft.purposes) {
    const before = await purposes.count();
    await page.getByRole('button', { name: 'Add purpose' }).click();
    const row = purposes.nth(before);
    await row.getByLabel('Name').fill(purpose.name);
    await row.getByLabel('Key').fill(purpose.key);
    await row.getByLabel('Description').fill(purpose.description);
    await row.getByLabel('Category').selectOption({ label: purpose.category });
    if (purpose.required) await row.getByLabel('Required (always on)').check();
  }
  await page.getByLabel('Title', { exact: true }).fill(draft.notice.title);
  await page.getByLabel('Text', { exact: true }).fill(draft.notice.description);
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByText('Draft saved.').waitFor();
}

/** In the consent editor: publishes the saved draft through the confirmation dialog; returns the dialog's re-prompt line. */
export async function publish(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Publish…' }).click();
  const dialog = page.getByRole('dialog');
  const reprompt = (await dialog.locator('.reprompt').textContent()) ?? '';
  await dialog.getByRole('button', { name: 'Publish', exact: true }).click();
  await page.getByText(/Version \d+ published\./).waitFor();
  return reprompt;
}

/** Runs a wait; when it fails, a screenshot of the page as it was (test-artifacts/console/failed-<name>.png). */
export async function shotOnFailure<T>(page: Page, name: string, wait: () => Promise<T>): Promise<T> {
  try {
    return await wait();
  } catch (error) {
    await page.screenshot({ path: `${ARTIFACTS}/failed-${name}.png`, fullPage: true }).catch(() => {});
    throw error;
  }
}

/** axe-core over the page (evaluated through the DevTools protocol, which the page's CSP does not govern). */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n: any) => n.target.join(' ')).slice(0, 3) }));
  });
  return found
    .filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical')
    .map((v: { id: string; impact: string; nodes: string[] }) => `${v.id} (${v.impact}): ${v.nodes.join(', ')}`);
}

/** Full-page screenshots at 1280 and 390 px wide into test-artifacts/console/<name>-<width>.png. */
export async function screenshots(page: Page, name: string): Promise<void> {
  const original = page.viewportSize();
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.evaluate(() => window.scrollTo(0, 0)); // sticky parts (preview, save bar) where a reader sees them first
    await page.waitForTimeout(100); // layout after the resize
    await page.screenshot({ path: `${ARTIFACTS}/${name}-${width}.png`, fullPage: true });
  }
  if (original) await page.setViewportSize(original);
}

/**
 * Every enabled control on the page that could change something: buttons other than navigation-only ones,
 * and enabled form fields. A Viewer's screens must have none of these.
 */
export async function enabledChangeControls(page: Page, allowed: RegExp): Promise<string[]> {
  return page.evaluate((allowedSource) => {
    const allowedNames = new RegExp(allowedSource);
    const found: string[] = [];
    for (const element of document.querySelectorAll<HTMLElement>('main button, main input, main select, main textarea')) {
      if ((element as HTMLButtonElement).disabled || element.closest('[hidden]') || element.closest('fieldset:disabled')) continue;
      if (element.closest('.editor-preview')) continue; // the preview's own controls change nothing on the server
      if (element.getAttribute('role') === 'tab') continue; // choosing a tab (the install screen's snippets) only shows another panel
      const name = (element.getAttribute('aria-label') || element.textContent || (element as HTMLInputElement).name || element.tagName).trim();
      if (allowedNames.test(name)) continue;
      found.push(`${element.tagName.toLowerCase()} "${name}"`);
    }
    return found;
  }, allowed.source);
}
