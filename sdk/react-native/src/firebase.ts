// Google Analytics for Firebase in the app follows the decision: the core's firebaseConsent() map, in the form
// React Native Firebase's setConsent() takes (true for granted: `analytics().setConsent({ analytics_storage: true, ... })`).
import { useMemo } from 'react';
import type { FirebaseConsent } from '@consent/core';
import { useConsent } from './hooks';

/** What `@react-native-firebase/analytics`' setConsent() takes. */
export type FirebaseConsentSettings = Record<keyof FirebaseConsent, boolean>;

const SIGNALS: (keyof FirebaseConsent)[] = ['analytics_storage', 'ad_storage', 'ad_user_data', 'ad_personalization'];

/** The core's map (`granted` / `denied`) as React Native Firebase's booleans. */
export function firebaseSettings(consent: FirebaseConsent): FirebaseConsentSettings {
  return Object.fromEntries(SIGNALS.map((signal) => [signal, consent[signal] === 'granted'])) as FirebaseConsentSettings;
}

/**
 * The settings for React Native Firebase's setConsent(), the same object until a signal changes (so an effect
 * that depends on it runs once per change); null until the core has answered.
 */
export function useFirebaseConsent(): FirebaseConsentSettings | null {
  const { core, ready } = useConsent();
  const settings = core && ready ? firebaseSettings(core.firebaseConsent()) : null;
  const key = settings ? SIGNALS.map((s) => (settings[s] ? 1 : 0)).join('') : '';
  // eslint-disable-next-line react-hooks/exhaustive-deps
  return useMemo(() => settings, [key]);
}
