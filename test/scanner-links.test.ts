// Links and forms of a scanned page (docs/scanner.md "Links and forms"), what the EDPS Website Evidence Collector
// reports too: one scan of a shop page (a partner link, a social link, a German privacy policy and imprint, a login
// form posting to plain http) and of a hostile page with 5,000 links, then the report as JSON, CSV and HTML.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogue } from '../src/scanner/catalogue.js';
import { linkKindsOf, linksAndFormsOf, socialPlatformOf } from '../src/scanner/links.js';
import { buildReport } from '../src/scanner/run.js';
import { launchChromium, setupProject, startService, type SiteProject } from './e2e/harness.js';
import { shortDwell, scansPath, scanToEnd } from './helpers/scan-sites.js';
import type { TestServer } from './helpers/server.js';

const SCREENSHOTS = process.env.SCAN_REPORT_SCREENSHOTS; // a folder: the report's screenshots are written there

// Nothing is requested from these hosts: links are read, not followed, and the form is never sent.
const SHOP = `<!doctype html><html lang="de"><head><meta charset="utf-8"><title>Shop</title></head><body>
<nav><a href="/produkte">Produkte</a> <a href="/produkte#neu">Neu</a></nav>
<p><a href="http://partner.example.test/offers?id=1234#top">&lt;img src=x onerror=alert(1)&gt; Our partner</a>
<a href="https://www.facebook.com/shop.example"><img alt="Facebook" src="data:,"></a>
<a href="https://www.youtube-nocookie.com/embed/abc">Video</a>
<a href="mailto:info@shop.example">Mail</a></p>
<form action="http://forms.example.test/login?next=%2F" method="POST"><input type="email" name="login"><input type="password" name="pw"><button>Anmelden</button></form>
<form action="/suche"><input name="q"></form>
<footer><a href="/datenschutz">Datenschutzerklärung</a> · <a href="/impressum">Impressum</a> · <a href="/agb">AGB</a></footer>
</body></html>`;

