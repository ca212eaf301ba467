// The vendors' consent APIs and the state shared across a site's hosts (extensions.md section 12,
// docs/integrations.md) in real headless Chromium. One page carries every vendor's official snippet (UET, Clarity,
// Meta Pixel, TikTok Pixel) and stand-ins for what a Shopify storefront and the WP Consent API plugin define;
// the vendors' own libraries (bat.js, clarity.ms, fbevents.js, events.js) never load (no internet), so what is
// asserted is each vendor's global or queue as its snippet built it: the denied default first, then the update.
// Both orders: stub.js before the snippets (the recommended one) and after them. Cases: Accept all, Reject all, a
// custom choice, GPC, an opt-out jurisdiction (California: no banner, the update at init), a returning visitor.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { setupProject, startService, type SiteProject } from './harness.js';
import { launchChromiumForSites } from './site-v2.js';

const GEO = { countryHeader: 'cf-ipcountry', regionHeader: 'cf-region-code' };
const TYPES = 'microsoft-uet microsoft-clarity meta-pixel tiktok-pixel shopify wordpress';
const VENDOR_HOSTS = /^https?:\/\/(bat\.bing\.com|www\.clarity\.ms|connect\.facebook\.net|analytics\.tiktok\.com)\//;

// The vendors' snippets as their pages publish them (ids replaced).
const SNIPPETS = `
<script>(function(w,d,t,r,u){var f,n,i;w[u]=w[u]||[],f=function(){var o={ti:"12345678",enableAutoSpaTracking:true};o.q=w[u],w[u]=new UET(o),w[u].push("pageLoad")},n=d.createElement(t),n.src=r,n.async=1,n.onload=n.onreadystatechange=function(){var s=this.readyState;s&&s!=="loaded"&&s!=="complete"||(f(),n.onload=n.onreadystatechange=null)},i=d.getElementsByTagName(t)[0],i.parentNode.insertBefore(n,i)})(window,document,"script","https://bat.bing.com/bat.js","uetq");</script>
<script>(function(c,l,a,r,i,t,y){c[a]=c[a]||function(){(c[a].q=c[a].q||[]).push(arguments)};t=l.createElement(r);t.async=1;t.src="https://www.clarity.ms/tag/"+i;y=l.getElementsByTagName(r)[0];y.parentNode.insertBefore(t,y);})(window,document,"clarity","script","abcdef1234");</script>
<script>!function(f,b,e,v,n,t,s){if(f.fbq)return;n=f.fbq=function(){n.callMethod?n.callMethod.apply(n,arguments):n.queue.push(arguments)};if(!f._fbq)f._fbq=n;n.push=n;n.loaded=!0;n.version='2.0';n.queue=[];t=b.createElement(e);t.async=!0;t.src=v;s=b.getElementsByTagName(e)[0];s.parentNode.insertBefore(t,s)}(window,document,'script','https://connect.facebook.net/en_US/fbevents.js');
fbq('init', '1234567890');
fbq('track', 'PageView');</script>
<script>!function (w, d, t) {
w.TiktokAnalyticsObject=t;var ttq=w[t]=w[t]||[];ttq.methods=["page","track","identify","instances","debug","on","off","once","ready","alias","group","enableCookie","disableCookie","holdConsent","revokeConsent","grantConsent"],ttq.setAndDefer=function(t,e){t[e]=function(){t.push([e].concat(Array.prototype.slice.call(arguments,0)))}};for(var i=0;i<ttq.methods.length;i++)ttq.setAndDefer(ttq,ttq.methods[i]);ttq.instance=function(t){for(var e=ttq._i[t]||[],n=0;n<ttq.methods.length;n++)ttq.setAndDefer(e,ttq.methods[n]);return e},ttq.load=function(e,n){var r="https://analytics.tiktok.com/i18n/pixel/events.js",o=n&&n.partner;ttq._i=ttq._i||{},ttq._i[e]=[],ttq._i[e]._u=r,ttq._t=ttq._t||{},ttq._t[e]=+new Date,ttq._o=ttq._o||{},ttq._o[e]=n||{};n=document.createElement("script");n.type="text/javascript",n.async=!0,n.src=r+"?sdkid="+e+"&lib="+t;e=document.getElementsByTagName("script")[0];e.parentNode.insertBefore(n,e)};
ttq.load('C0TIKTOKID');
ttq.page();
}(window, document, 'ttq');</script>`;

