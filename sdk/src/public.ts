// The public surface of the SDK (service-api.md 4.10). dist/index.d.ts is emitted from this file and
// index.ts only, so every type a site can see lives here (rollup.config.mjs checks it).

/** Sent as `sdkVersion` with every receipt. Keep in step with sdk/package.json (a test checks it). */
export const SDK_VERSION = '1.0.0';

export interface InitOptions {
  /** Publishable key of the project: `pk_live_...`. Sent as a Bearer token, never in a URL. */
  publicKey: string;
  /** Origin of the consent service, e.g. `https://consent.example.com`; no path. Defaults to the page's origin. */
  apiBaseUrl?: string;
  /** Called once the configuration is loaded and the banner (if needed) is shown. */
  onReady?: (client: ConsentClient) => void;
  /** Called for every failure: loading the configuration, or recording a visitor's choice. */
  onError?: (error: ConsentError) => void;
}

export interface ConsentError extends Error {
  /**
   * The SDK code from the API's `{error, code}` body (`invalid_key`, `revoked_key`, `no_published_version`,
   * `origin_not_allowed`, `rate_limited`, `invalid_body`, ...), or one of the SDK's own:
   * `network_error` (no response), `http_error` (a response without a code), `invalid_response`
   * (a 2xx whose body is not what the contract says), `invalid_options` (bad `init` options).
   */
  code: string;
  /** HTTP status of the response; 0 when there was none. */
  status: number;
}

export interface ConsentState {
  /** Every purpose key of the current version mapped to what `hasConsent` answers for it. */
  choices: Record<string, boolean>;
  /** The current published version's consentHash; null once destroyed. */
  consentHash: string | null;
  versionNumber: number | null;
  /** True while the visitor has no decision for the current consentHash (the banner is showing). */
  needsConsent: boolean;
}

export interface ConsentClient {
  /** True only with a decision for the current consentHash that grants this purpose. */
  hasConsent(purposeKey: string): boolean;
  getConsent(): ConsentState;
  /** Opens the preferences dialog. */
  showPreferences(): void;
  /** Removes the UI; a later `init` with the same key starts a fresh client. */
  destroy(): void;
}
