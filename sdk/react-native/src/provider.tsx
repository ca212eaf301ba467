// <ConsentProvider>: one @consent/core per app, started when the provider mounts and destroyed when it unmounts.
// It holds the core's state in React state (every onChange re-renders the consumers of useConsent) and, unless the
// app draws its own UI (`headless`), shows the default banner while a decision is needed and the preferences
// sheet when asked to.
import { createContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { AppState, Platform, StyleSheet, View } from 'react-native';
import { createConsent, type ConsentAdapters, type ConsentCore, type ConsentErrorEvent, type CoreState, type KeyValueStorage, type SourceInfo } from '@consent/core';
import { ConsentBanner } from './banner';
import { ConsentPreferences } from './preferences';
import { REACT_NATIVE_VERSION } from './version';

export interface ConsentProviderProps {
  /** The project's publishable key (`pk_live_...`): the console's install screen shows it. */
  publicKey: string;
  /** Where the consent service is, e.g. `https://consent.example.com`. */
  apiBaseUrl: string;
  /** Where the decision, the config and the queued receipts are kept: AsyncStorage, or an MMKV wrapper with the same three methods. */
  storage: KeyValueStorage;
  /** The app's id and version, sent with each receipt; the platform is React Native's `Platform.OS` unless given. */
  source?: Partial<SourceInfo>;
  /** BCP 47 tag of the language to show (default: the device's). */
  locale?: string;
  /** Draw nothing: the app shows its own banner and preferences from useConsent(). */
  headless?: boolean;
  /** The core's other adapters (fetch, clock, network events); app-state events come from React Native's AppState. */
  adapters?: Omit<ConsentAdapters, 'storage'>;
  /** Every failure the core reports (network, revoked key, unreadable storage); the last one is also in useConsent().error. */
  onError?: (error: ConsentErrorEvent) => void;
  /** Space to keep clear at the bottom of the screen (a home indicator): react-native-safe-area-context's insets.bottom. */
  bottomInset?: number;
  children?: ReactNode;
}

export interface ConsentContextValue {
  /** Null until the provider has mounted (the first render). */
  core: ConsentCore | null;
  state: CoreState;
  error: ConsentErrorEvent | null;
  preferencesVisible: boolean;
  setPreferencesVisible(visible: boolean): void;
}

export const INITIAL_STATE: CoreState = {
  ready: false,
  choices: {},
  consentHash: null,
  versionNumber: null,
  needsConsent: false,
  promptReason: null,
  mode: 'opt-in',
  jurisdiction: null,
  locale: null,
  config: null,
  pendingReceipts: 0,
  signedIn: false,
};

export const ConsentContext = createContext<ConsentContextValue | null>(null);

/** The receipt's `platform`: what React Native runs on, `other` for the platforms the service does not name. */
export function platformOf(os: string): SourceInfo['platform'] {
  return os === 'ios' || os === 'android' || os === 'web' ? os : 'other';
}

/** React Native's AppState as the core's adapter: queued receipts go out again when the app comes to the foreground. */
export const appStateAdapter: NonNullable<ConsentAdapters['appState']> = {
  subscribe(fn) {
    const subscription = AppState.addEventListener('change', (status) => fn(status === 'active' || status === 'background' ? status : 'inactive'));
    return () => subscription.remove();
  },
};

export function ConsentProvider(props: ConsentProviderProps) {
  const { publicKey, apiBaseUrl, locale, headless = false, bottomInset = 0, children } = props;
  const [core, setCore] = useState<ConsentCore | null>(null);
  const [state, setState] = useState<CoreState>(INITIAL_STATE);
  const [error, setError] = useState<ConsentErrorEvent | null>(null);
  const [preferencesVisible, setPreferencesVisible] = useState(false);
  // Objects an app passes inline change identity on every render; the core is made again only when the
  // key, the service, the language or the app's identity change.
  const latest = useRef(props);
  latest.current = props;
  const { platform = platformOf(Platform.OS), appId, appVersion } = props.source ?? {};

  useEffect(() => {
    const { storage, adapters } = latest.current;
    const source: SourceInfo = { platform, ...(appId ? { appId } : {}), ...(appVersion ? { appVersion } : {}) };
    const next = createConsent({
      publicKey,
      apiBaseUrl,
      locale,
      source,
      sdk: 'react-native',
      sdkVersion: REACT_NATIVE_VERSION,
      adapters: { appState: appStateAdapter, ...adapters, storage },
    });
    let live = true;
    const offChange = next.onChange((s) => live && setState(s));
    const offError = next.onError((e) => {
      if (!live) return;
      setError(e);
      latest.current.onError?.(e);
    });
    setCore(next);
    // init() never rejects: a failure is an error event, and the state is what storage and the mode allow.
    void next.init().then((s) => live && setState(s));
    return () => {
      live = false;
      offChange();
      offError();
      next.destroy();
      setState(INITIAL_STATE);
    };
  }, [publicKey, apiBaseUrl, locale, platform, appId, appVersion]);

  const value = useMemo<ConsentContextValue>(() => ({ core, state, error, preferencesVisible, setPreferencesVisible }), [core, state, error, preferencesVisible]);
  const showBanner = !headless && state.ready && state.needsConsent && !!state.config;
  return (
    <ConsentContext.Provider value={value}>
      <View style={styles.fill}>
        {/* Before the app in the tree, so that screen readers and the keyboard reach it first; drawn above it by zIndex. */}
        {showBanner && <ConsentBanner bottomInset={bottomInset} />}
        {children}
        {!headless && <ConsentPreferences />}
      </View>
    </ConsentContext.Provider>
  );
}

const styles = StyleSheet.create({ fill: { flex: 1 } });
