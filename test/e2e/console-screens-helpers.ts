// What the console-screens browser tests share: the service with an adjustable clock (receipts on past days
// for the analytics), operators signed in through the console's own sign-in page, a screen opened and
// settled, axe-core, and the screenshots at 1280 and 390 px in test-artifacts/console/.
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Download, Page } from 'playwright-core';
import { PASSWORD, type Operator } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

import { ARTIFACTS } from './console-harness.js';

export { ARTIFACTS, axeViolations } from './console-harness.js';

/** The service's clock: real time unless a test moves it (receipts are dated by the server). */
export const clock = { offsetMs: 0 };

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise((done) => probe.close(done));
  return port;
}

/** The service on http://localhost:<port> (the console's origin), with `clock`. */
export async function startConsoleService(): Promise<{ server: TestServer; serviceUrl: string }> {
  const port = await freePort();
  const serviceUrl = `http://localhost:${port}`;
  const server = await startTestServer({ port, publicBaseUrl: serviceUrl }, { now: () => new Date(Date.now() + clock.offsetMs) });
  mkdirSync(ARTIFACTS, { recursive: true });
  return { server, serviceUrl };
}

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Page errors and console errors (a CSP refusal shows here). */
  errors: string[];
  /** Every 403 answer and every GraphQL `forbidden` error the page met. */
  forbidden: string[];
  close(): Promise<void>;
}

// The session cookie of each operator's first sign-in: later contexts start with it instead of filling the form
// again (the form is exercised once per operator here, and in console.test.ts with mouse and keyboard).
const sessions = new Map<string, Awaited<ReturnType<BrowserContext['storageState']>>>();

/**
 * A fresh browser context signed in as `who`: through /console/sign-in the first time, then with that sign-in's
 * session cookie (the page is left blank: callers open their screen).
 */
export async function signedIn(browser: Browser, serviceUrl: string, who: Pick<Operator, 'email'>, viewport = { width: 1280, height: 800 }): Promise<ConsolePage> {
  const session = sessions.get(`${serviceUrl} ${who.email}`);
  const context = await browser.newContext({ viewport, acceptDownloads: true, storageState: session });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: serviceUrl });
  const page = await context.newPage();
  const errors: string[] = [];
  const forbidden: string[] = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('console', (msg) => msg.type() === 'error' && !/Failed to load resource/.test(msg.text()) && errors.push(msg.text()));
  page.on('response', async (response) => {
    if (response.status() === 403) forbidden.push(`${response.request().method()} ${response.url()}`);
    if (response.url().endsWith('/graphql')) {
      const body = await response.json().catch(() => null);
      for (const e of body?.errors ?? []) if (e.extensions?.code === 'forbidden') forbidden.push(`graphql ${e.path?.join('.')}: ${e.message}`);
    }
  });
  const close = () => context.close();
  if (session) return { context, page, errors, forbidden, close };
  await page.goto(`${serviceUrl}/console/sign-in`);
  await page.getByLabel('E-mail').fill(who.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.endsWith('/sign-in'));
  sessions.set(`${serviceUrl} ${who.email}`, await context.storageState());
  return { context, page, errors, forbidden, close };
}

/** A download's bytes as text (read through its stream: the run's shared browser is connected, so no local path). */
export async function downloadedText(download: Download): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Opens a console address and waits until the screen has its heading and nothing is loading. */
export async function openScreen(page: Page, serviceUrl: string, path: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${serviceUrl}/console${path}`);
  await settle(page, heading);
}

export async function settle(page: Page, heading: string | RegExp): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.waitForFunction(() => !document.querySelector('.state.loading'));
}

/**
 * Full-page screenshots at 1280 and 390 px wide (the viewport is put back to 1280 afterwards). At either width
 * the page must not scroll sideways: wide tables scroll inside their own box; at 390 px every list table is one
 * card per row with every value in sight (listTableProblems). Throws naming what sticks out.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  const nextFrames = () => page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  for (const width of [1280, 390]) {
    const height = width > 400 ? 800 : 844;
    await page.setViewportSize({ width, height });
    // uPlot resizes on the next frame after the container changes.
    await nextFrames();
    // The whole page in one viewport as tall as the page, not Chromium's capture beyond the viewport (fullPage):
    // that capture hung for 30 s on the analytics screen once, on a loaded machine (CI, 2026-11-27), while its
    // charts' ResizeObservers answered the capture's own resize.
    const pageHeight = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width, height: Math.min(Math.max(height, pageHeight), 16_000) });
    await nextFrames();
    await page.screenshot({ path: `${ARTIFACTS}/${name}-${width}.png` });
    await page.setViewportSize({ width, height });
    await nextFrames();
    const overflow = await sticksOut(page);
    if (overflow.length) throw new Error(`${name} at ${width} px scrolls sideways: ${overflow.join('; ')}`);
    const hidden = await outOfSight(page);
    if (hidden.length) throw new Error(`${name} at ${width} px hides: ${hidden.join('; ')}`);
    const cards = await listTableProblems(page);
    if (cards.length) throw new Error(`${name} at ${width} px: list tables are not cards: ${cards.join('; ')}`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

/**
 * Why the page scrolls sideways, if it does: the elements reaching past the viewport's right edge, those
 * positioned out of their scrolling box first (an absolutely positioned child escapes a box that is not
 * positioned itself, and widens the page).
 */
export function sticksOut(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= width) return [];
    const past = [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > width + 1);
    const positioned = past.filter((el) => getComputedStyle(el).position === 'absolute' || getComputedStyle(el).position === 'fixed');
    return [...positioned, ...past]
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}${el.className ? `.${String(el.className).replace(/\s+/g, '.')}` : ''} "${(el.textContent ?? '').trim().slice(0, 30)}" (right ${Math.round(el.getBoundingClientRect().right)})`);
  });
}

