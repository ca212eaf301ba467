// Google Consent Mode v2's signals, with no imports: the console bundles this file for its mapping form.
export const GOOGLE_CONSENT_SIGNALS = [
  'ad_storage',
  'ad_user_data',
  'ad_personalization',
  'analytics_storage',
  'functionality_storage',
  'personalization_storage',
  'security_storage',
] as const;
export type GoogleConsentSignal = (typeof GOOGLE_CONSENT_SIGNALS)[number];
