// The public surface of SDK v2 (contract 4.10 plus extensions.md section 4). dist/v2/index.d.ts is emitted
// from this file and index.ts only, so every type a site can see lives here (rollup.config.mjs checks it).

/** Sent as `sdkVersion` with every receipt. Keep in step with sdk/package.json (a test checks it). */
export const SDK_VERSION = '2.0.0';

export interface InitOptions {
  /** Publishable key of the project: `pk_live_...`. Sent as a Bearer token, never in a URL. */
  publicKey: string;
  /** Origin of the consent service, e.g. `https://consent.example.com`; no path. Defaults to the page's origin. */
  apiBaseUrl?: string;
  /**
   * BCP 47 tag of the language to show (`de`, `pt-BR`). Default: the page's `<html lang>`, then the browser's
   * `navigator.languages`. The service falls back to the language, then to the project's default locale.
   */
  locale?: string;
  /**
   * The page uses Google Consent Mode: `init` writes its default (everything denied but security_storage,
   * `wait_for_update: 500`) at once, before it returns, also on a visitor's first page. The classic script tag
   * says the same earlier, at evaluation, with `data-google-consent-mode`. Without either, the default comes
   * from the last page's configuration (returning visitors) or when this one arrives.
   */
  googleConsentMode?: boolean;
  /**
   * The vendors' consent APIs the page has (`microsoft-uet`, `microsoft-clarity`, `meta-pixel`, `tiktok-pixel`,
   * `shopify`, `wordpress`): `init` has stub.js write their denied defaults at once, as the script tag's
   * `data-integrations` does at evaluation (stub.js must be on the page, or `@consent/sdk/stub` imported).
   */
  integrations?: string[];
  /** Called once the configuration is loaded and the banner (if needed) is shown. */
  onReady?: (client: ConsentClient) => void;
  /** Called for every failure: loading the configuration, or recording a visitor's choice. */
  onError?: (error: ConsentError) => void;
  /** Called after every change of the visitor's decision (same as `client.on('change', fn)`). */
  onChange?: (state: ConsentState) => void;
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

/**
 * How the banner and the purposes behave for this visitor, from the jurisdiction the service placed them in
 * (extensions.md section 6): `opt-in` asks before anything optional runs; `opt-out` grants optional purposes
 * and shows a notice with "Do Not Sell or Share My Personal Information" (GPC opts out by itself); `notice`
 * informs and grants; `none` shows nothing and grants nothing optional.
 */
export type Mode = 'opt-in' | 'opt-out' | 'notice' | 'none';

export interface ConsentState {
  /** Every purpose key of the current version mapped to what `hasConsent` answers for it. */
  choices: Record<string, boolean>;
  /** The current published version's consentHash; null once destroyed. */
  consentHash: string | null;
  versionNumber: number | null;
  /**
   * True while the banner shows: in opt-in, while the visitor has no decision for the current consentHash (or it
   * expired); in opt-out and notice, until the visitor dismisses the notice or decides; never in none.
   */
  needsConsent: boolean;
  /** The locale the texts are shown in (the service's answer), null once destroyed. */
  locale: string | null;
  /** The browser sent Global Privacy Control. */
  gpc: boolean;
  /** The mode of the visitor's jurisdiction ("opt-in" when the service did not say). */
  mode: Mode;
  /** Where the service placed the visitor (`DE`, `US-CA`, `US`), null when unknown. */
  jurisdiction: string | null;
}

export interface ConsentClient {
  /** True only with a current decision that grants this purpose. */
  hasConsent(purposeKey: string): boolean;
  getConsent(): ConsentState;
  /** Opens the preferences dialog. */
  showPreferences(): void;
  /** Calls `fn` after every change of the decision; returns a function that stops it. */
  on(event: 'change', fn: (state: ConsentState) => void): () => void;
  /**
   * Address of the service's hosted preferences page for this site and visitor (the installation travels in
   * the URL fragment, never to a server). A decision made there is adopted at the next `init`.
   */
  preferencesUrl(): string;
  /**
   * `url` with this visitor's installation added to its fragment (`#i=...`, after any fragment it had: never
   * sent to a server), for links to the operator's other sites: the SDK there adopts the installation and the
   * decision made under it (through `/decision`).
   */
  decorate(url: string): string;
  /**
   * Signs this installation in as the person a subject token names (an HS256 JWT the operator's backend signs
   * with the project's subject secret: docs/subjects.md). The service keeps only a hash of `sub`. The person's
   * newest decision is adopted without a banner and without a new receipt while it is for the current version;
   * the banner and preferences then say the choice applies on the person's signed-in devices. Rejects with
   * `invalid_subject_token` (nothing changed) for a bad, expired or foreign token.
   */
  identify(token: string): Promise<void>;
  /** Signs this installation out (call it on sign-out): its decision is its own again. */
  forget(): Promise<void>;

  /** Removes the UI; a later `init` with the same key starts a fresh client. */
  destroy(): void;
}
