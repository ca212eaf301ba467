// The site scanner against pages that attack it (issue 38, docs/scanner.md "Deadlines", "Safety", "Queue"):
// a page that loops forever, one that writes 10,000 storage keys, WebRTC to internal addresses, a page that
// tries to forge who set a cookie; the browser's environment; the fair queue and the attempt count across
// restarts. One production-mode service (127.0.0.3 plays a public address, as in test/scanner.test.ts).
import { createSocket, type Socket } from 'node:dgram';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { loadCatalogue } from '../src/scanner/catalogue.js';
import { claimScan, releaseScan } from '../src/scanner/queue.js';
import { buildReport } from '../src/scanner/run.js';
import { setupProject, startService, type SiteProject } from './e2e/harness.js';
import { project as createProject, team } from './helpers/fixtures.js';
import { SHORT_DWELL_MS, shortDwell } from './helpers/scan-sites.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const scansPath = (projectId: string, rest = '') => `/api/platform/projects/${projectId}/scans${rest}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function settled(server: TestServer, token: string, projectId: string, scanId: string) {
  for (;;) {
    const res = await server.request('GET', scansPath(projectId, `/${scanId}`), { token });
    if (res.body.scan?.status === 'done' || res.body.scan?.status === 'failed') return { scan: res.body.scan, bytes: res.text.length };
    await sleep(250);
  }
}

/** Queues a scan of `urls` for the project and answers its id. */
async function queue(server: TestServer, project: SiteProject, urls: string[]): Promise<string> {
  const queued = await server.request('POST', scansPath(project.projectId), { token: project.ownerToken, body: { urls } });
  expect(queued.status, queued.text).toBe(202);
  return queued.body.scan.id;
}

const FORGED = 'https://www.google-analytics.com/analytics.js';
/** The storage page's keys: well over what a visit keeps, fewer than a real attack's (Chromium writes them per visit). */
const STORAGE_KEYS = 10_000;

