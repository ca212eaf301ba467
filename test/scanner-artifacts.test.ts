// What a scan keeps as evidence besides its observations, as the EDPS Website Evidence Collector keeps them
// (docs/scanner.md "Artifacts"): a JPEG of each page as the visitor first saw it, banner included, and a HAR of
// each visit, listed by sha256 in the hashed report and served by GET /scans/:scanId/artifacts/:name to members
// only. A hostile page (a canvas of noise, a page as tall as 100,000 px that answers resizes, thousands of
// requests) stays within the caps, lowered here so that it reaches them.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVIDENCE_HTML_CSP } from '../src/evidence/html.js';
import { ArtifactCollector } from '../src/scanner/artifacts.js';
import { setupProject, startService, type SiteProject } from './e2e/harness.js';
import { operator } from './helpers/fixtures.js';
import { shortDwell, scansPath, scanToEnd } from './helpers/scan-sites.js';
import type { TestServer } from './helpers/server.js';

const SCREENSHOTS = process.env.SCAN_ARTIFACT_SCREENSHOTS; // a folder: the first page's screenshot is written there
// Lowered so that the hostile page reaches them (its noise is about 480 KB as JPEG); the shop's pages stay far below.
const CAPS = { screenshotBytes: 300_000, harBytes: 150_000, scanBytes: 3_000_000 };
const HOSTILE_REQUESTS = 2500;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Width and height from a baseline or progressive JPEG's start-of-frame segment. */
function jpegSize(bytes: Buffer): { width: number; height: number } | null {
  let at = 2;
  while (at + 9 < bytes.length && bytes[at] === 0xff) {
    const marker = bytes[at + 1]!;
    if (marker >= 0xc0 && marker <= 0xc2) return { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) };
    at += 2 + bytes.readUInt16BE(at + 2);
  }
  return null;
}

