import Stripe from 'stripe';
import type { Config } from '../../config.js';
import type { BillingProvider } from './index.js';
import { headerValue } from '../../http/headers.js';
import { verifySignedEvent } from './signature.js';

/**
 * Stripe Checkout in subscription mode. STRIPE_SECRET_KEY calls the API;
 * BILLING_WEBHOOK_SECRET holds the endpoint's signing secret (whsec_...).
 */
export function stripeProvider(config: Config): BillingProvider {
  let client: Stripe | undefined;
  const api = () => {
    if (!config.stripeSecretKey) throw new Error('STRIPE_SECRET_KEY is required with BILLING_PROVIDER=stripe');
    return (client ??= new Stripe(config.stripeSecretKey));
  };
  return {
    name: 'stripe',
    async createCheckout({ checkoutSessionId, organizationId, plan, interval }) {
      const metadata = { organizationId, planId: plan.id, interval };
      const session = await api().checkout.sessions.create({
        mode: 'subscription',
        client_reference_id: checkoutSessionId,
        metadata,
        subscription_data: { metadata },
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: 'usd',
              unit_amount: plan.prices[interval],
              recurring: { interval },
              product_data: { name: `${plan.name} plan` },
            },
          },
        ],
        success_url: `${config.publicBaseUrl}/?billing=success&organizationId=${organizationId}`,
        cancel_url: `${config.publicBaseUrl}/?billing=canceled&organizationId=${organizationId}`,
      });
      if (!session.url) throw new Error('Stripe returned a checkout session without a URL');
      return { checkoutUrl: session.url, sessionId: session.id };
    },
    async cancelAtPeriodEnd(providerSubscriptionId) {
      await api().subscriptions.update(providerSubscriptionId, { cancel_at_period_end: true });
    },
    verifyEvent: (rawBody, headers, now) =>
      verifySignedEvent(rawBody, headerValue(headers['stripe-signature']), config.billingWebhookSecret, now),
  };
}
