// Fixture sites for the site scanner (test/scanner.test.ts, bench/scanner.ts), served on loopback with known
// behaviour: a shop whose analytics and ads wait for consent through the SDK (/good, /about), one that runs
// them before any decision (/leaky), a page without the SDK (/nosdk); and a tracker on a second loopback
// address (127.0.0.2) that the scanner reaches as `px.ads.linkedin.com` through its resolver.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import selfsigned from 'selfsigned';
import { loadConfig, type Config } from '../../src/config.js';
import { expect } from 'vitest';
import type { TestServer } from './server.js';

/**
 * The dwell window (SCANNER_DWELL_MS, 3000 ms by default) for scans of pages that write nothing late: what they
 * write happens before network idle, so the default window only waits. Each judged load waits it once (a decision
 * visit up to three times), so a scan of one page spends up to 15 s in it. The late writer's scan keeps the
 * default (test/scanner.test.ts), as does the WebRTC page (test/scanner-hostile.test.ts), watched for datagrams.
 */
export const SHORT_DWELL_MS = 200;
export const shortDwell = (scanner: Partial<Config['scanner']> = {}): { scanner: Config['scanner'] } => ({
  scanner: { ...loadConfig().scanner, dwellMs: SHORT_DWELL_MS, ...scanner },
});

// Not on Chromium's HSTS preload list (doubleclick.net is: the browser would upgrade the pixel to https).
export const TRACKER_HOST = 'px.ads.linkedin.com';

export interface ScanSites {
  /** http://127.0.0.1:<port> */
  origin: string;
  trackerPort: number;
  /** Maps TRACKER_HOST to the tracker's address; other names to loopback for the test's own hosts. */
  resolve(host: string): Promise<string[]>;
  /** Requests each server received (path with query). */
  siteRequests: string[];
  trackerRequests: string[];
  close(): Promise<void>;
}

async function listen(server: Server | import('node:https').Server, host: string): Promise<number> {
  await new Promise<void>((done) => server.listen(0, host, done));
  return (server.address() as AddressInfo).port;
}

const GIF = Buffer.from('R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==', 'base64');

export async function startScanSites(serviceUrl: string, key: string): Promise<ScanSites> {
  const siteRequests: string[] = [];
  const trackerRequests: string[] = [];
  const tracker = createServer((req: IncomingMessage, res) => {
    trackerRequests.push(req.url ?? '');
    res.writeHead(200, { 'Content-Type': 'image/gif', 'Set-Cookie': 'IDE=tracker-id; Path=/; Max-Age=3600; SameSite=None; Secure' }).end(GIF);
  });
  const trackerPort = await listen(tracker, '127.0.0.2');
  const pixel = `http://${TRACKER_HOST}:${trackerPort}/pixel.gif?site=shop`;
  const sdk = `<script src="${serviceUrl}/sdk/v2/consent.js"></script>
<script>ConsentSDK.init({ publicKey: ${JSON.stringify(key)}, apiBaseUrl: ${JSON.stringify(serviceUrl)} });</script>`;
  const page = (title: string, head: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
${head}
</head><body><h1>${title}</h1>${body}</body></html>`;
  const links = '<a href="/about">About us</a> <a href="/about#team">Team</a> <a href="http://127.0.0.2:9/elsewhere">Elsewhere</a> <a href="mailto:shop@example.com">Mail</a>';
  const site = createServer((req, res) => {
    siteRequests.push(req.url ?? '');
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    const html = (body: string) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(body);
    switch (path) {
      case '/ga.js':
        // The analytics library: sets _ga from script, as gtag.js does.
        return void res
          .writeHead(200, { 'Content-Type': 'text/javascript' })
          .end("document.cookie = '_ga=GA1.1.' + Date.now() + '; max-age=63072000; path=/'; localStorage.setItem('_ga_state', '1');");
      case '/ads.js':
        return void res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(`new Image().src = ${JSON.stringify(pixel)};`);
      case '/good':
      case '/about':
        // Blocks correctly: analytics and ads wait for their purposes (sdk/src/v2/blocking.ts).
        return void html(
          page(
            path === '/good' ? 'Good shop' : 'About',
            `${sdk}
<script type="text/plain" data-consent="analytics" data-src="/ga.js"></script>
<script type="text/plain" data-consent="ads" data-src="/ads.js"></script>`,
            links,
          ),
        );
      case '/leaky':
        // The banner is there, but analytics and the ads pixel run before anyone decides.
        return void html(page('Leaky shop', `${sdk}\n<script src="/ga.js"></script>`, `<img alt="" src="${pixel}"> ${links}`));
      case '/nosdk':
        return void html(page('No consent', '<script src="/ga.js"></script>', links));
      default:
        res.writeHead(404).end();
    }
  });
  const port = await listen(site, '127.0.0.1');
  return {
    origin: `http://127.0.0.1:${port}`,
    trackerPort,
    siteRequests,
    trackerRequests,
    resolve: async (host) => (host === TRACKER_HOST ? ['127.0.0.2'] : host === 'localhost' ? ['127.0.0.1'] : []),
    close: async () => {
      site.closeAllConnections();
      tracker.closeAllConnections();
      await Promise.all([new Promise((done) => site.close(done)), new Promise((done) => tracker.close(done))]);
    },
  };
}

