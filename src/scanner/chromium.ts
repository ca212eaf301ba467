// Which Chromium the scanner drives: Debian's `chromium` package through playwright-core (no browser download;
// the service's machines reach only the npm and Debian registries). Found like the tests find it
// (test/helpers/chromium.ts): CHROMIUM_PATH when set, else `chromium` or `chromium-browser` on PATH.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const NAMES = ['chromium', 'chromium-browser'];

export const CHROMIUM_INSTALL_COMMAND = 'apt-get install -y chromium fonts-dejavu-core';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** CHROMIUM_PATH when set (and executable), else the first `chromium` or `chromium-browser` on PATH. */
export function findChromium(env: Record<string, string | undefined> = process.env): string | undefined {
  const configured = env.CHROMIUM_PATH;
  if (configured) return executable(configured) ? configured : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of NAMES) {
      if (executable(join(dir, name))) return join(dir, name);
    }
  }
  return undefined;
}

/** What `POST /scans` says when this instance has no browser to scan with. */
export function chromiumMissing(env: Record<string, string | undefined> = process.env): string {
  const where = env.CHROMIUM_PATH ? `at CHROMIUM_PATH=${env.CHROMIUM_PATH}` : 'on PATH (chromium, chromium-browser)';
  return `The site scanner needs Chromium, and none was found ${where}. Install Debian's package (${CHROMIUM_INSTALL_COMMAND}) or set CHROMIUM_PATH, then restart the service.`;
}

/**
 * Flags of the scanning browser: headless in a container, nothing fetched from Google's servers, and WebRTC
 * kept to the proxy (no UDP of its own that would bypass the address guard, docs/scanner.md "Safety").
 */
export const SCANNER_CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];
