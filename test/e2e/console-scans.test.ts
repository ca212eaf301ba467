// The console's Site scans screen (docs/scanner.md), one operator journey in Chromium: start a scan from the
// form, wait for the worker to finish it, read the findings with their evidence, add the unmapped cookie to the
// draft under the suggested purpose, download the report.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { shortDwell, startScanSites, type ScanSites } from '../helpers/scan-sites.js';
import type { TestServer } from '../helpers/server.js';
import { axeViolations, downloadedText, screenshots } from './console-screens-helpers.js';
import { launchChromium, setupProject, startService, type SiteProject } from './harness.js';

describe('console: site scans', () => {
  let browser: Browser;
  let server: TestServer;
  let serviceUrl: string;
  let sites: ScanSites;
  let project: SiteProject;

  beforeAll(async () => {
    let resolve: (host: string) => Promise<string[]> = async () => [];
    // The fixture pages write nothing late: a short dwell window (test/helpers/scan-sites.ts).
    ({ server, serviceUrl } = await startService(shortDwell(), { scannerNetwork: { resolve: (host) => resolve(host) } }));
    browser = await launchChromium();
    project = await setupProject(server);
    sites = await startScanSites(serviceUrl, project.key);
    resolve = sites.resolve;
    await server.request('PUT', `/api/platform/projects/${project.projectId}/allowed-origins`, { token: project.ownerToken, body: { origins: [sites.origin] } });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await sites?.close();
  });

  it('starts a scan, shows its findings with evidence, adds the unmapped cookie to the draft and downloads the report', async () => {
    const me = await server.request('POST', '/graphql', { token: project.ownerToken, body: { query: '{ me { user { email } organizations { id } } }' } });
    const { email } = me.body.data.me.user;
    const orgId = me.body.data.me.organizations[0].id;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    try {
      await page.goto(`${serviceUrl}/console/sign-in`);
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill('correct horse battery staple');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => !url.pathname.endsWith('/sign-in'));
      await page.goto(`${serviceUrl}/console/orgs/${orgId}/projects/${project.projectId}/scans`);
      await page.getByRole('heading', { level: 1, name: 'Site scans' }).waitFor();

      await page.getByLabel(/Pages to scan/).fill(`${sites.origin}/leaky`);
      await page.getByLabel(/Same-site links to follow/).fill('0');
      await page.getByRole('button', { name: 'Start scan' }).click();
      await page.getByText(/^Scan queued\./).waitFor();
      // The screen looks again every few seconds while the scan is queued or running.
      await page.getByRole('button', { name: /^Findings of the scan/ }).click({ timeout: 120_000 });

      const findings = page.getByRole('table', { name: 'Findings with their evidence' });
      await findings.waitFor();
      const rows = findings.getByRole('row');
      expect(await rows.filter({ hasText: 'Before consent' }).filter({ hasText: 'cookie: _ga' }).filter({ hasText: 'analytics' }).count()).toBe(1);
      expect(await rows.filter({ hasText: 'After Reject all' }).filter({ hasText: 'request: px.ads.linkedin.com' }).filter({ hasText: 'marketing' }).count()).toBe(1);
      const unmapped = rows.filter({ hasText: 'Unmapped cookie' });
      expect(await unmapped.getByLabel('Purpose for _ga').inputValue()).toBe('analytics');
      // The evidence: who set the cookie.
      await rows.filter({ hasText: 'Before consent' }).filter({ hasText: 'cookie: _ga' }).getByText('ID used to identify users').click();
      await findings.getByText(`"url": "${sites.origin}/ga.js"`).first().waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await unmapped.getByRole('button', { name: 'Add to draft' }).click();
      await unmapped.getByText('Added to the draft.').waitFor();
      const experience = await server.request('GET', `/api/platform/projects/${project.projectId}/consent/experience`, { token: project.ownerToken });
      expect(experience.body.experience.cookies).toEqual({ analytics: ['_ga'] });

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
      expect(download.suggestedFilename()).toMatch(/^site-scan-.*\.csv$/);
      const scans = await server.request('GET', `/api/platform/projects/${project.projectId}/scans`, { token: project.ownerToken });
      expect(await downloadedText(download)).toContain(`hashes.reportHash,${scans.body.scans[0].reportHash}`);
      // Both list tables, the scans and the findings, as cards at 390 px with every value in sight (docs/console.md).
      await screenshots(page, 'scans-findings');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);
});