// The ad pixel of the tag site: a name the catalogue knows (Meta), served over https by a second loopback
// address with a self-signed certificate (SameSite=None cookies must be Secure, and Secure ones need https).
export const AD_PIXEL_HOST = 'www.facebook.com';

export interface TagSite {
  /** http://127.0.0.1:<port>: /shop (the tags below) and /contact (the analytics tag again). */
  origin: string;
  pixelPort: number;
  /** Maps AD_PIXEL_HOST to the pixel's address, localhost to loopback. */
  resolve(host: string): Promise<string[]>;
  pixelRequests: string[];
  close(): Promise<void>;
}

/**
 * A shop with the tags a scan must not miss, on a page with the project's SDK:
 * - an un-gated analytics tag (`/ga.js`) that sets `_ga` on every page view, whatever the visitor decided;
 * - a tag that writes `_clck` 1.5 s after the load event (late, as Clarity does);
 * - an inline script held for analytics (`data-consent`) that sets `_gid` once released;
 * - an ad pixel on another site, over https, whose answer sets the third-party cookie `fr` (SameSite=None; Secure).
 */
export async function startTagSite(serviceUrl: string, key: string): Promise<TagSite> {
  const pixelRequests: string[] = [];
  const pems = await selfsigned.generate([{ name: 'commonName', value: AD_PIXEL_HOST }], {
    keySize: 2048,
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: AD_PIXEL_HOST }] }],
  });
  const pixel = createHttpsServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    pixelRequests.push(req.url ?? '');
    res.writeHead(200, { 'Content-Type': 'image/gif', 'Set-Cookie': 'fr=0.pixel-id; Domain=.facebook.com; Path=/; Max-Age=7776000; SameSite=None; Secure; HttpOnly' }).end(GIF);
  });
  const pixelPort = await listen(pixel, '127.0.0.2');
  const sdk = `<script src="${serviceUrl}/sdk/v2/consent.js"></script>
<script>ConsentSDK.init({ publicKey: ${JSON.stringify(key)}, apiBaseUrl: ${JSON.stringify(serviceUrl)} });</script>`;
  const site = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    const html = (title: string, head: string, body: string) =>
      res
        .writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' })
        .end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>\n${head}\n</head><body><h1>${title}</h1>${body}</body></html>`);
    switch (path) {
      case '/ga.js':
        return void res.writeHead(200, { 'Content-Type': 'text/javascript' }).end("document.cookie = '_ga=GA1.1.' + Date.now() + '; max-age=63072000; path=/';");
      case '/shop':
        return void html(
          'Tag shop',
          `${sdk}
<script src="/ga.js"></script>
<script>addEventListener('load', function () { setTimeout(function () { document.cookie = '_clck=late.1; max-age=31536000; path=/'; }, 1500); });</script>
<script type="text/plain" data-consent="analytics">document.cookie = '_gid=GA1.1.released; max-age=86400; path=/';</script>`,
          `<img alt="" src="https://${AD_PIXEL_HOST}:${pixelPort}/tr?id=1&ev=PageView"> <a href="/contact">Contact</a>`,
        );
      case '/contact':
        return void html('Contact', `${sdk}\n<script src="/ga.js"></script>`, '<a href="/shop">Shop</a>');
      default:
        res.writeHead(404).end();
    }
  });
  const port = await listen(site, '127.0.0.1');
  return {
    origin: `http://127.0.0.1:${port}`,
    pixelPort,
    pixelRequests,
    resolve: async (host) => (host === AD_PIXEL_HOST ? ['127.0.0.2'] : host === 'localhost' ? ['127.0.0.1'] : []),
    close: async () => {
      site.closeAllConnections();
      pixel.closeAllConnections();
      await Promise.all([new Promise((done) => site.close(done)), new Promise((done) => pixel.close(done))]);
    },
  };
}

export const scansPath = (projectId: string, rest = '') => `/api/platform/projects/${projectId}/scans${rest}`;

/**
 * Queues a scan of `urls` as the project's owner and waits until the worker has finished it; answers the scan
 * (REST) and its stored report. A scan that failed fails the test with its error.
 */