describe('scan artifacts: a screenshot per page and a HAR per visit, hashed in the report, capped', () => {
  let server: TestServer;
  let project: SiteProject;
  let site: Server;
  let origin: string;
  const served: string[] = [];

  const scanOf = (urls: string[], followLinks = 0) => scanToEnd(server, project, urls, followLinks);

  /** The artifact route's answer with its bytes (the test client decodes text). */
  async function download(scanId: string, name: string, token = project.ownerToken, headers: Record<string, string> = {}) {
    const res = await fetch(`${server.url}${scansPath(project.projectId, `/${scanId}/artifacts/${name}`)}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  }

  beforeAll(async () => {
    let serviceUrl: string;
    ({ server, serviceUrl } = await startService(shortDwell({ artifacts: CAPS })));
    project = await setupProject(server);
    const sdk = `<script src="${serviceUrl}/sdk/v2/consent.js"></script>
<script>ConsentSDK.init({ publicKey: ${JSON.stringify(project.key)}, apiBaseUrl: ${JSON.stringify(serviceUrl)} });</script>`;
    site = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://site').pathname;
      served.push(path);
      const html = (head: string, body: string) =>
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>${head}</head><body>${body}</body></html>`);
      if (path === '/ping') return void res.writeHead(204).end();
      if (path === '/shop') return void html(sdk, '<h1>The corner shop</h1><p>Bread, milk and <a href="/about">about us</a>.</p>');
      if (path === '/about') return void html(sdk, '<h1>About the shop</h1><p>Open every day.</p>');
      // Noise in the viewport (a JPEG cannot shrink it), a page 100,000 px tall whose ResizeObserver answers every
      // resize by growing (what hung a full-page capture), and thousands of requests (the HAR's entries).
      if (path === '/hostile')
        return void html(
          '',
          `<canvas id="c" width="1280" height="1200" style="display:block"></canvas><div id="tall" style="height:100000px">tall</div>
<script>
const c = document.getElementById('c'), g = c.getContext('2d'), img = g.createImageData(c.width, c.height);
for (let i = 0; i < img.data.length; i++) img.data[i] = (i % 4 === 3) ? 255 : Math.random() * 256;
g.putImageData(img, 0, 0);
const tall = document.getElementById('tall');
new ResizeObserver(() => { tall.style.height = (tall.offsetHeight + 10) + 'px'; }).observe(document.body);
for (let i = 0; i < ${HOSTILE_REQUESTS}; i++) fetch('/ping?i=' + i + '&pad=' + 'x'.repeat(200)).catch(() => {});
</script>`,
        );
      res.writeHead(404).end();
    });
    await new Promise<void>((done) => site.listen(0, '127.0.0.1', done));
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    await server.request('PUT', `/api/platform/projects/${project.projectId}/allowed-origins`, { token: project.ownerToken, body: { origins: [origin] } });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    site?.closeAllConnections();
    await new Promise((done) => (site ? site.close(done) : done(undefined)));
  });

  describe('a shop of two pages', () => {
    let scan: any;
    let report: any;
    beforeAll(async () => {
      ({ scan, report } = await scanOf([`${origin}/shop`], 1));
    }, 180_000);

    it('keeps a JPEG of each page as the visitor first saw it, at the viewport, and a HAR of each visit, listed by sha256 in the report', async () => {
      expect(report.pages.map((page: any) => page.url)).toEqual([`${origin}/shop`, `${origin}/about`]);
      const names = report.artifacts.files.map((file: any) => file.name);
      expect(names).toEqual(
        expect.arrayContaining(['page-1-before.jpg', 'page-1-before.har', 'page-1-reject.har', 'page-1-accept.har', 'page-2-before.jpg', 'page-2-before.har', 'page-2-reject.har', 'page-2-accept.har']),
      );
      expect(report.artifacts.skipped).toEqual([]);
      expect(report.artifacts.limits).toEqual(CAPS);
      for (const [n, url] of [[1, `${origin}/shop`], [2, `${origin}/about`]] as const) {
        const file = report.artifacts.files.find((f: any) => f.name === `page-${n}-before.jpg`);
        expect(file).toMatchObject({ contentType: 'image/jpeg', pageUrl: url, visit: 'before' });
        const res = await download(scan.id, file.name);
        expect(res.status).toBe(200);
        // JPEG's start-of-image marker, the viewport's size (never the full page), the report's hash of the bytes.
        expect([...res.bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
        expect(jpegSize(res.bytes)).toEqual({ width: 1280, height: 720 });
        expect(res.bytes.length).toBe(file.size);
        expect(sha256(res.bytes)).toBe(file.sha256);
        expect(res.headers.get('etag')).toBe(`"${file.sha256}"`);
        expect(res.headers.get('content-type')).toBe('image/jpeg');
        expect(res.headers.get('content-disposition')).toBe(`attachment; filename="site-scan-${scan.id}-${file.name}"`);
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        if (SCREENSHOTS && n === 1) writeFileSync(`${SCREENSHOTS}/scan-artifact-page-1-before.jpg`, res.bytes);
      }
      // The report's own hash covers the list (and so each file's sha256).
      const html = await server.request('GET', `${scansPath(project.projectId, `/${scan.id}`)}?format=html`, { token: project.ownerToken });
      expect(html.text).toContain('&#10003; matches');
    });

    it('keeps a HAR of each visit that parses, lists the page request with its answer, and holds no bodies', async () => {
      for (const visit of ['before', 'reject', 'accept']) {
        const file = report.artifacts.files.find((f: any) => f.name === `page-1-${visit}.har`);
        const res = await download(scan.id, file.name);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('application/json');
        expect(sha256(res.bytes)).toBe(file.sha256);
        const har = JSON.parse(res.bytes.toString('utf8'));
        expect(har.log.version).toBe('1.2');
        const page = har.log.entries.find((entry: any) => entry.request.url === `${origin}/shop`);
        expect(page).toMatchObject({ request: { method: 'GET' }, response: { status: 200, content: { size: -1, mimeType: 'text/html; charset=utf-8' } }, _resourceType: 'document' });
        // The SDK's config request went to the service; no entry carries a body.
        expect(har.log.entries.some((entry: any) => /\/api\/sdk\/v2\/config$/.test(entry.request.url.split('?')[0]))).toBe(true);
        for (const entry of har.log.entries) {
          expect(entry.response.content.text).toBeUndefined();
          expect(entry.request.postData).toBeUndefined();
        }
        expect(har.log._cut).toBe(0);
      }
      // After Reject all the SDK's consent POST is in the HAR too (answered in the browser, never sent).
      const reject = JSON.parse((await download(scan.id, 'page-1-reject.har')).bytes.toString('utf8'));
      expect(reject.log.entries).toContainEqual(expect.objectContaining({ request: expect.objectContaining({ method: 'POST', url: expect.stringMatching(/\/api\/sdk\/v[12]\/consent$/) }), response: expect.objectContaining({ status: 201 }) }));
    });

    it('lists the artifacts on the scan over REST and GraphQL, answers 304 to its ETag, 404 to a non-member and to an unknown name', async () => {
      const listed = report.artifacts.files.map(({ name, contentType, size, sha256: hash }: any) => ({ name, contentType, size, sha256: hash }));
      expect(scan.artifacts).toEqual(expect.arrayContaining(listed));
      expect(scan.artifacts).toHaveLength(listed.length);
      const gql = await server.request('POST', '/graphql', {
        token: project.ownerToken,
        body: {
          query: `query ($id: ID!, $scanId: ID!) { scan(projectId: $id, scanId: $scanId) { artifacts { name size sha256 contentBase64 } artifact(name: "page-1-before.har") { sha256 contentBase64 } } }`,
          variables: { id: project.projectId, scanId: scan.id },
        },
      });
      expect(gql.body.errors).toBeUndefined();
      expect(gql.body.data.scan.artifacts).toHaveLength(listed.length);
      expect(gql.body.data.scan.artifacts.every((a: any) => a.contentBase64 === null)).toBe(true);
      const har = gql.body.data.scan.artifact;
      expect(sha256(Buffer.from(har.contentBase64, 'base64'))).toBe(har.sha256);

      const file = listed.find((f: any) => f.name === 'page-1-before.jpg');
      expect((await download(scan.id, file.name, project.ownerToken, { 'if-none-match': `"${file.sha256}"` })).status).toBe(304);
      const stranger = await operator(server, 'Stranger');
      const refused = await download(scan.id, file.name, stranger.token);
      expect(refused.status).toBe(404);
      expect(refused.bytes.toString()).not.toContain('JFIF');
      for (const name of ['page-9-before.jpg', 'page-1-before.png', '..%2Fpage-1-before.jpg', 'x'.repeat(300)]) {
        const res = await download(scan.id, name);
        expect(res.status, name).toBe(404);
        expect(JSON.parse(res.bytes.toString()).code).toBe('not_found');
      }
      expect((await download(scan.id, file.name, 'not-a-token')).status).toBe(401);
    });

    it('links each page’s screenshot and HAR files from the HTML report, relative to the report, under its strict CSP', async () => {
      const reportPath = `${scansPath(project.projectId, `/${scan.id}`)}?format=html`;
      const html = await server.request('GET', reportPath, { token: project.ownerToken });
      // As strict as before: the evidence page's policy, nothing added for the files.
      expect(html.headers.get('content-security-policy')).toBe(`${EVIDENCE_HTML_CSP}; frame-ancestors 'none'`);
      const hrefs = [...html.text.matchAll(/href="([^"#]+)"/g)].map((match) => match[1]!.replaceAll('&amp;', '&'));
      const base = `${server.url}${reportPath}`;
      const targets = hrefs.map((href) => new URL(href, base).href);
      for (const file of report.artifacts.files) expect(targets).toContain(`${server.url}${scansPath(project.projectId, `/${scan.id}/artifacts/${file.name}`)}`);
      // Linked, never shown: the report loads nothing from the site or the route.
      expect(html.text).not.toMatch(/<img\b/);
    });
  });

  it('keeps a hostile page within the caps: the noise screenshot is left out with a note, the HAR stops growing and says how many it cut', async () => {
    const { scan, report } = await scanOf([`${origin}/hostile`]);
    expect(served.filter((path) => path === '/ping').length).toBeGreaterThan(500);
    expect(report.artifacts.skipped).toContainEqual({ name: 'page-1-before.jpg', pageUrl: `${origin}/hostile`, visit: 'before', reason: expect.stringMatching(/^\d+ bytes, over the cap of 300000 per file$/) });
    let total = 0;
    for (const file of report.artifacts.files) {
      const res = await download(scan.id, file.name);
      expect(res.bytes.length).toBe(file.size);
      expect(file.size).toBeLessThanOrEqual(file.name.endsWith('.jpg') ? CAPS.screenshotBytes : CAPS.harBytes);
      total += file.size;
    }
    expect(total).toBeLessThanOrEqual(CAPS.scanBytes);
    const before = JSON.parse((await download(scan.id, 'page-1-before.har')).bytes.toString('utf8'));
    expect(before.log.entries[0].request.url).toBe(`${origin}/hostile`);
    expect(before.log._cut).toBeGreaterThan(0);
    expect(before.log.entries.length + before.log._cut).toBeGreaterThan(500);
  }, 180_000);

  it('stops at the scan’s cap for all its files, and says which were left out', () => {
    const collector = new ArtifactCollector({ screenshotBytes: 1000, harBytes: 1000, scanBytes: 1500 });
    const evidence = (size: number) => ({ ...collector.evidenceFor(), screenshot: Buffer.alloc(size, 1) });
    collector.add(1, 'https://shop.example/', 'before', evidence(900), '1');
    collector.add(2, 'https://shop.example/a', 'before', evidence(900), '1');
    collector.add(3, 'https://shop.example/b', 'before', evidence(1001), '1');
    const { files, skipped } = collector.summary();
    expect(files.map((f) => f.name)).toEqual(['page-1-before.jpg', 'page-1-before.har', 'page-2-before.har']);
    expect(files.reduce((sum, f) => sum + f.size, 0)).toBeLessThanOrEqual(1500);
    expect(skipped).toEqual([
      expect.objectContaining({ name: 'page-2-before.jpg', reason: "900 bytes would pass the scan's cap of 1500 for all its files" }),
      expect.objectContaining({ name: 'page-3-before.jpg', reason: '1001 bytes, over the cap of 1000 per file' }),
      expect.objectContaining({ name: 'page-3-before.har', reason: expect.stringContaining("the scan's cap") }),
    ]);
  });
});
