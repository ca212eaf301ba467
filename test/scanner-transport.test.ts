// The transport check of a scan (docs/scanner.md "Transport: HTTPS redirect, TLS, HSTS"), as the EDPS Website
// Evidence Collector makes it: whether `http://<host>/` redirects to https, and what the https origin presents
// (protocol, cipher, certificate, trust, HSTS). One scan of three sites on loopback: one whose http redirects to
// an https server with a self-signed certificate made here (with HSTS), one that serves plain http only, one whose
// `/` redirects forever; then the check alone against hostile servers (never answers, drips headers, huge headers,
// a TLS port that never speaks), an address the production policy refuses, a spent deadline and the origin cap.
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import type { Browser } from 'playwright-core';
import selfsigned from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Deadline } from '../src/scanner/deadline.js';
import { renderReportCsv, renderReportHtml } from '../src/scanner/report-files.js';
import { checkTransport } from '../src/scanner/transport.js';
import { isAllowedAddress } from '../src/webhooks/address.js';
import { launchChromium, setupProject, startService, type SiteProject } from './e2e/harness.js';
import { shortDwell, scansPath, scanToEnd } from './helpers/scan-sites.js';
import type { TestServer } from './helpers/server.js';

const SCREENSHOTS = process.env.SCAN_REPORT_SCREENSHOTS; // a folder: the report's screenshots are written there
const HSTS = 'max-age=31536000; includeSubDomains; preload';

// Names the scanner reaches through its resolver; each on a loopback address of its own, where nothing listens on 80 or 443.
const HOSTS: Record<string, string> = {
  'secure.test': '127.0.0.5',
  'plain.test': '127.0.0.6',
  'loop.test': '127.0.0.7',
  'hang.test': '127.0.0.8',
  'huge.test': '127.0.0.9',
  'mute-tls.test': '127.0.0.10',
  'old.test': '127.0.0.11',
  localhost: '127.0.0.1',
};
const resolve = async (host: string) => (HOSTS[host] ? [HOSTS[host]!] : []);

async function listen(server: Server | TcpServer, host: string): Promise<number> {
  await new Promise<void>((done) => server.listen(0, host, done));
  return (server.address() as AddressInfo).port;
}

async function certificate(name: string, dates: { notBeforeDate?: Date; notAfterDate?: Date } = {}) {
  return selfsigned.generate([{ name: 'commonName', value: name }], { keySize: 2048, ...dates, extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: name }] }] });
}

