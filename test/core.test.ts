import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { consentPath } from './helpers/consent.js';
import { AppState, AppStorage, loadCore, Network, until, type ConsentCore, type ConsentErrorEvent, type CoreModule } from './helpers/core.js';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { publishVersion, sampleDraft } from './helpers/versions.js';

// @consent/core (extensions.md section 13) against a real service: the build an app gets, with the app's adapters
// played by the test (test/helpers/core.ts). One "launch" is one createConsent() over the same storage.

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

async function app() {
  const t = await team(server);
  const version = await publishVersion(server, t.owner, t.project.id);
  const key = await createKey(server, t.owner.token, t.project.id);
  const storage = new AppStorage();
  const network = new Network();
  const appState = new AppState();
  const errors: ConsentErrorEvent[] = [];
  /** One launch of the app. */
  const launch = (now?: () => number) => {
    const c = core.createConsent({
      publicKey: key.secret,
      apiBaseUrl: server.url,
      adapters: { storage, fetch: network.fetch, appState: appState.adapter, network: network.adapter, locale: () => 'en-GB', ...(now && { now }) },
      source: { platform: 'ios', appId: 'com.acme.shop', appVersion: '3.1.0' },
    });
    c.onError((e) => errors.push(e));
    opened.push(c);
    return c;
  };
  const receipts = async (installationId?: string) => {
    const res = await server.request('GET', `/api/platform/projects/${t.project.id}/receipts${installationId ? '?installationId=' + installationId : ''}`, { token: t.owner.token });
    expect(res.status, res.text).toBe(200);
    return res.body.receipts as any[];
  };
  return { ...t, version, key, storage, network, appState, errors, launch, receipts };
}

const installationOf = (a: Awaited<ReturnType<typeof app>>) => a.storage.slot('installation') as string;

describe('a first launch and a second one', () => {
  it('asks, records Reject all under the installation with its source, and answers the next launch from storage without waiting', async () => {
    const a = await app();
    const first = a.launch();
    const state = await first.init();
    expect(state).toMatchObject({ ready: true, needsConsent: true, promptReason: 'initial', mode: 'opt-in', versionNumber: a.version.number, pendingReceipts: 0 });
    expect(first.shouldShowBanner()).toBe(true);
    expect(first.isAllowed('analytics')).toBe(false);
    expect(state.config?.config.notice.title).toBe('We value your privacy');
    // No Origin, the key as a Bearer token only.
    const [config] = a.network.sent;
    expect(config!.url).toBe(`${server.url}/api/sdk/v2/config?locale=en-GB`);
    expect(config!.headers).toEqual({ authorization: 'Bearer ' + a.key.secret });

    await first.rejectAll();
    expect(first.shouldShowBanner()).toBe(false);
    expect(first.getState().choices).toEqual({ necessary: true, analytics: false, marketing: false });
    await until(() => first.getState().pendingReceipts, (n) => n == 0, 'the receipt to be acknowledged');
    const [receipt, ...others] = await a.receipts(installationOf(a));
    expect(others).toEqual([]);
    expect(receipt).toMatchObject({
      versionId: a.version.id,
      choices: { necessary: true, analytics: false, marketing: false },
      action: 'reject_all',
      // The locale the texts were shown in: the service's answer to en-GB.
      locale: 'en',
      source: { sdk: 'core', sdkVersion: core.CORE_VERSION, platform: 'ios', appId: 'com.acme.shop', appVersion: '3.1.0' },
    });
    const [post] = a.network.consentPosts();
    // A UUID v7: its first 48 bits are the decision's millisecond, so the service's key index grows at its edge.
    const key = post!.headers['idempotency-key']!;
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(key.replace('-', '').slice(0, 12), 16)).toBe(Date.parse(post!.body.timestamp));
    expect(a.errors).toEqual([]);
    first.destroy();

    // The second launch: the network never answers, and init() answers from what is stored.
    a.network.hang = true;
    const second = a.launch();
    const again = await second.init();
    expect(again).toMatchObject({ ready: true, needsConsent: false, promptReason: null, choices: { necessary: true, analytics: false, marketing: false } });
    expect(second.isAllowed('necessary')).toBe(true);
    expect(second.isAllowed('marketing')).toBe(false);
  });

  it('sends the stored ETag and takes a 304 as nothing new', async () => {
    const a = await app();
    await a.launch().init();
    const tag = a.storage.slot('config').etag;
    expect(tag).toMatch(/^"[0-9a-f]{64}"$/);
    const second = a.launch();
    await second.init();
    await until(() => a.network.sent.length, (n) => n == 2, 'the refresh');
    expect(a.network.sent[1]!.headers['if-none-match']).toBe(tag);
    expect(a.errors).toEqual([]);
  });
});

