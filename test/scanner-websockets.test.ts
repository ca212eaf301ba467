// WebSockets a scanned page opens (docs/scanner.md "WebSockets"), what the EDPS Website Evidence Collector logs as
// websockets-log.json: a chat page that opens two sockets to other sites (second loopback address, reached by name
// through the scanner's resolver) before any decision and trades a few frames, and a hostile page that opens 500
// sockets and sends 10,000 frames; then the report as JSON, CSV and HTML.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { launchChromium, setupProject, startService, type SiteProject } from './e2e/harness.js';
import { shortDwell, scansPath, scanToEnd } from './helpers/scan-sites.js';
import type { TestServer } from './helpers/server.js';

// A chat host no catalogue or tracker list knows, and a stats host whose socket EasyPrivacy names by its path and
// query (`/ws_client?zone=gen$websocket`, a general rule); both another site than the page's (127.0.0.1).
const CHAT_HOST = 'chat.unknown-chat.test';
const STATS_HOST = 'live.unknown-stats.test';
const FLOOD_HOST = 'flood.unknown-flood.test';
const SCREENSHOTS = process.env.SCAN_REPORT_SCREENSHOTS; // a folder: the report's screenshots are written there
const MARKUP = '<img src=x onerror=alert(1)>';


async function listen(server: Server, host: string): Promise<number> {
  await new Promise<void>((done) => server.listen(0, host, done));
  return (server.address() as AddressInfo).port;
}

