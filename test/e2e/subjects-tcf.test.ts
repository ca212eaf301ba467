// TCF Policies 5.0.b (issue 47, docs/subjects.md): on an IAB TCF page, an installation signed in with identify()
// is told on the first layer that the choice applies on the person's signed-in devices; signed out, it is not.
// The TCF site of test/e2e/tcf-site.ts (a fixture service); the signed-in state as identify() leaves it in storage.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromiumForSites } from './site-v2.js';
import { startTcfSite, type TcfSite } from './tcf-site.js';

const SCOPE = 'You are signed in: your choice applies on every device where you are signed in to your account.';
let site: TcfSite;
let browser: Browser;
beforeAll(async () => {
  site = await startTcfSite();
  browser = await launchChromiumForSites();
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

async function firstLayerText(signedIn: boolean) {
  const context = await browser.newContext();
  try {
    // What identify() writes (sdk/src/v2/more.ts): the signed-in marker and the marker that makes init ask /decision.
    if (signedIn) await context.addInitScript(() => (localStorage.setItem('consent:subject:prj_tcf', '1'), localStorage.setItem('consent:prefs:prj_tcf', '1')));
    const page = await context.newPage();
    await page.goto(site.siteOrigin + '/');
    const banner = page.locator('[data-tcf="first-layer"]');
    await expect.poll(() => banner.isVisible(), { timeout: 20_000 }).toBe(true);
    return (await banner.textContent()) ?? '';
  } finally {
    await context.close();
  }
}

describe('the TCF first layer for a signed-in person', () => {
  it('states the scope of the choice when signed in, and not otherwise', async () => {
    expect(await firstLayerText(true)).toContain(SCOPE);
    expect(await firstLayerText(false)).not.toContain(SCOPE);
  });
});
