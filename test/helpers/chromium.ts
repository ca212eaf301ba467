// The browser the browser tests drive: Debian's `chromium` package through playwright-core (a browser
// downloaded from a CDN is not an option: the machines this runs on reach only the npm and Debian registries).
// As a vitest globalSetup it makes `npm test` work on a fresh machine: when no Chromium is found and the
// run is root, it installs Debian's package; otherwise the browser tests fail with the command to run.
// No vitest imports here: bench/ uses `findChromium` through test/e2e/harness.ts.
import { execFileSync } from 'node:child_process';
import { findChromium } from '../../src/scanner/chromium.js';

/** Flags every test browser runs with (headless in a container, nothing fetched from Google's servers). */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** The customer's pages of test/e2e/site-v2.ts are on *.acme.test: Chromium resolves those names to loopback. */
export const SITE_HOSTS_ARG = '--host-resolver-rules=MAP *.acme.test 127.0.0.1';
export const INSTALL_COMMAND = 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium fonts-dejavu-core';

/** CHROMIUM_PATH when set, else the first `chromium` or `chromium-browser` on PATH (the scanner's own lookup). */
export { findChromium };

export function chromiumMissingMessage(): string {
  const where = process.env.CHROMIUM_PATH ? `at CHROMIUM_PATH=${process.env.CHROMIUM_PATH}` : 'on PATH (chromium, chromium-browser)';
  return (
    `Chromium not found ${where}. The browser tests need Debian's chromium package; install it as root with\n` +
    `  ${INSTALL_COMMAND}\n` +
    '(npm test does this itself when it runs as root) or set CHROMIUM_PATH to a Chromium binary.'
  );
}

/** vitest globalSetup: find Chromium, or install Debian's when we may; never a silent skip. */
export default function ensureChromium(): void {
  if (findChromium()) return;
  const root = process.getuid?.() === 0;
  if (root && !process.env.CHROMIUM_PATH) {
    console.log("Chromium not found: installing Debian's chromium package for the browser tests (once per machine)");
    try {
      const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
      // Wait for another apt/dpkg run (a second test run, an operator's install) instead of failing at once.
      const waitForLock = ['-o', 'DPkg::Lock::Timeout=600'];
      execFileSync('apt-get', [...waitForLock, 'update', '-qq'], { stdio: ['ignore', 'inherit', 'inherit'], env });
      execFileSync('apt-get', [...waitForLock, 'install', '-y', '-qq', 'chromium', 'fonts-dejavu-core'], { stdio: ['ignore', 'inherit', 'inherit'], env });
    } catch (error) {
      console.error(`!! installing chromium failed: ${(error as Error).message}`);
    }
    const found = findChromium();
    if (found) {
      console.log(`Chromium installed: ${found}`);
      return;
    }
  }
  // The run goes on (a subset without browser tests still passes); every browser test fails with this.
  console.error(`\n!!!!!!!! ${chromiumMissingMessage()}\n!!!!!!!! The browser tests will FAIL.\n`);
}
