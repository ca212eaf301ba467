// Console cookie sessions in a real browser (headless Chromium): the console on the service's own origin
// signs in with ?session=cookie and calls REST and /graphql with X-Consent-Console: 1, while a page on
// another origin, in the same browser, cannot act with that cookie (a form post, a credentialed fetch).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, operator, type Operator } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { launchChromium, startService } from './harness.js';

let browser: Browser;
let context: BrowserContext;
let server: TestServer;
let serviceUrl: string;
let attacker: Server;
let attackerOrigin: string;
let victim: Operator;

beforeAll(async () => {
  browser = await launchChromium();
  ({ server, serviceUrl } = await startService());
  victim = await operator(server, 'Victim');
  // A page elsewhere that posts a form to the service and tries a credentialed fetch.
  attacker = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<!doctype html><form id="f" method="POST" enctype="text/plain" action="${serviceUrl}/api/platform/orgs">
      <input name='{"name":"Forged","x":"' value='"}'></form>`);
  });
  await new Promise<void>((done) => attacker.listen(0, '127.0.0.1', done));
  attackerOrigin = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  context = await browser.newContext();
});
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await new Promise((done) => attacker?.close(done));
  await server?.close();
});

const memberships = async () =>
  Number((await server.services.db.query<{ n: string }>('SELECT count(*) AS n FROM memberships WHERE user_id = $1', [victim.id]))[0]!.n);

describe('the console in Chromium', () => {
  it('signs in with a cookie it cannot read, and uses it on REST and /graphql', async () => {
    const page = await context.newPage();
    await page.goto(`${serviceUrl}/api/openapi.json`); // any page of the service's own origin
    const seen = await page.evaluate(
      async ({ email, password }) => {
        const json = { 'content-type': 'application/json', 'x-consent-console': '1' };
        const login = await fetch('/api/platform/auth/login?session=cookie', { method: 'POST', headers: json, body: JSON.stringify({ email, password }) });
        const me = await fetch('/api/platform/auth/me', { headers: { 'x-consent-console': '1' } });
        const org = await fetch('/api/platform/orgs', { method: 'POST', headers: json, body: JSON.stringify({ name: 'Console' }) });
        const graphql = await fetch('/graphql', { method: 'POST', headers: json, body: JSON.stringify({ query: '{ me { user { email } } }' }) });
        const withoutHeader = await fetch('/api/platform/auth/me');
        return {
          login: login.status,
          loginKeys: Object.keys(await login.json()),
          readableCookie: document.cookie,
          me: me.status,
          org: org.status,
          graphql: await graphql.json(),
          withoutHeader: withoutHeader.status,
        };
      },
      { email: victim.email, password: PASSWORD },
    );
    // The page's script never holds the token: not in document.cookie (HttpOnly), not in the login's answer.
    expect(seen).toMatchObject({ login: 200, loginKeys: ['user'], readableCookie: '', me: 200, org: 201, withoutHeader: 401 });
    expect(seen.graphql.data.me.user.email).toBe(victim.email);
    await page.close();
  });

  it('a page on another origin cannot act with the cookie: form post, credentialed fetch', async () => {
    const before = await memberships();
    const page = await context.newPage();
    await page.goto(attackerOrigin);
    await Promise.all([page.waitForURL(`${serviceUrl}/**`), page.evaluate(() => (document.getElementById('f') as HTMLFormElement).submit())]);
    expect(await page.textContent('body')).toContain('unauthorized');

    await page.goto(attackerOrigin);
    const fetched = await page.evaluate(async (target) => {
      try {
        const res = await fetch(`${target}/api/platform/orgs`, {
          method: 'POST',
          credentials: 'include',
          headers: { 'content-type': 'application/json', 'x-consent-console': '1' },
          body: JSON.stringify({ name: 'Forged' }),
        });
        return `status ${res.status}`;
      } catch {
        return 'blocked';
      }
    }, serviceUrl);
    expect(fetched).toBe('blocked');
    expect(await memberships()).toBe(before);
    await page.close();
  });
});