// 5,000 links to other sites, each with a long text, and no privacy policy.
const HOSTILE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Links</title></head><body>${Array.from(
  { length: 5000 },
  (_, i) => `<a href="https://site-${i}.example/${'p'.repeat(600)}?q=${i}">${'word '.repeat(60)}${i}</a>`,
).join('')}</body></html>`;

describe('a scan reports each page’s links and forms', () => {
  let server: TestServer;
  let project: SiteProject;
  let site: Server;
  let origin: string;
  let scan: any;
  let report: any;
  let browser: Browser;

  beforeAll(async () => {
    ({ server } = await startService(shortDwell()));
    project = await setupProject(server);
    site = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://site').pathname;
      const html = (body: string) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(body);
      if (path === '/shop') return void html(SHOP);
      if (path === '/hostile') return void html(HOSTILE);
      html('<!doctype html><title>Seite</title><p>Text</p>');
    });
    await new Promise<void>((done) => site.listen(0, '127.0.0.1', done));
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    ({ scan, report } = await scanToEnd(server, project, [`${origin}/shop`, `${origin}/hostile`]));
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    site?.closeAllConnections();
    await new Promise((done) => (site ? site.close(done) : done(undefined)));
  });

  it('lists third-party links without their query, names the social platform, and finds the German privacy policy and imprint', () => {
    const shop = report.pages.find((p: any) => p.url === `${origin}/shop`);
    expect(shop.links.thirdParty).toEqual([
      { url: 'http://partner.example.test/offers', host: 'partner.example.test', text: '<img src=x onerror=alert(1)> Our partner' },
      { url: 'https://www.facebook.com/shop.example', host: 'www.facebook.com', text: 'Facebook', social: 'facebook' },
      // youtube-nocookie.com is YouTube, and no cookie policy (the collector's `(?<!no)cookie`).
      { url: 'https://www.youtube-nocookie.com/embed/abc', host: 'www.youtube-nocookie.com', text: 'Video', social: 'youtube' },
    ]);
    expect(shop.links.keywords).toEqual([
      { url: `${origin}/datenschutz`, host: '127.0.0.1', party: 'first', text: 'Datenschutzerklärung', kinds: ['privacy'] },
      { url: `${origin}/impressum`, host: '127.0.0.1', party: 'first', text: 'Impressum', kinds: ['imprint'] },
      { url: `${origin}/agb`, host: '127.0.0.1', party: 'first', text: 'AGB', kinds: ['terms'] },
    ]);
    expect(shop.links.kindsFound).toEqual(['privacy', 'imprint', 'terms']);
    // /produkte and /produkte#neu are one link; mailto: is no http(s) link.
    expect(shop.links).toMatchObject({ firstParty: 4, thirdPartyCount: 3, cut: { anchors: 0, thirdParty: 0, keywords: 0 } });
    // Links are the page's, read once in the before visit: the visits do not repeat them.
    expect(shop.visits.map((v: any) => v.linksAndForms)).toEqual([undefined, undefined, undefined]);
  });

  it('reports a form that posts to plain http, with its password and e-mail fields, as insecure_form', () => {
    const shop = report.pages.find((p: any) => p.url === `${origin}/shop`);
    // The search form has no https either: the page is served over plain http, so its action is too.
    expect(shop.forms).toEqual({
      servedOverHttp: true,
      total: 2,
      insecure: [
        { action: 'http://forms.example.test/login', method: 'post', password: true, email: true },
        { action: `${origin}/suche`, method: 'get', password: false, email: false },
      ],
      cut: 0,
    });
    expect(report.findings.filter((f: any) => f.type === 'insecure_form')).toEqual([
      expect.objectContaining({ pageUrl: `${origin}/shop`, subject: { kind: 'page', name: `${origin}/shop` }, evidence: expect.objectContaining({ visit: 'before', servedOverHttp: true, forms: shop.forms.insecure }) }),
    ]);
    expect(report.summary.findings.insecure_form).toBe(1);
  });

  it('keeps a page with 5,000 links to its caps, with cut counts, and says it has no privacy policy link', () => {
    const hostile = report.pages.find((p: any) => p.url === `${origin}/hostile`);
    expect(hostile.links.thirdParty).toHaveLength(200);
    expect(hostile.links).toMatchObject({ firstParty: 0, thirdPartyCount: 1000, keywords: [], kindsFound: [], cut: { anchors: 4000, thirdParty: 800, keywords: 0 } });
    for (const link of hostile.links.thirdParty) {
      expect(link.url.length).toBeLessThanOrEqual(500);
      expect(link.url).not.toContain('?');
      expect(link.text.length).toBeLessThanOrEqual(100);
    }
    expect(report.limits.visit).toMatchObject({ anchors: 1000, thirdPartyLinks: 200, keywordLinks: 50, linkUrlChars: 500, linkTextChars: 100 });
    expect(Buffer.byteLength(JSON.stringify(hostile.links))).toBeLessThan(200_000);
  });

  it('puts links and forms in the CSV, in blocks of their own after the inventory', async () => {
    const csv = (await server.request('GET', `${scansPath(project.projectId, `/${scan.id}`)}?format=csv`, { token: project.ownerToken })).text;
    const blocks = csv.split('\n\n');
    expect(blocks).toHaveLength(8); // the transport check's block comes last (docs/scanner.md "Transport")
    expect(blocks[7]).toMatch(/^transport\.origin,/);
    expect(blocks[3]).toMatch(/^inventory\.kind,/);
    expect(blocks[4]).toMatch(/^page\.url,page\.servedOverHttp,page\.firstPartyLinks,page\.thirdPartyLinks,page\.socialLinks,page\.privacyLink,page\.imprintLink,page\.cookiesLink,page\.termsLink,page\.insecureForms,page\.linksCut,page\.formsCut\n/);
    expect(blocks[4]).toContain(`${origin}/shop,true,4,3,2,found,found,none found,found,2,0,0`);
    expect(blocks[4]).toContain(`${origin}/hostile,true,0,1000,0,none found,none found,none found,none found,0,4800,0`);
    expect(blocks[5]).toContain(`${origin}/shop,http://partner.example.test/offers,partner.example.test,third,,,<img src=x onerror=alert(1)> Our partner`);
    expect(blocks[5]).toContain(`${origin}/shop,https://www.facebook.com/shop.example,www.facebook.com,third,facebook,,Facebook`);
    expect(blocks[5]).toContain(`${origin}/shop,${origin}/datenschutz,127.0.0.1,first,,privacy,Datenschutzerklärung`);
    expect(blocks[6]).toContain(`${origin}/shop,http://forms.example.test/login,post,true,true,true`);
  });

  it('shows each page’s links and forms in the HTML report, escaped, readable at 1280 px and 390 px', async () => {
    const res = await server.request('GET', `${scansPath(project.projectId, `/${scan.id}`)}?format=html`, { token: project.ownerToken });
    expect(res.status).toBe(200);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.setContent(res.text);
      // The to-do list says which pages have no privacy policy link, and counts the form finding.
      await expect(page.locator('main').innerText()).resolves.toContain(`No privacy policy link found on 1 page: ${origin}/hostile`);
      await expect(page.locator('table').first().innerText()).resolves.toMatch(/Form that sends over plain http\s+1/);
      const sections = page.locator('li.pagelinks');
      expect(await sections.count()).toBe(2);
      const shop = await sections.nth(0).innerText();
      expect(shop).toContain('4 links to this site, 3 links to other sites, to social platforms: facebook youtube');
      expect(shop).toMatch(/Privacy policy: “Datenschutzerklärung” http:\/\/127\.0\.0\.1:\d+\/datenschutz/);
      expect(shop).toMatch(/Imprint: “Impressum”/);
      expect(shop).toContain('No cookie policy link found');
      expect(shop).toContain('The page itself was served over plain http');
      expect(shop).toContain('Form sends over plain http: POST http://forms.example.test/login, with a password field and an e-mail field');
      const hostile = await sections.nth(1).innerText();
      expect(hostile).toContain('No privacy policy link found');
      expect(hostile).toContain('0 links to this site, 1000 links to other sites. Caps: 4000 more links on the page not read, 800 links to other sites not listed.');
      // The page's markup in a link text is text in the report, never an element.
      await sections.nth(0).locator('details summary').click();
      await expect(sections.nth(0).getByRole('row').filter({ hasText: 'partner.example.test' }).innerText()).resolves.toContain('<img src=x onerror=alert(1)> Our partner');
      expect(await page.locator('img').count()).toBe(0);
      await sections.nth(1).locator('details summary').click();
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        const layout = await page.evaluate(() => ({
          overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          breakAll: [...document.querySelectorAll('td, th, p, li')].filter((el) => getComputedStyle(el).wordBreak === 'break-all').length,
        }));
        expect(layout).toEqual({ overflow: 0, breakAll: 0 });
        if (SCREENSHOTS) {
          await sections.nth(0).screenshot({ path: `${SCREENSHOTS}/scan-links-${width}.png` });
          await page.screenshot({ path: `${SCREENSHOTS}/scan-links-top-${width}.png`, fullPage: true, clip: { x: 0, y: 0, width, height: 900 } });
          const y = await sections.nth(1).evaluate((el) => el.getBoundingClientRect().top + window.scrollY);
          await page.screenshot({ path: `${SCREENSHOTS}/scan-links-hostile-${width}.png`, fullPage: true, clip: { x: 0, y, width, height: 700 } });
        }
      }
    } finally {
      await context.close();
    }
  });
});