describe('a scan records the WebSockets a page opens', () => {
  let server: TestServer;
  let project: SiteProject;
  let site: Server;
  let sockets: Server;
  let wss: WebSocketServer;
  let origin: string;
  let wsPort: number;
  let scan: any;
  let report: any;
  let browser: Browser;
  // Sockets of the flood page that reached the server since its last load.
  let floodSockets = 0;

  beforeAll(async () => {
    let resolve: (host: string) => Promise<string[]> = async () => [];
    let serviceUrl: string;
    ({ server, serviceUrl } = await startService(shortDwell({ scanBudgetMs: 180_000 }), { scannerNetwork: { resolve: (host) => resolve(host) } }));
    project = await setupProject(server);
    // The socket server: greets each socket, echoes what the chat sends (text as `echo:<text>`, binary as it came).
    sockets = createServer((_req, res) => res.writeHead(404).end());
    wss = new WebSocketServer({ server: sockets });
    wss.on('connection', (socket, req) => {
      if (req.url?.startsWith('/flood')) floodSockets++;
      socket.send('welcome');
      if (req.url?.startsWith('/chat')) socket.on('message', (data, binary) => socket.send(binary ? data : `echo:${String(data)}`));
    });
    wsPort = await listen(sockets, '127.0.0.2');
    resolve = async (host) => ([CHAT_HOST, STATS_HOST, FLOOD_HOST].includes(host) ? ['127.0.0.2'] : host === 'localhost' ? ['127.0.0.1'] : []);
    const sdk = `<script src="${serviceUrl}/sdk/v2/consent.js"></script>
<script>ConsentSDK.init({ publicKey: ${JSON.stringify(project.key)}, apiBaseUrl: ${JSON.stringify(serviceUrl)} });</script>`;
    site = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://site').pathname;
      const html = (head: string, body: string) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Chat</title>${head}</head><body>${body}</body></html>`);
      if (path === '/chat.js')
        // Runs on every load, whatever the visitor decides: 7 frames sent (one binary), 8 received (greeting, echoes).
        return void res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(`
const chat = new WebSocket('ws://${CHAT_HOST}:${wsPort}/chat?user=alice&session=s3cr3t-token');
chat.binaryType = 'arraybuffer';
chat.onopen = () => {
  chat.send(${JSON.stringify(`hello ${MARKUP}`)});
  chat.send('x'.repeat(500));
  chat.send(new Uint8Array(16));
  for (let i = 4; i <= 7; i++) chat.send('ping ' + i);
};
new WebSocket('ws://${STATS_HOST}:${wsPort}/ws_client?zone=gen&uid=u-123456');`);
      if (path === '/chat') return void html(sdk, '<h1>Chat</h1><script src="/chat.js"></script>');
      if (path === '/flood.gif') {
        // Holds the flood page's load event until 60 of its sockets are through: Chromium opens a page's sockets
        // to one host one at a time, and the visit sees a socket once its handshake starts.
        const started = Date.now();
        const answer = () => (floodSockets >= 60 || Date.now() - started > 20_000 ? res.writeHead(200, { 'Content-Type': 'image/gif' }).end() : setTimeout(answer, 20));
        return void answer();
      }
      if (path === '/flood') {
        floodSockets = 0;
        // 500 sockets, and 10,000 frames on the first: far over what a visit keeps.
        return void html(
          '',
          `<h1>Flood</h1><script>
const first = new WebSocket('ws://${FLOOD_HOST}:${wsPort}/flood/0');
first.onopen = () => { for (let i = 0; i < 10000; i++) first.send('frame ' + i); };
for (let i = 1; i < 500; i++) new WebSocket('ws://${FLOOD_HOST}:${wsPort}/flood/' + i);
</script><img alt="" src="/flood.gif">`,
        );
      }
      res.writeHead(404).end();
    });
    origin = `http://127.0.0.1:${await listen(site, '127.0.0.1')}`;
    await server.request('PUT', `/api/platform/projects/${project.projectId}/allowed-origins`, { token: project.ownerToken, body: { origins: [origin] } });
    ({ scan, report } = await scanToEnd(server, project, [`${origin}/chat`, `${origin}/flood`]));
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    for (const client of wss?.clients ?? []) client.terminate();
    wss?.close();
    for (const s of [site, sockets]) {
      s?.closeAllConnections();
      await new Promise((done) => (s ? s.close(done) : done(undefined)));
    }
  });

  const visitOf = (path: string, kind: string) => report.pages.find((p: any) => p.url === `${origin}${path}`).visits.find((v: any) => v.kind === kind);

  it('records each socket: URL without its query (its keys only), host, party, when it opened, frames counted and previewed', () => {
    const before = visitOf('/chat', 'before');
    expect(before.websockets.cut).toEqual({ sockets: 0 });
    const chat = before.websockets.sockets.find((s: any) => s.host === CHAT_HOST);
    expect(chat).toMatchObject({
      url: `ws://${CHAT_HOST}:${wsPort}/chat`,
      queryKeys: ['user', 'session'],
      party: 'third',
      load: 'first',
      afterDecision: false,
      tracker: null,
      initiator: `${origin}/chat.js`,
    });
    expect(chat.openedAtMs).toBeGreaterThan(0);
    expect(chat.openedAtMs).toBeLessThan(before.loads[0].startedAtMs + 60_000);
    // 7 frames sent: 5 previewed (text cut to 200 characters, binary as its length only), all 7 counted.
    expect(chat.sent.frames).toBe(7);
    expect(chat.sent.bytes).toBe(Buffer.byteLength(`hello ${MARKUP}`) + 500 + 16 + 4 * 'ping 4'.length);
    expect(chat.sent.preview.map((f: any) => [f.text, f.bytes])).toEqual([
      [`hello ${MARKUP}`, Buffer.byteLength(`hello ${MARKUP}`)],
      ['x'.repeat(200), 500],
      [null, 16],
      ['ping 4', 6],
      ['ping 5', 6],
    ]);
    expect(chat.received.frames).toBe(8);
    expect(chat.received.preview.map((f: any) => f.text)).toEqual(['welcome', `echo:hello ${MARKUP}`, `echo:${'x'.repeat(195)}`, null, 'echo:ping 4']);
    // The query's values (an identifier) are nowhere in the report.
    expect(JSON.stringify(report)).not.toContain('s3cr3t-token');
    expect(JSON.stringify(report)).not.toContain('u-123456');
    // The reject visit's reload opened them again, after the decision.
    const reject = visitOf('/chat', 'reject');
    expect(reject.decided).toBe(true);
    expect(reject.websockets.sockets.filter((s: any) => s.host === CHAT_HOST).map((s: any) => [s.load, s.afterDecision])).toEqual([
      ['first', false],
      ['reload', true],
    ]);
  });

  it('judges a socket to another site as a request: unclassified_request, and before_consent and after_reject by EasyPrivacy; in the inventory', () => {
    expect(report.findings.filter((f: any) => f.type === 'unclassified_request' && f.subject.name === CHAT_HOST)).toEqual([
      expect.objectContaining({
        pageUrl: `${origin}/chat`,
        subject: { kind: 'request', name: CHAT_HOST },
        category: 'unknown',
        evidence: expect.objectContaining({ visit: 'before', request: expect.objectContaining({ resourceType: 'websocket', url: `ws://${CHAT_HOST}:${wsPort}/chat`, afterDecision: false }) }),
      }),
    ]);
    const rule = '/ws_client?zone=gen$websocket';
    for (const [type, visit] of [
      ['before_consent', 'before'],
      ['after_reject', 'reject'],
    ]) {
      expect(report.findings.filter((f: any) => f.type === type && f.subject.name === STATS_HOST)).toEqual([
        expect.objectContaining({ pageUrl: `${origin}/chat`, category: 'analytics', evidence: expect.objectContaining({ visit, source: 'easyprivacy', matched: rule, request: expect.objectContaining({ resourceType: 'websocket', tracker: rule }) }) }),
      ]);
    }
    expect(visitOf('/chat', 'before').websockets.sockets.find((s: any) => s.host === STATS_HOST)).toMatchObject({ url: `ws://${STATS_HOST}:${wsPort}/ws_client`, queryKeys: ['zone', 'uid'], tracker: rule });
    expect(report.inventory).toContainEqual(expect.objectContaining({ kind: 'host', name: CHAT_HOST, category: 'unknown', party: 'third', where: ['websocket'], setBy: [`${origin}/chat.js`], visits: ['before', 'reject', 'accept'] }));
    expect(report.inventory).toContainEqual(expect.objectContaining({ kind: 'host', name: STATS_HOST, category: 'analytics', source: 'easyprivacy', where: ['websocket'] }));
  });

  it('keeps a page that opens 500 sockets and sends 10,000 frames to its caps, with cut counts', () => {
    expect(report.limits.visit).toMatchObject({ websockets: 50, websocketPreviewFrames: 5, websocketPreviewChars: 200 });
    for (const kind of ['before', 'reject', 'accept']) {
      const visit = visitOf('/flood', kind);
      expect(visit.error).toBeNull();
      expect(visit.websockets.sockets).toHaveLength(50);
      // Those over the cap are counted: at least the 10 whose handshake started before the page's load event, at
      // most the 450 the page asked for (Chromium holds the rest in its queue until the visit ends).
      expect(visit.websockets.cut.sockets).toBeGreaterThanOrEqual(10);
      expect(visit.websockets.cut.sockets).toBeLessThanOrEqual(450);
      for (const socket of visit.websockets.sockets) {
        expect(socket.sent.preview.length).toBeLessThanOrEqual(5);
        expect(socket.received.preview.length).toBeLessThanOrEqual(5);
      }
      const first = visit.websockets.sockets.find((s: any) => s.url === `ws://${FLOOD_HOST}:${wsPort}/flood/0`);
      expect(first.sent.preview.map((f: any) => f.text)).toEqual(['frame 0', 'frame 1', 'frame 2', 'frame 3', 'frame 4']);
      // Counted, not kept: as many as the browser sent before the visit ended.
      expect(first.sent.frames).toBeGreaterThan(5);
      expect(first.sent.frames).toBeLessThanOrEqual(10_000);
      expect(Buffer.byteLength(JSON.stringify(visit.websockets))).toBeLessThan(60_000);
      // One request per socket URL, under the visit's request cap.
      expect(visit.requests.filter((r: any) => r.resourceType === 'websocket').length + visit.cut.requests).toBeGreaterThanOrEqual(50);
    }
  });

  it('lists the sockets in the CSV as observations of kind websocket, in the request columns', async () => {
    const csv = (await server.request('GET', `${scansPath(project.projectId, `/${scan.id}`)}?format=csv`, { token: project.ownerToken })).text;
    const observations = csv.split('\n\n')[2]!;
    expect(observations).toMatch(/^page,visit,kind,name,domainOrHost,party,expires,httpOnly,secure,sameSite,setByOrInitiator\n/);
    expect(observations).toContain(`${origin}/chat,before,websocket,ws://${CHAT_HOST}:${wsPort}/chat,${CHAT_HOST},third,,,,,${origin}/chat.js`);
    expect(observations).toContain(`${origin}/chat,before,request:websocket,ws://${CHAT_HOST}:${wsPort}/chat,${CHAT_HOST},third,,,,,${origin}/chat.js`);
    expect(observations).not.toContain('s3cr3t');
  });

  it('shows each visit’s sockets in the HTML report, escaped, readable at 1280 px and 390 px', async () => {
    const res = await server.request('GET', `${scansPath(project.projectId, `/${scan.id}`)}?format=html`, { token: project.ownerToken });
    expect(res.status).toBe(200);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.setContent(res.text);
      const chat = page.locator('li.pageline').filter({ hasText: `${origin}/chat` });
      const text = await chat.locator('ul.websockets').innerText();
      expect(text).toContain('before: 2 WebSockets');
      expect(text).toContain(`ws://${CHAT_HOST}:${wsPort}/chat query keys: user session third party`);
      expect(text).toMatch(/before any decision, first load, \+\d+ ms; sent 7 frames \(\d+ bytes\), received 8 frames \(\d+ bytes\)/);
      expect(text).toContain('reject: 4 WebSockets');
      // The page's markup in a frame is text in the report, never an element.
      await chat.locator('ul.websockets details summary').first().click();
      await expect(chat.locator('ul.websockets details').first().innerText()).resolves.toContain(`hello ${MARKUP}`);
      await expect(chat.locator('ul.websockets details').first().innerText()).resolves.toContain('binary, 16 bytes');
      expect(await page.locator('img').count()).toBe(0);
      const flood = await page.locator('li.pageline').filter({ hasText: `${origin}/flood` }).locator('ul.websockets').innerText();
      const cut = visitOf('/flood', 'before').websockets.cut.sockets;
      expect(flood).toMatch(new RegExp(`before: ${50 + cut} WebSockets, ${cut} not kept \\(cap\\)\\s+50 sockets listed`));
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        const layout = await page.evaluate(() => ({
          overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          breakAll: [...document.querySelectorAll('td, th, p, li')].filter((el) => getComputedStyle(el).wordBreak === 'break-all').length,
        }));
        expect(layout).toEqual({ overflow: 0, breakAll: 0 });
        if (SCREENSHOTS) {
          await page.screenshot({ path: `${SCREENSHOTS}/scan-websockets-${width}.png`, fullPage: true });
          await page.locator('ul.pages').last().screenshot({ path: `${SCREENSHOTS}/scan-websockets-pages-${width}.png` });
        }
      }
    } finally {
      await context.close();
    }
  });
});
