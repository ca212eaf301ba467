// The service's own catalogue entries, on top of the Open Cookie Database (src/scanner/catalogue.ts):
// what this service's SDK itself stores, and request hosts whose purpose is well known (the Open Cookie
// Database lists cookies, not hosts; its cookie domains are used for hosts only where all its entries agree).
import type { CatalogueEntry, HostEntry } from '../catalogue.js';

export const SERVICE_VENDOR = 'This consent service';

/** Names are exact or end in `*` (a prefix), as in the experience's `cookies` lists. */
export const SERVICE_ENTRIES: CatalogueEntry[] = [
  { pattern: 'consent:*', category: 'necessary', vendor: SERVICE_VENDOR, description: "The consent SDK's stored decision, installation id and notice state (localStorage)", source: 'service' },
];

/** Hosts and their parent domains (`doubleclick.net` covers `stats.g.doubleclick.net`). */
export const SERVICE_HOSTS: HostEntry[] = [
  { domain: 'google-analytics.com', category: 'analytics', vendor: 'Google', description: 'Google Analytics collection', source: 'service' },
  { domain: 'analytics.google.com', category: 'analytics', vendor: 'Google', description: 'Google Analytics collection', source: 'service' },
  { domain: 'googletagmanager.com', category: 'analytics', vendor: 'Google', description: 'Google Tag Manager and gtag.js (loads analytics and ads tags)', source: 'service' },
  { domain: 'doubleclick.net', category: 'marketing', vendor: 'Google', description: 'Google advertising (DoubleClick)', source: 'service' },
  { domain: 'googleadservices.com', category: 'marketing', vendor: 'Google', description: 'Google Ads conversion tracking', source: 'service' },
  { domain: 'googlesyndication.com', category: 'marketing', vendor: 'Google', description: 'Google AdSense', source: 'service' },
  { domain: 'connect.facebook.net', category: 'marketing', vendor: 'Meta', description: 'Meta Pixel script', source: 'service' },
  { domain: 'facebook.com', category: 'marketing', vendor: 'Meta', description: 'Meta Pixel and social plugins', source: 'service' },
  { domain: 'px.ads.linkedin.com', category: 'marketing', vendor: 'LinkedIn', description: 'LinkedIn Insight Tag', source: 'service' },
  { domain: 'snap.licdn.com', category: 'marketing', vendor: 'LinkedIn', description: 'LinkedIn Insight Tag script', source: 'service' },
  { domain: 'bat.bing.com', category: 'marketing', vendor: 'Microsoft', description: 'Microsoft Advertising UET tag', source: 'service' },
  { domain: 'clarity.ms', category: 'analytics', vendor: 'Microsoft', description: 'Microsoft Clarity session analytics', source: 'service' },
  { domain: 'hotjar.com', category: 'analytics', vendor: 'Hotjar', description: 'Hotjar session analytics', source: 'service' },
  { domain: 'analytics.tiktok.com', category: 'marketing', vendor: 'TikTok', description: 'TikTok Pixel', source: 'service' },
  { domain: 'ads-twitter.com', category: 'marketing', vendor: 'X', description: 'X (Twitter) conversion tracking', source: 'service' },
];
