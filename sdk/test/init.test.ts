// @vitest-environment happy-dom
// init: option checks, idempotency, how the API is called, error reporting, destroy.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BASE, KEY, json, loadSdk, reset, shadow, stubFetch } from './helpers';

afterEach(reset);

describe('init options', () => {
  it.each([undefined, '', 'pk_test_abc', 'sk_live_abc', 'pk_live_', 42])('rejects publicKey %s without calling the API', async (publicKey) => {
    const calls = stubFetch();
    const { init } = await loadSdk();
    const onError = vi.fn();
    await expect(init({ publicKey: publicKey as string, apiBaseUrl: BASE, onError })).rejects.toThrow(/pk_live_/);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ code: 'invalid_options', status: 0 }));
    expect(calls).toHaveLength(0);
  });

  it.each(['https://consent.example.com/api', 'https://consent.example.com/api/sdk/v1', 'https://x.example?a=1', 'consent.example.com', 'ftp://x.example'])(
    'rejects apiBaseUrl %s',
    async (apiBaseUrl) => {
      const calls = stubFetch();
      const { init } = await loadSdk();
      await expect(init({ publicKey: KEY, apiBaseUrl })).rejects.toThrow(/apiBaseUrl must be an origin/);
      expect(calls).toHaveLength(0);
    },
  );

  it('rejects the baseUrl alias with a pointer to apiBaseUrl', async () => {
    stubFetch();
    const { init } = await loadSdk();
    await expect(init({ publicKey: KEY, baseUrl: BASE } as never)).rejects.toThrow(/apiBaseUrl/);
  });

  it('never throws synchronously, even without options', async () => {
    const { init } = await loadSdk();
    let result: Promise<unknown> | undefined;
    expect(() => (result = init(undefined as never))).not.toThrow();
    await expect(result).rejects.toMatchObject({ code: 'invalid_options' });
  });

  it('tolerates a trailing slash and defaults to the page origin', async () => {
    const calls = stubFetch();
    const { init } = await loadSdk();
    await init({ publicKey: KEY, apiBaseUrl: BASE + '/' });
    expect(calls[0].url).toBe(`${BASE}/api/sdk/v1/config`);

    const { init: init2 } = await loadSdk();
    document.body.innerHTML = '';
    await init2({ publicKey: KEY });
    expect(calls[1].url).toBe(`${location.origin}/api/sdk/v1/config`);
  });
});

describe('API calls', () => {
  it('sends the key as a Bearer token only, never in the URL', async () => {
    const calls = stubFetch();
    const { init } = await loadSdk();
    await init({ publicKey: KEY, apiBaseUrl: BASE });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ method: 'GET', headers: { Authorization: `Bearer ${KEY}` } });
    expect(calls[0].url).not.toContain('pk_live');
    expect(calls[0].url).not.toContain('?');
  });

  it('is idempotent per publicKey', async () => {
    const calls = stubFetch();
    const { init } = await loadSdk();
    const a = init({ publicKey: KEY, apiBaseUrl: BASE });
    const b = init({ publicKey: KEY, apiBaseUrl: BASE });
    expect(b).toBe(a);
    expect(await a).toBe(await b);
    expect(calls).toHaveLength(1);
    expect(document.querySelectorAll('#consent-sdk-root')).toHaveLength(1);

    const other = await init({ publicKey: KEY + 'x', apiBaseUrl: BASE });
    expect(other).not.toBe(await a);
  });

  it('calls onReady with the client, which exposes only the four methods', async () => {
    stubFetch();
    const { init } = await loadSdk();
    const onReady = vi.fn();
    const client = await init({ publicKey: KEY, apiBaseUrl: BASE, onReady });
    expect(onReady).toHaveBeenCalledExactlyOnceWith(client);
    expect(Object.keys(client).sort()).toEqual(['destroy', 'getConsent', 'hasConsent', 'showPreferences']);
  });

  it('survives callbacks that throw', async () => {
    stubFetch();
    const { init } = await loadSdk();
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const onReady = () => {
      throw new Error('page bug');
    };
    await expect(init({ publicKey: KEY, apiBaseUrl: BASE, onReady })).resolves.toBeTruthy();
    expect(logged).toHaveBeenCalled();
  });
});

describe('config errors', () => {
  it.each([
    [401, 'invalid_key'],
    [403, 'revoked_key'],
    [403, 'origin_not_allowed'],
    [404, 'no_published_version'],
    [429, 'rate_limited'],
  ])('HTTP %i %s: onError gets the code and status, init rejects, no UI', async (status, code) => {
    stubFetch({ config: () => json(status, { error: 'nope', code }) });
    const { init } = await loadSdk();
    const onError = vi.fn();
    const onReady = vi.fn();
    const err = await init({ publicKey: KEY, apiBaseUrl: BASE, onError, onReady }).catch((e) => e);
    expect(err).toMatchObject({ code, status });
    expect(onError).toHaveBeenCalledExactlyOnceWith(err);
    expect(onReady).not.toHaveBeenCalled();
    expect(shadow()).toBeNull();
  });

  it('a fetch failure is network_error with status 0', async () => {
    stubFetch({ config: () => Promise.reject(new TypeError('Failed to fetch')) });
    const { init } = await loadSdk();
    const onError = vi.fn();
    await expect(init({ publicKey: KEY, apiBaseUrl: BASE, onError })).rejects.toMatchObject({ code: 'network_error', status: 0 });
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ code: 'network_error' }));
  });

  it('a response without a code is http_error; a malformed 200 is invalid_response', async () => {
    stubFetch({ config: () => new Response('<html>oops</html>', { status: 502 }) });
    const { init } = await loadSdk();
    await expect(init({ publicKey: KEY, apiBaseUrl: BASE })).rejects.toMatchObject({ code: 'http_error', status: 502 });

    stubFetch({ config: () => json(200, { projectId: 'p' }) });
    await expect(init({ publicKey: KEY, apiBaseUrl: BASE })).rejects.toMatchObject({ code: 'invalid_response' });
  });

  it('forgets a failed init so a later one can retry', async () => {
    stubFetch({ config: () => Promise.reject(new TypeError('offline')) });
    const { init } = await loadSdk();
    await expect(init({ publicKey: KEY, apiBaseUrl: BASE })).rejects.toBeTruthy();
    stubFetch();
    await expect(init({ publicKey: KEY, apiBaseUrl: BASE })).resolves.toBeTruthy();
  });
});

describe('destroy', () => {
  it('removes the UI, answers as not ready, and lets a later init start fresh', async () => {
    const calls = stubFetch();
    const { init } = await loadSdk();
    const first = await init({ publicKey: KEY, apiBaseUrl: BASE });
    expect(shadow()).not.toBeNull();
    first.destroy();
    expect(document.getElementById('consent-sdk-root')).toBeNull();
    expect(first.hasConsent('necessary')).toBe(false);
    expect(first.getConsent()).toEqual({ choices: {}, consentHash: null, versionNumber: null, needsConsent: false });
    expect(() => first.showPreferences()).not.toThrow();
    expect(shadow()).toBeNull();

    const second = await init({ publicKey: KEY, apiBaseUrl: BASE });
    expect(second).not.toBe(first);
    expect(calls).toHaveLength(2);
    // Destroying the old client again must not unregister the new one.
    first.destroy();
    expect(await init({ publicKey: KEY, apiBaseUrl: BASE })).toBe(second);
    expect(shadow()).not.toBeNull();
  });
});