describe('a scan of hostile pages (production mode)', () => {
  let server: TestServer;
  let site: Server;
  let origin: string;
  let udp: Socket;
  const datagrams: string[] = [];
  let loopVisits = 0;

  beforeAll(async () => {
    // Anything that reaches this UDP port on loopback came from a page past the guard.
    udp = createSocket('udp4');
    udp.on('message', (_message, from) => datagrams.push(`${from.address}:${from.port}`));
    await new Promise<void>((done) => udp.bind(0, '127.0.0.1', done));
    const udpPort = udp.address().port;
    site = createServer((req, res) => {
      const html = (body: string) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>t</title>${body}`);
      switch (new URL(req.url ?? '/', 'http://x').pathname) {
        case '/loop':
          loopVisits++;
          // Holds its renderer for good once loaded.
          return html(`<script>addEventListener('load', () => setTimeout(() => { for (;;) {} }, 20));</script>`);
        case '/plain':
          return html('<p>Nothing to see</p>');
        case '/storage':
          // 10,000 keys, one of them 1,000 characters long (it sorts first): 20 times the cap of 500 a visit keeps
          // (VISIT_CAPS.storageKeysPerArea), and listed whole they would make the answer twice the size checked below.
          return html(`<script>localStorage.setItem('a' + 'x'.repeat(999), ''); for (let i = 1; i < ${STORAGE_KEYS}; i++) localStorage.setItem('key-' + i, '');</script>`);
        case '/webrtc':
          // STUN and TURN at internal addresses (loopback, by address and by name): Chromium would send UDP there itself.
          return html(`<script>
const pc = new RTCPeerConnection({ iceServers: [
  { urls: ['stun:127.0.0.1:${udpPort}', 'stun:localhost:${udpPort}'] },
  { urls: 'turn:127.0.0.1:${udpPort}?transport=udp', username: 'u', credential: 'p' },
] });
pc.createDataChannel('x');
pc.createOffer().then((offer) => pc.setLocalDescription(offer));
</script>`);
        case '/forge':
          // Claims that Google's script set its cookie: through the scanner's binding (Playwright's controller
          // reaches every exposed binding), any global that looks like one, and a forged stack.
          return html(`<script>
const forged = ${JSON.stringify(FORGED)};
try {
  const controller = window.__playwright__binding__controller__;
  if (controller) for (const name of controller._bindings.keys()) controller.callBinding(name, 'victim', forged);
} catch (e) {}
try { window.__consentScannerCookie('victim', forged); } catch (e) {}
for (const name of Object.getOwnPropertyNames(window)) {
  try { if (typeof window[name] === 'function' && /^__/.test(name)) window[name](JSON.stringify(['victim=1', '    at x (' + forged + ':1:1)'])); } catch (e) {}
}
Error.prepareStackTrace = () => 'Error\\n    at x (' + forged + ':1:1)';
document.cookie = 'victim=1; max-age=3600; path=/';
</script>`);
        default:
          res.writeHead(404).end();
      }
    });
    await new Promise<void>((done) => site.listen(0, '127.0.0.3', done));
    origin = `http://127.0.0.3:${(site.address() as AddressInfo).port}`;
    // A secret in the service's environment that the browser must not inherit.
    process.env.SCANNER_TEST_SECRET = 'do-not-hand-to-chromium';
    // These pages do what they do while they load: a short dwell window, except for the WebRTC page (below).
    server = (await startService({ production: true, ...shortDwell({ concurrency: 1, scanBudgetMs: 180_000 }) }, { scannerNetwork: { publicStandIns: ['127.0.0.3'] } })).server;
  }, 60_000);

  afterAll(async () => {
    delete process.env.SCANNER_TEST_SECRET;
    await server?.close();
    site?.closeAllConnections();
    await new Promise((done) => site?.close(done));
    udp?.close();
  });

  it('keeps a page with 10,000 storage keys to the cap, inside the page, and says what was cut', async () => {
    const tenant = await setupProject(server);
    const { scan, bytes } = await settled(server, tenant.ownerToken, tenant.projectId, await queue(server, tenant, [`${origin}/storage`]));
    expect(scan.status, scan.error).toBe('done');
    for (const visit of scan.pages[0].visits) {
      expect(visit.storage).toHaveLength(500);
      expect(visit.cut).toEqual({ storageKeys: STORAGE_KEYS - 500, cookies: 0, requests: 0, links: 0 });
      expect(Math.max(...visit.storage.map((s: any) => s.key.length))).toBeLessThanOrEqual(200);
    }
    // The three visits' 10,000 keys would make a 1 MB answer (about 35 bytes a key), their writes more.
    expect(bytes).toBeLessThan(500_000);
  }, 240_000); // writing and reading 10,000 keys takes Chromium seconds per visit

  it('sends no WebRTC datagram to an internal STUN or TURN server', async () => {
    const tenant = await setupProject(server);
    // The default dwell window (the worker reads it when it starts a scan): the page's ICE gathering is watched
    // for as long as a scan watches a page.
    server.services.config.scanner.dwellMs = loadConfig().scanner.dwellMs;
    try {
      const { scan } = await settled(server, tenant.ownerToken, tenant.projectId, await queue(server, tenant, [`${origin}/webrtc`]));
      expect(scan.status, scan.error).toBe('done');
      expect(scan.pages[0].visits.map((v: any) => v.error)).toEqual([null, null, null]);
    } finally {
      server.services.config.scanner.dwellMs = SHORT_DWELL_MS;
    }
    expect(datagrams).toEqual([]);
  }, 120_000);

  it('does not let the page forge who set a cookie', async () => {
    const tenant = await setupProject(server);
    const { scan } = await settled(server, tenant.ownerToken, tenant.projectId, await queue(server, tenant, [`${origin}/forge`]));
    expect(scan.status, scan.error).toBe('done');
    const cookie = scan.pages[0].visits[0].cookies.find((c: any) => c.name === 'victim');
    // The page's inline script wrote it, and that is what the report says (an inline script: the page, `inline`).
    expect(cookie.setBy).toEqual({ type: 'script', url: `${origin}/forge`, inline: true });
  }, 120_000);

  it('launches Chromium without the service environment, its background requests off, the sandbox on unless root', () => {
    // The scanner's browser: a child of this process with the scanner's own WebRTC switch (test browsers have none).
    const browsers = readdirSync('/proc').filter((pid) => {
      try {
        const parent = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1];
        return /^\d+$/.test(pid) && Number(parent) === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--webrtc-ip-handling-policy=');
      } catch {
        return false;
      }
    });
    expect(browsers).toHaveLength(1);
    const environ = readFileSync(`/proc/${browsers[0]}/environ`, 'utf8').split('\0');
    const args = readFileSync(`/proc/${browsers[0]}/cmdline`, 'utf8').split('\0');
    expect(environ.some((entry) => entry.startsWith('SCANNER_TEST_SECRET='))).toBe(false);
    expect(environ.some((entry) => entry.startsWith('DATABASE_URL=') || entry.startsWith('LEDGER_SIGNING_KEY='))).toBe(false);
    expect(environ).not.toContain(`HOME=${process.env.HOME}`);
    expect(args).toEqual(expect.arrayContaining(['--disable-background-networking', '--disable-component-update', '--webrtc-ip-handling-policy=disable_non_proxied_udp']));
    expect(args.includes('--no-sandbox')).toBe(process.getuid?.() === 0);
  });

  // Last: it shortens the budget of this service's scans.
  it("fails a scan whose page holds the browser once its budget is spent, without a retry, and runs the next tenant's scan", async () => {
    server.services.config.scanner.scanBudgetMs = 8000;
    const looping = await setupProject(server);
    const other = await setupProject(server);
    const loopId = await queue(server, looping, [`${origin}/loop`]);
    const otherId = await queue(server, other, [`${origin}/plain`]);
    // The worker reads the budget when it starts a scan: once the looping page is being visited, the next
    // tenant's scan gets the usual one back.
    while (!loopVisits) await sleep(100);
    server.services.config.scanner.scanBudgetMs = 180_000;
    const { scan: hung } = await settled(server, looping.ownerToken, looping.projectId, loopId);
    expect(hung).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringContaining('budget of 8 s') });
    // Within its budget, plus the grace for closing what the page held (not a speed assertion: a hang never ends).
    expect(Date.parse(hung.finishedAt) - Date.parse(hung.startedAt)).toBeLessThan(8000 + 30_000);
    const { scan: next } = await settled(server, other.ownerToken, other.projectId, otherId);
    expect(next.status, next.error).toBe('done');
    expect(Date.parse(next.startedAt)).toBeGreaterThanOrEqual(Date.parse(hung.finishedAt));
    // Not queued again later either.
    await sleep(500);
    expect((await server.request('GET', scansPath(looping.projectId, `/${loopId}`), { token: looping.ownerToken })).body.scan).toMatchObject({ status: 'failed', attempts: 1 });
  }, 120_000);
});

