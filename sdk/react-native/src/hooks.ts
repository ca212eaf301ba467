// The hooks: everything the default UI uses, so an app in headless mode can draw its own from the same state.
import { useContext } from 'react';
import type { ConsentCore, ConsentErrorEvent, CoreState } from '@consent/core';
import { ConsentContext, type ConsentContextValue } from './provider';

export interface UseConsent extends CoreState {
  /** The banner should show: a decision is needed (state.needsConsent once ready). */
  shouldShowBanner: boolean;
  /** Synchronous; false until the core is ready and for purposes the person has not granted. */
  isAllowed(purposeKey: string): boolean;
  acceptAll(): Promise<void>;
  rejectAll(): Promise<void>;
  /** The person's choice per purpose key (required purposes are recorded as granted whatever is passed). */
  save(choices: Record<string, boolean>): Promise<void>;
  /** Opt-out mode's "Do Not Sell or Share" (recorded as `opt_out`). */
  optOut(): Promise<void>;
  /** Opt-out and notice modes: the person closed the notice without deciding; it stays away for this version. */
  dismiss(): Promise<void>;
  /** Forgets the decision and the installation: the banner shows again. */
  reset(): Promise<void>;
  /** Opens (and closes) the default preferences sheet; in headless mode only `preferencesVisible` changes. */
  showPreferences(): void;
  hidePreferences(): void;
  preferencesVisible: boolean;
  /** The last error the core reported, null before any. */
  error: ConsentErrorEvent | null;
  /** The core itself, for firebaseConsent(), inAppKeys(), writeInAppKeys(), webViewUrl(); null on the first render. */
  core: ConsentCore | null;
}

function useConsentContext(hook: string): ConsentContextValue {
  const context = useContext(ConsentContext);
  if (!context) throw new Error(`${hook}() must be called inside <ConsentProvider>`);
  return context;
}

const notReady = () => Promise.resolve();

/** The consent state and the actions on it; re-renders on every change. */
export function useConsent(): UseConsent {
  const { core, state, error, preferencesVisible, setPreferencesVisible } = useConsentContext('useConsent');
  const ready = !!core && state.ready;
  return {
    ...state,
    shouldShowBanner: ready && core.shouldShowBanner(),
    isAllowed: (purposeKey) => ready && core.isAllowed(purposeKey),
    // Before init() has answered there is no version to decide on: the actions do nothing.
    acceptAll: ready ? () => core.acceptAll() : notReady,
    rejectAll: ready ? () => core.rejectAll() : notReady,
    save: ready ? (choices) => core.save(choices) : notReady,
    optOut: ready ? () => core.optOut() : notReady,
    dismiss: ready ? () => core.dismiss() : notReady,
    reset: core ? () => core.reset() : notReady,
    showPreferences: () => setPreferencesVisible(true),
    hidePreferences: () => setPreferencesVisible(false),
    preferencesVisible,
    error,
    core,
  };
}

/** Whether the person's current decision grants the purpose; false before it is known. Re-renders when it changes. */
export function useIsAllowed(purposeKey: string): boolean {
  const { core, state } = useConsentContext('useIsAllowed');
  return !!core && state.ready && core.isAllowed(purposeKey);
}
