// @vitest-environment happy-dom
// Decisions: when the banner shows, what each button posts and stores, and what hasConsent answers.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Consent } from '../src/client';
import { SDK_VERSION } from '../src/public';
import packageJson from '../package.json';
import { BASE, KEY, PROJECT, RECEIPT_FIELDS, configBody, hook, json, loadSdk, posts, reset, shadow, storeDecision, stubFetch, toggle } from './helpers';

afterEach(reset);

async function start(config = configBody(), consent?: () => Response | Promise<Response>) {
  const calls = stubFetch({ config: () => json(200, config), consent });
  const { init } = await loadSdk();
  const onError = vi.fn();
  const client = await init({ publicKey: KEY, apiBaseUrl: BASE, onError });
  return { calls, client, onError };
}

const stored = () => JSON.parse(localStorage.getItem(`consent:${PROJECT}`) ?? 'null');

describe('before a decision', () => {
  it('shows the banner and grants nothing, required purposes included', async () => {
    const { client } = await start();
    expect(hook('banner')).not.toBeNull();
    expect(client.getConsent()).toEqual({
      choices: { marketing: false, analytics: false, necessary: false },
      consentHash: 'consent-1',
      versionNumber: 1,
      needsConsent: true,
    });
    for (const key of ['necessary', 'analytics', 'marketing', 'unknown']) expect(client.hasConsent(key)).toBe(false);
  });

  it('answers false before the configuration is loaded', () => {
    const consent = new Consent({ getConfig: vi.fn(), postConsent: vi.fn() });
    expect(consent.has('necessary')).toBe(false);
    expect(consent.state()).toEqual({ choices: {}, consentHash: null, versionNumber: null, needsConsent: false });
  });
});

describe('a stored decision', () => {
  it('for the current consentHash: no banner, its choices apply', async () => {
    storeDecision({ necessary: true, analytics: true, marketing: false });
    const { client, calls } = await start();
    expect(hook('banner')).toBeNull();
    expect(client.getConsent()).toMatchObject({ needsConsent: false, choices: { necessary: true, analytics: true, marketing: false } });
    expect(client.hasConsent('analytics')).toBe(true);
    expect(client.hasConsent('marketing')).toBe(false);
    expect(client.hasConsent('unknown')).toBe(false);
    expect(posts(calls)).toHaveLength(0);
  });

  it('keeps required purposes granted even if storage says otherwise', async () => {
    storeDecision({ necessary: false, analytics: false, marketing: false });
    const { client } = await start();
    expect(client.hasConsent('necessary')).toBe(true);
  });

  it('for another consentHash is stale: banner again, nothing granted, nothing re-posted', async () => {
    storeDecision({ necessary: true, analytics: true, marketing: true }, 'consent-old');
    const { client, calls } = await start(configBody({ consentHash: 'consent-2', number: 2 }));
    expect(hook('banner')).not.toBeNull();
    expect(client.getConsent().needsConsent).toBe(true);
    expect(client.hasConsent('analytics')).toBe(false);
    expect(client.hasConsent('necessary')).toBe(false);
    expect(posts(calls)).toHaveLength(0);
  });

  it('survives a publish that changed only contentHash (branding)', async () => {
    storeDecision({ necessary: true, analytics: true, marketing: false });
    const { client } = await start(configBody({ contentHash: 'content-2', number: 2, notice: { primaryColor: '#ff0000' } }));
    expect(hook('banner')).toBeNull();
    expect(client.hasConsent('analytics')).toBe(true);
    expect(client.getConsent()).toMatchObject({ versionNumber: 2, needsConsent: false });
  });

  it('ignores junk in the storage slot', async () => {
    localStorage.setItem(`consent:${PROJECT}`, '{not json');
    const { client } = await start();
    expect(client.getConsent().needsConsent).toBe(true);
  });
});

