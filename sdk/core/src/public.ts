// The public surface of @consent/core (extensions.md section 13; the agreed interface in apps-core-interface.md).
// dist/index.d.ts is emitted from this file and index.ts only, so every type an app can see lives here.

/** Sent as the receipt's `source.sdkVersion`. Keep in step with sdk/core/package.json (a test checks it). */
export const CORE_VERSION = '0.1.0';

/** A key-value store the core keeps its state in: AsyncStorage, an MMKV wrapper, a Map in Node. */
export interface KeyValueStorage {
  getItem(key: string): Promise<string | null> | string | null;
  setItem(key: string, value: string): Promise<void> | void;
  removeItem(key: string): Promise<void> | void;
}

/** What the app's platform provides. Every adapter is optional; the defaults are documented in docs/apps.md. */
export interface ConsentAdapters {
  /** Default: in memory, so nothing survives a restart (every launch is a first launch). */
  storage?: KeyValueStorage;
  /** Default: globalThis.fetch. */
  fetch?: typeof fetch;
  /** Default: Date.now. */
  now?: () => number;
  /** Default: Intl.DateTimeFormat().resolvedOptions().locale. */
  locale?: () => string | undefined;
  /** The app came to the foreground ('active'): queued receipts are sent again. Default: none. */
  appState?: { subscribe(fn: (state: 'active' | 'background' | 'inactive') => void): () => void };
  /** The network came back (true): queued receipts are sent again. Default: none. */
  network?: { subscribe(fn: (online: boolean) => void): () => void };
}

/** Sent as the receipt's `source` (with `sdk` and `sdkVersion`, filled in by the package). */
export interface SourceInfo {
  platform: 'web' | 'ios' | 'android' | 'other';
  appId?: string;
  appVersion?: string;
}

export interface CoreOptions {
  /** Publishable key of the project: `pk_live_...`, sent as a Bearer token. */
  publicKey: string;
  /** Origin of the consent service, e.g. `https://consent.example.com`; required (an app has no page origin). */
  apiBaseUrl: string;
  adapters?: ConsentAdapters;
  source?: SourceInfo;
  /** Set by @consent/react-native; default 'core'. */
  sdk?: 'core' | 'react-native';
  /** Set by @consent/react-native: its own version, sent as the receipt's sdkVersion; default CORE_VERSION. */
  sdkVersion?: string;
  /** BCP 47 tag of the language to show; default: adapters.locale(). */
  locale?: string;
}

/** Why the banner must be shown: no decision yet, a new version changed what was decided on, or it expired. */
export type PromptReason = 'initial' | 'update' | 'expired';

/** See the browser SDK's Mode: how the banner and purposes behave in the person's jurisdiction. */
export type Mode = 'opt-in' | 'opt-out' | 'notice' | 'none';

// Purpose, Category, Notice and ConsentConfig are the service's answer as sdk/src/api.ts and sdk/src/v2/api.ts
// type it, repeated because public types live in this file (the build checks); index.ts has the compiler check
// that both agree.
export interface Purpose {
  id: string;
  key: string;
  name: string;
  description: string;
  required: boolean;
  categoryId: string;
  sortOrder: number;
}

export interface Category {
  id: string;
  name: string;
  sortOrder: number;
}

export interface Notice {
  title: string;
  description: string;
  acceptLabel: string;
  rejectLabel: string;
  manageLabel: string;
  companyName: string;
  logoUrl: string;
  primaryColor: string;
}

/** The `/api/sdk/v2/config` answer (docs/sdk-api.md), as stored by the core: texts, purposes, experience. */
export interface ConsentConfig {
  projectId: string;
  version: { id: string; number: number; publishedAt: string; contentHash: string; consentHash: string };
  locale: string;
  locales?: string[];
  dir: 'ltr' | 'rtl';
  config: { purposes: Purpose[]; categories: Category[]; notice: Notice };
  /** The built-in strings of the locale (acceptAll, rejectAll, manage, ...). */
  ui: Record<string, string>;
  experience: {
    privacyPolicyUrl: string;
    /** 0: a decision never expires. */
    reconsentAfterDays: number;
    gpc: { optOutPurposes: string[] };
    googleConsentMode: { enabled: boolean; signals: Record<string, string[]> };
    /** Purpose key → cookie names (the browser removes denied ones; an app may do the same with its own). */
    cookies: Record<string, string[]>;
    theme: { colorScheme: 'light' | 'dark' | 'auto'; borderRadius?: number };
    /** IAB TCF settings when the project uses TCF (docs/tcf.md); the MSPA settings; browser-only settings. */
    tcf?: { enabled: boolean; cmpId: number; cmpVersion: number; publisherCountryCode: string; purposeMap: Record<string, number[]> };
    gpp?: unknown;
    integrations?: unknown;
    cookieDomain?: string;
  };
  jurisdiction?: { code: string; rule: string | null } | null;
  mode: Mode;
}

