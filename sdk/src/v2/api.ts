// The SDK API v2 endpoints (extensions.md sections 3 and 6): the localised config with the experience settings
// and the visitor's jurisdiction, the installation's latest decision, and receipts (v1 route, with locale, gpc,
// jurisdiction, action and gpp).
import { sdkError, type Category, type Notice, type Purpose, type Receipt } from '../api';
import type { Mode } from './public';

export type { Category, Mode, Notice, Purpose, Receipt };

export interface Experience {
  privacyPolicyUrl: string;
  /** 0: a decision never expires. */
  reconsentAfterDays: number;
  gpc: { optOutPurposes: string[] };
  googleConsentMode: { enabled: boolean; signals: Record<string, string[]> };
  cookies: Record<string, string[]>;
  theme: { colorScheme: 'light' | 'dark' | 'auto'; borderRadius?: number };
  /** The operator's MSPA settings, written into the GPP string in opt-out jurisdictions (gpp.ts fills the defaults). */
  gpp?: GppSettings;
  /** Vendor consent APIs the SDK drives, every signal listed (integrations.js); absent when none. */
  integrations?: { type: string; signals: Record<string, string[]> }[];
  /** Where the state cookie is shared across subdomains (integrations.js); absent when not set. */
  cookieDomain?: string;
  /** IAB TCF (extensions.md section 11): when enabled, tcf.js runs the CMP API and the two-layer banner. */
  tcf?: TcfSettings;
}

export interface TcfSettings {
  enabled: boolean;
  /** The operator's IAB-registered CMP id. */
  cmpId: number;
  cmpVersion: number;
  publisherCountryCode: string;
  /** GVL vendor ids disclosed by this version. */
  vendors: number[];
  /** Google Additional Consent provider ids disclosed by this version. */
  googleAtps: number[];
  specialFeatures: number[];
  restrictions: { purposeId: number; vendorIds: number[]; type: 'notAllowed' | 'requireConsent' | 'requireLegitimateInterest' }[];
  publisher: { purposes: number[]; legitimateInterests: number[] } | null;
  /** Draft purpose key → the TCF purposes that must all have consent for it to be granted. */
  purposeMap: Record<string, number[]>;
  /** The GVL version pinned at publishing, when the service says it here too (the vendor list always does). */
  vendorListVersion?: number;
}

export interface GppSettings {
  mspaCoveredTransaction: boolean;
  mspaMode: 'none' | 'opt-out-option' | 'service-provider';
}

/** What the visitor did; sent as the receipt's `action`. */
export type Action = 'accept_all' | 'reject_all' | 'custom' | 'opt_out' | 'gpc';

export interface SdkConfig {
  projectId: string;
  version: { id: string; number: number; publishedAt: string; contentHash: string; consentHash: string };
  locale: string;
  dir: 'ltr' | 'rtl';
  config: { purposes: Purpose[]; categories: Category[]; notice: Notice };
  ui: Record<string, string>;
  experience: Experience;
  /** Where the service placed the visitor (`DE`, `US-CA`) and the rule that matched; null (or absent) when unknown. */
  jurisdiction?: { code: string; rule: string } | null;
  mode: Mode;
}

export interface ReceiptBody {
  versionId: string;
  consentHash: string;
  choices: Record<string, boolean>;
  installationId: string;
  timestamp: string;
  sdkVersion: string;
  locale: string;
  gpc: boolean;
  jurisdiction?: string;
  action: Action;
  gpp?: string;
  tcf?: { tcString: string; addtlConsent: string };
  /** Issue 45: where the receipt came from; the browser SDK is always `browser` on `web`. */
  source: { sdk: 'browser'; sdkVersion: string; platform: 'web' };
}

export interface RemoteDecision {
  versionId: string;
  consentHash: string;
  choices: Record<string, boolean>;
  createdAt: string;
}

export interface Api {
  /** GET (or with `init`, any method) `/api/sdk/<path>` with the key; the answer's JSON, or an SDK error. */
  call(path: string, init?: RequestInit): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  getConfig(locale: string): Promise<SdkConfig>;
  getDecision(installationId: string): Promise<RemoteDecision | null>;
  postConsent(body: ReceiptBody): Promise<Receipt>;
}

const MODES: Mode[] = ['opt-in', 'opt-out', 'notice', 'none'];

/** A v2 config answer checked once (so the rest of the SDK, and the core's, can trust its shape), defaults filled in. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function checkConfig(body: any): SdkConfig {
  if (!body?.version?.consentHash || !Array.isArray(body.config?.purposes) || !body.config.notice) {
    throw sdkError('invalid_response', 'unexpected config response', 200);
  }
  const x = (body.experience ||= {});
  body.config.categories ||= [];
  body.ui ||= {};
  x.gpc ||= { optOutPurposes: [] };
  x.googleConsentMode ||= { enabled: false, signals: {} };
  x.cookies ||= {};
  x.theme ||= { colorScheme: 'light' };
  // An answer from before jurisdictions (or an unknown mode) is opt-in, the strictest.
  if (!MODES.includes(body.mode)) body.mode = MODES[0];
  return body;
}

export function createApi(base: string, publicKey: string): Api {
  async function call(path: string, init: RequestInit = {}) {
    let res: Response;
    try {
      // No cookies: the service identifies the project by key and the visitor by installationId only.
      res = await fetch(`${base}/api/sdk/${path}`, {
        ...init,
        credentials: 'omit',
        headers: { Authorization: 'Bearer ' + publicKey, ...(init.headers as Record<string, string>) },
      });
    } catch {
      throw sdkError('network_error', `could not reach ${base}`);
    }
    const body = await res.json().catch(() => null);
    if (!res.ok) throw sdkError(body?.code || 'http_error', body?.error || `HTTP ${res.status}`, res.status);
    return body;
  }

  return {
    call,
    getConfig: async (locale) => checkConfig(await call('v2/config' + (locale ? '?locale=' + encodeURIComponent(locale) : ''))),
    getDecision: async (installationId) =>
      (await call('v2/decision', { headers: { 'X-Consent-Installation': installationId } }))?.decision || null,
    postConsent: (receipt) =>
      call('v1/consent', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(receipt) }),
  };
}
