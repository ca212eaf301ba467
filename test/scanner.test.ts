// The site scanner end to end (extensions.md section 7, docs/scanner.md): scans queued over REST, run by the
// service's worker in Debian's Chromium against fixture sites on loopback (test/helpers/scan-sites.ts), read
// back over REST and GraphQL; the API's rules on a server whose scans stay queued; the queue's lease and retry;
// the address guard in production mode; scheduled scans that notify and send scan.completed.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalHash } from '../src/consent/config.js';
import { loadConfig } from '../src/config.js';
import { startGuardProxy } from '../src/scanner/guard-proxy.js';
import { claimScan, failAbandoned } from '../src/scanner/queue.js';
import { scannerWorkerOf } from '../src/scanner/worker.js';
import { setupProject, startService, type SiteProject } from './e2e/harness.js';
import { team } from './helpers/fixtures.js';
import { AD_PIXEL_HOST, shortDwell, startScanSites, startTagSite, TRACKER_HOST, type ScanSites, type TagSite } from './helpers/scan-sites.js';
import { sealingByTest, startTestServer, type TestServer } from './helpers/server.js';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js';

const scansPath = (projectId: string, rest = '') => `/api/platform/projects/${projectId}/scans${rest}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the scan until the worker has finished it (done or failed). */
async function settled(server: TestServer, token: string, projectId: string, scanId: string) {
  for (;;) {
    const res = await server.request('GET', scansPath(projectId, `/${scanId}`), { token });
    if (res.body.scan?.status === 'done' || res.body.scan?.status === 'failed') return res.body.scan;
    await sleep(250);
  }
}

const visit = (scan: any, url: string, kind: string) => scan.pages.find((p: any) => p.url === url).visits.find((v: any) => v.kind === kind);
const findings = (scan: any, type: string, pageUrl?: string) =>
  scan.findings.filter((f: any) => f.type === type && (pageUrl === undefined || f.pageUrl === pageUrl));
const names = (list: any[]) => list.map((f: any) => `${f.subject.kind}:${f.subject.name}`).sort();

describe('a scan of fixture sites in Chromium', () => {
  let server: TestServer;
  let sites: ScanSites;
  let project: SiteProject;
  let scan: any;
  let good: string, leaky: string, nosdk: string, about: string;

  beforeAll(async () => {
    let resolve: (host: string) => Promise<string[]> = async () => [];
    const started = await startService(shortDwell(), { scannerNetwork: { resolve: (host) => resolve(host) } });
    server = started.server;
    project = await setupProject(server);
    sites = await startScanSites(started.serviceUrl, project.key);
    resolve = sites.resolve;
    [good, leaky, nosdk, about] = ['/good', '/leaky', '/nosdk', '/about'].map((path) => sites.origin + path) as [string, string, string, string];
    const allowed = await server.request('PUT', `/api/platform/projects/${project.projectId}/allowed-origins`, { token: project.ownerToken, body: { origins: [sites.origin] } });
    expect(allowed.status).toBe(200);
    const queued = await server.request('POST', scansPath(project.projectId), { token: project.ownerToken, body: { urls: [good, leaky, nosdk], followLinks: 1 } });
    expect(queued.status, queued.text).toBe(202);
    expect(queued.body.scan).toMatchObject({ status: 'queued', urls: [good, leaky, nosdk], followLinks: 1, trigger: 'manual', attempts: 0, summary: null });
    scan = await settled(server, project.ownerToken, project.projectId, queued.body.scan.id);
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    await sites?.close();
  });

  it('visits every page three times and follows same-site links breadth first, once each', () => {
    expect(scan.status, scan.error).toBe('done');
    expect(scan).toMatchObject({ attempts: 1, versionNumber: 1, browser: { name: 'Chromium' } });
    expect(scan.browser.version).toMatch(/^\d+\./);
    // /about (and /about#team, the same page) is the one link followed; the other site's link is not.
    expect(scan.pages.map((p: any) => [p.url, p.depth])).toEqual([
      [good, 0],
      [leaky, 0],
      [nosdk, 0],
      [about, 1],
    ]);
    for (const page of scan.pages) expect(page.visits.map((v: any) => v.kind)).toEqual(['before', 'reject', 'accept']);
    expect(sites.siteRequests.some((path) => path.startsWith('/elsewhere'))).toBe(false);
  });

  it('sees the SDK with the project key and its banner, and what a blocking site sets only after Accept all', () => {
    const before = visit(scan, good, 'before');
    expect(before).toMatchObject({ status: 200, error: null, bannerShown: true, decided: false, sdk: { loaded: true, projectKey: true } });
    expect(before.sdk.keyPrefix).toBe(project.key.slice(0, 14));
    expect(before.cookies).toEqual([]);
    expect(before.requests.map((r: any) => r.host)).not.toContain(TRACKER_HOST);

    const rejected = visit(scan, good, 'reject');
    expect(rejected).toMatchObject({ decided: true, cookies: [] });
    expect(rejected.requests.map((r: any) => r.host)).not.toContain(TRACKER_HOST);
    expect(rejected.storage.map((s: any) => s.key)).toContain(`consent:${project.projectId}`);

    const accepted = visit(scan, good, 'accept');
    expect(accepted.decided).toBe(true);
    expect(accepted.cookies).toEqual([
      expect.objectContaining({ name: '_ga', domain: '127.0.0.1', path: '/', session: false, httpOnly: false, party: 'first', setBy: { type: 'script', url: `${sites.origin}/ga.js` } }),
    ]);
    expect(accepted.requests).toContainEqual({
      host: TRACKER_HOST,
      url: `http://${TRACKER_HOST}:${sites.trackerPort}/pixel.gif`,
      resourceType: 'image',
      // Chromium names the script for some requests and only the document for others (an Image from a script).
      initiator: expect.stringMatching(new RegExp(`^${sites.origin}/(good|ads\\.js)$`)),
      afterDecision: true,
      // Sent once the decision was made (ads.js is released by Accept all): by the first load, or by the reload of the
      // same page when the released script's pixel goes out after the 200 ms window, as the reload starts.
      load: expect.stringMatching(/^(first|reload)$/),
      // The EasyPrivacy rule its full URL matched (the query is not kept; the catalogue names the host: LinkedIn).
      tracker: '/pixel.gif?',
    });
    expect(accepted.storage).toContainEqual({ area: 'local', key: '_ga_state' });
  });

  it('reports before_consent and after_reject on the leaky page only, with the evidence', () => {
    for (const page of [good, about]) {
      expect(findings(scan, 'before_consent', page)).toEqual([]);
      expect(findings(scan, 'after_reject', page)).toEqual([]);
    }
    expect(names(findings(scan, 'before_consent', leaky))).toEqual(['cookie:_ga', `request:${TRACKER_HOST}`, 'storage:_ga_state']);
    expect(names(findings(scan, 'after_reject', leaky))).toEqual(['cookie:_ga', `request:${TRACKER_HOST}`, 'storage:_ga_state']);
    const ga = findings(scan, 'before_consent', leaky).find((f: any) => f.subject.name === '_ga');
    expect(ga).toMatchObject({ category: 'analytics', vendor: 'Google', evidence: { visit: 'before', matched: '_ga', source: 'open-cookie-database', cookie: { setBy: { type: 'script', url: `${sites.origin}/ga.js` } } } });
    const pixel = findings(scan, 'before_consent', leaky).find((f: any) => f.subject.kind === 'request');
    expect(pixel).toMatchObject({ category: 'marketing', vendor: 'LinkedIn', evidence: { visit: 'before', request: { resourceType: 'image', initiator: leaky } } });
    // The page without the SDK: both page findings, and its analytics before consent.
    expect(names(findings(scan, 'sdk_missing'))).toEqual([`page:${nosdk}`]);
    expect(names(findings(scan, 'banner_missing'))).toEqual([`page:${nosdk}`]);
    expect(names(findings(scan, 'before_consent', nosdk))).toEqual(['cookie:_ga', 'storage:_ga_state']);
    // _ga is in no purpose's `cookies`: unmapped once, with the purpose its category suggests.
    expect(findings(scan, 'unmapped')).toEqual([expect.objectContaining({ subject: { kind: 'cookie', name: '_ga' }, category: 'analytics', suggestedPurposeKey: 'analytics' })]);
    expect(scan.summary).toMatchObject({ pages: 4, visits: 12, cookies: 1, findings: { before_consent: 5, after_reject: 3, unmapped: 1, sdk_missing: 1, banner_missing: 1 } });
  });

  it('serves the report as json, csv and html with a hash anyone can recompute', async () => {
    const path = scansPath(project.projectId, `/${scan.id}`);
    const json = await server.request('GET', `${path}?format=json&download=1`, { token: project.ownerToken });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-disposition')).toMatch(/^attachment; filename="site-scan-.*\.json"$/);
    const report = JSON.parse(json.text).report;
    const { hashes, ...rest } = report;
    expect(hashes.reportHash).toBe(scan.reportHash);
    expect(canonicalHash(rest)).toBe(scan.reportHash);
    expect(report).toMatchObject({ versionNumber: 1, browser: scan.browser, catalogue: { licence: expect.stringContaining('Apache-2.0'), date: '2026-01-21' } });

    const csv = await server.request('GET', `${path}?format=csv`, { token: project.ownerToken });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.text).toContain(`hashes.reportHash,${scan.reportHash}`);
    expect(csv.text).toContain(`${leaky},before,cookie,_ga,127.0.0.1,first`);

    const html = await server.request('GET', `${path}?format=html&download=1`, { token: project.ownerToken });
    expect(html.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html.text).toContain('&#10003; matches');
    expect(html.text).toContain(scan.reportHash);
  });

  it('answers the same scan on GraphQL: Project.scans and scan', async () => {
    const res = await server.request('POST', '/graphql', {
      token: project.ownerToken,
      body: {
        query: `query ($id: ID!, $scanId: ID!) {
          project(id: $id) { scans(first: 5) { edges { node { id status reportHash summary } } pageInfo { hasNextPage } } }
          scan(projectId: $id, scanId: $scanId) { id findings { type pageUrl subject { kind name } suggestedPurposeKey } }
        }`,
        variables: { id: project.projectId, scanId: scan.id },
      },
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.project.scans.edges).toEqual([{ node: { id: scan.id, status: 'done', reportHash: scan.reportHash, summary: scan.summary } }]);
    expect(res.body.data.scan.findings).toHaveLength(scan.findings.length);
  });

  it('adds an unmapped cookie to the draft under the suggested purpose, as an audited draft edit', async () => {
    const added = await server.request('POST', `/api/platform/projects/${project.projectId}/consent/experience/cookies`, {
      token: project.ownerToken,
      body: { cookies: [{ name: '_ga', purposeKey: 'analytics' }] },
    });
    expect(added.status, added.text).toBe(200);
    expect(added.body.experience.cookies).toEqual({ analytics: ['_ga'] });
    // Again: already listed, nothing added twice.
    const again = await server.request('POST', `/api/platform/projects/${project.projectId}/consent/experience/cookies`, {
      token: project.ownerToken,
      body: { cookies: [{ name: '_ga', purposeKey: 'ads' }] },
    });
    expect(again.body.experience.cookies).toEqual({ analytics: ['_ga'] });
    const read = await server.request('GET', `/api/platform/projects/${project.projectId}/consent/experience`, { token: project.ownerToken });
    expect(read.body.experience.cookies).toEqual({ analytics: ['_ga'] });
    const audit = await server.services.db.prisma.auditEvent.findMany({ where: { projectId: project.projectId, action: 'consent.experience_updated' } });
    expect(audit).toHaveLength(2);
    const unknown = await server.request('POST', `/api/platform/projects/${project.projectId}/consent/experience/cookies`, {
      token: project.ownerToken,
      body: { cookies: [{ name: '_fbp', purposeKey: 'nope' }] },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details).toEqual([{ path: ['cookies', 0, 'purposeKey'], message: 'Unknown purpose key nope' }]);
  });
});

