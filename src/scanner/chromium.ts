// Which Chromium the scanner drives: Debian's `chromium` package through playwright-core (no browser download;
// the service's machines reach only the npm and Debian registries). Found like the tests find it
// (test/helpers/chromium.ts): CHROMIUM_PATH when set, else `chromium` or `chromium-browser` on PATH.
import { accessSync, constants, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
 * Flags of the scanning browser: headless in a container, nothing fetched from Google's servers (background
 * networking, component updates, sync: requests the per-context guard proxy would not see), and WebRTC kept to
 * the proxy. `--webrtc-ip-handling-policy` is the switch this Chromium reads (the older
 * `--force-webrtc-ip-handling-policy` is gone and silently ignored): with `disable_non_proxied_udp` a page's
 * RTCPeerConnection sends no UDP of its own (STUN/TURN at internal addresses included), only TCP through the
 * proxy, which checks the address (docs/scanner.md "Safety"; test/scanner-hostile.test.ts listens for it).
 */
export const SCANNER_CHROMIUM_ARGS = [
  '--headless',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-domain-reliability',
  '--disable-breakpad',
  '--no-first-run',
  '--no-default-browser-check',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

let scannerHome: string | undefined;

/**
 * The browser's whole environment: nothing of the service's own (database URL, signing keys, tokens), only
 * what Chromium needs to start. HOME (and the XDG directories under it) is a directory of its own, made once
 * per process and readable by this user only.
 */
export function scannerEnvironment(env: Record<string, string | undefined> = process.env): Record<string, string> {
  scannerHome ??= mkdtempSync(join(tmpdir(), 'consent-scanner-home-'));
  return {
    PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: scannerHome,
    XDG_CONFIG_HOME: join(scannerHome, '.config'),
    XDG_CACHE_HOME: join(scannerHome, '.cache'),
    TMPDIR: tmpdir(),
    LANG: 'C.UTF-8',
    TZ: 'UTC',
  };
}

/**
 * The sandbox is on unless the service runs as root, where Chromium refuses to start with it (run the scanner
 * as an unprivileged user, or in its own container, to have it: docs/scanner.md "Running Chromium").
 */
export const sandboxAllowed = () => process.getuid?.() !== 0;

/** How the worker launches the scanning browser (playwright-core `chromium.launch` options). */
export function scannerLaunchOptions(executablePath: string) {
  return { executablePath, args: SCANNER_CHROMIUM_ARGS, env: scannerEnvironment(), chromiumSandbox: sandboxAllowed() };
}