describe('deciding', () => {
  it('accept all posts exactly one receipt with exactly the allowed fields, then stores the decision', async () => {
    const { client, calls } = await start();
    hook('accept-all')!.click();
    await vi.waitFor(() => expect(hook('banner')).toBeNull());

    const [post] = posts(calls);
    expect(posts(calls)).toHaveLength(1);
    expect(post.url).toBe(`${BASE}/api/sdk/v1/consent`);
    expect(post.headers).toMatchObject({ Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' });
    expect(Object.keys(post.body!).sort()).toEqual(RECEIPT_FIELDS);
    expect(post.body).toMatchObject({
      versionId: 'ver_1',
      consentHash: 'consent-1',
      choices: { necessary: true, analytics: true, marketing: true },
      sdkVersion: SDK_VERSION,
    });
    expect(post.body!.installationId).toMatch(/^[A-Za-z0-9_-]{8,64}$/);
    expect(new Date(post.body!.timestamp as string).toISOString()).toBe(post.body!.timestamp);

    expect(stored()).toEqual({
      consentHash: 'consent-1',
      versionNumber: 1,
      choices: { necessary: true, analytics: true, marketing: true },
      decidedAt: '2026-11-22T10:00:01.000Z',
    });
    expect(client.hasConsent('marketing')).toBe(true);
    expect(client.getConsent().needsConsent).toBe(false);
  });

  it('reject all posts one receipt granting only required purposes', async () => {
    const { client, calls } = await start();
    hook('reject-all')!.click();
    await vi.waitFor(() => expect(hook('banner')).toBeNull());
    expect(posts(calls)).toHaveLength(1);
    expect(posts(calls)[0].body!.choices).toEqual({ necessary: true, analytics: false, marketing: false });
    expect(client.hasConsent('necessary')).toBe(true);
    expect(client.hasConsent('analytics')).toBe(false);
  });

  it('save posts one receipt with the toggles as set', async () => {
    const { client, calls } = await start();
    hook('manage')!.click();
    toggle('analytics').checked = true;
    hook('save')!.click();
    await vi.waitFor(() => expect(hook('dialog')).toBeNull());
    expect(posts(calls)).toHaveLength(1);
    expect(Object.keys(posts(calls)[0].body!).sort()).toEqual(RECEIPT_FIELDS);
    expect(posts(calls)[0].body!.choices).toEqual({ necessary: true, analytics: true, marketing: false });
    expect(client.hasConsent('analytics')).toBe(true);
    expect(client.hasConsent('marketing')).toBe(false);
    expect(hook('banner')).toBeNull();
  });

  it('a second click while the receipt is in flight posts nothing more', async () => {
    let answer!: (r: Response) => void;
    const { calls } = await start(configBody(), () => new Promise<Response>((r) => (answer = r)));
    hook('accept-all')!.click();
    expect(hook('banner')!.getAttribute('aria-busy')).toBe('true');
    hook('accept-all')!.click();
    hook('reject-all')!.click();
    answer(json(201, { ok: true, id: 'r', createdAt: '2026-11-22T10:00:01.000Z' }));
    await vi.waitFor(() => expect(hook('banner')).toBeNull());
    expect(posts(calls)).toHaveLength(1);
  });

  it('reuses one installationId across receipts and keeps it out of the public API', async () => {
    const { client, calls } = await start();
    hook('reject-all')!.click();
    await vi.waitFor(() => expect(hook('banner')).toBeNull());
    client.showPreferences();
    hook('accept-all')!.click();
    await vi.waitFor(() => expect(hook('dialog')).toBeNull());
    const [a, b] = posts(calls);
    expect(a.body!.installationId).toBe(b.body!.installationId);
    expect(localStorage.getItem('consent:installationId')).toBe(a.body!.installationId);
    expect(JSON.stringify(client.getConsent())).not.toContain(a.body!.installationId as string);
  });

  it('cannot be set by the page: identity-looking init options are not used', async () => {
    const calls = stubFetch();
    const { init } = await loadSdk();
    const options = { publicKey: KEY, apiBaseUrl: BASE, installationId: 'chosen-by-page', subjectId: 'user@example.com' };
    await init(options as Parameters<typeof init>[0]);
    hook('accept-all')!.click();
    await vi.waitFor(() => expect(hook('banner')).toBeNull());
    const [post] = posts(calls);
    expect(post!.body!.installationId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.stringify(post!.body)).not.toMatch(/chosen-by-page|user@example\.com/);
  });

  it.each([
    ['network failure', () => Promise.reject(new TypeError('offline')), 'network_error'],
    ['400 consent_hash_mismatch', () => json(400, { error: 'mismatch', code: 'consent_hash_mismatch' }), 'consent_hash_mismatch'],
    ['500 without body', () => new Response('', { status: 500 }), 'http_error'],
  ])('a failed receipt (%s) stores nothing, reports, and leaves the banner usable', async (_, consent, code) => {
    storeDecision({ necessary: true, analytics: false, marketing: false }, 'consent-old');
    const { client, calls, onError } = await start(configBody(), consent as () => Promise<Response>);
    hook('accept-all')!.click();
    await vi.waitFor(() => expect(onError).toHaveBeenCalledWith(expect.objectContaining({ code })));

    expect(stored().consentHash).toBe('consent-old');
    expect(client.hasConsent('analytics')).toBe(false);
    expect(client.getConsent().needsConsent).toBe(true);
    expect(hook('banner')).not.toBeNull();
    expect(shadow()!.querySelector('[role="alert"]')!.textContent).toMatch(/could not be saved/);
    expect(hook('banner')!.hasAttribute('aria-busy')).toBe(false);

    // The visitor retries and this time it goes through.
    stubFetch();
    hook('accept-all')!.click();
    await vi.waitFor(() => expect(hook('banner')).toBeNull());
    expect(client.hasConsent('analytics')).toBe(true);
    expect(posts(calls)).toHaveLength(1);
  });

  it('polls nothing and re-posts nothing after ready', async () => {
    vi.useFakeTimers();
    try {
      storeDecision({ necessary: true, analytics: true, marketing: true });
      const { calls } = await start();
      await vi.advanceTimersByTimeAsync(60 * 60 * 1000);
      expect(calls).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

it('v1 keeps the SDK_VERSION it shipped with (sdk/package.json versions v2, see sdk/test/v2-*.test.ts)', () => {
  expect(SDK_VERSION).toBe('1.0.0');
  expect(packageJson.version).not.toBe(SDK_VERSION);
});
