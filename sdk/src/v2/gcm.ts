// Google Consent Mode v2. Commands go to `window.dataLayer` exactly as the page's own
// `function gtag(){dataLayer.push(arguments)}` would put them, so gtag.js and Tag Manager read them in order.
import { read, write } from './consent';

const SIGNALS = ['ad_storage', 'ad_user_data', 'ad_personalization', 'analytics_storage', 'functionality_storage', 'personalization_storage', 'security_storage'];
/** The last project's signal mapping, kept so that the next page load can write the default before init. */
const STORED = 'consent:gcm';

// eslint-disable-next-line @typescript-eslint/no-unused-vars
function gtag(..._args: unknown[]): void {
  const w = window as unknown as { dataLayer?: unknown[] };
  // gtag.js only accepts Arguments objects, not arrays.
  // eslint-disable-next-line prefer-rest-params
  (w.dataLayer = w.dataLayer || []).push(arguments);
}

let defaulted = false;

export function states(has: (key: string) => boolean, signals: Record<string, string[]> = {}) {
  const out: Record<string, string> = {};
  // A signal is granted when every purpose listed for it is; none listed: denied; security_storage: granted.
  for (const s of SIGNALS) out[s] = s == SIGNALS[6] || (signals[s]?.length && signals[s].every(has)) ? 'granted' : 'denied';
  return out;
}

/** `consent default`, all denied but security_storage, once per page. */
export function gcmDefault(): void {
  if (defaulted) return;
  defaulted = true;
  gtag('consent', 'default', { ...states(() => false), wait_for_update: 500 });
}

/**
 * Runs at script evaluation, so the default is there before any later tag can read it: on a returning
 * visitor's page when the last configuration had Consent Mode on, and on every page (the first one too, with
 * nothing stored) when the page declares it on the script tag: `data-google-consent-mode` present, empty or
 * "true" (other values declare nothing). A query, not document.currentScript: that is null in a module.
 * globalThis: in Node (server rendering) there is no document and nothing happens.
 */
export function gcmDefaultAtStart(): void {
  if (read(STORED) || (globalThis.document?.querySelector('script[data-google-consent-mode=""],script[data-google-consent-mode=true]'))) gcmDefault();
}

/** After init and after each decision: remembers the mapping and, with a decision, sends `consent update`. */
export function gcmApply(settings: { enabled: boolean; signals: Record<string, string[]> }, decided: boolean, has: (key: string) => boolean): void {
  write(STORED, settings.enabled ? '1' : null);
  if (!settings.enabled) return;
  gcmDefault();
  if (decided) gtag('consent', 'update', states(has, settings.signals));
}
