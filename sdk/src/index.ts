// Entry point: `init` and the per-key registry that makes it idempotent. Nothing here throws into the host
// page: failures reject the returned promise and go to onError; the page's callbacks run inside try.
import { createApi, sdkError } from './api';
import { Consent } from './client';
import type { ConsentClient, ConsentError, InitOptions } from './public';
import { mountUi, type Ui } from './ui';

export { SDK_VERSION } from './public';
export type { ConsentClient, ConsentError, ConsentState, InitOptions } from './public';

const clients = new Map<string, Promise<ConsentClient>>();

export function init(options: InitOptions): Promise<ConsentClient> {
  let key: string;
  let base: string;
  try {
    key = checkKey(options?.publicKey);
    base = checkBase(options);
  } catch (err) {
    call(options?.onError, err as ConsentError);
    return Promise.reject(err);
  }
  // Same key, same client: later calls get the first call's promise and their other options are ignored.
  let client = clients.get(key);
  if (!client) {
    client = start(key, base, options);
    clients.set(key, client);
    // A failed start is forgotten, so a later init can try again.
    client.catch(() => clients.get(key) === client && clients.delete(key));
  }
  return client;
}

async function start(key: string, base: string, options: InitOptions): Promise<ConsentClient> {
  // Read before anything can read consent; it only shapes the UI (optional purposes start off regardless).
  const gpc = (navigator as Navigator & { globalPrivacyControl?: boolean }).globalPrivacyControl === true;
  const onError = (err: ConsentError) => call(options.onError, err);
  const consent = new Consent(createApi(base, key));
  let ui: Ui;
  try {
    await consent.load();
    await bodyReady();
    ui = mountUi(consent, gpc, onError);
  } catch (err) {
    const e = (err as ConsentError)?.code ? (err as ConsentError) : sdkError('internal_error', String(err));
    onError(e);
    throw e;
  }
  let destroyed = false;
  const client: ConsentClient = Object.freeze({
    hasConsent: (purposeKey: string) => consent.has(purposeKey),
    getConsent: () => consent.state(),
    showPreferences: () => ui.showPreferences(),
    destroy() {
      // Twice is harmless, and must not forget a newer client registered under the same key.
      if (destroyed) return;
      destroyed = true;
      consent.close();
      ui.destroy();
      clients.delete(key);
    },
  });
  call(options.onReady, client);
  return client;
}

function checkKey(key: unknown): string {
  if (typeof key === 'string' && key.startsWith('pk_live_') && key.length > 8) return key;
  throw sdkError('invalid_options', 'publicKey must be a publishable key starting with "pk_live_"');
}

function checkBase(options: InitOptions): string {
  if ('baseUrl' in options) {
    throw sdkError('invalid_options', 'unknown option "baseUrl": the option is named apiBaseUrl');
  }
  const value = options.apiBaseUrl ?? location.origin;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  // An origin only: the SDK adds /api/sdk/v1 itself, so "https://host/api" would double it.
  if (!url || !/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search || url.hash || url.username) {
    throw sdkError('invalid_options', `apiBaseUrl must be an origin such as "https://consent.example.com", without a path; got "${value}"`);
  }
  return url.origin;
}

function bodyReady(): Promise<void> {
  return document.body
    ? Promise.resolve()
    : new Promise((resolve) => document.addEventListener('DOMContentLoaded', () => resolve(), { once: true }));
}

// A bug in the page's callback must not break the SDK, and must not go unnoticed either.
function call<T>(fn: ((arg: T) => void) | undefined, arg: T): void {
  try {
    if (typeof fn === 'function') fn(arg);
  } catch (err) {
    console.error('ConsentSDK: a callback threw', err);
  }
}
