// @consent/core: consent for apps without a DOM (React Native, Node, Electron, workers), extensions.md section 13.
// The decision rules are the browser SDK v2's own (sdk/src/v2/consent.ts: allowed, needsBanner, applies), the
// config check its api.ts's, Google's signals its gcm.ts's; what is new here is what an app needs: state kept in
// the app's storage and answered from at launch, and receipts that survive the network (queue.ts).
// Nothing here throws into the app: failures go to onError (init never rejects).
import { allowed, applies, needsBanner, optOutOf, type Stored } from '../../src/v2/consent';
import { checkConfig, type SdkConfig } from '../../src/v2/api';
import { states } from '../../src/v2/gcm';
import { gdprApplies } from '../../src/v2/gdpr';
import { createHttp, type HttpError } from './http';
import { ALL_KEYS } from './keys';
import type * as Iab from './tcf';
import type {
  ConsentAdapters,
  ConsentConfig,
  ConsentCore,
  ConsentErrorEvent,
  CoreOptions,
  CoreState,
  FirebaseConsent,
  InAppKeys,
  InAppKeyWriter,
  PromptReason,
} from './public';
import { CORE_VERSION } from './public';
import { createQueue, type Receipt } from './queue';
import { createStore, memoryStorage } from './store';
import { randomId, uuid } from './random';
import { signedIn, subjects } from './subjects';
import { webViewScript, webViewUrl } from './webview';

export { CORE_VERSION } from './public';
export type * from './public';

/** A decision as the core keeps it: the browser SDK's, with the server's time once acknowledged and TCF's strings. */
type CoreDecision = Stored & { createdAt?: string; receipt?: string; tcf?: { tcString: string; addtlConsent: string }; gpp?: string };

const DAY = 86_400_000;
const ID = /^[A-Za-z0-9_-]{8,64}$/;
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v == 'object' && !Array.isArray(v);
const validDecision = (d: unknown) => isObject(d) && typeof d.consentHash == 'string' && isObject(d.choices) && typeof d.decidedAt == 'string';
const validConfig = (c: unknown) => {
  try {
    return isObject(c) && !!checkConfig(c.config);
  } catch {
    return false;
  }
};

