// Entry point of SDK v2: `init` and the per-key registry that makes it idempotent. At script evaluation it
// writes Google Consent Mode's default (when the script tag declares Consent Mode, or the last page load had it
// enabled), before any tag can read it, and installs the `__gpp` stub (gpp-stub.ts).
// Nothing here throws into the host page: failures reject the returned promise and go to onError.
import { sdkError } from '../api';
import { installationId } from '../storage';
import { createApi } from './api';
import { blocker } from './blocking';
import { Consent, prefsMarker, read, write } from './consent';
import { gcmApply, gcmDefault, gcmDefaultAtStart } from './gcm';
import type { GppApi } from './gpp';
import { addScript, gppNotApplicable, gppStub, loadFile, loadGpp } from './gpp-stub';
import type { MountTcf } from './tcf';
import type * as More from './more';
import type { ConsentClient, ConsentError, ConsentState, InitOptions } from './public';
import { mountUi, type Ui } from './ui';

export { SDK_VERSION } from './public';
export type { ConsentClient, ConsentError, ConsentState, InitOptions, Mode } from './public';

gcmDefaultAtStart();
gppStub();

const clients = new Map<string, Promise<ConsentClient>>();

export function init(options: InitOptions): Promise<ConsentClient> {
  // First of all, even before the options are checked: the page said Consent Mode is on; stub.js, when the page
  // has it, reads the options it serves (`integrations`: the vendors' defaults, integrations-stub.ts).
  if (options?.googleConsentMode) gcmDefault();
  (window as { ConsentStub?: { init?(o: InitOptions): void } }).ConsentStub?.init?.(options);
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

/** The hosted preferences page acts for the installation named in its fragment (`#i=...`, from preferencesUrl). */
function hostedInstallation(base: string): string | undefined {
  const m = /^#i=([A-Za-z0-9_-]{8,64})$/.exec(location.hash);
  return m && location.origin == base && location.pathname == '/preferences' ? m[1] : undefined;
}

async function start(key: string, base: string, options: InitOptions): Promise<ConsentClient> {
  // Read first: GPC's opt-out purposes are denied before anything else happens.
  const gpc = (navigator as Navigator & { globalPrivacyControl?: boolean }).globalPrivacyControl === true;
  const onError = (err: ConsentError) => call(options.onError, err);
  const hosted = hostedInstallation(base);
  // On the service's own origin (the hosted /preferences page of every operator) the visitor gets one id per
  // project, never one for the origin: otherwise two operators would see the same id for one visitor.
  const installation = (projectId: string) => hosted || installationId(location.origin == base ? ':' + projectId : '');
  const api = createApi(base, key);
  const consent = new Consent(api, gpc, installation);
  const listeners = new Set<(state: ConsentState) => void>();
  let ui: Ui;
  let scripts: ReturnType<typeof blocker>;
  const has = (k: string) => consent.has(k);
  let gpp: Promise<GppApi | undefined> | undefined;
  // more.js, only where the page needs it: the vendors' consent APIs, the cookie shared across subdomains, an
  // installation carried by decorate(), a decision made on the hosted preferences page, cookies to remove.
  let more: typeof More | undefined;
  consent.ready = async (c) => {
    const x = c.experience;
    // No integrations any more: stub.js must stop writing defaults no update would follow (integrations-stub.ts).
    if (!x.integrations) write('consent:integrations', null);
    if (x.integrations || x.cookieDomain || /[#&]i=/.test(location.hash) || read(prefsMarker(c.projectId)) || Object.keys(x.cookies).length) {
      more = await loadFile(base, 'more.js', 'ConsentMore');
    }
    await more?.ready(c, base, api, installation);
  };

  // Makes the page match the state: Google's signals and the vendors' (more.js, which also removes the cookies of
  // denied purposes), tags and frames, GPP.
  function apply() {
    const c = consent.config!;
    // The updates first: a tag released below must already see the granted signals.
    gcmApply(c.experience.googleConsentMode, consent.settled, has);
    more?.apply(c, consent.settled, has);
    scripts.run();
    const { choices, needsConsent } = consent.state();
    const out = consent.optedOut(choices);
    gpp?.then((g) => g?.publish(needsConsent, c, out, consent.gpc));
  }

  try {
    const lang = options.locale || document.documentElement.lang || navigator.languages?.[0] || navigator.language || '';
    await consent.load(lang);
    // GPP (usnat and the state's section) where the visitor may opt out: US opt-out jurisdictions, or opt-out
    // rules for an unknown location. gpp.js loads meanwhile; receipts wait for it (a failure: no gpp).
    const code = consent.config!.jurisdiction?.code;
    if (consent.mode == 'opt-out' && (!code || code.startsWith('US'))) {
      gpp = loadGpp(base);
      consent.gppFor = async (choices) => (await gpp)?.encode(consent.config!, consent.optedOut(choices), consent.gpc);
    } else gppNotApplicable();
    await bodyReady();
    // A privacy page's declaration table: its code loads only where the page has one (declaration.ts).
    if (document.querySelector('[data-consent-declaration]')) addScript(base, 'declaration.js#' + key);
    scripts = blocker(has);
    apply();
    // On IAB TCF pages stub.js loads tcf.js (`ConsentTcf`: a promise of it until it is there), which shows the
    // TCF banner where the project enabled TCF and GDPR applies, and the core's (mountUi) elsewhere.
    ui = await ((await (window as unknown as { ConsentTcf?: Promise<MountTcf> }).ConsentTcf) || (mountUi as MountTcf))(
      consent,
      () => {
        apply();
        const state = consent.state();
        for (const fn of [options.onChange, ...listeners]) call(fn, state);
        dispatchEvent(new CustomEvent('consent:change', { detail: state }));
      },
      onError,
      mountUi,
    );
    // An opt-out request by GPC is recorded once, in the background (the state already honours it).
    consent.recordGpc()?.catch(onError);
  } catch (err) {
    const e = (err as ConsentError)?.code ? (err as ConsentError) : sdkError('internal_error', String(err));
    onError(e);
    throw e;
  }
  const projectId = consent.config!.projectId;
  let destroyed = false;
  // identify() and forget() live in more.js (docs/subjects.md): the core's budget stays for every page. A token
  // signs in, null signs out; more.js that cannot load rejects here too (a TypeError), as any failure of the call.
  const subject = async (token: string | null) => {
    await (more ||= await loadFile(base, 'more.js', 'ConsentMore'))!.subject(consent, token);
    ui.refresh();
  };
  const client: ConsentClient = Object.freeze({
    hasConsent: has,
    getConsent: () => consent.state(),
    showPreferences: () => ui.showPreferences(),
    on(event: 'change', fn: (state: ConsentState) => void) {
      if (event == 'change' && typeof fn == 'function') listeners.add(fn);
      return () => void listeners.delete(fn);
    },
    preferencesUrl() {
      consent.markPreferences();
      return `${base}/preferences?key=${encodeURIComponent(key)}#i=${installation(projectId)}`;
    },
    identify: subject,
    forget: () => subject(null),
    decorate(url: string) {
      const u = new URL(url, location.href);
      u.hash += (u.hash && '&') + 'i=' + installation(projectId);
      return u.href;
    },
    destroy() {
      // Twice is harmless, and must not forget a newer client registered under the same key.
      if (destroyed) return;
      destroyed = true;
      consent.close();
      ui.destroy();
      scripts.stop();
      listeners.clear();
      clients.delete(key);
    },
  });
  call(options.onReady, client);
  dispatchEvent(new CustomEvent('consent:ready', { detail: consent.state() }));
  return client;
}

function checkKey(key: unknown): string {
  if (typeof key === 'string' && key.startsWith('pk_live_') && key.length > 8) return key;
  throw sdkError('invalid_options', 'publicKey must be a publishable key starting with "pk_live_"');
}

function checkBase(options: InitOptions): string {
  if ('baseUrl' in options) throw sdkError('invalid_options', 'unknown option "baseUrl": the option is named apiBaseUrl');
  const value = options.apiBaseUrl ?? location.origin;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  // An origin only: the SDK adds /api/sdk/... itself, so "https://host/api" would double it.
  if (!url || !/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search || url.hash || url.username) {
    throw sdkError('invalid_options', `apiBaseUrl must be an origin such as "https://consent.example.com", without a path; got "${value}"`);
  }
  return url.origin;
}

function bodyReady(): Promise<void> {
  return new Promise((resolve) => (document.body ? resolve() : document.addEventListener('DOMContentLoaded', resolve as () => void, { once: true })));
}

// A bug in the page's callback must not break the SDK, and must not go unnoticed either.
function call<T>(fn: ((arg: T) => void) | undefined, arg: T): void {
  try {
    if (typeof fn === 'function') fn(arg);
  } catch (err) {
    console.error('ConsentSDK: a callback threw', err);
  }
}
