import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AppState, AppStorage, loadCore, Network, until, type ConsentCore, type ConsentErrorEvent, type CoreModule } from './helpers/core.js';
import { sdkTeam } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';

// @consent/core's identify(token) / forget() (issue 47, docs/subjects.md) against a real service: an app (the core's
// build, with the app's adapters played by the test) and a site (the browser SDK's requests: identify, then the
// consent POST with the site's own installation) shared by one signed-in person.

let server: TestServer;
let core: CoreModule;
const opened: ConsentCore[] = [];
beforeAll(async () => {
  [server, core] = await Promise.all([startTestServer(), loadCore()]);
});
afterEach(() => {
  for (const c of opened.splice(0)) c.destroy();
});
afterAll(() => server?.close());

describe('an app and a site sharing one person', () => {
  it('the app adopts the decision made on the site with no banner and no receipt, the site follows the app, forget() unlinks', async () => {
    const t = await sdkTeam(server);
    const made = await server.request('POST', `/api/platform/projects/${t.project.id}/subject-secret`, { token: t.admin.token });
    const secret = new TextEncoder().encode(made.body.secret as string);
    // The operator's backend, once the person signed in (on the site or in the app).
    const tokenFor = (sub: string) =>
      new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setAudience(t.project.id).setIssuedAt().setExpirationTime('1h').sign(secret);
    const receipts = async () =>
      (await server.request('GET', `/api/platform/projects/${t.project.id}/receipts`, { token: t.owner.token })).body.receipts as any[];
    const site = {
      installation: 'site-browser-0001',
      identify: async (token: string) =>
        server.request('POST', '/api/sdk/v2/identify', { token: t.key.secret, body: { installationId: 'site-browser-0001', token } }),
      decide: async (analytics: boolean) => {
        const res = await server.request('POST', '/api/sdk/v1/consent', {
          token: t.key.secret,
          body: { ...t.body('site-browser-0001'), choices: { analytics }, source: { sdk: 'browser', sdkVersion: '2.0.0', platform: 'web' } },
        });
        expect(res.status, res.text).toBe(201);
      },
      decision: async () =>
        (await server.request('GET', '/api/sdk/v2/decision', { token: t.key.secret, headers: { 'X-Consent-Installation': 'site-browser-0001' } })).body.decision,
    };

    // On the site, signed in, the person rejects analytics.
    expect((await site.identify(await tokenFor('member-9'))).status).toBe(200);
    await site.decide(false);

    // The app: first launch asks; signed in, the site's decision applies at once and nothing is recorded.
    const storage = new AppStorage();
    const network = new Network();
    const appState = new AppState();
    const errors: ConsentErrorEvent[] = [];
    const launch = () => {
      const c = core.createConsent({
        publicKey: t.key.secret,
        apiBaseUrl: server.url,
        adapters: { storage, fetch: network.fetch, appState: appState.adapter, network: network.adapter, locale: () => 'en' },
        source: { platform: 'android', appId: 'com.acme.shop' },
      });
      c.onError((e) => errors.push(e));
      opened.push(c);
      return c;
    };
    const app = launch();
    await app.init();
    expect(app.shouldShowBanner()).toBe(true);
    // A refused token changes nothing and says why.
    expect(await app.identify('forged.token.here')).toBe(false);
    expect(errors.map((e) => e.code)).toEqual(['invalid_subject_token']);
    expect(app.shouldShowBanner()).toBe(true);
    expect(app.getState().signedIn).toBe(false);

    expect(await app.identify(await tokenFor('member-9'))).toBe(true);
    // The state says so, and the default UI tells the person their choice follows them (ui.signedInScope).
    expect(app.getState().signedIn).toBe(true);
    expect(app.shouldShowBanner()).toBe(false);
    expect(app.isAllowed('analytics')).toBe(false);
    expect(app.getState().pendingReceipts).toBe(0);
    expect(network.consentPosts()).toEqual([]);
    expect(await receipts()).toHaveLength(1);

    // The person changes it in the app: the site's /decision answers the app's receipt, made for the same person.
    await app.acceptAll();
    await until(() => app.getState().pendingReceipts, (n) => n == 0, 'the app receipt to be acknowledged');
    expect(await site.decision()).toMatchObject({ choices: { analytics: true } });
    const [fromApp, fromSite] = await receipts();
    expect(fromApp).toMatchObject({ source: { sdk: 'core', platform: 'android' }, subjectHash: fromSite.subjectHash });

    // The site changes it again: the app's next launch (signed in) follows without a banner or receipt.
    await site.decide(false);
    app.destroy();
    const second = launch();
    await second.init();
    expect(second.getState().signedIn).toBe(true);
    await until(() => second.isAllowed('analytics'), (allowed) => allowed === false, 'the next launch to adopt the site decision');
    expect(second.shouldShowBanner()).toBe(false);

    // Signed out in the app: the service answers the app's installation its own decision, not the site's newer one.
    expect(await second.forget()).toBe(true);
    expect(second.getState().signedIn).toBe(false);
    await site.decide(true);
    const own = await server.request('GET', '/api/sdk/v2/decision', { token: t.key.secret, headers: { 'X-Consent-Installation': storage.slot('installation') } });
    expect(own.body.decision).toMatchObject({ createdAt: fromApp.createdAt });
    expect(errors.map((e) => e.code)).toEqual(['invalid_subject_token']);
  });
});
