// @vitest-environment happy-dom
// Global Privacy Control, and browsers where localStorage is blocked or full: the SDK fails closed.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BASE, KEY, hook, loadSdk, posts, reset, storeDecision, stubFetch, toggle } from './helpers';

const GPC_TEXT = "Your browser's Global Privacy Control signal was honoured: optional purposes are off unless you turn them on.";

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
  reset();
});

function setGpc(value: boolean) {
  Object.defineProperty(navigator, 'globalPrivacyControl', { value, configurable: true });
  restore = () => delete (navigator as { globalPrivacyControl?: boolean }).globalPrivacyControl;
}

/** Replaces the global `localStorage` with a getter that throws, as in a sandboxed or cookie-blocked frame. */
function blockStorage() {
  const original = Object.getOwnPropertyDescriptor(globalThis, 'localStorage')!;
  Object.defineProperty(globalThis, 'localStorage', {
    configurable: true,
    get() {
      throw new DOMException('The operation is insecure.', 'SecurityError');
    },
  });
  restore = () => Object.defineProperty(globalThis, 'localStorage', original);
}

/** Puts a stand-in for localStorage in place whose `method` throws `error`; the rest use the real one. */
function fakeStorage(method: 'getItem' | 'setItem', error: Error) {
  const real = localStorage;
  vi.stubGlobal('localStorage', {
    getItem: (k: string) => real.getItem(k),
    setItem: (k: string, v: string) => real.setItem(k, v),
    [method]: () => {
      throw error;
    },
  });
}

async function start() {
  const calls = stubFetch();
  const { init } = await loadSdk();
  const onError = vi.fn();
  let atReady: Record<string, boolean> | undefined;
  const client = await init({
    publicKey: KEY,
    apiBaseUrl: BASE,
    onError,
    onReady: (c) => (atReady = { analytics: c.hasConsent('analytics'), marketing: c.hasConsent('marketing') }),
  });
  return { calls, client, onError, atReady };
}

describe('Global Privacy Control', () => {
  it('optional purposes are off from the start, and the banner and dialog say so', async () => {
    setGpc(true);
    const { client, atReady } = await start();
    expect(atReady).toEqual({ analytics: false, marketing: false });
    expect(client.getConsent().choices).toMatchObject({ analytics: false, marketing: false });
    expect(hook('banner')!.textContent).toContain(GPC_TEXT);
    hook('manage')!.click();
    expect(hook('dialog')!.textContent).toContain(GPC_TEXT);
    expect(toggle('analytics').checked).toBe(false);
    expect(toggle('marketing').checked).toBe(false);
    expect(toggle('necessary').checked).toBe(true);
  });

  it('the visitor can still turn purposes on explicitly', async () => {
    setGpc(true);
    const { client, calls } = await start();
    hook('manage')!.click();
    toggle('analytics').checked = true;
    hook('save')!.click();
    await vi.waitFor(() => expect(hook('dialog')).toBeNull());
    expect(posts(calls)[0].body!.choices).toEqual({ necessary: true, analytics: true, marketing: false });
    expect(client.hasConsent('analytics')).toBe(true);
  });

  it('says nothing about GPC when the signal is absent', async () => {
    setGpc(false);
    await start();
    expect(hook('banner')!.textContent).not.toContain('Global Privacy Control');
  });
});

describe('blocked or full storage', () => {
  it('storage that throws on access: init resolves, nothing granted, the banner works for this page', async () => {
    blockStorage();
    expect(() => localStorage).toThrow('insecure');
    const { client, calls, onError } = await start();
    expect(client.hasConsent('analytics')).toBe(false);
    expect(hook('banner')).not.toBeNull();

    hook('accept-all')!.click();
    await vi.waitFor(() => expect(hook('banner')).toBeNull());
    expect(posts(calls)[0].body!.installationId).toMatch(/^[A-Za-z0-9_-]{8,64}$/);
    // The acknowledged decision lives in memory for the rest of the page's life.
    expect(client.hasConsent('analytics')).toBe(true);
    expect(onError).not.toHaveBeenCalled();

    // Same installation id for every receipt of this page.
    client.showPreferences();
    hook('reject-all')!.click();
    await vi.waitFor(() => expect(hook('dialog')).toBeNull());
    expect(posts(calls)[1].body!.installationId).toBe(posts(calls)[0].body!.installationId);
    expect(client.hasConsent('analytics')).toBe(false);
  });

  it('storage that is full (setItem throws QuotaExceededError) still keeps the decision in memory', async () => {
    storeDecision({ necessary: true, analytics: true, marketing: true }, 'consent-old');
    fakeStorage('setItem', new DOMException('full', 'QuotaExceededError'));
    const { client } = await start();
    hook('reject-all')!.click();
    await vi.waitFor(() => expect(hook('banner')).toBeNull());
    expect(client.hasConsent('necessary')).toBe(true);
    expect(client.hasConsent('analytics')).toBe(false);
    expect(JSON.parse(localStorage.getItem('consent:proj_1')!).consentHash).toBe('consent-old');
  });

  it('storage whose reads throw grants nothing, even if a decision was stored', async () => {
    storeDecision({ necessary: true, analytics: true, marketing: true });
    fakeStorage('getItem', new DOMException('denied', 'SecurityError'));
    const { client } = await start();
    expect(client.hasConsent('analytics')).toBe(false);
    expect(client.getConsent().needsConsent).toBe(true);
  });
});
