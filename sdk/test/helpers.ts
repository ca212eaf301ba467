// Shared fixtures: a config response as the service sends it, a fetch stub that records every request and
// answers with real Response objects, and a fresh copy of the SDK per test (its registry is module state).
import { vi } from 'vitest';

export const KEY = 'pk_live_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6';
export const BASE = 'https://consent.example.com';
export const PROJECT = 'proj_1';
export const RECEIPT_FIELDS = ['choices', 'consentHash', 'installationId', 'sdkVersion', 'timestamp', 'versionId'];

export function configBody(over: { consentHash?: string; contentHash?: string; number?: number; notice?: object } = {}) {
  const number = over.number ?? 1;
  return {
    projectId: PROJECT,
    version: {
      id: 'ver_' + number,
      number,
      publishedAt: '2026-11-22T10:00:00.000Z',
      contentHash: over.contentHash ?? 'content-1',
      consentHash: over.consentHash ?? 'consent-1',
    },
    config: {
      // Deliberately out of order: the dialog must sort by sortOrder.
      categories: [
        { id: 'cat_stats', name: 'Statistics', sortOrder: 2 },
        { id: 'cat_basic', name: 'Essential', sortOrder: 1 },
      ],
      purposes: [
        { id: 'p3', key: 'marketing', name: 'Marketing', description: 'Ads', required: false, categoryId: 'cat_stats', sortOrder: 2 },
        { id: 'p2', key: 'analytics', name: 'Analytics', description: 'Usage', required: false, categoryId: 'cat_stats', sortOrder: 1 },
        { id: 'p1', key: 'necessary', name: 'Necessary', description: 'Site works', required: true, categoryId: 'cat_basic', sortOrder: 1 },
      ],
      notice: {
        title: 'We value your privacy',
        description: 'We use cookies.',
        acceptLabel: 'Accept all',
        rejectLabel: 'Reject all',
        manageLabel: 'Manage',
        companyName: 'Shop Inc.',
        logoUrl: '',
        primaryColor: '#112233',
        ...over.notice,
      },
    },
  };
}

export const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

export const receipt = () => json(201, { ok: true, id: 'rcpt_1', createdAt: '2026-11-22T10:00:01.000Z' });

export interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: Record<string, unknown>;
}

type Handler = () => Response | Promise<Response>;

/** Stubs global fetch; `config` and `consent` answer the two endpoints. Returns the recorded calls. */
export function stubFetch(routes: { config?: Handler; consent?: Handler } = {}) {
  const calls: Call[] = [];
  const handlers = { config: routes.config ?? (() => json(200, configBody())), consent: routes.consent ?? receipt };
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const call = {
        url: String(url),
        method: init.method ?? 'GET',
        headers: (init.headers ?? {}) as Record<string, string>,
        body: init.body ? JSON.parse(String(init.body)) : undefined,
      };
      calls.push(call);
      return call.url.endsWith('/api/sdk/v1/config') ? handlers.config() : handlers.consent();
    }),
  );
  return calls;
}

export const posts = (calls: Call[]) => calls.filter((c) => c.method === 'POST');

/** A fresh SDK module: its per-key registry starts empty. */
export async function loadSdk() {
  vi.resetModules();
  return import('../src/index');
}

export function reset() {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  localStorage.clear();
  document.body.innerHTML = '';
}

export const shadow = () => document.getElementById('consent-sdk-root')?.shadowRoot ?? null;
export const hook = (name: string) => shadow()?.querySelector<HTMLElement>(`[data-consent="${name}"]`) ?? null;
export const toggle = (key: string) => shadow()!.querySelector<HTMLInputElement>(`[data-purpose="${key}"]`)!;

export function storeDecision(choices: Record<string, boolean>, consentHash = 'consent-1') {
  localStorage.setItem(`consent:${PROJECT}`, JSON.stringify({ consentHash, versionNumber: 1, choices, decidedAt: '2026-11-01T00:00:00.000Z' }));
}
