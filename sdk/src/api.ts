// The two SDK endpoints (service-api.md 4.9). The key travels only in the Authorization header; config
// requests go through the browser's HTTP cache as usual (the service sends ETag and Cache-Control).
import type { ConsentError } from './public';

export interface Purpose {
  id: string;
  key: string;
  name: string;
  description: string;
  required: boolean;
  categoryId: string;
  sortOrder: number;
}

export interface Category {
  id: string;
  name: string;
  sortOrder: number;
}

export interface Notice {
  title: string;
  description: string;
  acceptLabel: string;
  rejectLabel: string;
  manageLabel: string;
  companyName: string;
  logoUrl: string;
  primaryColor: string;
}

export interface SdkConfig {
  projectId: string;
  version: { id: string; number: number; publishedAt: string; contentHash: string; consentHash: string };
  config: { purposes: Purpose[]; categories: Category[]; notice: Notice };
}

/** Exactly the fields the service accepts: it answers 400 invalid_body to any other. */
export interface ReceiptBody {
  versionId: string;
  consentHash: string;
  choices: Record<string, boolean>;
  installationId: string;
  timestamp: string;
  sdkVersion: string;
}

export interface Receipt {
  ok: true;
  id: string;
  createdAt: string;
}

export interface Api {
  getConfig(): Promise<SdkConfig>;
  postConsent(body: ReceiptBody): Promise<Receipt>;
}

export function sdkError(code: string, message: string, status = 0): ConsentError {
  return Object.assign(new Error('ConsentSDK: ' + message), { name: 'ConsentError', code, status });
}

export function createApi(base: string, publicKey: string): Api {
  async function call(path: string, init: RequestInit = {}) {
    let res: Response;
    try {
      res = await fetch(`${base}/api/sdk/v1/${path}`, {
        ...init,
        // No cookies: the service identifies the project by key and the visitor by installationId only.
        credentials: 'omit',
        headers: { Authorization: 'Bearer ' + publicKey, ...(init.headers as Record<string, string>) },
      });
    } catch {
      throw sdkError('network_error', `could not reach ${base}`);
    }
    const body = await res.json().catch(() => null);
    if (!res.ok) {
      throw sdkError(body?.code || 'http_error', body?.error || `HTTP ${res.status}`, res.status);
    }
    return body;
  }

  return {
    async getConfig() {
      const body = await call('config');
      // Checked once here so the rest of the SDK can trust the shape.
      if (!body?.version?.consentHash || !Array.isArray(body.config?.purposes) || !body.config.notice) {
        throw sdkError('invalid_response', 'unexpected config response', 200);
      }
      body.config.categories ||= [];
      return body;
    },
    postConsent: (receipt) =>
      call('consent', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(receipt),
      }),
  };
}
