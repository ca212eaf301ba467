import type { Config } from '../../config.js';
import type { Plan } from '../plans.js';
import { mockProvider } from './mock.js';
import type { Headers, ProviderEvent } from './signature.js';
import { stripeProvider } from './stripe.js';

export type { Headers, ProviderEvent } from './signature.js';
export type Interval = 'month' | 'year';

export interface CheckoutRequest {
  /** Our CheckoutSession id: the provider hands it back in its completion event. */
  checkoutSessionId: string;
  organizationId: string;
  plan: Plan;
  interval: Interval;
}

/**
 * A payment provider. Only verified provider events change a paid
 * subscription; the provider never calls back into our state directly.
 */
export interface BillingProvider {
  readonly name: 'mock' | 'stripe';
  /** Starts the provider's hosted checkout; `sessionId` is the provider's own id for it. */
  createCheckout(request: CheckoutRequest): Promise<{ checkoutUrl: string; sessionId: string }>;
  /** Stops renewal at the end of the paid period. */
  cancelAtPeriodEnd(providerSubscriptionId: string): Promise<void>;
  /** Checks the signature over the raw body (throws invalid_signature) and returns the event. */
  verifyEvent(rawBody: Buffer, headers: Headers, now: Date): ProviderEvent;
}

const providers = new WeakMap<Config, BillingProvider>();

/** The provider BILLING_PROVIDER names (one per configuration). */
export function billingProvider(config: Config): BillingProvider {
  let provider = providers.get(config);
  if (!provider) {
    provider = config.billingProvider === 'stripe' ? stripeProvider(config) : mockProvider(config);
    providers.set(config, provider);
  }
  return provider;
}
