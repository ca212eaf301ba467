// The console's list tables at 390 px (docs/console.md, "Tables at 390 px"): each becomes one card per row, every
// column's value in sight beside its column's name, nothing scrolls sideways; at 1280 px they are grids. Every list
// table of console/src with rows made of realistic, long values (ids, e-mail addresses, SDK details), in headless
// Chromium against the real service; screenshots in test-artifacts/console/ (tables-<screen>-<width>.png). The
// scans' tables are checked where a real scan fills them (console-scans.test.ts), the TCF vendors where the vendor
// list is held (console-tcf.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putDraft, publish, type Version } from '../helpers/consent.js';
import { operator, team, type Operator } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { launchChromium } from './harness.js';
import { listTableProblems, openScreen, screenshots, signedIn, startConsoleService } from './console-screens-helpers.js';

let browser: Browser;
let server: TestServer;
let serviceUrl: string;
let receiver: Receiver;
let t: Awaited<ReturnType<typeof team>>;

const api = (who: Operator, method: string, path: string, body?: unknown) => server.request(method, path, { token: who.token, body });
const projectApi = (rest: string) => `/api/platform/projects/${t.project.id}${rest}`;
const projectPath = (screen: string) => `/orgs/${t.org.id}/projects/${t.project.id}/${screen}`;

beforeAll(async () => {
  browser = await launchChromium();
  ({ server, serviceUrl } = await startConsoleService());
  receiver = await startReceiver();
  t = await team(server);
  await putDraft(server, t.owner, t.project.id);
  const version: Version = await publish(server, t.owner, t.project.id);
  const key = (await api(t.owner, 'POST', projectApi('/api-keys'), { name: 'Storefront theme, checkout and the newsletter pages' })).body.secret;
  expect((await api(t.admin, 'PUT', projectApi('/webhook'), { url: receiver.url, enabled: true })).status).toBe(200);
  // Receipts with the longest values a visitor's SDK sends: a long installation id, a language, GPC, the SDK's version.
  for (const [i, action] of ['accept_all', 'reject_all', 'custom'].entries()) {
    const res = await server.request('POST', '/api/sdk/v1/consent', {
      token: key,
      body: {
        versionId: version.id,
        consentHash: version.consentHash,
        choices: { necessary: true, analytics: i !== 1, ads: i === 0 },
        installationId: `inst-${i}-0f3c9a7e51d24b8e9a612c7d84e0b5aa-visitor-installation`,
        sdkVersion: '2.0.0',
        locale: 'de-CH',
        gpc: i === 2,
        action,
      },
    });
    expect(res.status, res.text).toBe(201);
  }
  // A pending invitation to a long address (an invitee has an account), and the audit events all of this left.
  const invitee = await operator(server, 'A very long name for an invitee from the subsidiary of the example company');
  const invited = await api(t.owner, 'POST', '/graphql', {
    query: 'mutation($o: ID!, $e: String!) { addMember(organizationId: $o, email: $e, role: "VIEWER") { invitation { id } } }',
    variables: { o: t.org.id, e: invitee.email },
  });
  expect(invited.body.errors).toBeUndefined();
  await receiver.until((received) => received.length >= 3, 30_000);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await server?.close();
});

/** The screens with list tables, each with a cell its rows must show once loaded. */
const SCREENS = () => [
  { name: 'receipts', path: projectPath('receipts'), heading: 'Receipts', row: /visitor-installation/ },
  { name: 'keys', path: projectPath('keys'), heading: 'API keys', row: /Storefront theme/ },
  { name: 'webhook', path: projectPath('webhook'), heading: 'Webhook', row: /consent\.updated/ },
  { name: 'members', path: `/orgs/${t.org.id}/members`, heading: 'Members', row: /averylongnameforaninvitee/ },
  { name: 'audit', path: `/orgs/${t.org.id}/audit`, heading: 'Audit log', row: /Storefront theme|api_key/ },
];

describe('console list tables', () => {
  it('are one card per row at 390 px, every column in sight with its name, and grids at 1280 px', async () => {
    const owner = await signedIn(browser, serviceUrl, t.owner);
    const { page } = owner;
    const found: string[] = [];
    for (const screen of SCREENS()) {
      await openScreen(page, serviceUrl, screen.path, screen.heading);
      await page.getByRole('cell', { name: screen.row }).first().waitFor();

      await page.setViewportSize({ width: 390, height: 844 });
      found.push(...(await listTableProblems(page)).map((problem) => `${screen.name}: ${problem}`));
      // What a reader sees: a row's cells stacked, none past the right edge.
      const cells = await page
        .locator('main .table-cards tbody tr')
        .first()
        .locator('td')
        .evaluateAll((tds) => tds.map((td) => ({ label: td.dataset.label, left: td.getBoundingClientRect().left, right: td.getBoundingClientRect().right })));
      if (cells.length < 2) found.push(`${screen.name}: a card of ${cells.length} cells`);
      for (const cell of cells) if (cell.right > 390) found.push(`${screen.name}: ${cell.label} ends at ${Math.round(cell.right)} px`);
      if (new Set(cells.map((c) => Math.round(c.left))).size !== 1) found.push(`${screen.name}: a card's cells side by side`);

      // At 1280 px a list table is a grid again: its header row shown.
      await page.setViewportSize({ width: 1280, height: 800 });
      const head = await page.locator('main .table-cards thead').first().boundingBox();
      if ((head?.width ?? 0) < 100) found.push(`${screen.name}: no header row at 1280 px`);
      await screenshots(page, `tables-${screen.name}`).catch((error: Error) => found.push(error.message));
    }
    expect(found).toEqual([]);
    expect(owner.errors).toEqual([]);
    await owner.close();
  }, 180_000); // five screens at two widths, on a machine shared with other browser files
});

describe('console source', () => {
  it('puts every table in the shared table box (cards on a phone, or an announced sideways scroll)', () => {
    const root = join(import.meta.dirname, '../../console/src');
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.tsx'));
    const outside = files.flatMap((file) => {
      const source = readFileSync(join(root, file), 'utf8');
      const tables = source.match(/<table[\s>]/g)?.length ?? 0;
      const boxes = source.match(/<TableBox[\s>]/g)?.length ?? 0;
      return tables === boxes ? [] : [`${file}: ${tables} tables, ${boxes} in a TableBox`];
    });
    expect(files.length).toBeGreaterThan(10);
    expect(outside).toEqual([]);
  });
});
