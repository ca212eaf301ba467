// The console's IAB TCF screen (issue 39; docs/tcf.md, "Console"), one operator journey in Chromium against the
// real service, its vendor list fetched from the fixture GVL on loopback: turn TCF on (refused without a CMP id,
// the message at the field), search and filter vendors, pick two, an ATP, a restriction, a publisher purpose,
// map purposes, save; the go-live checklist's TCF items; both layers of the preview drawn by the real tcf.js.
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startGvlServer, type GvlServer } from '../helpers/tcf-gvl-server.js';
import { addMember } from '../../src/admin/members.js';
import { ARTIFACTS, axeViolations, enabledChangeControls } from './console-harness.js';
import { launchChromium, setupProject, startService, type SiteProject } from './harness.js';
import { listTableProblems } from './console-screens-helpers.js';
import { mkdirSync } from 'node:fs';

describe('console: IAB TCF', () => {
  let browser: Browser;
  let server: TestServer;
  let serviceUrl: string;
  let gvl: GvlServer;
  let project: SiteProject;

  beforeAll(async () => {
    gvl = await startGvlServer({ version: 1 });
    ({ server, serviceUrl } = await startService({ tcf: { gvlUrl: gvl.gvlUrl, acProvidersUrl: gvl.acProvidersUrl, minRefreshSeconds: 300 } }));
    browser = await launchChromium();
    project = await setupProject(server);
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await gvl?.close();
  });

  /** Full page at 1280 and 390 px (nothing wider than a phone at 390), and the preview alone when there is one. */
  const shoot = async (page: Page, name: string) => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForTimeout(150);
      await page.screenshot({ path: `${ARTIFACTS}/${name}-${width}.png`, fullPage: true });
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} at ${width} px`).toBeLessThanOrEqual(width);
      expect(await listTableProblems(page), `${name} at ${width} px: list tables as cards`).toEqual([]);
      const preview = page.locator('aside.editor-preview');
      if (await preview.count()) await preview.screenshot({ path: `${ARTIFACTS}/${name}-preview-${width}.png` });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  };

  it('turns TCF on, picks vendors with search and filters, sets restrictions, publisher purposes and the map, and previews both layers', async () => {
    const me = await server.request('POST', '/graphql', { token: project.ownerToken, body: { query: '{ me { user { email } organizations { id } } }' } });
    const { email } = me.body.data.me.user;
    const orgId = me.body.data.me.organizations[0].id;
    const base = `${serviceUrl}/console/orgs/${orgId}/projects/${project.projectId}`;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(String(error)));
    page.on('response', (response) => {
      if (response.status() >= 500) problems.push(`${response.status()} ${response.url()}`);
    });
    try {
      await page.goto(`${serviceUrl}/console/sign-in`);
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill('correct horse battery staple');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => !url.pathname.endsWith('/sign-in'));

      // From the experience editor to the TCF screen.
      await page.goto(`${base}/consent`);
      expect(await page.getByText('IAB TCF is on').count()).toBe(0); // the consent preview's note, only with TCF on
      await page.getByRole('tab', { name: 'Experience' }).click();
      await page.getByRole('link', { name: 'Open the IAB TCF settings' }).click();
      await page.getByRole('heading', { level: 1, name: 'IAB TCF' }).waitFor();
      await page.getByText('No Global Vendor List is held yet.').waitFor();

      // Turned on without a CMP id: refused, the message at the field; the service fetched the list meanwhile.
      await page.getByLabel(/^Show the IAB TCF banner/).check();
      await page.getByRole('button', { name: 'Save TCF settings' }).click();
      const cmpId = page.getByLabel('CMP id', { exact: true });
      await expect.poll(() => cmpId.getAttribute('aria-invalid')).toBe('true');
      const described = (await cmpId.getAttribute('aria-describedby'))!.split(' ');
      expect(await page.locator(`[id="${described.at(-1)}"]`).textContent()).toMatch(/Required when TCF is enabled/);
      await page.getByText(/Global Vendor List version 1 \(policy version 5/).waitFor();
      expect(await page.getByLabel(/^Show the IAB TCF banner/).isChecked()).toBe(true); // the edit survived the reload
      // The preview follows: the list is held now, the first layer shows (no vendor chosen yet).
      await page.frameLocator('iframe.preview-frame').locator('[data-tcf="first-layer"]').waitFor({ timeout: 20_000 });
      expect(await axeViolations(page)).toEqual([]);
      await shoot(page, 'tcf-refused');
      await page.setViewportSize({ width: 390, height: 844 });
      await cmpId.scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${ARTIFACTS}/tcf-refused-field-390.png` });
      await page.setViewportSize({ width: 1280, height: 900 });

      // Vendors: search, filters, paging by what they declare.
      const matches = page.getByText(/^\d+ vendors? match\.$/);
      const filters = page.getByRole('search', { name: 'Vendors' });
      await page.getByLabel('Search vendors').fill('fixture');
      await expect.poll(() => matches.textContent()).toBe('3 vendors match.'); // the deleted vendor 9 is not offered
      await filters.getByLabel(/^Purpose/).selectOption({ label: '7. Measure advertising performance' });
      await expect.poll(() => matches.textContent()).toBe('1 vendor match.');
      await filters.getByLabel(/^Purpose/).selectOption({ label: 'Any' });
      await filters.getByLabel(/^Legitimate interest/).selectOption({ label: 'Does not' });
      await expect.poll(() => matches.textContent()).toBe('2 vendors match.');
      await filters.getByLabel(/^Legitimate interest/).selectOption({ label: 'Any' });
      await filters.getByLabel(/^Special feature/).selectOption({ label: 'Use precise geolocation data' });
      await expect.poll(() => matches.textContent()).toBe('1 vendor match.');
      await page.getByLabel('Use Fixture Ads SA').check();
      await filters.getByLabel(/^Special feature/).selectOption({ label: 'Any' });
      await page.getByLabel('Search vendors').fill('measure');
      await expect.poll(() => matches.textContent()).toBe('1 vendor match.');
      await page.getByLabel('Use Fixture Measurement Ltd').check();
      await expect.poll(() => page.getByText(/^Chosen vendors: \d+$/).textContent()).toBe('Chosen vendors: 2');

      // A Google ATP.
      await page.getByLabel('Search providers').fill('audience');
      await page.getByLabel(/Fixture Audience, Inc\./).check();

      // A restriction: purpose 2 requires consent from Fixture Ads SA.
      await page.getByRole('button', { name: 'Add a restriction' }).click();
      const restriction = page.locator('[data-restriction="0"]');
      await restriction.getByRole('combobox', { name: /^Purpose/ }).selectOption({ label: '2. Use limited data to select advertising' });
      await restriction.getByRole('combobox', { name: /^Restriction/ }).selectOption({ label: 'Require consent' });
      await restriction.getByLabel(/Fixture Ads SA/).check();

      // A publisher purpose, the map (ads left unmapped for now), a special feature, the CMP id.
      await page.getByLabel('Publisher consent: Store and/or access information on a device').check();
      await page.getByRole('checkbox', { name: 'Analytics needs 8. Measure content performance' }).check();
      await page.getByRole('checkbox', { name: 'Analytics needs 9. Understand audiences through statistics or combinations of data from different sources' }).check();
      expect(await page.getByRole('columnheader', { name: 'Necessary' }).count()).toBe(0); // required: always granted, not mapped
      await page.getByRole('checkbox', { name: 'Use precise geolocation data' }).check();
      await cmpId.fill('300');
      await page.getByLabel('Publisher country').fill('fr');
      await page.getByRole('button', { name: 'Save TCF settings' }).click();
      await page.getByText('TCF settings saved.').waitFor();
      expect(await cmpId.getAttribute('aria-invalid')).toBeNull();

      // What was saved is what the operator chose (read back through the API).
      const saved = await server.request('GET', `/api/platform/projects/${project.projectId}/consent/experience`, { token: project.ownerToken });
      expect(saved.body.experience.tcf).toEqual({
        enabled: true,
        cmpId: 300,
        cmpVersion: 1,
        publisherCountryCode: 'FR',
        vendors: [1, 2],
        googleAtps: [89],
        specialFeatures: [1],
        restrictions: [{ purposeId: 2, vendorIds: [1], type: 'requireConsent' }],
        publisher: { purposes: [1], legitimateInterests: [] },
        purposeMap: { analytics: [8, 9] },
      });

      // Both layers, drawn by tcf.js in the preview frame.
      const frame: FrameLocator = page.frameLocator('iframe.preview-frame');
      const first = frame.locator('[data-tcf="first-layer"]');
      await first.waitFor({ timeout: 20_000 });
      // The frame reloads once the form has settled: the last render has both vendors.
      await expect.poll(() => first.textContent(), { timeout: 10_000 }).toContain('We and our 2 partners');
      // Purpose 2 (a vendor's) is on the first layer: by its own name, or inside a stack of the list that covers it
      // (tcf.js shows stacks where they shorten the list: test/e2e/sdk-v2-tcf.test.ts tests the choice).
      expect(await first.textContent()).toMatch(/Use limited data to select advertising|Advertising based on limited data|Personalised advertising/);
      expect(await axeViolations(page)).toEqual([]);
      await shoot(page, 'tcf-first-layer');
      await page.getByRole('button', { name: 'Second layer' }).click();
      const second = frame.locator('[data-tcf="second-layer"]');
      await second.waitFor({ timeout: 20_000 });
      await expect
        .poll(() => second.locator('[data-tcf-vendor]').evaluateAll((els) => els.map((el) => el.getAttribute('data-tcf-vendor'))))
        .toEqual(['1', '2']);
      expect(await second.textContent()).toContain('Fixture Audience, Inc.');
      await shoot(page, 'tcf-second-layer');

      // The consent editor's preview says the TCF banner replaces its banner where GDPR applies.
      await page.getByRole('link', { name: 'Back to the consent editor' }).click();
      await page.getByText(/^IAB TCF is on: visitors in the EEA/).waitFor();

      // The go-live checklist: the TCF items, the unmapped purpose still to do.
      await page.goto(base);
      const step = (id: string) => page.locator(`[data-step="${id}"]`);
      await step('tcf-cmp').waitFor();
      expect(await step('tcf-cmp').getAttribute('class')).toContain('done');
      expect(await step('tcf-list').getAttribute('class')).toContain('done');
      expect(await step('tcf-vendors').getAttribute('class')).toContain('done');
      expect(await step('tcf-map').getAttribute('class')).toContain('todo');
      expect(await step('tcf-map').textContent()).toContain('ads');
      // The install snippet puts stub.js with data-tcf first.
      expect(await page.locator('pre').first().textContent()).toMatch(/^<script src="[^"]+\/sdk\/v2\/stub\.js" data-tcf><\/script>\n<script src="[^"]+\/sdk\/v2\/consent\.js">/);
      await shoot(page, 'tcf-checklist');
      await step('tcf-map').getByRole('link', { name: 'Open the IAB TCF settings' }).click();
      await page.getByRole('checkbox', { name: 'Advertising needs 1. Store and/or access information on a device' }).check();
      await page.getByRole('button', { name: 'Save TCF settings' }).click();
      await page.getByText('TCF settings saved.').waitFor();
      await page.goto(base);
      await step('tcf-map').waitFor();
      await expect.poll(() => step('tcf-map').getAttribute('class')).toContain('done');

      // A draft without its CMP id (the API refuses to save one, but a draft written before that rule, or restored,
      // can hold it): the checklist says so with the publish check's words, the screen shows it at the field, and
      // setting the CMP id there clears the item.
      await server.services.db.query(`UPDATE consent_experiences SET settings = jsonb_set(settings, '{tcf,cmpId}', 'null') WHERE project_id = $1`, [project.projectId]);
      await page.reload();
      await step('tcf-cmp').waitFor();
      expect(await step('tcf-cmp').getAttribute('class')).toContain('todo');
      expect(await step('tcf-cmp').textContent()).toMatch(/Required when TCF is enabled/);
      await step('tcf-cmp').getByRole('link', { name: 'Open the IAB TCF settings' }).click();
      await expect.poll(() => cmpId.getAttribute('aria-invalid')).toBe('true');
      await page.getByText('Publishing would be refused until these are fixed').waitFor();
      await cmpId.fill('300');
      await page.getByRole('button', { name: 'Save TCF settings' }).click();
      await page.getByText('TCF settings saved.').waitFor();
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Home' }).click();
      await step('tcf-cmp').waitFor();
      await expect.poll(() => step('tcf-cmp').getAttribute('class')).toContain('done');

      // A Viewer reads it all and searches the vendors, but changes nothing.
      const viewer = { email: `viewer-${Date.now()}@example.com`, password: 'correct horse battery staple' };
      expect((await server.request('POST', '/api/platform/auth/register', { body: { ...viewer, name: 'Vera Viewer' } })).status).toBe(201);
      await addMember(server.services.db, { org: orgId, email: viewer.email, role: 'VIEWER' });
      const viewerContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      try {
        const vpage = await viewerContext.newPage();
        await vpage.goto(`${serviceUrl}/console/sign-in?next=${encodeURIComponent(`/orgs/${orgId}/projects/${project.projectId}/consent/tcf`)}`);
        await vpage.getByLabel('E-mail').fill(viewer.email);
        await vpage.getByLabel('Password').fill(viewer.password);
        await vpage.getByRole('button', { name: 'Sign in' }).click();
        await vpage.getByRole('heading', { level: 1, name: 'IAB TCF' }).waitFor();
        await vpage.getByText(/^Chosen vendors: 2$/).waitFor();
        await vpage.getByLabel('Search vendors').fill('security');
        await expect.poll(() => vpage.getByText(/^\d+ vendors? match\.$/).textContent()).toBe('1 vendor match.');
        expect(await vpage.getByLabel('Use Fixture Security GmbH').isDisabled()).toBe(true);
        // Only the search boxes (no label of their own but their <label>) and the filters ("Any…") stay enabled.
        expect(await enabledChangeControls(vpage, /^(INPUT|Any.*)$/)).toEqual([]);
      } finally {
        await viewerContext.close();
      }

      // Publishing agrees: nothing refused.
      const published = await server.request('POST', `/api/platform/projects/${project.projectId}/consent/publish`, { token: project.ownerToken });
      expect(published.status, published.text).toBe(201);
      expect(problems).toEqual([]);
    } catch (error) {
      await page.screenshot({ path: `${ARTIFACTS}/failed-tcf.png`, fullPage: true }).catch(() => {});
      throw error;
    } finally {
      await context.close();
    }
  });
});