/**
 * What a reader cannot reach at this width (issue 28): a navigation link cut off or out of view (the current one
 * included), a table cell past the viewport's edge in a box that scrolls unannounced. A table that scrolls on
 * purpose (`.scrolls`) must show its scroll hint while columns are out of sight.
 */
export function outOfSight(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const found: string[] = [];
    for (const link of document.querySelectorAll('nav[aria-label="Console"] a')) {
      const box = link.getBoundingClientRect();
      if (box.width === 0 || box.left < -1 || box.right > width + 1) found.push(`navigation link "${link.textContent}" (${Math.round(box.left)}-${Math.round(box.right)})`);
      let parent = link.parentElement;
      while (parent && parent.tagName !== 'NAV') {
        const p = parent.getBoundingClientRect();
        if (box.right > p.right + 1 || box.left < p.left - 1) found.push(`navigation link "${link.textContent}" clipped by ${parent.tagName.toLowerCase()}`);
        parent = parent.parentElement;
      }
    }
    for (const cell of document.querySelectorAll('main td, main th')) {
      const box = cell.getBoundingClientRect();
      // A header row hidden for the eye (cards on a phone label each cell instead) is read by screen readers only.
      const head = cell.closest('thead');
      if (head && head.getBoundingClientRect().width <= 1) continue;
      const container = cell.closest('.table-scroll');
      const limit = Math.min(width, container ? container.getBoundingClientRect().right : width);
      if (box.width === 0 || box.right <= limit + 1) continue;
      const scroller = cell.closest('.scrolls');
      if (!scroller) found.push(`table cell "${(cell.textContent ?? '').trim().slice(0, 20)}" at ${Math.round(box.right)} px, in no announced scroll box`);
      else if (!scroller.previousElementSibling?.classList.contains('scroll-hint')) found.push(`a scrolling table without its hint (${scroller.getAttribute('aria-label')})`);
    }
    return [...new Set(found)].slice(0, 6);
  });
}

/**
 * What keeps a list table from reading as one card per row below 760 px (docs/console.md, "Tables at 390 px"):
 * a table outside the shared box (`TableBox`: `.table-cards`, or `.scrolls` for a data table that stays a grid),
 * a card wider than the page or scrolling inside its box, a column header still shown as a row, and per cell: a
 * value out of sight (past an edge, of no size, cut by an overflow), or a cell without its column's name beside
 * it. Empty at any width above 760 px, where list tables are grids again.
 */