describe('the scan queue across tenants (no worker: claims made by the test)', () => {
  let server: TestServer;
  const url = 'https://shop.example/';

  beforeAll(async () => {
    server = await startTestServer({ scanner: { ...loadConfig().scanner, concurrency: 0 } });
  });
  afterAll(() => server?.close());

  const start = async (token: string, projectId: string) => {
    const res = await server.request('POST', scansPath(projectId), { token, body: { urls: [url] } });
    expect(res.status, res.text).toBe(202);
    return res.body.scan.id as string;
  };

  it("takes org B's scan before org A's second one, and one scan per organization at a time", async () => {
    const a = await team(server, { planId: 'growth' });
    const aSecond = await createProject(server, a.owner, a.org.id, 'Second shop');
    const b = await team(server);
    const a1 = await start(a.owner.token, a.project.id);
    const a2 = await start(a.owner.token, aSecond.id);
    const b1 = await start(b.owner.token, b.project.id);
    expect((await claimScan(server.services, 'worker-1'))?.id).toBe(a1);
    expect((await claimScan(server.services, 'worker-2'))?.id).toBe(b1);
    expect(await claimScan(server.services, 'worker-3')).toBeNull(); // A and B each have one running
    await server.services.db.prisma.scan.update({ where: { id: a1 }, data: { status: 'done', leaseOwner: null, leaseUntil: null } });
    expect((await claimScan(server.services, 'worker-1'))?.id).toBe(a2);
  });

  it('counts a shutdown as an attempt: a scan handed back at two restarts is failed, not queued again', async () => {
    const t = await team(server);
    const id = await start(t.owner.token, t.project.id);
    const first = await claimScan(server.services, 'instance-a');
    expect(first).toMatchObject({ id, attempts: 1 });
    await releaseScan(server.services, id, 'instance-a');
    const second = await claimScan(server.services, 'instance-b');
    expect(second).toMatchObject({ id, attempts: 2 });
    await releaseScan(server.services, id, 'instance-b');
    const row = await server.services.db.prisma.scan.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ status: 'failed', attempts: 2, error: expect.stringContaining('not tried again') });
    expect(await claimScan(server.services, 'instance-c')).toBeNull();
  });
});

describe('the report size cap', () => {
  it('empties visits from the last page back, then drops findings, and says so in the report', () => {
    const visit = (kind: string) => ({
      kind,
      url: 'https://shop.example/',
      finalUrl: 'https://shop.example/',
      status: 200,
      error: null,
      sdk: { loaded: false, keyPrefix: null, projectKey: false },
      bannerShown: false,
      decided: false,
      decidedAtMs: null,
      consentRequestsAnswered: 0,
      loads: [],
      cookies: [],
      writes: [],
      storage: Array.from({ length: 500 }, (_, i) => ({ area: 'local' as const, key: `key-${i}-${'x'.repeat(150)}` })),
      requests: [],
      refused: [],
      bytes: 0,
      truncated: false,
      cut: { storageKeys: 0, cookies: 0, requests: 0, links: 0 },
      links: [],
    });
    const pages = Array.from({ length: 10 }, (_, i) => ({ url: `https://shop.example/${i}`, depth: 0, visits: ['before', 'reject', 'accept'].map(visit) }));
    const env = {
      catalogue: loadCatalogue('http://localhost'),
      versionNumber: null,
      visitTimeoutMs: 30_000,
      maxPageBytes: 1_000_000,
      maxReportBytes: 500_000,
      dwellMs: 3000,
      findings: { mappedCookies: [], purposes: [] },
    };
    const job = { id: 'scan', projectId: 'project', trigger: 'manual', urls: ['https://shop.example/0'], followLinks: 9, startedAt: new Date() };
    const report = buildReport(job, env, pages as any, { browserVersion: '1', finishedAt: new Date() });
    expect(Buffer.byteLength(JSON.stringify(report))).toBeLessThanOrEqual(500_000);
    expect(report.cut).toMatchObject({ visitsEmptied: expect.any(Number), findingsDropped: 0 });
    const emptied = report.pages.flatMap((page) => page.visits).filter((v: any) => v.cut.report);
    expect(emptied).toHaveLength(report.cut!.visitsEmptied);
    // The first page is kept whole; the last is emptied.
    expect(report.pages[0]!.visits[0]!.storage).toHaveLength(500);
    expect(report.pages[9]!.visits[2]!.storage).toEqual([]);
  });
});