// What a Shopify storefront defines before the theme's scripts (Shopify.loadFeatures), recording each call.
const SHOPIFY = `<script>window.shopifyCalls = [];
window.Shopify = { loadFeatures: function (features, done) {
  window.Shopify.customerPrivacy = { setTrackingConsent: function (consent, callback) { shopifyCalls.push(consent); callback(); } };
  done();
} };</script>`;
// The WP Consent API plugin's wp_set_consent, enqueued in the footer, recording each call.
const WORDPRESS = `<script>window.wpCalls = []; function wp_set_consent(category, value) { wpCalls.push(category + '=' + value); }</script>`;

let server: TestServer;
let serviceUrl: string;
let site: Server;
let port: number;
let browser: Browser;
let context: BrowserContext | undefined;
let page: Page;
let pageErrors: string[];

function sitePage(url: URL): string {
  const key = url.searchParams.get('key') ?? '';
  const vendorFirst = url.searchParams.get('order') === 'vendor';
  const attribute = url.searchParams.get('attr') === '0' ? '' : ` data-integrations="${TYPES}"`;
  const stub = `<script src="${serviceUrl}/sdk/v2/stub.js"${attribute}></script>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme</title>
${SHOPIFY}
${vendorFirst ? SNIPPETS + stub : stub + SNIPPETS}
<script src="${serviceUrl}/sdk/v2/consent.js"></script>
<script>ConsentSDK.init({ publicKey: ${JSON.stringify(key)}, apiBaseUrl: ${JSON.stringify(serviceUrl)} })
  .then(function (c) { window.consent = c; window.sdkSettled = 'ready'; }, function (e) { window.sdkSettled = 'rejected:' + e.code; });</script>
</head><body><main><h1>Mugs</h1><p style="height:3000px">Stoneware.</p><h2 id="reviews">Reviews</h2><a id="other" href="#">Our other shop</a></main>
${WORDPRESS}</body></html>`;
}

beforeAll(async () => {
  browser = await launchChromiumForSites();
  ({ server, serviceUrl } = await startService({ geo: GEO }));
  site = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    if (url.pathname !== '/') return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(sitePage(url));
  });
  await new Promise<void>((done) => site.listen(0, '127.0.0.1', done));
  port = (site.address() as AddressInfo).port;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((done) => site?.close(done));
  await server?.close();
});
afterEach(async () => {
  await context?.close();
  context = undefined;
  expect(pageErrors).toEqual([]);
});

const origin = (host: string) => `http://${host}:${port}`;

/** A project whose draft is the harness's (necessary, analytics, ads) with every integration mapped, published. */
async function project(experience: Record<string, unknown> = {}): Promise<SiteProject> {
  const p = await setupProject(server, [origin('www.acme.test'), origin('shop.acme.test'), origin('127.0.0.1')]);
  const base = `/api/platform/projects/${p.projectId}/consent`;
  const body = {
    gpc: { optOutPurposes: ['ads'] },
    integrations: [
      { type: 'microsoft-uet', signals: { ad_storage: ['ads'] } },
      { type: 'microsoft-clarity', signals: { ad_Storage: ['ads'], analytics_Storage: ['analytics'] } },
      { type: 'meta-pixel', signals: { consent: ['ads'] } },
      { type: 'tiktok-pixel', signals: { consent: ['ads'] } },
      { type: 'shopify', signals: { analytics: ['analytics'], marketing: ['ads'], preferences: ['necessary'], sale_of_data: ['ads'] } },
      { type: 'wordpress', signals: { preferences: ['necessary'], statistics: ['analytics'], 'statistics-anonymous': ['analytics'], marketing: ['ads'] } },
    ],
    ...experience,
  };
  const put = await server.request('PUT', `${base}/experience`, { token: p.ownerToken, body });
  if (put.status !== 200) throw new Error(`PUT experience: ${put.status} ${put.text}`);
  const published = await server.request('POST', `${base}/publish`, { token: p.ownerToken });
  if (published.status !== 201) throw new Error(`publish: ${published.status} ${published.text}`);
  return p;
}

