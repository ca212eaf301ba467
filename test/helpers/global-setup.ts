// vitest globalSetup: everything the run needs once, in order. vitest calls a config's globalSetup for the root
// config and again for each project that extends it (vitest.config.ts has two), all in the main process: the
// first call does the work and owns the teardown, the others find it done.
import buildSdk from './build-sdk.js';
import buildConsole from './build-console.js';
import buildService from './build-service.js';
import ensureChromium from './chromium.js';
import launchBrowserServer from './browser-server.js';
import databaseImage from './database-image.js';

const DONE = Symbol.for('consent-service.test.global-setup');

export default async function setup(): Promise<(() => Promise<void>) | void> {
  const process_ = globalThis as { [DONE]?: boolean };
  if (process_[DONE]) return;
  process_[DONE] = true;
  // The service serves sdk/dist and console/dist: rebuild them first when their sources are newer; then the
  // service's dist/ (tests start it as `npm start` does) when stale.
  buildSdk();
  buildConsole();
  buildService();
  // Chromium for the browser tests: found, or installed from Debian when missing and running as root; then
  // launched once for the run.
  ensureChromium();
  const teardowns: ((() => Promise<void>) | void)[] = [];
  try {
    teardowns.push(await launchBrowserServer());
    // One migrated database image per run, cloned by every test server.
    teardowns.push(await databaseImage());
  } catch (error) {
    for (const teardown of teardowns.reverse()) await teardown?.();
    throw error;
  }
  return async () => {
    for (const teardown of teardowns.reverse()) await teardown?.();
    delete process_[DONE];
  };
}
