// Fixtures for SDK v2: the v2 config answer as extensions.md section 3 documents it, a fetch stub for the
// three endpoints (config, decision, consent), and a fresh copy of the v2 module per test.
import { vi } from 'vitest';
import { BUILT_IN_UI_STRINGS } from '../../src/consent/ui-strings';
import { configBody, json, receipt, type Call } from './helpers';

export { BASE, KEY, PROJECT } from './helpers';

export type Experience = ReturnType<typeof experience>;

export function experience(over: Record<string, unknown> = {}) {
  return {
    privacyPolicyUrl: 'https://shop.example/privacy',
    reconsentAfterDays: 365,
    gpc: { optOutPurposes: ['marketing'] },
    googleConsentMode: {
      enabled: true,
      signals: { ad_storage: ['marketing'], ad_user_data: ['marketing'], ad_personalization: ['marketing'], analytics_storage: ['analytics'], functionality_storage: [], personalization_storage: [], security_storage: [] },
    },
    cookies: { analytics: ['_ga', '_ga_*'], marketing: ['_fbp'] },
    theme: { colorScheme: 'light' },
    ...over,
  };
}

export function configV2(
  over: { locale?: string; dir?: string; ui?: Record<string, string>; experience?: Record<string, unknown>; consentHash?: string; notice?: object; mode?: string; jurisdiction?: { code: string; rule: string } | null } = {},
) {
  return {
    ...configBody({ consentHash: over.consentHash, notice: over.notice }),
    locale: over.locale ?? 'en',
    locales: ['en', 'de', 'ar'],
    dir: over.dir ?? 'ltr',
    // The service always sends every string (built in for the locale, the project's over them); the SDK has none.
    ui: { ...BUILT_IN_UI_STRINGS.en, ...over.ui },
    experience: experience(over.experience),
    // Jurisdictions (extensions.md section 6): absent unless a test sets them, as in answers from before.
    ...('mode' in over ? { mode: over.mode } : {}),
    ...('jurisdiction' in over ? { jurisdiction: over.jurisdiction } : {}),
  };
}

/** The UI strings a jurisdiction answer carries (src/consent/ui-strings.ts, English). */
export const GEO_UI = { doNotSell: 'Do Not Sell or Share My Personal Information', optOutHonored: 'Opt-Out Request Honored', noticeOk: 'Got it' };

type Handler = (call: Call) => Response | Promise<Response>;

export function stubFetchV2(routes: { config?: Handler; decision?: Handler; consent?: Handler } = {}) {
  const calls: Call[] = [];
  const handlers = {
    config: routes.config ?? (() => json(200, configV2())),
    decision: routes.decision ?? (() => json(200, { decision: null })),
    consent: routes.consent ?? receipt,
  };
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const call = { url: String(url), method: init.method ?? 'GET', headers: (init.headers ?? {}) as Record<string, string>, body: init.body ? JSON.parse(String(init.body)) : undefined };
      calls.push(call);
      const path = new URL(call.url).pathname;
      if (path === '/api/sdk/v2/config') return handlers.config(call);
      if (path === '/api/sdk/v2/decision') return handlers.decision(call);
      if (path === '/api/sdk/v1/consent') return handlers.consent(call);
      return json(404, { error: 'no route', code: 'not_found' });
    }),
  );
  return calls;
}

/** A fresh v2 module, evaluated now (its Consent Mode default runs at evaluation). */
export async function loadV2() {
  vi.resetModules();
  // happy-dom loads no scripts: the files the core would load beside itself (more.js, integrations.js) are
  // evaluated here and found by the globals they define.
  const w = window as unknown as Record<string, unknown>;
  w.ConsentMore = await import('../src/v2/more');
  w.ConsentIntegrations = await import('../src/v2/integrations');
  return import('../src/v2/index');
}

/** gtag commands the SDK pushed, as arrays. */
export const gtagCalls = () => ((window as unknown as { dataLayer?: IArguments[] }).dataLayer ?? []).map((a) => Array.from(a));