describe('the receipt queue', () => {
  it('keeps a decision made offline and sends it once when the network is back', async () => {
    const a = await app();
    const c = a.launch();
    await c.init();
    a.network.goOffline();
    await c.acceptAll();
    // In force at once, and stored with its receipt before anything is sent.
    expect(c.isAllowed('marketing')).toBe(true);
    expect(a.storage.slot('queue')).toHaveLength(1);
    await until(() => a.errors, (e) => e.some((x) => x.code == 'network_error'), 'the failed send to be reported');
    expect(c.getState().pendingReceipts).toBe(1);
    expect(await a.receipts()).toEqual([]);

    a.network.goOnline();
    await until(() => c.getState().pendingReceipts, (n) => n == 0, 'the queue to empty');
    const stored = await a.receipts();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ action: 'accept_all', choices: { necessary: true, analytics: true, marketing: true } });
    // Every send of the receipt carried its one key.
    const keys = new Set(a.network.consentPosts().map((p) => p.headers['idempotency-key']));
    expect(keys.size).toBe(1);
    expect(a.storage.slot('queue')).toBeUndefined();
  });

  it('sends a receipt the process never sent at the next launch, and again on return to the foreground', async () => {
    const a = await app();
    const c = a.launch();
    await c.init();
    a.network.goOffline();
    await c.save({ analytics: true });
    c.destroy(); // the process is killed with the receipt queued
    const next = a.launch();
    await next.init();
    expect(next.getState().pendingReceipts).toBe(1);
    a.network.offline = false; // back without an event: the foreground is what brings it
    a.appState.set('active');
    await until(() => next.getState().pendingReceipts, (n) => n == 0, 'the queue to empty');
    expect((await a.receipts()).map((r) => r.action)).toEqual(['custom']);
  });

  it('sends again a receipt whose answer was lost, and the service counts it once', async () => {
    const a = await app();
    const c = a.launch();
    await c.init();
    a.network.loseNextConsentAnswer = true;
    await c.rejectAll();
    await until(() => a.errors, (e) => e.some((x) => x.code == 'network_error'), 'the lost answer');
    expect(c.getState().pendingReceipts).toBe(1);
    await c.flush();
    expect(c.getState().pendingReceipts).toBe(0);
    const posts = a.network.consentPosts();
    expect(posts).toHaveLength(2);
    expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);
    expect(await a.receipts()).toHaveLength(1);
  });

  it('keeps at most 100 receipts, dropping the oldest with an error event, and sends them all when back', async () => {
    const a = await app();
    const c = a.launch();
    await c.init();
    a.network.goOffline();
    for (let i = 0; i < 101; i++) await c.save({ analytics: i % 2 == 0 });
    expect(c.getState().pendingReceipts).toBe(100);
    expect(a.errors.filter((e) => e.code == 'queue_full')).toHaveLength(1);
    a.network.goOnline();
    await until(() => c.getState().pendingReceipts, (n) => n == 0, 'the queue to empty');
    expect(await a.receipts()).toHaveLength(50); // the list's default page: more exist
    const counted = await server.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM receipts WHERE project_id = $1', [a.project.id]);
    expect(counted[0]!.n).toBe(100);
  });

  it('drops a receipt the service refuses (400) with an error event instead of sending it forever', async () => {
    const a = await app();
    // A receipt an older build queued for a purpose this version does not have.
    a.storage.setSlot(a.key.secret, 'queue', JSON.stringify([{ key: crypto.randomUUID(), attempts: 0, next: 0, body: { versionId: a.version.id, consentHash: a.version.consentHash, choices: { newsletter: true }, installationId: 'installation-1234' } }]));
    const c = a.launch();
    await c.init();
    await until(() => c.getState().pendingReceipts, (n) => n == 0, 'the refused receipt to go');
    expect(a.errors).toContainEqual(expect.objectContaining({ code: 'invalid_body', status: 400 }));
    expect(a.network.consentPosts()).toHaveLength(1);
    expect(await a.receipts()).toEqual([]);
  });
});

