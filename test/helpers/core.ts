// @consent/core as an app gets it: the build (sdk/core/dist, rebuilt by the global setup when stale), with the
// platform adapters an app would pass in, played by the test: a key-value storage that outlives a "launch", a
// network the test can take away, lose an answer on, or answer 5xx on, app-state and network events.
import type { ConsentCore, ConsentErrorEvent, CoreOptions, CoreState, KeyValueStorage } from '../../sdk/core/src/public.js';

export type { ConsentCore, ConsentErrorEvent, CoreState };

const DIST = new URL('../../sdk/core/dist/index.mjs', import.meta.url).href;

export interface CoreModule {
  createConsent(options: CoreOptions): ConsentCore;
  CORE_VERSION: string;
}
export const loadCore = (): Promise<CoreModule> => import(DIST);

/** The app's storage: survives createConsent() after createConsent(), like AsyncStorage across launches. */
export class AppStorage implements KeyValueStorage {
  readonly map = new Map<string, string>();
  /** A slot whose reads throw (a corrupted store), by the end of its key name. */
  failing = new Set<string>();
  /** Every write throws (a full or broken store). */
  full = false;
  getItem(key: string) {
    if ([...this.failing].some((slot) => key.endsWith(':' + slot))) throw new Error('storage is corrupted');
    return this.map.get(key) ?? null;
  }
  setItem(key: string, value: string) {
    if (this.full) throw new Error('QuotaExceededError: the store is full');
    this.map.set(key, value);
  }
  removeItem(key: string) {
    this.map.delete(key);
  }
  /** The value the core keeps in a slot (`decision`, `queue`, ...), parsed. */
  slot(name: string): any {
    const entry = [...this.map].find(([k]) => k.endsWith(':' + name));
    return entry ? JSON.parse(entry[1]) : undefined;
  }
  setSlot(publicKey: string, name: string, text: string) {
    this.map.set(`consent:core:${publicKey.slice(-12)}:${name}`, text);
  }
}

export interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: any;
}

/**
 * The network: real fetch to the test's service, recorded, unless the test says otherwise. `offline`: every request
 * fails as with no network; `loseNextConsentAnswer`: the next consent POST reaches the service (which commits) and
 * its answer is lost; `answer`: a status to answer for paths matching it, without reaching the service.
 */
export class Network {
  offline = false;
  loseNextConsentAnswer = false;
  hang = false;
  answer?: { path: RegExp; status: number; body: unknown };
  /** Headers the way adds (a CDN's location headers: `cf-ipcountry`, `cf-region-code`). */
  via: Record<string, string> = {};
  readonly sent: SentRequest[] = [];
  private listeners = new Set<(online: boolean) => void>();

  fetch = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const url = String(input);
    const headers = Object.fromEntries(Object.entries((init.headers as Record<string, string>) || {}).map(([k, v]) => [k.toLowerCase(), v]));
    this.sent.push({ method: init.method || 'GET', url, headers, body: init.body ? JSON.parse(String(init.body)) : undefined });
    if (this.hang) return new Promise<Response>(() => {});
    if (this.offline) throw new TypeError('fetch failed');
    if (this.answer?.path.test(url)) return Response.json(this.answer.body, { status: this.answer.status });
    const res = await fetch(input, { ...init, headers: { ...(init.headers as Record<string, string>), ...this.via } });
    if (this.loseNextConsentAnswer && url.endsWith('/api/sdk/v1/consent')) {
      this.loseNextConsentAnswer = false;
      await res.arrayBuffer();
      throw new TypeError('fetch failed: the connection was reset');
    }
    return res;
  };

  /** The network adapter. */
  adapter = { subscribe: (fn: (online: boolean) => void) => (this.listeners.add(fn), () => void this.listeners.delete(fn)) };
  goOffline() {
    this.offline = true;
    for (const fn of this.listeners) fn(false);
  }
  goOnline() {
    this.offline = false;
    for (const fn of this.listeners) fn(true);
  }
  consentPosts = () => this.sent.filter((r) => r.method == 'POST' && r.url.endsWith('/api/sdk/v1/consent'));
}

/** The app-state adapter: the test moves the app to the background and back. */
export class AppState {
  private listeners = new Set<(s: 'active' | 'background' | 'inactive') => void>();
  adapter = { subscribe: (fn: (s: 'active' | 'background' | 'inactive') => void) => (this.listeners.add(fn), () => void this.listeners.delete(fn)) };
  set(state: 'active' | 'background' | 'inactive') {
    for (const fn of this.listeners) fn(state);
  }
}

/** Waits until `check` holds (the queue works in the background), polling; fails with what it last saw. */
export async function until<T>(read: () => T | Promise<T>, check: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
