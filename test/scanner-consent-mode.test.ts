// Consent Mode checked from Google's own requests (extensions.md section 16, docs/scanner.md "Consent Mode"):
// fixture pages on loopback whose gtag-like tag sends hits with `gcs` and `gcd` to the page's own host (as
// Google's tag gateway does), in each of the states an operator gets wrong, and one that gets it right. No
// request reaches Google. The letters' decoding is checked on its own against the published table.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeGcd, decodeGcdLetter, decodeGcs } from '../src/scanner/consent-mode.js';
import { setupProject, startService, type SiteProject } from './e2e/harness.js';
import { scanToEnd, shortDwell } from './helpers/scan-sites.js';
import type { TestServer } from './helpers/server.js';

describe('gcs and gcd as Google writes them', () => {
  it('reads each gcd letter as its default and update (Simo Ahava and Markus Baersch’s table)', () => {
    const table: Record<string, [string, string]> = {
      l: ['unset', 'unset'],
      p: ['denied', 'unset'],
      q: ['denied', 'denied'],
      t: ['granted', 'unset'],
      r: ['denied', 'granted'],
      m: ['unset', 'denied'],
      n: ['unset', 'granted'],
      u: ['granted', 'denied'],
      v: ['granted', 'granted'],
    };
    for (const [letter, [defaultState, update]] of Object.entries(table)) expect(decodeGcdLetter(letter), letter).toEqual({ default: defaultState, update });
    expect(decodeGcdLetter('e')).toBeNull();
    expect(decodeGcd('13r3r3r3r5l1')).toEqual({
      ad_storage: { default: 'denied', update: 'granted' },
      analytics_storage: { default: 'denied', update: 'granted' },
      ad_user_data: { default: 'denied', update: 'granted' },
      ad_personalization: { default: 'denied', update: 'granted' },
    });
    expect(decodeGcd('11p1p1p1p5')?.analytics_storage).toEqual({ default: 'denied', update: 'unset' });
    expect(decodeGcd('nonsense')).toBeNull();
    expect(decodeGcs('G110')).toEqual({ ad_storage: 'granted', analytics_storage: 'denied' });
    expect(decodeGcs('G1--')).toEqual({ ad_storage: 'unset', analytics_storage: 'unset' });
    expect(decodeGcs('G2')).toBeNull();
  });
});

/**
 * A gtag-like tag: a hit at load with the page's `onLoad` state, and one after the visitor's click in the banner
 * with the state for that button (`reject-all`, `accept-all`), which it keeps for the next page views as a consent
 * platform's update would; the button is read from the click's composed path (the SDK's shadow root is open).
 * Hits go to `/g/collect` on the page's own host, like a tag gateway's.
 */
