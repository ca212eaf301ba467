import type { Config } from '../../config.js';
import type { BillingProvider } from './index.js';
import { headerValue } from '../../http/headers.js';
import { verifySignedEvent } from './signature.js';

export const MOCK_SIGNATURE_HEADER = 'x-mock-signature';

/**
 * The default provider: no network. Its checkout page is served by this
 * service (src/billing/mock-checkout.ts) and completes the purchase by sending
 * a signed event to our own webhook route, as a real provider would.
 */
export function mockProvider(config: Config): BillingProvider {
  return {
    name: 'mock',
    createCheckout: async ({ checkoutSessionId }) => ({
      checkoutUrl: `${config.publicBaseUrl}/billing/mock-checkout/${checkoutSessionId}`,
      sessionId: checkoutSessionId,
    }),
    // The mock keeps no subscription of its own: nothing renews, so there is nothing to stop.
    cancelAtPeriodEnd: async () => {},
    verifyEvent: (rawBody, headers, now) =>
      verifySignedEvent(rawBody, headerValue(headers[MOCK_SIGNATURE_HEADER]), config.billingWebhookSecret, now),
  };
}