export async function scanToEnd(
  server: Pick<TestServer, 'request'>,
  project: { projectId: string; ownerToken: string },
  urls: string[],
  followLinks = 0,
): Promise<{ scan: any; report: any }> {
  const token = project.ownerToken;
  const queued = await server.request('POST', scansPath(project.projectId), { token, body: { urls, followLinks } });
  expect(queued.status, queued.text).toBe(202);
  let scan: any;
  for (;;) {
    scan = (await server.request('GET', scansPath(project.projectId, `/${queued.body.scan.id}`), { token })).body.scan;
    if (scan.status === 'done' || scan.status === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  expect(scan.status, scan.error).toBe('done');
  const report = JSON.parse((await server.request('GET', `${scansPath(project.projectId, `/${scan.id}`)}?format=json&download=1`, { token })).text).report;
  return { scan, report };
}

// Where the evidence site's checkout page sends its pagehide beacons: a marketing host the catalogue names, over
// plain http so that the test's tracker sees each request (Chromium upgrades bat.bing.com, HSTS-preloaded, to https).
export const BEACON_HOST = TRACKER_HOST;

export interface EvidenceSite {
  /** http://127.0.0.1:<port> */
  origin: string;
  beaconPort: number;
  /** Maps TRACKER_HOST (also BEACON_HOST) to 127.0.0.2, localhost to loopback. */
  resolve(host: string): Promise<string[]>;
  /** What the tracker server received: `METHOD /path?query`, in order. */
  trackerHits: string[];
  close(): Promise<void>;
}

/**
 * A site whose evidence is easy to put on the wrong page or to miss (test/scanner-evidence.test.ts):
 * - `/good` gates its analytics through the SDK and links first to `/leaky`, the extra page its decision visits load;
 * - `/leaky` runs a Matomo tag whatever the visitor decided: `_pk_id.<site>.<hash>` (which the operator maps, so the
 *   SDK removes it after Reject all) and `_pk_testcookie.<site>.<hash>`, which Matomo writes and removes at once,
 *   and its tracking pixel;
 * - `/uet` has a tag that ignores the decision and acts after the visitor's click: `_uetsid` 100 ms later, `_uetvid`
 *   1.5 s later, and on `pagehide` sends a beacon, a keepalive fetch and an image ping to BEACON_HOST.
 */
export async function startEvidenceSite(serviceUrl: string, key: string): Promise<EvidenceSite> {
  const trackerHits: string[] = [];
  const tracker = createServer((req, res) => {
    trackerHits.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(200, { 'Content-Type': 'image/gif', 'Access-Control-Allow-Origin': '*' }).end(GIF);
  });
  const trackerPort = await listen(tracker, '127.0.0.2');
  const beacon = (kind: string) => `http://${BEACON_HOST}:${trackerPort}/action/${kind}?evt=pagehide&p=' + location.pathname + '`;
  const sdk = `<script src="${serviceUrl}/sdk/v2/consent.js"></script>
<script>ConsentSDK.init({ publicKey: ${JSON.stringify(key)}, apiBaseUrl: ${JSON.stringify(serviceUrl)} });</script>`;
  const pages: Record<string, string> = {
    '/good': `${sdk}
<script type="text/plain" data-consent="analytics">document.cookie = '_ga=GA1.1.gated; max-age=63072000; path=/';</script>
</head><body><h1>Good</h1><a href="/leaky">Offers</a> <a href="/uet">Checkout</a>`,
    '/leaky': `${sdk}
<script>
document.cookie = '_pk_testcookie.1.a1b2=1; path=/';
document.cookie = '_pk_testcookie.1.a1b2=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/';
document.cookie = '_pk_id.1.a1b2=visitor.1; max-age=33955200; path=/';
</script>
</head><body><h1>Offers</h1><img alt="" src="http://${TRACKER_HOST}:${trackerPort}/matomo.gif?idsite=1"> <a href="/good">Home</a>`,
    '/uet': `${sdk}
<script>
document.addEventListener('click', function () {
  setTimeout(function () { document.cookie = '_uetsid=click.100; max-age=86400; path=/'; }, 100);
  setTimeout(function () { document.cookie = '_uetvid=click.1500; max-age=33696000; path=/'; }, 1500);
}, true);
addEventListener('pagehide', function () {
  navigator.sendBeacon('${beacon('beacon')}', 'left');
  fetch('${beacon('keepalive')}', { method: 'POST', body: 'left', keepalive: true, mode: 'no-cors' });
  new Image().src = '${beacon('image')}';
});
</script>
</head><body><h1>Checkout</h1><a href="/good">Home</a>`,
  };
  const site = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    const page = pages[path];
    if (!page) return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${path}</title>\n${page}</body></html>`);
  });
  const port = await listen(site, '127.0.0.1');
  return {
    origin: `http://127.0.0.1:${port}`,
    beaconPort: trackerPort,
    trackerHits,
    resolve: async (host) => (host === TRACKER_HOST ? ['127.0.0.2'] : host === 'localhost' ? ['127.0.0.1'] : []),
    close: async () => {
      site.closeAllConnections();
      tracker.closeAllConnections();
      await Promise.all([new Promise((done) => site.close(done)), new Promise((done) => tracker.close(done))]);
    },
  };
}