describe('a new published version, expiry and clocks', () => {
  it('prompts "update" when a published version changed what was decided on, not for a new colour', async () => {
    const a = await app();
    const c = a.launch();
    await c.init();
    await c.acceptAll();
    await c.flush();
    // Only the notice's colour: the consentHash stays, so the decision stands.
    await publishVersion(server, a.owner, a.project.id, sampleDraft({ primaryColor: '#ff0000' }));
    a.appState.set('active');
    await until(() => c.getState().versionNumber, (n) => n == a.version.number + 1, 'the new version');
    expect(c.shouldShowBanner()).toBe(false);

    const changed = sampleDraft();
    changed.purposes[2]!.description = 'Personalised ads, also from partners';
    await publishVersion(server, a.owner, a.project.id, changed);
    const seen: string[] = [];
    c.onChange((s) => seen.push(String(s.promptReason)));
    a.appState.set('active');
    await until(() => c.promptReason, (r) => r == 'update', 'the update prompt');
    expect(c.shouldShowBanner()).toBe(true);
    expect(c.isAllowed('marketing')).toBe(false);
    expect(seen).toContain('update');
  });

  it('expires a decision after reconsentAfterDays, and a device clock ahead of the server does not expire it early', async () => {
    const a = await app();
    const put = await server.request('PUT', consentPath(a.project.id, '/experience'), { token: a.owner.token, body: { reconsentAfterDays: 30 } });
    expect(put.status, put.text).toBe(200);
    expect((await server.request('POST', consentPath(a.project.id, '/publish'), { token: a.owner.token })).status).toBe(201);
    const DAY = 86_400_000;
    // The device's clock is 30 days ahead of the service's.
    let clock = Date.now() + 30 * DAY;
    const c = a.launch(() => clock);
    await c.init();
    await c.acceptAll();
    await c.flush();
    clock += 3_600_000;
    const later = a.launch(() => clock);
    expect((await later.init()).needsConsent).toBe(false);
    clock += 30 * DAY;
    const muchLater = a.launch(() => clock);
    expect(await muchLater.init()).toMatchObject({ needsConsent: true, promptReason: 'expired' });
  });
});

describe('faults', () => {
  it('treats stored state it cannot read as no decision: the banner again and an error event, nothing thrown', async () => {
    const a = await app();
    const c = a.launch();
    await c.init();
    await c.acceptAll();
    await c.flush();
    a.storage.failing.add('decision');
    const broken = await a.launch().init();
    expect(broken).toMatchObject({ ready: true, needsConsent: true, promptReason: 'initial' });
    expect(a.errors).toContainEqual(expect.objectContaining({ code: 'storage_unreadable' }));
    a.storage.failing.clear();
    a.storage.setSlot(a.key.secret, 'decision', '{"consentHash": 12');
    const garbled = await a.launch().init();
    expect(garbled.needsConsent).toBe(true);
    expect(a.errors.filter((e) => e.code == 'storage_unreadable')).toHaveLength(2);
  });

  it('keeps a decision it could not store in force for this run, reports it, and still sends its receipt', async () => {
    const a = await app();
    const c = a.launch();
    await c.init();
    a.storage.full = true;
    await c.acceptAll();
    expect(c.isAllowed('marketing')).toBe(true);
    expect(a.errors).toContainEqual(expect.objectContaining({ code: 'storage_unwritable' }));
    await until(() => c.getState().pendingReceipts, (n) => n == 0, 'the receipt');
    expect((await a.receipts()).map((r) => r.action)).toEqual(['accept_all']);
  });

  it('keeps the last config and decision on a 5xx and on a revoked key, and reports them', async () => {
    const a = await app();
    const c = a.launch();
    await c.init();
    await c.save({ analytics: true });
    await c.flush();

    a.network.answer = { path: /\/api\/sdk\/v2\/config/, status: 503, body: { error: 'unavailable', code: 'unavailable' } };
    const down = a.launch();
    await down.init();
    await until(() => a.errors, (e) => e.some((x) => x.status == 503), 'the 503');
    expect(down.getState()).toMatchObject({ needsConsent: false, choices: { analytics: true, marketing: false } });
    a.network.answer = undefined;

    const revoked = await server.request('DELETE', `/api/platform/projects/${a.project.id}/api-keys/${a.key.id}`, { token: a.owner.token });
    expect(revoked.status).toBe(200);
    const afterRevoke = a.launch();
    await afterRevoke.init();
    await until(() => a.errors, (e) => e.some((x) => x.code == 'revoked_key'), 'the revoked key');
    expect(afterRevoke.isAllowed('analytics')).toBe(true);
    // A new decision is kept in force; the service refuses its receipt (403), which is dropped with an error event.
    await afterRevoke.rejectAll();
    await until(() => afterRevoke.getState().pendingReceipts, (n) => n == 0, 'the refused receipt to go');
    expect(afterRevoke.isAllowed('analytics')).toBe(false);
    expect(a.errors.filter((e) => e.code == 'revoked_key' && e.status == 403).length).toBeGreaterThanOrEqual(2);
  });

  it('on a first launch without network: nothing granted, no banner to draw, an error event; the config comes when the app returns', async () => {
    const a = await app();
    a.network.offline = true;
    const c = a.launch();
    expect(await c.init()).toMatchObject({ ready: true, config: null, needsConsent: false, choices: {} });
    expect(c.isAllowed('necessary')).toBe(false);
    expect(a.errors[0]).toMatchObject({ code: 'network_error', status: 0 });
    // Nothing to decide on yet: the call says so instead of recording a decision about nothing.
    await expect(c.acceptAll()).rejects.toMatchObject({ code: 'no_config' });
    expect(c.getState().pendingReceipts).toBe(0);
    a.network.offline = false;
    a.appState.set('active');
    await until(() => c.shouldShowBanner(), (b) => b, 'the banner');
  });
});