describe('a scan misses nothing a visitor gets, and its own clicks leave no receipts', () => {
  let server: TestServer;
  let site: TagSite;
  let project: SiteProject;
  let receiver: Receiver;
  let scan: any;
  let shop: string;
  let before: Record<string, unknown>;

  /** Everything a visitor's decision would touch: receipts, analytics, the ledger's queue and leaves, webhooks. */
  async function decisionTraces() {
    const db = server.services.db.prisma;
    const where = { where: { projectId: project.projectId } };
    const stats = await server.request('GET', `/api/platform/projects/${project.projectId}/stats`, { token: project.ownerToken });
    const batches = await db.ledgerPendingBatch.findMany({ ...where, select: { count: true } });
    return {
      receipts: await db.receipt.count(where),
      stats: stats.body,
      ledgerPending: batches.reduce((sum, batch) => sum + batch.count, 0) + (await db.ledgerPending.count(where)),
      ledgerLeaves: await db.ledgerLeaf.count(where),
      webhookEvents: await db.webhookEvent.count(where),
      webhookDeliveries: await db.webhookDelivery.count(where),
      received: receiver.received.length,
    };
  }

  beforeAll(async () => {
    let resolve: (host: string) => Promise<string[]> = async () => [];
    // The default dwell window (SCANNER_DWELL_MS); sealing left to the test, so the ledger's queue stays as it is.
    const started = await startService(sealingByTest(), { scannerNetwork: { resolve: (host) => resolve(host), ignoreHttpsErrors: true } });
    server = started.server;
    project = await setupProject(server);
    site = await startTagSite(started.serviceUrl, project.key);
    resolve = site.resolve;
    receiver = await startReceiver();
    shop = `${site.origin}/shop`;
    const base = `/api/platform/projects/${project.projectId}`;
    expect((await server.request('PUT', `${base}/allowed-origins`, { token: project.ownerToken, body: { origins: [site.origin] } })).status).toBe(200);
    expect((await server.request('PUT', `${base}/webhook`, { token: project.ownerToken, body: { url: receiver.url } })).status).toBe(200);
    // The operator mapped _ga to analytics: the SDK removes it once analytics is refused.
    const mapped = await server.request('POST', `${base}/consent/experience/cookies`, { token: project.ownerToken, body: { cookies: [{ name: '_ga', purposeKey: 'analytics' }] } });
    expect(mapped.status, mapped.text).toBe(200);
    expect((await server.request('POST', `${base}/consent/publish`, { token: project.ownerToken })).status).toBe(201);
    before = await decisionTraces();
    const queued = await server.request('POST', scansPath(project.projectId), { token: project.ownerToken, body: { urls: [shop] } });
    expect(queued.status, queued.text).toBe(202);
    scan = await settled(server, project.ownerToken, project.projectId, queued.body.scan.id);
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    await site?.close();
    await receiver?.close();
  });

  it('loads the page again (and one more same-site page) after Reject all, and sees the tag that sets _ga on every view', () => {
    expect(scan.status, scan.error).toBe('done');
    const clicked = visit(scan, shop, 'reject');
    expect(clicked.decided, JSON.stringify({ error: clicked.error, bannerShown: clicked.bannerShown, sdk: clicked.sdk, loads: clicked.loads })).toBe(true);
    const finding = findings(scan, 'after_reject', shop).find((f: any) => f.subject.name === '_ga');
    expect(finding).toMatchObject({ category: 'analytics', evidence: { visit: 'reject', write: { load: 'reload', setBy: { type: 'script', url: `${site.origin}/ga.js` } } } });
    const rejected = visit(scan, shop, 'reject');
    expect(rejected.decided).toBe(true);
    expect(rejected.loads.map((load: any) => [load.phase, load.url, load.status])).toEqual([
      ['first', shop, 200],
      ['reload', shop, 200],
      ['next', `${site.origin}/contact`, 200],
    ]);
    // The SDK removed _ga again on each load, so the jar at the end does not hold it; its writes are seen.
    expect(rejected.cookies.map((c: any) => c.name)).not.toContain('_ga');
    const rewritten = rejected.writes.filter((w: any) => w.type === 'cookie' && w.name === '_ga' && w.afterDecision);
    expect(rewritten.map((w: any) => w.load)).toEqual(['reload', 'next']);
    // _ga is mapped: not unmapped.
    expect(names(findings(scan, 'unmapped'))).not.toContain('cookie:_ga');
  });

  it('watches writes over the dwell window after network idle: a tag writing _clck 1.5 s after load is found', () => {
    const first = visit(scan, shop, 'before');
    expect(first.cookies.map((c: any) => c.name)).toContain('_clck');
    expect(names(findings(scan, 'before_consent', shop))).toContain('cookie:_clck');
    const late = first.writes.find((w: any) => w.name === '_clck');
    expect(late).toMatchObject({ type: 'cookie', load: 'first', party: 'first', afterDecision: false, attributes: 'max-age=31536000; path=/', setBy: { type: 'script', url: shop, inline: true } });
    expect(late.atMs).toBeGreaterThanOrEqual(1500);
  });

  it('allows third-party cookies as a desktop browser does: the ad pixel sets fr, recorded as third party with its response', () => {
    const first = visit(scan, shop, 'before');
    const fr = first.cookies.find((c: any) => c.name === 'fr');
    expect(fr).toMatchObject({ domain: '.facebook.com', party: 'third', secure: true, httpOnly: true, sameSite: 'None', setBy: { type: 'response', url: `https://${AD_PIXEL_HOST}:${site.pixelPort}/tr` } });
    expect(first.writes).toContainEqual(expect.objectContaining({ type: 'cookie', name: 'fr', domain: 'facebook.com', party: 'third', setBy: { type: 'response', url: `https://${AD_PIXEL_HOST}:${site.pixelPort}/tr` } }));
    expect(findings(scan, 'before_consent', shop).find((f: any) => f.subject.name === 'fr')).toMatchObject({ category: 'marketing', vendor: 'Facebook' });
    expect(names(findings(scan, 'after_reject', shop))).toEqual(expect.arrayContaining(['cookie:_clck', 'cookie:_ga', 'cookie:fr', `request:${AD_PIXEL_HOST}`]));
  });

  it('names the page (inline script) for a cookie an inline script sets once the SDK releases it, not the SDK file', () => {
    const accepted = visit(scan, shop, 'accept');
    expect(accepted.cookies.find((c: any) => c.name === '_gid')).toMatchObject({ party: 'first', setBy: { type: 'script', url: shop, inline: true } });
    expect(visit(scan, shop, 'reject').cookies.map((c: any) => c.name)).not.toContain('_gid');
  });

  it("answers the SDK's consent request inside the browser: no receipt, analytics, ledger entry or webhook from the scan", async () => {
    expect(await decisionTraces()).toEqual(before);
    expect(before).toMatchObject({ receipts: 0, ledgerPending: 0, webhookDeliveries: 0 });
    // The SDK did send its decisions (and stored them: the reload showed no banner); they were answered here.
    expect(visit(scan, shop, 'reject').consentRequestsAnswered).toBe(1);
    expect(visit(scan, shop, 'accept').consentRequestsAnswered).toBe(1);
  });
});

