// The scanning browser, set up as a default desktop browser is: third-party cookies allowed.
//
// Playwright's `chromium.launch()` starts Chromium on a fresh profile whose cookie setting blocks third-party
// cookies (Chromium gives "UserPreferences" as the reason in `Network.responseReceivedExtraInfo`), so an ad
// pixel's `fr` or `IDE` was never seen. No command-line switch or CDP method turns that off
// (`Network.setCookieControls` does not lift it; Playwright rejects `--user-data-dir` in `launch()`), but the
// profile's preference does: `profile.cookie_controls_mode` 0 ("allow third-party cookies", what desktop Chrome
// ships with). So the browser is launched on a profile of our own whose `Default/Preferences` says so
// (`launchPersistentContext`); every visit still gets a fresh, isolated context of that browser
// (`browser.newContext()`), which inherits the setting. The profile is a temporary directory, removed when
// the browser goes away.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/** `profile.cookie_controls_mode`: 0 allows third-party cookies (1 blocks them, 2 blocks them in incognito only). */
const ALLOW_THIRD_PARTY_COOKIES = { profile: { cookie_controls_mode: 0 } };

/** `options` are chromium.ts's `scannerLaunchOptions` (flags, an environment without the service's secrets, sandbox rule). */
export async function launchScanningBrowser(options: { executablePath: string; args: string[]; env?: Record<string, string>; chromiumSandbox?: boolean }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'consent-scanner-profile-'));
  const removeProfile = () => rmSync(profile, { recursive: true, force: true });
  try {
    mkdirSync(join(profile, 'Default'));
    writeFileSync(join(profile, 'Default', 'Preferences'), JSON.stringify(ALLOW_THIRD_PARTY_COOKIES));
    const persistent = await chromium.launchPersistentContext(profile, options);
    const browser = persistent.browser();
    if (!browser) throw new Error('Chromium started without a browser object');
    // The persistent context's own blank page is never used: visits open contexts of their own.
    // Chromium's helpers may still be writing to it when the browser disconnects: retried, never thrown.
    browser.on('disconnected', () => void rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }).catch(() => {}));
    return browser;
  } catch (error) {
    removeProfile();
    throw error;
  }
}
