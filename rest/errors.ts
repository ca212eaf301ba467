import type { GraphQLError } from 'graphql';
import { isDatabaseUnavailable, RETRY_AFTER_SECONDS, UNAVAILABLE_MESSAGE } from '../src/db/unavailable.js';
import type { RateLimitInfo } from '../src/errors.js';
import { isUnstorableTextError, UNSTORABLE_TEXT_MESSAGE } from '../src/storable-text.js';
import type { RestResponse } from './route.js';

/** The one place where an error code becomes an HTTP status. */
export const STATUS_BY_CODE: Record<string, number> = {
  invalid_json: 400,
  validation_failed: 400,
  invalid_signature: 400,
  invalid_body: 400,
  invalid_version: 400,
  consent_hash_mismatch: 400,
  invalid_idempotency_key: 400,
  invalid_credentials: 401,
  unauthorized: 401,
  invalid_key: 401,
  invalid_subject_token: 401,
  forbidden: 403,
  entitlement_exceeded: 403,
  revoked_key: 403,
  origin_not_allowed: 403,
  not_found: 404,
  no_published_version: 404,
  tcf_not_enabled: 404,
  tcf_vendor_list_missing: 404,
  method_not_allowed: 405,
  conflict: 409,
  receipt_not_sealed: 409,
  idempotency_conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  service_unavailable: 503,
  scanner_unavailable: 503,
};

export function errorResponse(
  code: string,
  message: string,
  extra: { details?: unknown; headers?: Record<string, string> } = {},
): RestResponse {
  const body: Record<string, unknown> = { error: message, code };
  if (extra.details !== undefined) body.details = extra.details;
  // Database unavailable (extensions.md section 1): every 503 tells the caller when to come back.
  const headers = code === 'service_unavailable' ? { ...extra.headers, 'Retry-After': String(RETRY_AFTER_SECONDS) } : extra.headers;
  return { status: STATUS_BY_CODE[code] ?? 500, body, headers };
}

export function rateLimitHeaders(info: RateLimitInfo): Record<string, string> {
  return {
    'Retry-After': String(info.retryAfter),
    'X-RateLimit-Limit': String(info.limit),
    'X-RateLimit-Remaining': String(info.remaining),
    'X-RateLimit-Reset': String(info.reset),
  };
}

/** A GraphQL error from an in-process execution, as the contract's error response. */
export function fromGraphQLError(error: GraphQLError, options: { exposeInternal: boolean }): RestResponse {
  const code = error.extensions?.code as string | undefined;
  if (code && code in STATUS_BY_CODE) {
    const rateLimit = error.extensions.rateLimit as RateLimitInfo | undefined;
    return errorResponse(code, error.message, {
      details: error.extensions.details,
      headers: rateLimit ? rateLimitHeaders(rateLimit) : undefined,
    });
  }
  // Variable coercion failed: the body had the wrong types for the operation.
  if (!error.path && /^Variable "\$/.test(error.message)) {
    return errorResponse('validation_failed', 'Validation failed', {
      details: [{ path: coercionPath(error.message), message: error.message.replace(/^Variable "\$\w+" got invalid value [^;]*; /, '') }],
    });
  }
  if (isDatabaseUnavailable(error.originalError)) return errorResponse('service_unavailable', UNAVAILABLE_MESSAGE);
  // The database refused text it cannot hold (a safety net behind rest/handler.ts): the caller's 400, never its SQL.
  if (isUnstorableTextError(error.originalError)) {
    return errorResponse('validation_failed', 'Validation failed', { details: [{ path: [], message: UNSTORABLE_TEXT_MESSAGE }] });
  }
  return errorResponse('internal', options.exposeInternal ? error.message : 'Internal server error');
}

function coercionPath(message: string): (string | number)[] {
  const at = /at "([^"]+)"/.exec(message)?.[1];
  if (!at) return [];
  return at.split('.').slice(1).map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}
