// The console's Signed-in visitors screen (docs/subjects.md) in headless Chromium: the help text, an Admin makes
// the subject secret and sees it once, rotates it after confirming (the previous one's grace shown), and erases a
// signed-in visitor by the subject hash of their receipt; a Viewer sees the prefix and no control to change it.
import { SignJWT } from 'jose';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkTeam } from '../helpers/sdk.js';
import type { TestServer } from '../helpers/server.js';
import { launchChromium } from './harness.js';
import { axeViolations, openScreen, screenshots, signedIn, startConsoleService } from './console-screens-helpers.js';

let browser: Browser;
let server: TestServer;
let serviceUrl: string;

beforeAll(async () => {
  browser = await launchChromium();
  ({ server, serviceUrl } = await startConsoleService());
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('Signed-in visitors', () => {
  it('an Admin makes the secret (shown once), rotates it and erases a visitor; a Viewer only reads', async () => {
    const t = await sdkTeam(server);
    const path = `/orgs/${t.org.id}/projects/${t.project.id}/subjects`;
    const admin = await signedIn(browser, serviceUrl, t.admin);
    const { page } = admin;
    await openScreen(page, serviceUrl, path, 'Signed-in visitors');
    await page.getByText('The service keeps only a keyed hash of the account id').waitFor();
    await page.getByText('No subject secret yet').waitFor();
    await page.getByRole('button', { name: 'Make subject secret' }).click();
    const secret = await page.getByRole('textbox', { name: 'Subject secret' }).inputValue();
    expect(secret).toMatch(/^subsec_[0-9A-Za-z]{43}$/);
    await page.getByText(`${secret.slice(0, 13)}…`).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'subjects-secret-made');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    // Gone once dismissed (waited for: the click re-renders after it returns).
    await page.getByRole('textbox', { name: 'Subject secret' }).waitFor({ state: 'detached' });

    // A person signs in on a device and decides: their receipt carries the subject hash.
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('account-77').setAudience(t.project.id)
      .setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode(secret));
    expect((await server.request('POST', '/api/sdk/v2/identify', { token: t.key.secret, body: { installationId: 'console-device-1', token } })).status).toBe(200);
    expect((await t.post('console-device-1')).status).toBe(201);
    const receipts = await server.request('GET', `/api/platform/projects/${t.project.id}/receipts`, { token: t.viewer.token });
    const hash = receipts.body.receipts[0].subjectHash as string;

    await page.getByRole('button', { name: 'Rotate subject secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = await page.getByRole('textbox', { name: 'Subject secret' }).inputValue();
    expect(rotated).not.toBe(secret);
    await page.getByText(/accepted until/).waitFor();

    await page.getByRole('textbox', { name: 'Subject hash' }).fill(hash);
    await page.getByRole('button', { name: 'Erase', exact: true }).click();
    await page.getByText('Erased: 1 installation unlinked.', { exact: false }).waitFor();
    expect(await server.services.db.query('SELECT 1 FROM subject_links WHERE project_id = $1', [t.project.id])).toEqual([]);
    expect(admin.errors).toEqual([]);
    await admin.close();

    const viewer = await signedIn(browser, serviceUrl, t.viewer);
    await openScreen(viewer.page, serviceUrl, path, 'Signed-in visitors');
    await viewer.page.getByText(`${rotated.slice(0, 13)}…`).waitFor();
    await viewer.page.getByText('Admins and Owners make and rotate the subject secret.').waitFor();
    expect(await viewer.page.getByRole('button').filter({ hasText: /secret|Erase/ }).count()).toBe(0);
    expect(viewer.forbidden).toEqual([]);
    await viewer.close();
  });
});