async function visitor(options: { where?: string; gpc?: boolean } = {}) {
  pageErrors = [];
  context = await browser.newContext();
  if (options.gpc) await context.addInitScript(() => Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true, configurable: true }));
  // The vendors' libraries are not there (no internet): their requests fail, as a blocker's would.
  await context.route(VENDOR_HOSTS, (route) => route.abort());
  const [country, region] = (options.where ?? '').split('-');
  await context.route(`${serviceUrl}/**`, (route) => {
    const headers = { ...route.request().headers() };
    if (country) headers['cf-ipcountry'] = country;
    if (region) headers['cf-region-code'] = region;
    return route.continue({ headers });
  });
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  page.on('console', (msg) => msg.type() === 'error' && !/Failed to load resource/.test(msg.text()) && pageErrors.push(msg.text()));
}

async function open(url: string) {
  await page.goto(url);
  expect(await page.waitForFunction(() => (window as any).sdkSettled).then((h) => h.jsonValue())).toBe('ready');
}

const sitePageUrl = (host: string, p: SiteProject, query = '') => `${origin(host)}/?key=${encodeURIComponent(p.key)}${query}`;
const hook = (name: string) => `#consent-sdk-root [data-consent="${name}"]`;

/** Every vendor's global or queue, as plain JSON. */
const vendors = () =>
  page.evaluate(() => {
    const w = window as any;
    const args = (a: ArrayLike<unknown>) => Array.from(a);
    return {
      uet: w.uetq as unknown[],
      clarity: (w.clarity.q as IArguments[]).map(args),
      meta: (w.fbq.queue as IArguments[]).map(args),
      tiktok: (w.ttq as unknown[]).filter(Array.isArray),
      shopify: w.shopifyCalls as unknown[],
      wordpress: { type: w.wp_consent_type, calls: w.wpCalls as string[] },
      // Each snippet still inserted its library (an SDK global defined too early would stop Meta's).
      libraries: Array.from(document.scripts, (s) => s.src).filter((src) => /bat\.js|clarity\.ms|fbevents\.js|events\.js/.test(src)).length,
    };
  });

const g = (granted: boolean) => (granted ? 'granted' : 'denied');

/** What each vendor holds after the page loaded with the default and received one update (analytics, ads). */
function expected(order: 'sdk' | 'vendor', analytics: boolean, ads: boolean, wpType = 'optin') {
  const metaDefault = [['consent', 'revoke']];
  const metaPage = [['init', '1234567890'], ['track', 'PageView']];
  const ttDefault = [['holdConsent']];
  const ttPage = [['page']];
  return {
    uet: ['consent', 'default', { ad_storage: 'denied' }, 'consent', 'update', { ad_storage: g(ads) }],
    clarity: [
      ['consentv2', { ad_Storage: 'denied', analytics_Storage: 'denied' }],
      ['consentv2', { ad_Storage: g(ads), analytics_Storage: g(analytics) }],
    ],
    // Stub first: the revoke before the snippet's init, as Meta asks; snippet first: after it (docs/integrations.md).
    meta: [...(order == 'sdk' ? [...metaDefault, ...metaPage] : [...metaPage, ...metaDefault]), ['consent', ads ? 'grant' : 'revoke']],
    tiktok: [...(order == 'sdk' ? [...ttDefault, ...ttPage] : [...ttPage, ...ttDefault]), [ads ? 'grantConsent' : 'revokeConsent']],
    shopify: [{ analytics, marketing: ads, preferences: true, sale_of_data: ads }],
    wordpress: {
      type: wpType,
      calls: ['functional=allow', 'preferences=allow', `statistics=${analytics ? 'allow' : 'deny'}`, `statistics-anonymous=${analytics ? 'allow' : 'deny'}`, `marketing=${ads ? 'allow' : 'deny'}`],
    },
    libraries: 4,
  };
}

/** Before any decision (opt-in): only the denied defaults, nothing granted, no Shopify call. */
function defaultsOnly(order: 'sdk' | 'vendor') {
  const e = expected(order, false, false);
  return { ...e, uet: e.uet.slice(0, 3), clarity: e.clarity.slice(0, 1), meta: e.meta.slice(0, -1), tiktok: e.tiktok.slice(0, -1), shopify: [], wordpress: { type: 'optin', calls: [] } };
}