export function listTableProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    if (width > 760) return [];
    const found: string[] = [];
    const nameOf = (table: HTMLTableElement) =>
      (table.caption?.textContent ||
        table.getAttribute('aria-label') ||
        document.getElementById(table.getAttribute('aria-labelledby') ?? '')?.textContent ||
        table.querySelector('th')?.textContent ||
        'a table').trim();
    for (const table of document.querySelectorAll<HTMLTableElement>('main table')) {
      const name = nameOf(table);
      if (table.closest('.scrolls')) continue; // a data table: scrolls in its own announced box (outOfSight)
      const box = table.closest<HTMLElement>('.table-cards');
      if (!box) {
        found.push(`${name}: a list table outside the shared table box (TableBox)`);
        continue;
      }
      const tableBox = table.getBoundingClientRect();
      if (tableBox.left < -1 || tableBox.right > width + 1) found.push(`${name}: ${Math.round(tableBox.right)} px wide at ${width} px`);
      if (box.scrollWidth > box.clientWidth + 1) found.push(`${name}: scrolls sideways inside its box (${box.scrollWidth} > ${box.clientWidth})`);
      const head = table.tHead;
      if (head && head.getBoundingClientRect().width > 1) found.push(`${name}: its header row is shown, not a card per row`);
      const columns = [...(head?.rows[0]?.cells ?? [])].flatMap((th) => Array(th.colSpan || 1).fill((th.textContent ?? '').trim()) as string[]);
      for (const row of table.tBodies[0]?.rows ?? []) {
        if (getComputedStyle(row).display !== 'block') found.push(`${name}: a row is not a card (display ${getComputedStyle(row).display})`);
        let column = 0;
        for (const cell of row.cells) {
          const header = columns[column] ?? '';
          column += cell.colSpan || 1;
          const holds = (cell.textContent ?? '').trim() !== '' || cell.querySelector('input, button, select, a, img') !== null;
          if (!holds) continue;
          const where = `${name}, ${header || 'unnamed column'} "${(cell.textContent ?? '').trim().slice(0, 24)}"`;
          const rect = cell.getBoundingClientRect();
          if (rect.width === 0 || rect.height === 0) found.push(`${where}: not shown`);
          else if (rect.left < -1 || rect.right > width + 1) found.push(`${where}: out of sight (${Math.round(rect.left)}-${Math.round(rect.right)} px)`);
          // A value cut short: the cell or anything in it holds more than it shows (an ellipsis, a clipped box).
          for (const element of [cell, ...cell.querySelectorAll<HTMLElement>('*')]) {
            const style = getComputedStyle(element);
            const clips = ['hidden', 'clip'].includes(style.overflowX) || style.textOverflow === 'ellipsis';
            if (clips && element.scrollWidth > element.clientWidth + 1 && !element.closest('.visually-hidden')) {
              found.push(`${where}: its value is cut (${element.tagName.toLowerCase()} shows ${element.clientWidth} of ${element.scrollWidth} px)`);
              break;
            }
          }
          // Its column's name beside it, unless the column has none to show (actions, a row's own heading).
          if (header && header !== 'Actions' && cell.tagName === 'TD') {
            const before = getComputedStyle(cell, '::before');
            if (before.content !== JSON.stringify(header)) found.push(`${where}: shown without its column's name (${before.content})`);
            else {
              // The name sits in a gutter the value does not enter, and (floated in the cell's own formatting context,
              // not positioned) makes the cell taller when it wraps instead of running into the next row.
              const valueFrom = parseFloat(getComputedStyle(cell).paddingLeft);
              const nameFrom = before.float === 'left' ? valueFrom + parseFloat(before.marginLeft) : parseFloat(before.left) || 0;
              if (nameFrom + parseFloat(before.width) > valueFrom + 1) found.push(`${where}: its column's name overlaps the value`);
              if (before.position === 'absolute' || getComputedStyle(cell).display !== 'flow-root')
                found.push(`${where}: a column's name on two lines would run into the next one (${before.position}, ${getComputedStyle(cell).display})`);
            }
          }
        }
      }
    }
    return [...new Set(found)].slice(0, 8);
  });
}

/** The enabled controls of the main area: buttons, fields, selects, summaries, by accessible name. */
export async function enabledControls(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const main = document.querySelector('main') ?? document.body;
    // The label's own words, without the text of the control inside it (a select's options).
    const labelText = (label: HTMLLabelElement) => {
      const copy = label.cloneNode(true) as HTMLElement;
      copy.querySelectorAll('select, textarea, small').forEach((child) => child.remove());
      return copy.textContent ?? '';
    };
    const name = (el: Element) =>
      (el.getAttribute('aria-label') || ((el as HTMLInputElement).labels?.[0] && labelText((el as HTMLInputElement).labels![0]!)) || el.textContent || (el as HTMLInputElement).placeholder || '')
        .replace(/\s+/g, ' ')
        .trim();
    return [...main.querySelectorAll('button, input, select, textarea')]
      .filter((el) => !el.matches(':disabled') && !(el as HTMLInputElement).readOnly && !el.closest('dialog:not([open])'))
      .filter((el) => (el as HTMLElement).offsetParent !== null || el.tagName === 'SELECT')
      .map((el) => `${el.tagName.toLowerCase()}${(el as HTMLInputElement).type ? `[${(el as HTMLInputElement).type}]` : ''}: ${name(el)}`);
  });
}