describe('bad options', () => {
  it('reports invalid_options and asks nothing of the network, instead of throwing', async () => {
    for (const [publicKey, apiBaseUrl] of [
      ['sk_live_secret', server.url],
      ['pk_live_abc', server.url + '/api'],
      ['pk_live_abc', 'consent.example.com'],
    ]) {
      const network = new Network();
      const errors: ConsentErrorEvent[] = [];
      const c = core.createConsent({ publicKey: publicKey!, apiBaseUrl: apiBaseUrl!, adapters: { fetch: network.fetch } });
      opened.push(c);
      c.onError((e) => errors.push(e));
      expect(await c.init()).toMatchObject({ ready: true, config: null, needsConsent: false });
      expect(errors).toEqual([expect.objectContaining({ code: 'invalid_options', status: 0 })]);
      expect(network.sent).toEqual([]);
    }
  });
});

describe('signals for the app', () => {
  it("gives Firebase's consent map from the experience's Consent Mode signals", async () => {
    const a = await app();
    const put = await server.request('PUT', consentPath(a.project.id, '/experience'), {
      token: a.owner.token,
      body: { googleConsentMode: { enabled: true, signals: { analytics_storage: ['analytics'], ad_storage: ['marketing'], ad_user_data: ['marketing'], ad_personalization: ['marketing'] } } },
    });
    expect(put.status, put.text).toBe(200);
    expect((await server.request('POST', consentPath(a.project.id, '/publish'), { token: a.owner.token })).status).toBe(201);
    const c = a.launch();
    await c.init();
    expect(c.firebaseConsent()).toEqual({ analytics_storage: 'denied', ad_storage: 'denied', ad_user_data: 'denied', ad_personalization: 'denied' });
    await c.save({ analytics: true });
    expect(c.firebaseConsent()).toEqual({ analytics_storage: 'granted', ad_storage: 'denied', ad_user_data: 'denied', ad_personalization: 'denied' });
    await c.acceptAll();
    expect(c.firebaseConsent()).toEqual({ analytics_storage: 'granted', ad_storage: 'granted', ad_user_data: 'granted', ad_personalization: 'granted' });
  });

  it('reset() forgets the decision and the installation: the banner again, receipts under a new installation', async () => {
    const a = await app();
    const c = a.launch();
    await c.init();
    await c.acceptAll();
    await c.flush();
    const before = installationOf(a);
    await c.reset();
    expect(c.getState()).toMatchObject({ needsConsent: true, promptReason: 'initial' });
    expect(installationOf(a)).not.toBe(before);
    await c.rejectAll();
    await c.flush();
    expect((await a.receipts(installationOf(a))).map((r) => r.action)).toEqual(['reject_all']);
  });

  it('webViewUrl puts the installation in the fragment as decorate() does', async () => {
    const a = await app();
    const c = a.launch();
    await c.init();
    const i = installationOf(a);
    expect(c.webViewUrl('https://shop.example/help')).toBe(`https://shop.example/help#i=${i}`);
    expect(c.webViewUrl('https://shop.example/help#faq')).toBe(`https://shop.example/help#faq&i=${i}`);
    expect(c.webViewUrl('https://shop.example/help?x=1#')).toBe(`https://shop.example/help?x=1#i=${i}`);
  });
});
