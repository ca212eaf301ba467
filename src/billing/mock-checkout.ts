import { randomUUID } from 'node:crypto';
import type { Services } from '../services.js';
import { findPlan } from './plans.js';
import { MOCK_SIGNATURE_HEADER } from './providers/mock.js';
import { signatureHeader } from './providers/signature.js';

/**
 * The mock provider's hosted checkout, served by this service so the whole
 * purchase runs offline: GET shows the order with a "Pay" button, POST pays by
 * sending a signed `checkout.session.completed` event to our webhook route
 * over HTTP, exactly as a real provider would.
 */
export interface Page {
  status: number;
  html: string;
}

const DELIVERY_TIMEOUT_MS = 10_000;

async function openSession(services: Services, sessionId: string) {
  if (services.config.billingProvider !== 'mock') return null;
  return services.db.prisma.checkoutSession.findFirst({ where: { id: sessionId, provider: 'mock' } });
}

export async function mockCheckoutPage(services: Services, sessionId: string): Promise<Page> {
  const session = await openSession(services, sessionId);
  if (!session) return page(404, 'Checkout not found', '<p>This checkout does not exist.</p>');
  if (session.status !== 'open') return page(409, 'Already paid', '<p>This checkout has been paid.</p>');
  const plan = findPlan(session.planId)!;
  const price = plan.prices[session.interval as 'month' | 'year'];
  return page(
    200,
    'Mock checkout',
    `<p>${escapeHtml(plan.name)} plan, billed ${session.interval === 'year' ? 'yearly' : 'monthly'}: <strong>$${(price / 100).toFixed(2)}</strong></p>
<p>This is the mock payment provider: no card is charged.</p>
<form method="post" action="/billing/mock-checkout/${encodeURIComponent(session.id)}"><button type="submit">Pay</button></form>`,
  );
}

export async function completeMockCheckout(services: Services, sessionId: string): Promise<Page> {
  const session = await openSession(services, sessionId);
  if (!session) return page(404, 'Checkout not found', '<p>This checkout does not exist.</p>');
  if (session.status !== 'open') return page(409, 'Already paid', '<p>This checkout has been paid.</p>');
  const now = services.now();
  const payload = JSON.stringify({
    id: `evt_mock_${randomUUID()}`,
    object: 'event',
    type: 'checkout.session.completed',
    created: Math.floor(now.getTime() / 1000),
    data: {
      object: {
        id: session.id,
        object: 'checkout.session',
        client_reference_id: session.id,
        customer: `cus_mock_${session.organizationId}`,
        subscription: `sub_mock_${randomUUID()}`,
        metadata: { organizationId: session.organizationId, planId: session.planId, interval: session.interval },
      },
    },
  });
  const response = await fetch(`${services.config.publicBaseUrl}/api/platform/billing/webhooks/mock`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [MOCK_SIGNATURE_HEADER]: signatureHeader(payload, services.config.billingWebhookSecret, now),
    },
    body: payload,
    signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
  }).catch((error: Error) => ({ ok: false, status: 0, statusText: error.message }));
  if (!response.ok) {
    services.logger.error({ status: response.status, sessionId }, 'mock checkout: webhook delivery failed');
    return page(502, 'Payment not recorded', '<p>The payment event could not be delivered. Try again.</p>');
  }
  return page(200, 'Payment complete', '<p>Payment received. You can close this page.</p>');
}

function page(status: number, title: string, body: string): Page {
  return {
    status,
    html: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}button{font:inherit;padding:.5rem 1.5rem}</style>
</head><body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>
`,
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
