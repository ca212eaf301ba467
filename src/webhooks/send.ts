import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { assertPublicHost, guardedLookup } from './address.js';

/**
 * The one reason for every attempt that got no HTTP answer (refused, unknown host, reset, TLS,
 * blocked address, timeout): an operator's test-send must not tell an open port from a closed
 * one, or an existing internal name from a missing one, as a port scanner would.
 */
export const NO_ANSWER = 'the receiver did not answer';

/** decisions.md "Webhook": a receiver has 10 s to answer. */
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface WebhookMessage {
  url: string;
  secret: string;
  /** The event id, sent as X-Consent-Delivery (receivers dedupe on it). */
  eventId: string;
  eventType: string;
  /** The raw body: the signature covers exactly these bytes. */
  body: string;
}

export interface SendOptions {
  timeoutMs: number;
  /**
   * Only public addresses are reached, checked on the address actually connected to; loopback
   * too when this is true (development: tests and local receivers).
   */
  allowLoopback: boolean;
}

export interface SendResult {
  ok: boolean;
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
}

/** `sha256=<hex HMAC-SHA256(raw body, secret)>`, the X-Consent-Signature value. */
export const signature = (body: string, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

const lookupPublicOnly = guardedLookup(false);
const lookupWithLoopback = guardedLookup(true);

// Connections to a receiver are reused between deliveries.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

/**
 * POSTs one signed webhook message. Never throws: every outcome (2xx, other
 * status, redirect, timeout, refused connection, blocked address) comes back
 * as a SendResult for the attempt log. Redirects are not followed, so a
 * receiver cannot bounce the request to an internal address.
 *
 * node:http rather than fetch: its `lookup` hook lets the SSRF guard check the
 * address the socket really connects to (DNS rebinding), which fetch cannot.
 */
export async function sendWebhook(message: WebhookMessage, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const result = (responseStatus: number | null, error: string | null): SendResult => ({
    ok: error === null,
    responseStatus,
    durationMs: Math.round(performance.now() - started),
    error,
  });
  let url: URL;
  try {
    url = new URL(message.url);
    await assertPublicHost(url.hostname, options.allowLoopback);
  } catch {
    return result(null, NO_ANSWER);
  }

  const deadline = started + options.timeoutMs;
  let outcome = await post(url, message, options, deadline);
  // A kept-alive connection the receiver closed while it sat idle fails at once with a reset
  // before any answer (the receiver never read the request): send again on a fresh connection
  // instead of recording a failure and waiting for the retry schedule (node's documented pattern).
  if (outcome === STALE_CONNECTION) outcome = await post(url, message, options, deadline);
  return outcome === STALE_CONNECTION ? result(null, NO_ANSWER) : result(outcome.status, outcome.error);
}

const STALE_CONNECTION = Symbol('stale kept-alive connection');
type Exchange = { status: number | null; error: string | null } | typeof STALE_CONNECTION;

function post(url: URL, message: WebhookMessage, options: SendOptions, deadline: number): Promise<Exchange> {
  return new Promise<Exchange>((resolve) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      agent: agents[url.protocol as keyof typeof agents],
      lookup: options.allowLoopback ? lookupWithLoopback : lookupPublicOnly,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(message.body),
        'user-agent': 'consent-service-webhooks/1',
        'x-consent-signature': signature(message.body, message.secret),
        'x-consent-event': message.eventType,
        'x-consent-delivery': message.eventId,
      },
    });
    // One deadline for connecting, answering and sending the response body (both tries together).
    const remaining = Math.max(0, deadline - performance.now());
    const timer = setTimeout(() => request.destroy(new TimeoutError(options.timeoutMs)), remaining);
    const finish = (outcome: Exchange) => {
      clearTimeout(timer);
      resolve(outcome);
    };
    let answered = false;
    request.on('error', (error: NodeJS.ErrnoException) => {
      const stale = request.reusedSocket && !answered && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
      finish(stale ? STALE_CONNECTION : { status: null, error: NO_ANSWER });
    });
    request.on('response', (response) => {
      answered = true;
      const status = response.statusCode ?? 0;
      const verdict =
        status >= 200 && status < 300
          ? null
          : status >= 300 && status < 400
            ? `redirect (HTTP ${status}) not followed`
            : `HTTP ${status}`;
      // The body is not needed; reading it to the end lets the connection be reused.
      response.resume();
      response.on('end', () => finish({ status, error: verdict }));
      response.on('error', () => finish({ status, error: verdict ?? NO_ANSWER }));
    });
    request.end(message.body);
  });
}

class TimeoutError extends Error {
  constructor(ms: number) {
    super(`timed out after ${ms} ms`);
  }
}
