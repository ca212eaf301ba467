// vitest globalSetup (after chromium.ts): one Chromium for the whole run. Every browser test file used to launch
// its own (a second or two of start-up each, on two cores shared with the services); now they connect to this
// one (test/e2e/harness.ts launchChromium) and get browser contexts of their own, so no cookie, storage or cache
// is shared between files. `browser.close()` in a file only disconnects it. Without Chromium nothing is launched
// here and every browser test fails with chromium.ts's message, as before.
import { chromium, type BrowserServer } from 'playwright-core';
import { CHROMIUM_ARGS, findChromium, SITE_HOSTS_ARG } from './chromium.js';

export const BROWSER_ENDPOINT_VARIABLE = 'TEST_BROWSER_WS_ENDPOINT';
/** The flags of the shared browser: a file asking for flags outside this list launches its own. */
export const SHARED_BROWSER_ARGS = [...CHROMIUM_ARGS, SITE_HOSTS_ARG];

export default async function setup(): Promise<(() => Promise<void>) | void> {
  const executablePath = findChromium();
  if (!executablePath) return;
  const server: BrowserServer = await chromium.launchServer({ executablePath, args: SHARED_BROWSER_ARGS });
  process.env[BROWSER_ENDPOINT_VARIABLE] = server.wsEndpoint();
  return async () => {
    delete process.env[BROWSER_ENDPOINT_VARIABLE];
    await server.close();
  };
}
