// The vendors whose own consent APIs the SDK drives (extensions.md section 12, docs/integrations.md), and each
// one's signals. No imports: the console bundles this file for its integrations form.

/** Each integration type with its signals, in the vendor's own spelling (Clarity's `ad_Storage` included). */
export const INTEGRATION_SIGNALS = {
  'microsoft-uet': ['ad_storage'],
  'microsoft-clarity': ['ad_Storage', 'analytics_Storage'],
  'meta-pixel': ['consent'],
  'tiktok-pixel': ['consent'],
  shopify: ['analytics', 'marketing', 'preferences', 'sale_of_data'],
  wordpress: ['functional', 'preferences', 'statistics', 'statistics-anonymous', 'marketing'],
} as const;

export type IntegrationType = keyof typeof INTEGRATION_SIGNALS;
export const INTEGRATION_TYPES = Object.keys(INTEGRATION_SIGNALS) as IntegrationType[];

/**
 * Signals granted whatever the decision, as Consent Mode's security_storage: the WP Consent API defines
 * `functional` as strictly necessary storage, which needs no consent.
 */
export const ALWAYS_GRANTED_SIGNALS: readonly string[] = ['functional'];

/** What each type is called in the console. */
export const INTEGRATION_NAMES: Record<IntegrationType, string> = {
  'microsoft-uet': 'Microsoft Advertising (UET)',
  'microsoft-clarity': 'Microsoft Clarity',
  'meta-pixel': 'Meta Pixel',
  'tiktok-pixel': 'TikTok Pixel',
  shopify: "Shopify's Customer Privacy API",
  wordpress: 'WordPress Consent API',
};
