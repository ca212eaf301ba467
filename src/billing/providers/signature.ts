import { createHash, createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { AppError } from '../../errors.js';

/** Signed events older or newer than this are refused (replays, skewed clocks). */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

/** What every provider event carries (the mock sends Stripe-shaped events). */
export interface ProviderEvent {
  id: string;
  type: string;
  data: { object: Record<string, unknown> };
}

export type Headers = Record<string, string | string[] | undefined>;


export const invalidSignature = (message: string) => new AppError('invalid_signature', message);

/** `t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>`: Stripe's scheme, which the mock provider shares. */
export function signatureHeader(payload: string, secret: string, now: Date): string {
  const timestamp = Math.floor(now.getTime() / 1000);
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

/**
 * Verifies a `t=…,v1=…` header with the Stripe library (any of several v1
 * values may match) and parses the event. The library refuses old
 * timestamps; timestamps from the future are refused here, so the tolerance
 * holds both ways.
 */
export function verifySignedEvent(rawBody: Buffer, header: string | undefined, secret: string, now: Date): ProviderEvent {
  if (!header) throw invalidSignature('Missing signature header');
  const timestamp = Number(/(?:^|,)\s*t=(\d+)\s*(?:,|$)/.exec(header)?.[1]);
  if (!Number.isSafeInteger(timestamp)) throw invalidSignature('Malformed signature header');
  if (timestamp - now.getTime() / 1000 > SIGNATURE_TOLERANCE_SECONDS) {
    throw invalidSignature('Signature timestamp outside the tolerance');
  }
  let event: unknown;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, header, secret, SIGNATURE_TOLERANCE_SECONDS, undefined, now.getTime());
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) {
      throw invalidSignature(/tolerance/i.test(error.message) ? 'Signature timestamp outside the tolerance' : 'Signature does not match');
    }
    if (error instanceof SyntaxError) throw new AppError('invalid_json', 'Malformed JSON body');
    throw error;
  }
  return toEvent(event, rawBody);
}

/**
 * A signed body is the provider's word: it is acknowledged even when it is
 * not an event we read. Without an id, the body's SHA-256 stands in for it,
 * so a replay is still recognised.
 */
function toEvent(parsed: unknown, rawBody: Buffer): ProviderEvent {
  const event = (parsed ?? {}) as { id?: unknown; type?: unknown; data?: { object?: unknown } };
  const id =
    typeof event.id === 'string' && event.id ? event.id : `sha256:${createHash('sha256').update(rawBody).digest('hex')}`;
  const object = event.data?.object;
  return {
    id,
    type: typeof event.type === 'string' ? event.type : 'unknown',
    data: { object: typeof object === 'object' && object !== null ? (object as Record<string, unknown>) : {} },
  };
}