export interface CoreState {
  /** init() finished (from storage or network). */
  ready: boolean;
  /** What isAllowed answers per purpose key. */
  choices: Record<string, boolean>;
  consentHash: string | null;
  versionNumber: number | null;
  needsConsent: boolean;
  promptReason: PromptReason | null;
  mode: Mode;
  jurisdiction: string | null;
  locale: string | null;
  /** The stored /api/sdk/v2/config answer; null before the first one arrived. */
  config: ConsentConfig | null;
  /** Receipts queued and not yet acknowledged by the service. */
  pendingReceipts: number;
  /**
   * Signed in on this installation (`identify()` without `forget()` since): the person's decision follows them across
   * their devices, and the UI says so (the config's `ui.signedInScope`, docs/subjects.md).
   */
  signedIn: boolean;
}

/** Every failure is reported here, never thrown: `code` as the browser SDK's ConsentError, `status` 0 without a response. */
export interface ConsentErrorEvent {
  code: string;
  status: number;
  message: string;
}

export type ConsentSignal = 'granted' | 'denied';
export interface FirebaseConsent {
  analytics_storage: ConsentSignal;
  ad_storage: ConsentSignal;
  ad_user_data: ConsentSignal;
  ad_personalization: ConsentSignal;
}

/** Writes the IAB in-app keys to the platform's store (NSUserDefaults / default SharedPreferences). */
export interface InAppKeyWriter {
  setInt(key: string, value: number): unknown;
  setString(key: string, value: string): unknown;
  remove(key: string): unknown;
}

export interface InAppKeys {
  /** Key → value with the IAB's type: numbers are integers, strings are strings. */
  set: Record<string, string | number>;
  /** Keys to remove (every key the core may write that has no value now). */
  remove: string[];
}

export interface ConsentCore {
  init(): Promise<CoreState>;
  /** Synchronous after init(). */
  isAllowed(purposeKey: string): boolean;
  shouldShowBanner(): boolean;
  readonly promptReason: PromptReason | null;
  getState(): CoreState;
  acceptAll(): Promise<void>;
  rejectAll(): Promise<void>;
  save(choices: Record<string, boolean>): Promise<void>;
  /**
   * Opt-out mode's "Do Not Sell or Share": denies the experience's opt-out purposes (every optional purpose when it
   * names none), keeps the rest as they are, and records the receipt with the action `opt_out`, as the browser SDK does.
   */
  optOut(): Promise<void>;
  /** Opt-out and notice modes: the person closed the notice without deciding; it stays away for this mode and version. */
  dismiss(): Promise<void>;
  onChange(fn: (state: CoreState) => void): () => void;
  onError(fn: (error: ConsentErrorEvent) => void): () => void;
  /**
   * Forgets the decision and the installation and returns to the initial prompt. Given a writer, also removes the
   * IAB in-app keys the core wrote (every key inAppKeys() names in `remove` after a reset).
   */
  reset(writer?: InAppKeyWriter): Promise<void>;
  /** Sends queued receipts now. */
  flush(): Promise<void>;
  firebaseConsent(): FirebaseConsent;
  inAppKeys(): Promise<InAppKeys>;
  writeInAppKeys(writer: InAppKeyWriter): Promise<void>;
  /**
   * Signs this installation in as the person a subject token names (an HS256 JWT the app's backend signs with the
   * project's subject secret: docs/subjects.md). The person's newest decision, made on any of their devices or sites,
   * is adopted without a banner or a receipt while it is for the current version; later refreshes keep asking for it.
   * Resolves false with an error event (`invalid_subject_token`, `network_error`, ...) when refused: nothing changed.
   */
  identify(token: string): Promise<boolean>;
  /** Signs this installation out (call it on sign-out): its decision is its own again. False with an error event when the service could not be told. */
  forget(): Promise<boolean>;
  webViewUrl(url: string): string;
  webViewScript(): string;
  destroy(): void;
}