export function createConsent(options: CoreOptions): ConsentCore {
  const { publicKey, apiBaseUrl } = options;
  const a: ConsentAdapters = options.adapters || {};
  const now = a.now || Date.now;
  const fetchFn = a.fetch || ((...args: Parameters<typeof fetch>) => globalThis.fetch(...args));
  const deviceLocale = () => options.locale || a.locale?.() || Intl.DateTimeFormat().resolvedOptions().locale || '';
  const base = String(apiBaseUrl || '').replace(/\/+$/, '');
  const http = createHttp(base, publicKey, fetchFn);

  const errorListeners = new Set<(e: ConsentErrorEvent) => void>();
  const changeListeners = new Set<(s: CoreState) => void>();
  const report = (code: string, message: string, status = 0) => {
    const e: ConsentErrorEvent = { code, status, message };
    for (const fn of errorListeners) safely(fn, e);
  };
  const reportError = (err: unknown) => {
    const e = err as HttpError;
    report(e?.code || 'internal_error', String(e?.message || err), e?.status || 0);
  };
  const store = createStore(
    a.storage || memoryStorage(),
    publicKey,
    (slot, err) => report('storage_unreadable', `stored ${slot} could not be read: ${(err as Error)?.message || err}`),
    (slot, err) => report('storage_unwritable', `${slot} could not be stored: ${(err as Error)?.message || err}`),
  );

  let config: SdkConfig | undefined;
  let etag: string | undefined;
  let stored: CoreDecision | undefined;
  /** The stored decision when it is in force for the current config (see recompute). */
  let inForce: CoreDecision | undefined;
  let reason: PromptReason | null = null;
  let dismissed = false;
  let dismissedMarker: string | undefined;
  let installation = '';
  let ready = false;
  let destroyed = false;
  let started: Promise<CoreState> | undefined;
  const unsubscribe: (() => void)[] = [];

  const sdkVersion = options.sdkVersion || CORE_VERSION;
  const source = () => ({ sdk: options.sdk || 'core', sdkVersion, ...(options.source || { platform: 'other' as const }) });
  const queue = createQueue({
    store,
    now,
    send: (r) => http.consent(r.body, r.key),
    acknowledged(r, createdAt) {
      // The server's time of the decision in force: its age by the server's clock, for expiry (age).
      if (stored && stored.receipt == r.key) {
        stored = { ...stored, createdAt };
        void store.write('decision', stored);
      }
    },
    report,
    changed: () => emit(),
  });

  /** Loads the IAB module (TC and GPP strings, in-app keys) only for projects that need it: outside the core's size budget. */
  let iab: Promise<typeof Iab> | undefined;
  const loadIab = () => (iab ||= import('./tcf'));
  const tcfApplies = () => !!config?.experience.tcf?.enabled && gdprApplies(config.jurisdiction?.code);
  const gppApplies = () => !!config && config.mode == 'opt-out' && (!config.jurisdiction?.code || config.jurisdiction.code.startsWith('US'));

  function recompute() {
    inForce = undefined;
    reason = null;
    if (!config) return;
    const { version, experience, mode } = config;
    const days = experience.reconsentAfterDays;
    if (!stored) reason = 'initial';
    else if (stored.consentHash !== version.consentHash) reason = 'update';
    else if (days > 0 && age(stored) > days * DAY) reason = 'expired';
    else if (!applies(stored.mode, mode)) reason = 'initial';
    else inForce = stored;
    dismissed = dismissedMarker == mode + ' ' + version.consentHash;
  }

  /**
   * How old a decision is: the younger of its age by the device's clock at both ends and its age since the server
   * recorded it. A device clock set wrong by a constant (or moved back) never makes a decision expire early.
   */
  function age(d: CoreDecision): number {
    const t = now();
    const local = t - Date.parse(d.decidedAt);
    const server = d.createdAt ? t - Date.parse(d.createdAt) : Infinity;
    return Math.min(local, server);
  }

  const needsConsent = () => !!config && needsBanner(config.mode, inForce, dismissed);
  const has = (key: string) => allowed(config?.config.purposes.find((p) => p.key === key), config?.mode || 'opt-in', inForce, () => false);

  /** Signed in on this installation (identify() without forget() since): the person's decision follows them. */
  let signedInNow = false;

  function getState(): CoreState {
    const choices: Record<string, boolean> = {};
    for (const p of config?.config.purposes || []) choices[p.key] = has(p.key);
    return {
      ready,
      choices,
      consentHash: config?.version.consentHash ?? null,
      versionNumber: config?.version.number ?? null,
      needsConsent: needsConsent(),
      promptReason: needsConsent() ? reason || 'initial' : null,
      mode: config?.mode || 'opt-in',
      jurisdiction: config?.jurisdiction?.code || null,
      locale: config?.locale ?? null,
      // The same shapes, declared twice (public.ts may not import): the compiler checks they agree.
      config: (config ?? null) satisfies ConsentConfig | null,
      pendingReceipts: queue.size(),
      signedIn: signedInNow,
    };
  }

  let lastEmitted = '';
  function emit() {
    if (destroyed) return;
    const state = getState();
    // Listeners hear changes, not repeats (a 304, a receipt that changed nothing they see).
    const text = JSON.stringify({ ...state, config: state.config?.version.contentHash, etag });
    if (text == lastEmitted) return;
    lastEmitted = text;
    for (const fn of changeListeners) safely(fn, state);
  }

  /** The config from the service: kept with its ETag, so a launch with nothing new costs a 304. */
  async function refresh(): Promise<void> {
    const locale = deviceLocale();
    try {
      const res = await http.config(locale, config && etag ? etag : undefined);
      if (res) {
        config = res.config;
        etag = res.etag;
        await store.write('config', { config, etag });
      }
    } catch (err) {
      // A revoked key, a 5xx, no network: the last config and decision stay in force.
      reportError(err);
      return;
    }
    await adoptElsewhere();
    recompute();
    emit();
    // The IAB chunk, where the project needs it, loads now rather than in the middle of the person's decision.
    if (config?.experience.tcf?.enabled || gppApplies()) loadIab().catch(reportError);
  }

  /**
   * A WebView page was handed this installation (webViewUrl, webViewScript), so a decision may have been made there:
   * the service's latest decision for the installation is asked for once, and adopted when it is for the current
   * version and newer than the one here.
   */
  async function adoptElsewhere(): Promise<void> {
    // Signed in (subjects.ts), the person may have decided on another device or site: asked on every refresh.
    if (!config || !((await store.read<boolean>('elsewhere', (v) => v === true)) || (await signedIn(store)))) return;
    try {
      const remote = await http.decision(installation);
      await store.write('elsewhere', undefined);
      if (remote?.consentHash === config.version.consentHash && !(stored && stored.consentHash == remote.consentHash && Date.parse(stored.decidedAt) >= Date.parse(remote.createdAt))) {
        stored = { consentHash: remote.consentHash, versionNumber: config.version.number, choices: remote.choices, decidedAt: remote.createdAt, createdAt: remote.createdAt, mode: config.mode };
        await store.write('decision', stored);
      }
    } catch (err) {
      reportError(err);
    }
  }

  /** The browser SDK's rules for its options: a publishable key, and an origin without a path (the core adds /api/sdk/...). */
  function badOptions(): string | undefined {
    if (typeof publicKey != 'string' || !/^pk_live_.+/.test(publicKey)) return 'publicKey must be a publishable key starting with "pk_live_"';
    if (!/^https?:\/\/[^/?#@\s]+$/.test(base)) return `apiBaseUrl must be an origin such as "https://consent.example.com", without a path; got "${apiBaseUrl}"`;
  }

  async function start(): Promise<CoreState> {
    const bad = badOptions();
    if (bad) {
      // Nothing is asked of the network with options that cannot work; the app hears why at once.
      report('invalid_options', bad);
      ready = true;
      return getState();
    }
    const [c, d, i, dm] = await Promise.all([
      store.read<{ config: SdkConfig; etag?: string }>('config', validConfig),
      store.read<CoreDecision>('decision', validDecision),
      store.read<string>('installation', (v) => typeof v == 'string' && ID.test(v)),
      store.read<string>('dismissed', (v) => typeof v == 'string'),
      queue.load(),
    ]);
    if (c) {
      config = c.config;
      etag = c.etag;
    }
    stored = d;
    dismissedMarker = dm;
    signedInNow = await signedIn(store);
    installation = i || randomId();
    if (!i) void store.write('installation', installation);
    recompute();
    ready = true;
    // Receipts go again when the app comes back to the foreground and when the network returns.
    if (a.appState) unsubscribe.push(a.appState.subscribe((s) => s == 'active' && !destroyed && (void queue.flush(true), void refresh())));
    if (a.network) unsubscribe.push(a.network.subscribe((online) => online && !destroyed && void queue.flush(true)));
    // A second launch answers from storage at once; the first waits for the config (nothing to show without it).
    if (config) void refresh();
    else await refresh();
    void queue.flush(true);
    lastEmitted = '';
    emit();
    return getState();
  }

  /** Records a decision: stored with its receipt first, then sent (queue.ts); resolves once both are stored. */
  async function decide(grant: (key: string, required: boolean) => boolean, action: 'accept_all' | 'reject_all' | 'custom' | 'opt_out') {
    await core.init();
    if (!config) {
      report('no_config', 'no configuration yet: nothing to decide on');
      throw Object.assign(new Error('ConsentCore: no configuration yet'), { code: 'no_config', status: 0 });
    }
    const c = config;
    const { version, locale, jurisdiction, mode } = c;
    const choices: Record<string, boolean> = {};
    for (const p of c.config.purposes) choices[p.key] = p.required || grant(p.key, p.required) === true;
    let strings: { tcf?: CoreDecision['tcf']; gpp?: string } = {};
    if (tcfApplies() || gppApplies()) {
      try {
        const m = await loadIab();
        strings = await m.stringsFor(c, choices, action, () => vendorList(c), tcfApplies());
      } catch (err) {
        // The decision stands without the IAB strings (a receipt without them is valid); the app hears why.
        reportError(err);
      }
    }
    const decidedAt = new Date(now()).toISOString();
    const key = uuid(Date.parse(decidedAt));
    const receipt: Receipt = {
      key,
      body: {
        versionId: version.id,
        consentHash: version.consentHash,
        choices,
        installationId: installation,
        timestamp: decidedAt,
        sdkVersion,
        locale,
        gpc: false,
        ...(jurisdiction?.code && { jurisdiction: jurisdiction.code }),
        action,
        ...(strings.gpp && { gpp: strings.gpp }),
        ...(strings.tcf && { tcf: strings.tcf }),
        source: source(),
      },
      attempts: 0,
      next: 0,
    };
    stored = { consentHash: version.consentHash, versionNumber: version.number, choices, decidedAt, gpc: false, mode, action, receipt: key, ...strings };
    // Persisted before it is sent: a process killed now sends it at the next launch.
    await Promise.all([store.write('decision', stored), queue.add(receipt)]);
    recompute();
    emit();
    void queue.flush(false);
  }

  /** The vendor list of the live version, kept for offline decisions (TCF projects only). */
  async function vendorList(c: SdkConfig): Promise<unknown> {
    try {
      const list = await http.vendorList(c.locale);
      void store.write('vendorList', { version: c.version.id, list });
      return list;
    } catch (err) {
      const kept = await store.read<{ version: string; list: unknown }>('vendorList', isObject);
      if (kept?.version == c.version.id) return kept.list;
      throw err;
    }
  }

  const subject = subjects({ base, publicKey, fetch: fetchFn, store, installation: () => installation, refresh, reportError });
  const core: ConsentCore = {
    init() {
      return (started ||= start().catch((err) => {
        // Only a bug gets here; the app still gets a state (nothing granted but what the mode grants).
        reportError(err);
        ready = true;
        return getState();
      }));
    },
    isAllowed: has,
    shouldShowBanner: needsConsent,
    get promptReason() {
      return getState().promptReason;
    },
    getState,
    acceptAll: () => decide(() => true, 'accept_all'),
    rejectAll: () => decide(() => false, 'reject_all'),
    save: (choices) => decide((k) => choices[k] === true, 'custom'),
    // "Do Not Sell or Share": the browser SDK's rule (what it denies: the experience's opt-out purposes, or every
    // optional one), recorded as `opt_out` so the operator's opt-out counts include apps.
    optOut: () => decide((k) => !optOutOf(config!, config!.config.purposes.find((p) => p.key == k)!) && has(k), 'opt_out'),
    async dismiss() {
      await core.init();
      if (!config) return;
      dismissedMarker = config.mode + ' ' + config.version.consentHash;
      await store.write('dismissed', dismissedMarker);
      recompute();
      emit();
    },
    onChange(fn) {
      changeListeners.add(fn);
      return () => void changeListeners.delete(fn);
    },
    onError(fn) {
      errorListeners.add(fn);
      return () => void errorListeners.delete(fn);
    },
    async reset(writer?: InAppKeyWriter) {
      await core.init();
      // Receipts already queued stay: they are the record of decisions made, filed under the old installation.
      stored = undefined;
      dismissedMarker = undefined;
      installation = randomId();
      await Promise.all([store.write('decision', undefined), store.write('dismissed', undefined), store.write('elsewhere', undefined), store.write('installation', installation)]);
      recompute();
      emit();
      if (writer) await core.writeInAppKeys(writer);
    },
    flush: () => queue.flush(true),
    firebaseConsent(): FirebaseConsent {
      // Google's Consent Mode signals from the experience, as the browser SDK sends them (gcm.ts): granted when every
      // purpose mapped to the signal is allowed; nothing granted before a decision in opt-in.
      const settled = !!inForce || (config?.mode || 'opt-in') != 'opt-in';
      const s = states((k) => settled && has(k), config?.experience.googleConsentMode.signals);
      const pick = (k: string) => (s[k] == 'granted' ? 'granted' : 'denied');
      return { analytics_storage: pick('analytics_storage'), ad_storage: pick('ad_storage'), ad_user_data: pick('ad_user_data'), ad_personalization: pick('ad_personalization') };
    },
    async inAppKeys(): Promise<InAppKeys> {
      await core.init();
      // Without TCF or GPP there is nothing to write, only keys to remove: no need for the IAB chunk.
      if (!config?.experience.tcf?.enabled && !gppApplies()) return { set: {}, remove: [...ALL_KEYS] };
      const m = await loadIab();
      return m.inAppKeys(config, inForce?.tcf, getState().choices, tcfApplies(), gppApplies());
    },
    async writeInAppKeys(writer) {
      const { set, remove } = await core.inAppKeys();
      for (const k of remove) await writer.remove(k);
      for (const [k, v] of Object.entries(set)) await (typeof v == 'number' ? writer.setInt(k, v) : writer.setString(k, v));
    },
    // Signed in or out: the state says so (the default UI then says the choice follows the person: docs/subjects.md).
    async identify(token) {
      const done = await subject.identify(token);
      signedInNow = await signedIn(store);
      emit();
      return done;
    },
    async forget() {
      const done = await subject.forget();
      signedInNow = await signedIn(store);
      emit();
      return done;
    },
    webViewUrl(url) {
      void store.write('elsewhere', true);
      return webViewUrl(url, installation);
    },
    webViewScript() {
      void store.write('elsewhere', true);
      return webViewScript(installation, config?.projectId, inForce);
    },
    destroy() {
      destroyed = true;
      for (const fn of unsubscribe.splice(0)) safely(fn, undefined);
      queue.stop();
      changeListeners.clear();
      errorListeners.clear();
    },
  };
  return core;
}

// A bug in the app's callback must not break the core, and must not go unnoticed either.
function safely<T>(fn: (arg: T) => void, arg: T): void {
  try {
    fn(arg);
  } catch (err) {
    console.error('ConsentCore: a callback threw', err);
  }
}