const page = (title: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1></body></html>`;

const servers: (Server | TcpServer)[] = [];
const sockets = new Set<Socket>();
async function closeAll() {
  for (const socket of sockets) socket.destroy();
  for (const server of servers) {
    (server as Server).closeAllConnections?.();
    await new Promise((done) => server.close(done));
  }
}
afterAll(closeAll);

describe('a scan checks each origin: the redirect to https, the certificate and TLS, HSTS', () => {
  let server: TestServer;
  let project: SiteProject;
  let browser: Browser;
  let scan: any;
  let report: any;
  let ports: { http: number; https: number; plain: number; loop: number };

  beforeAll(async () => {
    // The scanner's browser accepts the self-signed certificate (a test-only StartOptions field); the TLS check must not.
    ({ server } = await startService(shortDwell(), { scannerNetwork: { resolve, ignoreHttpsErrors: true } }));
    project = await setupProject(server);
    const pems = await certificate('secure.test');
    const secure = createHttpsServer({ key: pems.private, cert: pems.cert }, (_req, res) =>
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Strict-Transport-Security': HSTS }).end(page('Secure shop')),
    );
    const https = await listen(secure, HOSTS['secure.test']!);
    // Its plain http side sends every path to the same path on https.
    const redirect = createServer((req, res) => res.writeHead(301, { Location: `https://secure.test:${https}${req.url}` }).end());
    const plain = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page('Plain shop')));
    // Its pages answer; its `/` redirects to itself with a new query, for ever.
    let n = 0;
    const loop = createServer((req, res) => (req.url === '/' || req.url?.startsWith('/?') ? res.writeHead(302, { Location: `/?n=${++n}` }).end() : res.writeHead(200, { 'Content-Type': 'text/html' }).end(page('Loop shop'))));
    servers.push(secure, redirect, plain, loop);
    ports = { https, http: await listen(redirect, HOSTS['secure.test']!), plain: await listen(plain, HOSTS['plain.test']!), loop: await listen(loop, HOSTS['loop.test']!) };

    const urls = [`http://secure.test:${ports.http}/shop`, `http://plain.test:${ports.plain}/shop`, `http://loop.test:${ports.loop}/shop`];
    ({ scan, report } = await scanToEnd(server, project, urls));
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('follows http://<host>/ to https and reports the self-signed chain as untrusted, though the browser accepted it, with HSTS', () => {
    // The browser was told to accept the certificate: the visit reached the https page.
    expect(report.pages[0].visits[0]).toMatchObject({ status: 200, finalUrl: `https://secure.test:${ports.https}/shop` });
    const [secure] = report.transport.origins;
    expect(secure.origin).toBe(`http://secure.test:${ports.http}`);
    expect(secure.httpsRedirect).toEqual({
      url: `http://secure.test:${ports.http}/`,
      chain: [
        { url: `http://secure.test:${ports.http}/`, status: 301, location: `https://secure.test:${ports.https}/`, error: null },
        { url: `https://secure.test:${ports.https}/`, status: 200, location: null, error: null },
      ],
      redirectsToHttps: true,
      fallsBackToHttp: false,
      error: null,
    });
    expect(secure.tls).toMatchObject({
      url: `https://secure.test:${ports.https}/`,
      used: true,
      protocol: 'TLSv1.3',
      cipher: { standardName: expect.stringMatching(/^TLS_/) },
      authorized: false,
      authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT',
      certificate: { subject: 'CN=secure.test', issuer: 'CN=secure.test', subjectAltNames: ['DNS:secure.test'], hostMatches: true, selfSigned: true, fingerprint256: expect.stringMatching(/^[0-9A-F:]{95}$/) },
      status: 200,
      hsts: { header: HSTS, maxAge: 31_536_000, includeSubDomains: true, preload: true },
      problems: ['untrusted_chain'],
      error: null,
    });
    expect(secure.tls.certificate.daysLeft).toBeGreaterThanOrEqual(363);
    expect(report.findings.filter((f: any) => f.type === 'tls_invalid')).toEqual([
      expect.objectContaining({
        pageUrl: `http://secure.test:${ports.http}/shop`,
        subject: { kind: 'page', name: `https://secure.test:${ports.https}/` },
        evidence: expect.objectContaining({ problems: ['untrusted_chain'], authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
      }),
    ]);
  });

  it('reports a site that answers plain http without a redirect as no_https_redirect, and one that redirects for ever with its chain cut', () => {
    const [, plain, loop] = report.transport.origins;
    expect(plain.httpsRedirect).toEqual({
      url: `http://plain.test:${ports.plain}/`,
      chain: [{ url: `http://plain.test:${ports.plain}/`, status: 200, location: null, error: null }],
      redirectsToHttps: false,
      fallsBackToHttp: false,
      error: null,
    });
    // Nothing listens on its 443: no TLS, and no TLS finding (the site does not use https; the redirect finding says it).
    expect(plain.tls).toMatchObject({ url: 'https://plain.test/', used: false, protocol: null, certificate: null, hsts: null, problems: [], error: 'could not connect (refused, or closed before the connection was made)' });
    expect(loop.httpsRedirect.chain).toHaveLength(6);
    expect(loop.httpsRedirect.chain.every((step: any) => step.status === 302)).toBe(true);
    expect(loop.httpsRedirect).toMatchObject({ redirectsToHttps: false, error: 'more than 5 redirects' });
    expect(report.findings.filter((f: any) => f.type === 'no_https_redirect').map((f: any) => [f.subject.name, f.pageUrl])).toEqual([
      [`http://plain.test:${ports.plain}/`, `http://plain.test:${ports.plain}/shop`],
      [`http://loop.test:${ports.loop}/`, `http://loop.test:${ports.loop}/shop`],
    ]);
    expect(report.summary.findings).toMatchObject({ no_https_redirect: 2, tls_invalid: 1 });
    expect(report.transport.limits).toMatchObject({ origins: 5, redirects: 5 });
  });

  it('shows each origin in the HTML report near the top, readable at 1280 px and 390 px, and as a CSV block of its own', async () => {
    const html = await server.request('GET', `${scansPath(project.projectId, `/${scan.id}`)}?format=html`, { token: project.ownerToken });
    expect(html.status).toBe(200);
    const context = await browser.newContext();
    try {
      const view = await context.newPage();
      await view.setContent(html.text);
      const headings = await view.locator('h2').allInnerTexts();
      expect(headings.slice(0, 3)).toEqual(['To do', 'HTTPS and TLS (3 origins)', expect.stringMatching(/^Pages/)]);
      const cards = view.locator('#transport + p + ul > li');
      expect(await cards.count()).toBe(3);
      const secure = await cards.nth(0).innerText();
      expect(secure).toMatch(/redirects to https/);
      expect(secure).toMatch(/not trusted\s+DEPTH_ZERO_SELF_SIGNED_CERT/);
      expect(secure).toMatch(/\(self-signed\)/);
      expect(secure).toContain(HSTS);
      expect(secure).toMatch(/365 days, subdomains, preload/);
      expect(await cards.nth(1).innerText()).toMatch(/no redirect to https/);
      expect(await cards.nth(2).innerText()).toMatch(/more than 5 redirects/);
      const todo = await view.locator('table').first().innerText();
      expect(todo).toMatch(/Plain http without a redirect to https\s+2/);
      expect(todo).toMatch(/Certificate or TLS a browser would not trust\s+1/);
      for (const width of [1280, 390]) {
        await view.setViewportSize({ width, height: 900 });
        const layout = await view.evaluate(() => ({
          overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          breakAll: [...document.querySelectorAll('td, th, p, li')].filter((el) => getComputedStyle(el).wordBreak === 'break-all').length,
        }));
        expect(layout).toEqual({ overflow: 0, breakAll: 0 });
        if (SCREENSHOTS) {
          await view.screenshot({ path: `${SCREENSHOTS}/scan-transport-${width}.png`, fullPage: true });
          await view.locator('#transport + p + ul').screenshot({ path: `${SCREENSHOTS}/scan-transport-${width}-section.png` });
        }
      }
    } finally {
      await context.close();
    }
    const csv = (await server.request('GET', `${scansPath(project.projectId, `/${scan.id}`)}?format=csv`, { token: project.ownerToken })).text;
    const blocks = csv.trim().split(/\n\n/);
    expect(blocks).toHaveLength(8); // after the inventory: pages' links, links, forms (docs/scanner.md), then transport
    expect(blocks[3]).toMatch(/^inventory\.kind,/);
    const rows = blocks[7]!.split('\n');
    expect(rows[0]).toMatch(/^transport\.origin,transport\.httpUrl,transport\.chain,/);
    expect(rows).toHaveLength(4);
    expect(rows[1]).toContain(`301 https://secure.test:${ports.https}/ | 200`);
    expect(rows[1]).toContain('DEPTH_ZERO_SELF_SIGNED_CERT');

    // A report stored before the check still renders: no section, no transport block.
    const { transport: _transport, ...old } = report;
    const stored = { project: { id: project.projectId, organizationId: '', name: 'Shop', slug: 'shop' }, report: old, generatedAt: new Date() };
    expect(renderReportHtml(stored)).not.toContain('HTTPS and TLS');
    expect(renderReportHtml(stored)).toContain('<h2>Pages</h2>');
    expect(renderReportCsv(stored).trim().split(/\n\n/)).toHaveLength(7);
    expect(renderReportCsv(stored)).not.toContain('transport.origin');
  });
});