const tagPage = (states: { tid: string; onLoad: string; reject?: string; accept?: string }, sdk: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${states.tid}</title>
${sdk}
<script>
var hit = function (state) { if (state) fetch('/g/collect?v=2&tid=${states.tid}&' + state + '&en=page_view', { method: 'POST', keepalive: true }); };
var states = { 'reject-all': ${JSON.stringify(states.reject ?? '')}, 'accept-all': ${JSON.stringify(states.accept ?? '')} };
var stored = localStorage.getItem('tag-choice');
hit((stored && states[stored]) || ${JSON.stringify(states.onLoad)});
document.addEventListener('click', function (event) {
  var button = event.composedPath()[0];
  var choice = button && button.closest && button.closest('[data-consent]');
  if (!choice) return;
  localStorage.setItem('tag-choice', choice.getAttribute('data-consent'));
  setTimeout(function () { hit(states[choice.getAttribute('data-consent')]); }, 50);
}, true);
</script></head><body><h1>${states.tid}</h1></body></html>`;

describe('a scan judges Consent Mode from the hits Google tags send', () => {
  let server: TestServer;
  let project: SiteProject;
  let site: Server;
  let origin: string;
  let report: any;
  let collected: string[];

  const PAGES = {
    // The tag runs before any default: its letters say "not set".
    '/late': { tid: 'G-LATE1', onLoad: 'gcs=G1--&gcd=13l3l3l3l5', accept: 'gcs=G111&gcd=13n3n3n3n5' },
    // A granted default: granted before anyone decides.
    '/eager': { tid: 'G-EAGER1', onLoad: 'gcs=G111&gcd=13t3t3t3t5' },
    // Denied by default, but granted after either button.
    '/stubborn': { tid: 'AW-STUB1', onLoad: 'gcs=G100&gcd=13p3p3p3p5', reject: 'gcs=G111&gcd=13r3r3r3r5', accept: 'gcs=G111&gcd=13r3r3r3r5' },
    // Denied by default and never updated: still denied after Accept all.
    '/stuck': { tid: 'G-STUCK1', onLoad: 'gcs=G100&gcd=13p3p3p3p5', reject: 'gcs=G100&gcd=13p3p3p3p5', accept: 'gcs=G100&gcd=13p3p3p3p5' },
    // Right: denied by default, denied on Reject all, granted on Accept all.
    '/right': { tid: 'G-RIGHT1', onLoad: 'gcs=G100&gcd=13p3p3p3p5', reject: 'gcs=G100&gcd=13q3q3q3q5', accept: 'gcs=G111&gcd=13r3r3r3r5' },
  };

  beforeAll(async () => {
    let serviceUrl: string;
    ({ server, serviceUrl } = await startService(shortDwell()));
    project = await setupProject(server);
    collected = [];
    const sdk = `<script src="${serviceUrl}/sdk/v2/consent.js"></script>
<script>ConsentSDK.init({ publicKey: ${JSON.stringify(project.key)}, apiBaseUrl: ${JSON.stringify(serviceUrl)} });</script>`;
    site = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://site');
      if (url.pathname === '/g/collect') {
        collected.push(url.search);
        req.resume();
        return void res.writeHead(204).end();
      }
      const states = PAGES[url.pathname as keyof typeof PAGES];
      if (!states) return void res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(tagPage(states, sdk));
    });
    await new Promise<void>((done) => site.listen(0, '127.0.0.1', done));
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    await server.request('PUT', `/api/platform/projects/${project.projectId}/allowed-origins`, { token: project.ownerToken, body: { origins: [origin] } });
    ({ report } = await scanToEnd(
      server,
      project,
      Object.keys(PAGES).map((path) => origin + path),
    ));
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    site?.closeAllConnections();
    await new Promise((done) => (site ? site.close(done) : done(undefined)));
  });

  const gcm = (type: string) =>
    report.findings
      .filter((f: any) => f.type === type)
      .map((f: any) => `${new URL(f.pageUrl).pathname} ${f.subject.name} ${f.evidence.visit}`)
      .sort();

  it('finds each mistake on its page, with the tag id and the request, and nothing on the page that is right', () => {
    expect(collected.length).toBeGreaterThan(0);
    expect(gcm('gcm_missing_default')).toEqual(['/late G-LATE1 before']);
    expect(gcm('gcm_granted_before_decision')).toEqual(['/eager G-EAGER1 before']);
    // The granted default ignores Reject all too: the reload's hit is granted again.
    expect(gcm('gcm_granted_after_reject')).toEqual(['/eager G-EAGER1 reject', '/stubborn AW-STUB1 reject']);
    expect(gcm('gcm_not_updated_after_accept')).toEqual(['/stuck G-STUCK1 accept']);
    expect(report.findings.filter((f: any) => f.type.startsWith('gcm_') && f.pageUrl === `${origin}/right`)).toEqual([]);
    const stubborn = report.findings.find((f: any) => f.type === 'gcm_granted_after_reject' && f.subject.name === 'AW-STUB1');
    expect(stubborn).toMatchObject({
      category: 'marketing',
      vendor: 'Google',
      subject: { kind: 'request', name: 'AW-STUB1' },
      evidence: { tid: 'AW-STUB1', request: { url: `${origin}/g/collect`, host: '127.0.0.1', gcs: 'G111', gcd: '13r3r3r3r5', afterDecision: true, status: { ad_storage: 'granted', analytics_storage: 'granted' }, signals: { ad_storage: { default: 'denied', update: 'granted' } } } },
    });
    expect(report.summary.findings).toMatchObject({ gcm_missing_default: 1, gcm_granted_before_decision: 1, gcm_granted_after_reject: 2, gcm_not_updated_after_accept: 1 });
  });

  it('says in the HTML to-do list what to change', async () => {
    const scanId = report.scan.id;
    const html = await server.request('GET', `/api/platform/projects/${project.projectId}/scans/${scanId}?format=html`, { token: project.ownerToken });
    expect(html.text).toContain('Google tag sent a hit before any Consent Mode default');
    expect(html.text).toContain('data-google-consent-mode');
    expect(html.text).toContain('Google tag still denied after Accept all');
  });
});
