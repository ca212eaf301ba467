// The vendors' own consent APIs (extensions.md section 12, docs/integrations.md cites each vendor's page): the
// denied default a page gets before the vendor's script acts, and the update after a decision. Only the calls
// each vendor documents, made the way its official snippet queues them, and never a global defined in a way that
// stops the vendor's snippet from loading its script (each function says how its snippet treats what we leave).
// Shared by stub.js (defaults at evaluation) and integrations.js (updates): no DOM beyond window and document.
// stub.js has at most 1 KiB min+gzip (extensions.md section 11): what it takes from here is written for size.
import { w } from './page';

/** Signal name to granted. */
export type States = Record<string, boolean>;
type Mode = 'opt-in' | 'opt-out' | 'notice' | 'none';
const g = (granted: boolean | undefined) => (granted ? 'granted' : 'denied');

/** Runs `call` now when `ready()`, else once the page has loaded (the vendor's script may come later). */
function whenReady(ready: () => unknown, call: () => void): void {
  if (ready()) call();
  else addEventListener('load', () => ready() && call(), { once: true });
}

// Meta: the snippet starts `if (f.fbq) return;`, so an fbq of ours would stop fbevents.js from ever loading.
// Before the snippet has run, the command waits in an accessor that lets the snippet define fbq as usual and,
// when fbq is first called (the snippet's own `fbq('init', ...)`), runs the command first through the
// snippet's fbq and becomes a plain property again: the revoke is queued before init, as Meta asks.
// A second call before the snippet has run replaces the accessor, and with it the command waiting.
function fbq(...args: unknown[]): void {
  let value: { queue?: unknown[] } & ((...a: unknown[]) => void);
  if (typeof w.fbq == 'function') w.fbq(...args);
  else
    Object.defineProperty(w, 'fbq', {
      configurable: true,
      set: (v) => (value = v),
      // The snippet's stub is complete once it has its queue (the snippet reads fbq before that and gets
      // undefined); the first read after that puts a plain property back and passes the command on.
      get: () => (value?.queue && (delete w.fbq, (w.fbq = value)(...args)), value),
    });
}

// TikTok: the snippet starts `var ttq = w[t] = w[t] || []` and pushes `[method, ...args]`: an array of ours is
// adopted with what it holds.
function ttq(method: string): void {
  const q = (w.ttq ||= []);
  typeof q[method] == 'function' ? q[method]() : q.push([method]);
}

/** Each type's denied default, before a decision (stub.js; Shopify has none: see UPDATES). */
export const DEFAULTS: Record<string, () => void> = {
  // UET: the snippet keeps an existing uetq (`w[u] = w[u] || []`) and replaces it with its UET object only once
  // bat.js has loaded, after reading its queue.
  'microsoft-uet': () => (w.uetq ||= []).push('consent', 'default', { ad_storage: 'denied' }),
  // Clarity: clarity() defines the snippet's own stub (`c[a] = c[a] || function () {...}`), which the snippet keeps.
  'microsoft-clarity': () => clarity('denied', 'denied'),
  'meta-pixel': () => fbq('consent', 'revoke'),
  'tiktok-pixel': () => ttq('holdConsent'),
  // WordPress: the consent type says how categories without an answer read (optin: denied). (Not inlined by
  // terser: fewer bytes in stub.js.)
  wordpress: () => /*@__NOINLINE__*/ wpConsentType('optin'),
};

/** Each type's update after a decision and at init for a returning visitor (integrations.js). */
export const UPDATES: Record<string, (states: States, mode: Mode) => void> = {
  'microsoft-uet': (s) => (w.uetq ||= []).push('consent', 'update', { ad_storage: g(s.ad_storage) }),
  'microsoft-clarity': (s) => clarity(g(s.ad_Storage), g(s.analytics_Storage)),
  'meta-pixel': (s) => fbq('consent', s.consent ? 'grant' : 'revoke'),
  'tiktok-pixel': (s) => ttq(s.consent ? 'grantConsent' : 'revokeConsent'),
  // Shopify: the store's own privacy settings hold tracking back until the visitor answers; a call before a
  // decision would record an answer the visitor never gave, so there is no default call.
  shopify: (s) =>
    whenReady(
      () => w.Shopify?.loadFeatures,
      () =>
        w.Shopify.loadFeatures([{ name: 'consent-tracking-api', version: '0.1' }], (error: unknown) => {
          if (!error) w.Shopify.customerPrivacy.setTrackingConsent({ analytics: !!s.analytics, marketing: !!s.marketing, preferences: !!s.preferences, sale_of_data: !!s.sale_of_data }, () => {});
        }),
    ),
  // The WP Consent API's wp_set_consent stores each answer (its script may load after ours, in the footer).
  wordpress(s, mode) {
    wpConsentType(mode == 'opt-out' || mode == 'notice' ? 'optout' : 'optin');
    whenReady(
      () => typeof w.wp_set_consent == 'function',
      () => {
        for (const category of ['functional', 'preferences', 'statistics', 'statistics-anonymous', 'marketing']) w.wp_set_consent(category, s[category] ? 'allow' : 'deny');
      },
    );
  },
};

function clarity(ad_Storage: string, analytics_Storage: string): unknown {
  // eslint-disable-next-line prefer-rest-params
  w.clarity ||= function () { (w.clarity.q = w.clarity.q || []).push(arguments); };
  return w.clarity('consentv2', { ad_Storage, analytics_Storage });
}

function wpConsentType(type: string): void {
  if (w.wp_consent_type != type) {
    w.wp_consent_type = type;
    document.dispatchEvent(new CustomEvent('wp_consent_type_defined'));
  }
}

/** Types whose default this page already has (stub.js and integrations.js are separate files: a window global). */
const DEFAULTED = '__consentIntegrationDefaults';

/** The denied default of each type, once per page. */
export function integrationDefaults(types: string[]): void {
  const done: string[] = (w[DEFAULTED] ||= []);
  for (const type of types) {
    if (!done.includes(type)) {
      done.push(type);
      DEFAULTS[type]?.();
    }
  }
}

/** The types the last configuration had (stub.js writes their defaults on the next page without the attribute). */
export const STORED_TYPES = 'consent:integrations';