describe('the transport check alone: hostile servers, refused addresses, the deadline', () => {
  const development = { allowAddress: (address: string) => isAllowedAddress(address, true), resolve };
  const port = (server: Server | TcpServer) => (server.address() as AddressInfo).port;

  it('bounds a server that never answers, one that drips its headers, one with huge headers and a TLS port that never speaks', async () => {
    // hang.test: reads the request, sends a status line, then a header line every 100 ms, for ever.
    const hang = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\n');
        const drip = setInterval(() => socket.write('X-Slow: 1\r\n'), 100);
        socket.on('close', () => clearInterval(drip));
      });
    });
    // huge.test: 64 KiB of headers, then a redirect to a TLS port that accepts and never says a word.
    const mute = createTcpServer((socket) => (sockets.add(socket), socket.on('error', () => {}).resume()));
    servers.push(hang, mute);
    await listen(hang, HOSTS['hang.test']!);
    const mutePort = await listen(mute, HOSTS['mute-tls.test']!);
    const huge = createServer((req, res) =>
      req.url === '/' ? res.writeHead(200, { 'X-Huge': 'x'.repeat(65_536) }).end() : res.writeHead(302, { Location: `https://mute-tls.test:${mutePort}/` }).end(),
    );
    const relay = createServer((_req, res) => res.writeHead(302, { Location: `https://mute-tls.test:${mutePort}/` }).end());
    servers.push(huge, relay);
    await listen(huge, HOSTS['huge.test']!);
    await listen(relay, HOSTS['mute-tls.test']!);

    const started = performance.now();
    const transport = await checkTransport(
      [`http://hang.test:${port(hang)}/a`, `http://huge.test:${port(huge)}/a`, `http://mute-tls.test:${port(relay)}/`],
      { policy: development, deadline: new Deadline(20_000), stepTimeoutMs: 1500 },
    );
    // Each step ends at its 1.5 s (the errors below say so): a drip that kept a step alive would hold the check to its
    // 20 s deadline. The bound is far from both, so a loaded machine cannot fail it.
    expect(performance.now() - started).toBeLessThan(15_000);
    const [hung, big, muted] = transport.origins;
    expect(hung!.httpsRedirect.chain).toEqual([{ url: `http://hang.test:${port(hang)}/`, status: null, location: null, error: 'no answer within 1.5 s' }]);
    expect(big!.httpsRedirect.chain).toEqual([{ url: `http://huge.test:${port(huge)}/`, status: null, location: null, error: 'response headers over 16384 bytes' }]);
    // Neither answered plain http: no redirect finding is owed, and the error says why.
    expect(muted!.httpsRedirect).toMatchObject({ redirectsToHttps: true, chain: [{ status: 302 }, { status: null, error: 'no answer within 1.5 s' }] });
    // The site sends its visitors to an https port that never speaks: no TLS, a problem.
    expect(muted!.tls).toMatchObject({ url: `https://mute-tls.test:${mutePort}/`, used: true, protocol: null, problems: ['no_tls'], error: 'no answer within 1.5 s' });
    // No socket of the check is left open on the servers' side.
    await vi.waitFor(() => expect([...sockets].filter((socket) => !socket.destroyed).map((socket) => `${socket.localAddress}:${socket.localPort}`)).toEqual([]), { timeout: 5000, interval: 50 });
  }, 30_000);

  it('reports an expired certificate for another name as expired and not for this host', async () => {
    const pems = await certificate('other.test', { notBeforeDate: new Date(Date.now() - 400 * 86_400_000), notAfterDate: new Date(Date.now() - 30 * 86_400_000) });
    const old = createHttpsServer({ key: pems.private, cert: pems.cert }, (_req, res) => res.writeHead(200).end());
    servers.push(old);
    const oldPort = await listen(old, HOSTS['old.test']!);
    const { origins } = await checkTransport([`https://old.test:${oldPort}/`], { policy: development, deadline: new Deadline(10_000), stepTimeoutMs: 3000 });
    expect(origins[0]!.tls).toMatchObject({ used: true, authorized: false, hsts: null, certificate: { hostMatches: false, subjectAltNames: ['DNS:other.test'] } });
    expect(origins[0]!.tls.problems).toEqual(['untrusted_chain', 'host_mismatch', 'expired']);
    expect(origins[0]!.tls.certificate!.daysLeft).toBeLessThan(-29);
    // http://old.test/ (port 80): nothing answers, so no redirect is owed.
    expect(origins[0]!.httpsRedirect.chain).toEqual([expect.objectContaining({ url: 'http://old.test/', status: null, error: 'could not connect (refused, or closed before the connection was made)' })]);
  });

  it('never connects to an address the production policy refuses, stops at a spent deadline, and checks at most 5 origins', async () => {
    let connections = 0;
    const internal = createServer((_req, res) => res.writeHead(200).end());
    internal.on('connection', () => connections++);
    servers.push(internal);
    const internalPort = await listen(internal, '127.0.0.1');
    const production = { allowAddress: (address: string) => isAllowedAddress(address, false), resolve };
    const refused = await checkTransport([`http://127.0.0.1:${internalPort}/`, `https://plain.test:${internalPort}/`], { policy: production, deadline: new Deadline(10_000) });
    expect(refused.origins.map((origin) => origin.httpsRedirect.chain[0]!.error)).toEqual([
      'refused by the address guard: address 127.0.0.1 is not allowed',
      'refused by the address guard: address 127.0.0.6 is not allowed',
    ]);
    expect(refused.origins.map((origin) => origin.tls.error)).toEqual([
      'refused by the address guard: address 127.0.0.1 is not allowed',
      'refused by the address guard: address 127.0.0.6 is not allowed',
    ]);
    expect(connections).toBe(0);

    const spent = new Deadline(0);
    const late = await checkTransport([`http://127.0.0.1:${internalPort}/`], { policy: development, deadline: spent });
    expect(late.origins[0]!.httpsRedirect.chain[0]!.error).toBe("not checked: the scan's time for it was spent");
    expect(connections).toBe(0);

    const many = await checkTransport(
      Array.from({ length: 7 }, (_, i) => `http://unknown-${i}.test/page`),
      { policy: development, deadline: new Deadline(10_000) },
    );
    expect(many.origins.map((origin) => origin.origin)).toEqual(Array.from({ length: 5 }, (_, i) => `http://unknown-${i}.test`));
    expect(many.originsNotChecked).toBe(2);
    expect(many.origins[0]!.httpsRedirect.chain[0]!.error).toBe('refused by the address guard: address (none) is not allowed');
  });
});
