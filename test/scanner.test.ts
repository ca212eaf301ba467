// The site scanner end to end (extensions.md section 7, docs/scanner.md): a scan queued over REST, run by the
// service's worker in Debian's Chromium against fixture sites on loopback, read back over REST and GraphQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupProject, startService, type SiteProject } from './e2e/harness.js';
import { startScanSites, TRACKER_HOST, type ScanSites } from './helpers/scan-sites.js';
import type { TestServer } from './helpers/server.js';

const scansPath = (projectId: string, rest = '') => `/api/platform/projects/${projectId}/scans${rest}`;

/** Polls the scan until it is done or failed (the worker runs it in the background). */
async function settled(server: TestServer, token: string, projectId: string, scanId: string) {
  for (;;) {
    const res = await server.request('GET', scansPath(projectId, `/${scanId}`), { token });
    if (res.body.scan?.status === 'done' || res.body.scan?.status === 'failed') return res.body.scan;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('a scan of fixture sites in Chromium', () => {
  let server: TestServer;
  let sites: ScanSites;
  let project: SiteProject;
  let scan: any;

  beforeAll(async () => {
    let resolve: (host: string) => Promise<string[]> = async () => [];
    const started = await startService({}, { scannerNetwork: { resolve: (host) => resolve(host) } });
    server = started.server;
    // The site's origin must be allowed before the SDK answers it; the key is written into the pages.
    project = await setupProject(server);
    sites = await startScanSites(started.serviceUrl, project.key);
    resolve = sites.resolve;
    const allowed = await server.request('PUT', `/api/platform/projects/${project.projectId}/allowed-origins`, { token: project.ownerToken, body: { origins: [sites.origin] } });
    expect(allowed.status).toBe(200);
    const started202 = await server.request('POST', scansPath(project.projectId), {
      token: project.ownerToken,
      body: { urls: [`${sites.origin}/good`, `${sites.origin}/leaky`, `${sites.origin}/nosdk`], followLinks: 1 },
    });
    expect(started202.status, started202.text).toBe(202);
    expect(started202.body.scan).toMatchObject({ status: 'queued', followLinks: 1, trigger: 'manual' });
    scan = await settled(server, project.ownerToken, project.projectId, started202.body.scan.id);
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await sites?.close();
  });

  it('visits every page three times and follows same-site links breadth first', () => {
    expect(scan.status, scan.error).toBe('done');
    expect(scan.pages.map((p: any) => [p.url, p.depth])).toEqual([
      [`${sites.origin}/good`, 0],
      [`${sites.origin}/leaky`, 0],
      [`${sites.origin}/nosdk`, 0],
      [`${sites.origin}/about`, 1],
    ]);
    for (const page of scan.pages) expect(page.visits.map((v: any) => v.kind)).toEqual(['before', 'reject', 'accept']);
    console.log(JSON.stringify(scan, null, 1).slice(0, 20000));
  });
});
