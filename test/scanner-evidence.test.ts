// What a scan sees and where it says it saw it (extensions.md section 16, docs/scanner.md): the extra page a
// decision visit loads is reported as that page; a tag acting after the visitor's click is watched for; every
// cookie written and removed again is in the inventory, the findings and the cookie declaration alike; what a page
// sends while it is being left (beacons, keepalive fetches, image pings) is in the report, checked against what the
// tracker received. One scan of the evidence site (test/helpers/scan-sites.ts), in Chromium, on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { setupProject, startService, type SiteProject } from './e2e/harness.js';
import { BEACON_HOST, scanToEnd, startEvidenceSite, TRACKER_HOST, type EvidenceSite } from './helpers/scan-sites.js';
import type { TestServer } from './helpers/server.js';

const visitOf = (report: any, url: string, kind: string) => report.pages.find((p: any) => p.url === url).visits.find((v: any) => v.kind === kind);
const findingsOf = (report: any, type: string, pageUrl: string) => report.findings.filter((f: any) => f.type === type && f.pageUrl === pageUrl);
const names = (list: any[]) => list.map((f: any) => `${f.subject.kind}:${f.subject.name}`).sort();

describe('a scan reports each observation for its page, misses nothing late or sent on leaving, and its inventory agrees', () => {
  let server: TestServer;
  let site: EvidenceSite;
  let project: SiteProject;
  let report: any;
  let good: string, leaky: string, uet: string;

  beforeAll(async () => {
    let resolve: (host: string) => Promise<string[]> = async () => [];
    // A dwell window longer than the 1.5 s tag's delay, with room for a loaded machine's timers.
    const started = await startService({ scanner: { ...loadConfig().scanner, dwellMs: 2500 } }, { scannerNetwork: { resolve: (host) => resolve(host) } });
    server = started.server;
    project = await setupProject(server);
    site = await startEvidenceSite(started.serviceUrl, project.key);
    resolve = site.resolve;
    [good, leaky, uet] = ['/good', '/leaky', '/uet'].map((path) => site.origin + path) as [string, string, string];
    const base = `/api/platform/projects/${project.projectId}`;
    expect((await server.request('PUT', `${base}/allowed-origins`, { token: project.ownerToken, body: { origins: [site.origin] } })).status).toBe(200);
    // The operator maps Matomo's cookies to analytics: the SDK removes `_pk_id.*` once analytics is refused.
    const mapped = await server.request('POST', `${base}/consent/experience/cookies`, { token: project.ownerToken, body: { cookies: [{ name: '_pk_*', purposeKey: 'analytics' }] } });
    expect(mapped.status, mapped.text).toBe(200);
    expect((await server.request('POST', `${base}/consent/publish`, { token: project.ownerToken })).status).toBe(201);
    ({ report } = await scanToEnd(server, project, [good, uet]));
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    await site?.close();
  });

  it('reports what the extra page of a decision visit set and sent for that page, not for the page that is right', () => {
    const rejected = visitOf(report, good, 'reject');
    expect(rejected.loads.map((load: any) => [load.phase, load.url])).toEqual([
      ['first', good],
      ['reload', good],
      ['next', leaky],
    ]);
    expect(findingsOf(report, 'after_reject', good)).toEqual([]);
    expect(findingsOf(report, 'before_consent', good)).toEqual([]);
    const onLeaky = findingsOf(report, 'after_reject', leaky);
    expect(names(onLeaky)).toEqual(['cookie:_pk_id.1.a1b2', 'cookie:_pk_testcookie.1.a1b2', `request:${TRACKER_HOST}`]);
    for (const finding of onLeaky) expect(finding.evidence).toMatchObject({ visit: 'reject', visitOf: good });
    expect(onLeaky.find((f: any) => f.subject.name === '_pk_id.1.a1b2').evidence.write).toMatchObject({ load: 'next', afterDecision: true, setBy: { type: 'script', url: leaky, inline: true } });
    expect(onLeaky.find((f: any) => f.subject.kind === 'request').evidence.request).toMatchObject({ load: 'next', afterDecision: true });
  });

  it('watches the page after the Reject all click before reloading: a tag writing 100 ms and 1.5 s after the click is found', () => {
    const rejected = visitOf(report, uet, 'reject');
    expect(rejected.decided).toBe(true);
    const clickedAt = rejected.decidedAtMs;
    const reloadAt = rejected.loads.find((load: any) => load.phase === 'reload').startedAtMs;
    expect(reloadAt - clickedAt).toBeGreaterThanOrEqual(1500);
    for (const name of ['_uetsid', '_uetvid']) {
      const finding = findingsOf(report, 'after_reject', uet).find((f: any) => f.subject.name === name);
      expect(finding, name).toMatchObject({ category: 'marketing', evidence: { visit: 'reject', write: { load: 'first', afterDecision: true, setBy: { type: 'script', url: uet, inline: true } } } });
    }
  });

  it('lists in the inventory every visit and page where a cookie was written, also when it was removed before the visit ended; the findings and the declaration agree', async () => {
    const item = (kind: string, name: string) => report.inventory.find((i: any) => i.kind === kind && i.name === name);
    // Written on /leaky in both decision visits of /good; removed by the SDK after Reject all, kept after Accept all.
    expect(visitOf(report, good, 'reject').cookies.map((c: any) => c.name)).not.toContain('_pk_id.1.a1b2');
    expect(item('cookie', '_pk_id.1.a1b2')).toMatchObject({ category: 'analytics', visits: ['reject', 'accept'], pages: [leaky] });
    // Written and removed at once by Matomo itself, in every visit that loaded /leaky.
    expect(item('cookie', '_pk_testcookie.1.a1b2')).toMatchObject({ category: 'analytics', visits: ['reject', 'accept'], pages: [leaky] });
    expect(item('cookie', '_uetsid')).toMatchObject({ visits: ['reject', 'accept'], pages: [uet] });

    // Every finding's subject is in the inventory, seen in the finding's visit and on its page.
    for (const finding of report.findings.filter((f: any) => ['before_consent', 'after_reject'].includes(f.type))) {
      const kind = finding.subject.kind === 'request' ? 'host' : finding.subject.kind;
      const listed = item(kind, finding.subject.name);
      expect(listed, `${finding.type} ${finding.subject.name}`).toBeDefined();
      expect(listed.visits).toContain(finding.evidence.visit);
      expect(listed.pages).toContain(finding.pageUrl);
    }

    // The declaration is built from the same inventory: both Matomo cookies under analytics, seen.
    const declared = await server.request('GET', '/api/sdk/v2/cookie-declaration?locale=en', { headers: { Authorization: `Bearer ${project.key}`, Origin: site.origin } });
    expect(declared.status, declared.text).toBe(200);
    const analytics = declared.body.purposes.find((p: any) => p.key === 'analytics');
    expect(analytics.items.filter((i: any) => i.seen).map((i: any) => i.name)).toEqual(expect.arrayContaining(['_pk_id.1.a1b2', '_pk_testcookie.1.a1b2']));
    const everyDeclared = [...declared.body.purposes.flatMap((p: any) => p.items), ...declared.body.unassigned].filter((i: any) => i.seen);
    for (const entry of report.inventory.filter((i: any) => i.kind !== 'host')) expect(everyDeclared.map((i: any) => i.name)).toContain(entry.name);
  });

  it('records what a page sends while it is being left (beacon, keepalive fetch, image ping) and judges it, as the tracker received it', () => {
    // The tracker's own log is the witness: every pagehide request the checkout page really sent.
    const sent = site.trackerHits.filter((hit) => hit.includes('evt=pagehide')).map((hit) => hit.split(' ')[1]!.split('?')[0]!);
    // Left once in the before visit, twice in each decision visit (at the reload and at the next page), three requests each time.
    expect(sent.length).toBe(15);
    const leaving = report.pages.flatMap((page: any) => page.visits.flatMap((visit: any) => visit.requests.filter((r: any) => r.leaving).map((r: any) => ({ ...r, visit: visit.kind, page: page.url }))));
    const countBy = (paths: string[]) => paths.reduce((counts: Record<string, number>, path) => ({ ...counts, [path]: (counts[path] ?? 0) + 1 }), {});
    expect(countBy(leaving.map((r: any) => new URL(r.url).pathname))).toEqual(countBy(sent));
    for (const request of leaving) expect(request).toMatchObject({ host: BEACON_HOST, page: uet, resourceType: 'ping' });
    expect(visitOf(report, uet, 'reject').requests.filter((r: any) => r.leaving).map((r: any) => `${new URL(r.url).pathname} ${r.load} ${r.afterDecision}`).sort()).toEqual([
      '/action/beacon first true',
      '/action/beacon reload true',
      '/action/image first true',
      '/action/image reload true',
      '/action/keepalive first true',
      '/action/keepalive reload true',
    ]);
    // Judged like any other request: the ad host before any decision and after Reject all, on the page that sent it.
    for (const type of ['before_consent', 'after_reject']) {
      const finding = findingsOf(report, type, uet).find((f: any) => f.subject.name === BEACON_HOST);
      expect(finding, type).toMatchObject({ category: 'marketing', vendor: 'LinkedIn', evidence: { request: { leaving: true } } });
    }
  });
});