describe('link keywords and the report cap', () => {
  it('names policy links in English, German, French, Spanish, Italian and Dutch, by text or by URL', () => {
    const kinds = (text: string, url = 'https://shop.example/x') => linkKindsOf(text, new URL(url));
    const cases: [string, string | undefined, string[]][] = [
      ['Privacy Policy', undefined, ['privacy']],
      ['Datenschutzerklärung', undefined, ['privacy']],
      ['', 'https://shop.example/datenschutzerklaerung', ['privacy']],
      ['Politique de confidentialité', undefined, ['privacy']],
      ['Política de privacidad', undefined, ['privacy']],
      ['Informativa sulla privacy', undefined, ['privacy']],
      ['Privacyverklaring', undefined, ['privacy']],
      ['Impressum', undefined, ['imprint']],
      ['', 'https://shop.example/legal-notice', ['imprint']],
      ['Mentions légales', undefined, ['imprint']],
      ['Aviso legal', undefined, ['imprint']],
      ['Note legali', undefined, ['imprint']],
      ['Colofon', undefined, ['imprint']],
      ['Cookie-Richtlinie', undefined, ['cookies']],
      ['Privacy & Cookies', undefined, ['privacy', 'cookies']],
      ['Video', 'https://www.youtube-nocookie.com/embed/x', []],
      ['AGB', undefined, ['terms']],
      ['Allgemeine Geschäftsbedingungen', undefined, ['terms']],
      ['Conditions générales de vente', undefined, ['terms']],
      ['Términos y condiciones', undefined, ['terms']],
      ['Termini e condizioni', undefined, ['terms']],
      ['Algemene voorwaarden', undefined, ['terms']],
      ['Terms of Service', undefined, ['terms']],
      ['Produkte', 'https://shop.example/produkte', []],
      ['Termine', 'https://shop.example/termine', []],
    ];
    for (const [text, url, expected] of cases) expect([text, url, kinds(text, url)]).toEqual([text, url, expected]);
    expect(['www.facebook.com', 'x.com', 'de.linkedin.com', 'www.pinterest.de', 'www.xing.com', 'wa.me', 't.me', 'shop.example'].map(socialPlatformOf)).toEqual([
      'facebook', 'x', 'linkedin', 'pinterest', 'xing', 'whatsapp', 'telegram', null,
    ]);
  });

  it('empties the link lists of pages from the last back before any visit, to keep the report under its cap', () => {
    const raw = { links: Array.from({ length: 1000 }, (_, i) => [`https://site-${i}.example/${'p'.repeat(400)}`, 'x'.repeat(100)]), anchorsTotal: 1000, forms: [], formsTotal: 0 };
    const visit = (kind: string) => ({ kind, url: 'https://shop.example/', finalUrl: 'https://shop.example/', status: 200, error: null, sdk: { loaded: false, keyPrefix: null, projectKey: false }, bannerShown: false, decided: false, decidedAtMs: null, consentRequestsAnswered: 0, loads: [], cookies: [], writes: [], storage: [], requests: [], refused: [], bytes: 0, truncated: false, cut: { storageKeys: 0, cookies: 0, requests: 0, links: 0 }, links: [] });
    const pages = Array.from({ length: 5 }, (_, i) => ({ url: `https://shop.example/${i}`, depth: 0, visits: ['before', 'reject', 'accept'].map(visit), ...linksAndFormsOf(raw, 'shop.example', 'https://shop.example/') }));
    const env = { catalogue: loadCatalogue('http://localhost'), versionNumber: null, visitTimeoutMs: 30_000, maxPageBytes: 1_000_000, maxReportBytes: 300_000, dwellMs: 3000, findings: { mappedCookies: [], purposes: [] } };
    const job = { id: 'scan', projectId: 'project', trigger: 'manual', urls: ['https://shop.example/0'], followLinks: 4, startedAt: new Date() };
    const report = buildReport(job, env, pages as any, { browserVersion: '1', finishedAt: new Date() });
    expect(Buffer.byteLength(JSON.stringify(report))).toBeLessThanOrEqual(300_000);
    expect(report.cut).toEqual({ visitsEmptied: 0, findingsDropped: 0, linksEmptied: 3 });
    expect(report.pages.map((page) => page.links!.thirdParty.length)).toEqual([200, 200, 0, 0, 0]);
    // The counts and the kinds found stay; the page says its lists were emptied for the report.
    expect(report.pages[4]!.links).toMatchObject({ thirdPartyCount: 1000, cut: { thirdParty: 800, report: true } });
  });
});
