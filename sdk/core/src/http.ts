// The published SDK routes, as an app calls them (docs/sdk-api.md): the publishable key as a Bearer token, no
// cookies and no Origin (an app has none; the service lets requests without Origin pass its allowlist).
import { sdkError } from '../../src/api';
import { checkConfig, type RemoteDecision, type SdkConfig } from '../../src/v2/api';
import type { ConsentErrorEvent } from './public';

export interface Answer<T> {
  status: number;
  body: T;
}

/** An error with the service's code (`revoked_key`, `invalid_body`, ...) or the SDK's own (`network_error`, ...). */
export type HttpError = Error & ConsentErrorEvent;

export function createHttp(base: string, publicKey: string, fetchFn: typeof fetch) {
  async function call<T>(path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer<T>> {
    let res: Response;
    try {
      res = await fetchFn(`${base}/api/sdk/${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { Authorization: 'Bearer ' + publicKey, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw sdkError('network_error', `could not reach ${base}`);
    }
    if (res.status == 304) return { status: 304, body: undefined as T };
    const json = await res.json().catch(() => null);
    if (!res.ok) throw sdkError(json?.code || 'http_error', json?.error || `HTTP ${res.status}`, res.status);
    return { status: res.status, body: Object.assign(json ?? {}, res.headers.get('etag') ? { etag: res.headers.get('etag') } : {}) };
  }

  return {
    /** The v2 config; 304 (nothing new) when `etag` still matches. */
    async config(locale: string, etag?: string): Promise<{ config: SdkConfig; etag?: string } | null> {
      const res = await call<SdkConfig & { etag?: string }>('v2/config' + (locale ? '?locale=' + encodeURIComponent(locale) : ''), etag ? { 'If-None-Match': etag } : {});
      if (res.status == 304) return null;
      const { etag: tag, ...body } = res.body;
      return { config: checkConfig(body), etag: tag };
    },
    decision: async (installationId: string) =>
      (await call<{ decision: RemoteDecision | null }>('v2/decision', { 'X-Consent-Installation': installationId })).body.decision || null,
    /** One receipt; the same Idempotency-Key makes a repeat count once (the service answers it with the first answer). */
    consent: async (body: object, idempotencyKey: string) =>
      (await call<{ id: string; createdAt: string }>('v1/consent', { 'Idempotency-Key': idempotencyKey }, body)).body,
    vendorList: async (locale: string) => (await call<unknown>('v2/tcf/vendor-list?locale=' + encodeURIComponent(locale))).body,
  };
}

export type Http = ReturnType<typeof createHttp>;