describe.each(['sdk', 'vendor'] as const)('vendors on one page, %s first', (order) => {
  let shop: SiteProject;
  beforeAll(async () => {
    shop = await project();
  });

  it.each([
    ['Accept all', {}, async () => page.locator(hook('accept-all')).click(), true, true],
    ['Reject all', {}, async () => page.locator(hook('reject-all')).click(), false, false],
    [
      'a custom choice (analytics only)',
      {},
      async () => {
        await page.locator(hook('manage')).click();
        await page.locator('#consent-sdk-root [data-purpose="analytics"]').check();
        await page.locator(hook('save')).click();
      },
      true,
      false,
    ],
    ['Accept all with GPC (ads is a GPC opt-out purpose)', { gpc: true }, async () => page.locator(hook('accept-all')).click(), true, false],
  ] as const)('%s: the denied defaults before the decision, then one update', async (_name, who, decide, analytics, ads) => {
    await visitor(who);
    await open(sitePageUrl('www.acme.test', shop, `&order=${order}`));
    expect(await vendors()).toEqual(defaultsOnly(order));
    await decide();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    await expect.poll(vendors).toEqual(expected(order, analytics, ads));
  });

  it('an opt-out jurisdiction (California): no decision needed, the update follows the defaults at init', async () => {
    await visitor({ where: 'US-CA' });
    await open(sitePageUrl('www.acme.test', shop, `&order=${order}`));
    await expect.poll(vendors).toEqual(expected(order, true, true, 'optout'));
  });

  it('a returning visitor: the page without data-integrations still gets the defaults (from the last configuration), then the update at init', async () => {
    await visitor();
    await open(sitePageUrl('www.acme.test', shop, `&order=${order}`));
    await page.locator(hook('accept-all')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    await open(sitePageUrl('www.acme.test', shop, `&order=${order}&attr=0`));
    await expect.poll(vendors).toEqual(expected(order, true, true));
  });
});

describe('one decision across the hosts of a site (cookieDomain) and to another site (decorate)', () => {
  it('www. and shop. share the installation and the decision; decorate() carries the installation to 127.0.0.1, which adopts the decision through /decision', async () => {
    const shop = await project({ integrations: undefined, cookieDomain: 'acme.test' });
    await visitor();
    await open(sitePageUrl('www.acme.test', shop));
    await page.locator(hook('manage')).click();
    await page.locator('#consent-sdk-root [data-purpose="analytics"]').check();
    await page.locator(hook('save')).click();
    await page.locator(hook('banner')).waitFor({ state: 'detached' });
    const installation = await page.evaluate(() => localStorage.getItem('consent:installationId'));
    // The SDK keeps the decision once the service has recorded it (after the banner has gone; slower on PostgreSQL).
    const sharedCookie = async () => (await context!.cookies()).find((c) => c.name === `consent_${shop.projectId}`);
    await expect.poll(sharedCookie).toMatchObject({ domain: '.acme.test', path: '/', sameSite: 'Lax', httpOnly: false });

    // Another host of the site: another origin, so its own local storage; the cookie brings the state.
    await open(sitePageUrl('shop.acme.test', shop));
    expect(await page.locator(hook('banner')).count()).toBe(0);
    expect(await page.evaluate(() => (window as any).consent.getConsent().choices)).toEqual({ necessary: true, analytics: true, ads: false });
    expect(await page.evaluate(() => localStorage.getItem('consent:installationId'))).toBe(installation);

    // Another site of the operator: the link carries the installation in its fragment, after the one it had.
    const target = await page.evaluate((url) => (window as any).consent.decorate(url), `${origin('127.0.0.1')}/?key=${encodeURIComponent(shop.key)}#reviews`);
    expect(target).toBe(`${origin('127.0.0.1')}/?key=${encodeURIComponent(shop.key)}#reviews&i=${installation}`);
    const decisions: string[] = [];
    page.on('request', (request) => request.url().endsWith('/api/sdk/v2/decision') && decisions.push(request.headers()['x-consent-installation']!));
    await open(target);
    expect(decisions).toEqual([installation]);
    expect(await page.locator(hook('banner')).count()).toBe(0);
    expect(await page.evaluate(() => (window as any).consent.getConsent().choices)).toEqual({ necessary: true, analytics: true, ads: false });
    // The fragment is the page's own again, and nothing reached a server's logs: the installation was never in a query.
    expect(await page.evaluate(() => location.hash)).toBe('#reviews');
    // One receipt, made on www.: the other hosts adopted it.
    expect((await shop.receipts()).map((r) => r.installationId)).toEqual([installation]);
  });
});