describe('the scan API (scans stay queued: no worker on this instance)', () => {
  let server: TestServer;
  let t: Awaited<ReturnType<typeof team>>;
  let clock = Date.parse('2026-11-25T10:00:00Z');
  const url = 'https://shop.example/';

  beforeAll(async () => {
    server = await startTestServer({ scanner: { ...loadConfig().scanner, concurrency: 0, dailyScansPerOrg: 2 } }, { now: () => new Date(clock) });
    t = await team(server);
  });
  afterAll(() => server?.close());

  it('lets an Admin start a scan, refuses bad input, a second scan at once, other roles and outsiders', async () => {
    const path = scansPath(t.project.id);
    expect((await server.request('POST', path, { token: t.viewer.token, body: { urls: [url] } })).status).toBe(403);
    expect((await server.request('POST', path, { token: t.outsider.token, body: { urls: [url] } })).status).toBe(404);
    const bad = await server.request('POST', path, { token: t.admin.token, body: { urls: ['ftp://shop.example/', 'https://user:pw@shop.example/'], followLinks: 51 } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: any) => d.path)).toEqual([['urls', 0], ['urls', 1], ['followLinks']]);
    expect((await server.request('POST', path, { token: t.admin.token, body: { urls: [] } })).body.details).toEqual([{ path: ['urls'], message: 'At least one URL' }]);
    expect((await server.request('POST', path, { token: t.admin.token, body: { urls: Array(21).fill(url) } })).status).toBe(400);

    const started = await server.request('POST', path, { token: t.admin.token, body: { urls: [url] } });
    expect(started.status).toBe(202);
    const second = await server.request('POST', path, { token: t.owner.token, body: { urls: [url] } });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('conflict');

    const list = await server.request('GET', path, { token: t.viewer.token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ scans: [expect.objectContaining({ id: started.body.scan.id, status: 'queued' })], nextCursor: null });
    const one = await server.request('GET', scansPath(t.project.id, `/${started.body.scan.id}`), { token: t.viewer.token });
    expect(one.body.scan).toMatchObject({ id: started.body.scan.id, status: 'queued', pages: [], findings: [], browser: null });
    expect((await server.request('GET', scansPath(t.project.id, `/${started.body.scan.id}?format=csv`), { token: t.viewer.token })).status).toBe(404);
    expect((await server.request('GET', scansPath(t.project.id, `/${started.body.scan.id}?format=xml`), { token: t.viewer.token })).status).toBe(400);
    expect((await server.request('GET', scansPath(t.project.id, '/nope'), { token: t.viewer.token })).status).toBe(404);
    expect((await server.request('GET', path, { token: t.outsider.token })).status).toBe(404);
    const audit = await server.services.db.prisma.auditEvent.findFirst({ where: { action: 'scan.started', projectId: t.project.id } });
    expect(audit).toMatchObject({ actorId: t.admin.id, target: { type: 'scan', id: started.body.scan.id } });
  });

  it('leases a scan to one worker, takes it back after its lease expires once, then fails it', async () => {
    const scan = await server.services.db.prisma.scan.findFirstOrThrow({ where: { projectId: t.project.id } });
    const first = await claimScan(server.services, 'instance-a');
    expect(first).toMatchObject({ id: scan.id, attempts: 1 });
    expect(await claimScan(server.services, 'instance-b')).toBeNull(); // leased: nobody else takes it
    clock += server.services.config.scanner.leaseMs + 1000; // instance-a died: its lease runs out
    expect(await claimScan(server.services, 'instance-b')).toMatchObject({ id: scan.id, attempts: 2 });
    clock += server.services.config.scanner.leaseMs + 1000; // and instance-b died too
    expect(await claimScan(server.services, 'instance-c')).toBeNull();
    expect(await failAbandoned(server.services)).toBe(1);
    const failed = await server.request('GET', scansPath(t.project.id, `/${scan.id}`), { token: t.viewer.token });
    expect(failed.body.scan).toMatchObject({ status: 'failed', attempts: 2, error: expect.stringContaining('stopped twice') });
  });

  it("keeps to the organization's daily quota (checked before the one-at-a-time rule)", async () => {
    const path = scansPath(t.project.id);
    expect((await server.request('POST', path, { token: t.admin.token, body: { urls: [url] } })).status).toBe(202);
    // Two scans in 24 hours (the failed one counts): the next waits until the first is a day old.
    const over = await server.request('POST', path, { token: t.admin.token, body: { urls: [url] } });
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('rate_limited');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('sets, reads and turns off the schedule (Admin sets, Viewer reads)', async () => {
    const path = scansPath(t.project.id, '/schedule');
    expect((await server.request('GET', path, { token: t.viewer.token })).body).toEqual({ schedule: { schedule: 'off', urls: [], followLinks: 0, nextRunAt: null } });
    expect((await server.request('PUT', path, { token: t.viewer.token, body: { schedule: 'daily', urls: [url] } })).status).toBe(403);
    expect((await server.request('PUT', path, { token: t.admin.token, body: { schedule: 'hourly', urls: [url] } })).status).toBe(400);
    expect((await server.request('PUT', path, { token: t.admin.token, body: { schedule: 'weekly' } })).status).toBe(400);
    const weekly = await server.request('PUT', path, { token: t.admin.token, body: { schedule: 'weekly', urls: [url], followLinks: 3 } });
    expect(weekly.body.schedule).toEqual({ schedule: 'weekly', urls: [url], followLinks: 3, nextRunAt: new Date(clock + 7 * 86_400_000).toISOString() });
    expect((await server.request('GET', path, { token: t.viewer.token })).body.schedule.schedule).toBe('weekly');
    expect((await server.request('PUT', path, { token: t.admin.token, body: { schedule: 'off' } })).body.schedule.schedule).toBe('off');
  });
});

describe('without Chromium', () => {
  it('still starts, and POST /scans answers 503 scanner_unavailable saying what to install', async () => {
    const server = await startTestServer({ scanner: { ...loadConfig().scanner, concurrency: 1, chromiumPath: undefined } });
    try {
      const t = await team(server);
      const res = await server.request('POST', scansPath(t.project.id), { token: t.admin.token, body: { urls: ['https://shop.example/'] } });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ code: 'scanner_unavailable', error: expect.stringContaining('apt-get install -y chromium') });
      expect((await server.request('GET', '/api/health')).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('in production the scanned page reaches public addresses only', () => {
  let server: TestServer;
  let project: SiteProject;
  let internal: Server;
  let internalRequests: string[];
  let publicSite: Server;
  let scan: any;
  let publicOrigin: string;
  let internalPort: number;

  beforeAll(async () => {
    // An internal service on loopback that no scan may reach.
    internalRequests = [];
    internal = createServer((req, res) => {
      internalRequests.push(req.url ?? '');
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>internal secrets</p>');
    });
    await new Promise<void>((done) => internal.listen(0, '127.0.0.1', done));
    internalPort = (internal.address() as AddressInfo).port;
    // The "public" site: 127.0.0.3 plays a public address (a test-only stand-in, never configurable by env).
    publicSite = createServer((req, res) => {
      const inside = `127.0.0.1:${internalPort}`;
      if (req.url === '/redirect') return void res.writeHead(302, { Location: `http://${inside}/secret` }).end();
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<!doctype html><title>Public</title>
<img src="http://${inside}/img">
<img src="http://localhost:${internalPort}/by-name">
<iframe src="/redirect"></iframe>
<script>
fetch('http://10.0.0.1/intranet').catch(function () {});
fetch('http://169.254.169.254/latest/meta-data/').catch(function () {});
try { new WebSocket('ws://${inside}/socket'); } catch (e) {}
</script>`);
    });
    await new Promise<void>((done) => publicSite.listen(0, '127.0.0.3', done));
    publicOrigin = `http://127.0.0.3:${(publicSite.address() as AddressInfo).port}`;
    // Every request of the page is made while it loads: no dwell window needed to see them refused.
    server = (await startService({ production: true, ...shortDwell() }, { scannerNetwork: { publicStandIns: ['127.0.0.3'] } })).server;
    project = await setupProject(server);
    const queued = await server.request('POST', scansPath(project.projectId), {
      token: project.ownerToken,
      body: { urls: [`${publicOrigin}/`, `http://127.0.0.1:${internalPort}/direct`, `${publicOrigin}/redirect`] },
    });
    expect(queued.status, queued.text).toBe(202);
    scan = await settled(server, project.ownerToken, project.projectId, queued.body.scan.id);
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    internal?.closeAllConnections();
    await new Promise((done) => internal?.close(done));
    publicSite?.closeAllConnections();
    await new Promise((done) => publicSite?.close(done));
  });

  it('refuses loopback, private and metadata addresses (redirects, subresources, WebSockets) and reports them', () => {
    expect(scan.status, scan.error).toBe('done');
    expect(internalRequests).toEqual([]);
    const page = visit(scan, `${publicOrigin}/`, 'before');
    expect(page.status).toBe(200);
    const refused = page.refused.map((r: any) => `${r.host} ${r.reason}`);
    expect(refused).toEqual(
      expect.arrayContaining([
        `127.0.0.1 address 127.0.0.1 is not allowed`,
        `localhost address 127.0.0.1 is not allowed`,
        `10.0.0.1 address 10.0.0.1 is not allowed`,
        `169.254.169.254 address 169.254.169.254 is not allowed`,
      ]),
    );
    // The iframe's redirect to loopback, the image, the WebSocket: each refused by target.
    const targets = page.refused.map((r: any) => r.target);
    expect(targets).toEqual(expect.arrayContaining([`http://127.0.0.1:${internalPort}/secret`, `http://127.0.0.1:${internalPort}/img`, `127.0.0.1:${internalPort}`]));
    // A scan URL on loopback, or one that redirects there, is refused before anything is fetched.
    for (const url of [`http://127.0.0.1:${internalPort}/direct`, `${publicOrigin}/redirect`]) {
      const direct = visit(scan, url, 'before');
      expect(direct.error).toMatch(/ERR_/);
      expect(direct.refused.map((r: any) => r.host)).toContain('127.0.0.1');
    }
    expect(scan.summary.refusedRequests).toBeGreaterThanOrEqual(12);
  });
});

describe('scheduled scans', () => {
  let server: TestServer;
  let sites: ScanSites;
  let project: SiteProject;
  let receiver: Receiver;
  let clock = Date.now();

  beforeAll(async () => {
    let resolve: (host: string) => Promise<string[]> = async () => [];
    const started = await startService(shortDwell(), { now: () => new Date(clock), scannerNetwork: { resolve: (host) => resolve(host) } });
    server = started.server;
    project = await setupProject(server);
    sites = await startScanSites(started.serviceUrl, project.key);
    resolve = sites.resolve;
    receiver = await startReceiver();
    const base = `/api/platform/projects/${project.projectId}`;
    expect((await server.request('PUT', `${base}/allowed-origins`, { token: project.ownerToken, body: { origins: [sites.origin] } })).status).toBe(200);
    expect((await server.request('PUT', `${base}/webhook`, { token: project.ownerToken, body: { url: receiver.url } })).status).toBe(200);
  });

  afterAll(async () => {
    await server?.close();
    await sites?.close();
    await receiver?.close();
  });

  /** Moves the clock past the next run and waits for the scheduled scan the worker queues and runs. */
  async function nextScheduledScan(count: number) {
    clock += 86_400_000 + 60_000;
    scannerWorkerOf(server.services)!.wake(true); // due schedules are otherwise looked at every 30 s
    for (;;) {
      const list = await server.request('GET', scansPath(project.projectId), { token: project.ownerToken });
      const scheduled = list.body.scans.filter((s: any) => s.trigger === 'schedule');
      if (scheduled.length === count && ['done', 'failed'].includes(scheduled[0].status)) return scheduled[0];
      await sleep(250);
    }
  }

  it('notifies the members and sends scan.completed when something new appears, and stays quiet otherwise', async () => {
    const set = await server.request('PUT', scansPath(project.projectId, '/schedule'), {
      token: project.ownerToken,
      body: { schedule: 'daily', urls: [`${sites.origin}/leaky`] },
    });
    expect(set.status).toBe(200);
    const first = await nextScheduledScan(1);
    expect(first.status, first.error).toBe('done');
    await receiver.until((received) => received.some((r) => r.json?.type === 'scan.completed'), 30_000);
    const event = receiver.received.find((r) => r.json?.type === 'scan.completed')!.json;
    expect(event.data).toMatchObject({ projectId: project.projectId, scanId: first.id, previousScanId: null, reportHash: first.reportHash });
    expect(event.data.newFindings.map((f: any) => `${f.type} ${f.subject.name}`).sort()).toEqual([
      'after_reject _ga',
      'after_reject _ga_state',
      `after_reject ${TRACKER_HOST}`,
      'before_consent _ga',
      'before_consent _ga_state',
      `before_consent ${TRACKER_HOST}`,
      'unmapped _ga',
    ]);
    const inbox = await server.request('GET', '/api/platform/notifications', { token: project.ownerToken });
    expect(inbox.body.notifications.filter((n: any) => n.type === 'consent.scan_found_new')).toHaveLength(1);

    // The same site the next day: nothing new, no notification, no event.
    const second = await nextScheduledScan(2);
    expect(second.status, second.error).toBe('done');
    const events = await server.services.db.prisma.webhookEvent.count({ where: { projectId: project.projectId, type: 'scan.completed' } });
    expect(events).toBe(1);
    const again = await server.request('GET', '/api/platform/notifications', { token: project.ownerToken });
    expect(again.body.notifications.filter((n: any) => n.type === 'consent.scan_found_new')).toHaveLength(1);
  }, 240_000);
});

describe('the guard proxy', () => {
  let servers: Server[];
  const hits: Record<string, number> = {};
  const serve = async (host: string, body: string, port = 0) => {
    const server = createServer((_req, res) => {
      hits[host] = (hits[host] ?? 0) + 1;
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end(body);
    });
    await new Promise<void>((done) => server.listen(port, host, done));
    servers.push(server);
    return (server.address() as AddressInfo).port;
  };
  /** One plain-http request through the proxy: the answer's body, or the error the client saw. */
  const through = (proxy: string, url: string) =>
    new Promise<string>((resolve) => {
      const { hostname, port } = new URL(proxy);
      const req = request({ host: hostname, port, path: url, headers: { host: new URL(url).host } }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve(body));
        res.on('error', (error) => resolve(`error: ${error.message}`));
      });
      req.on('error', (error) => resolve(`error: ${error.message}`));
      req.end();
    });

  beforeAll(() => void (servers = []));
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });

  it('connects to the address it checked: a name that resolves differently later is not looked up again', async () => {
    // "rebind.test" answers a public stand-in first and loopback on every later lookup (DNS rebinding).
    const port = await serve('127.0.0.3', 'public');
    // The internal server on the same port: a request forwarded to the rebound address would land here.
    await serve('127.0.0.1', 'internal', port);
    let lookups = 0;
    const proxy = await startGuardProxy(
      { allowAddress: (address) => address === '127.0.0.3', resolve: async () => (lookups++ === 0 ? ['127.0.0.3'] : ['127.0.0.1']) },
      1_000_000,
    );
    try {
      expect(await through(proxy.url, `http://rebind.test:${port}/`)).toBe('public');
      expect(lookups).toBe(1);
      // The next request resolves again, sees loopback and is refused: cut, never forwarded.
      expect(await through(proxy.url, `http://rebind.test:${port}/`)).toMatch(/^error: /);
      expect(hits['127.0.0.1']).toBeUndefined();
      expect(proxy.refused).toEqual([{ target: `http://rebind.test:${port}/`, host: 'rebind.test', address: '127.0.0.1', reason: 'address 127.0.0.1 is not allowed' }]);
    } finally {
      await proxy.close();
    }
  });

  // Fails before: the upstream socket Node's keep-alive agent hands back for each request was tracked again each
  // time, a 'close' and an 'error' listener more per request (MaxListenersExceededWarning on a page of 2,500 requests).
  it('tracks a reused upstream connection once, however many requests it carries', async () => {
    const port = await serve('127.0.0.5', 'ok');
    const proxy = await startGuardProxy({ allowAddress: () => true }, 1_000_000);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      for (let i = 0; i < 30; i++) expect(await through(proxy.url, `http://127.0.0.5:${port}/${i}`)).toBe('ok');
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
      await proxy.close();
    }
  });

  it('cuts a visit that goes over its byte limit and refuses what follows', async () => {
    const port = await serve('127.0.0.4', 'x'.repeat(200_000));
    const proxy = await startGuardProxy({ allowAddress: () => true }, 50_000);
    try {
      const first = await through(proxy.url, `http://127.0.0.4:${port}/big`);
      expect(first.length).toBeLessThan(200_000);
      expect(proxy.overLimit).toBe(true);
      expect(await through(proxy.url, `http://127.0.0.4:${port}/next`)).toMatch(/^error: /);
      expect(proxy.refused.map((r) => r.reason)).toEqual(['byte limit of the page reached']);
    } finally {
      await proxy.close();
    }
  });
});
