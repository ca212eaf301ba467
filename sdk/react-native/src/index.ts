// @consent/react-native: the consent service's decisions in a React Native app (extensions.md section 13).
// A provider around the app, hooks for the state and the actions, and a default banner and preferences sheet
// made only of React Native primitives; everything else (the decision, the config, the receipts' queue, the
// Firebase map and the IAB's in-app keys) is @consent/core's.
export { ConsentProvider, platformOf, appStateAdapter, type ConsentProviderProps } from './provider';
export { useConsent, useIsAllowed, type UseConsent } from './hooks';
export { ConsentBanner, type ConsentBannerProps } from './banner';
export { ConsentPreferences } from './preferences';
export { firebaseSettings, useFirebaseConsent, type FirebaseConsentSettings } from './firebase';
export { REACT_NATIVE_VERSION } from './version';
export type { ConsentConfig, ConsentCore, ConsentErrorEvent, CoreState, FirebaseConsent, InAppKeyWriter, KeyValueStorage, PromptReason, SourceInfo } from '@consent/core';
