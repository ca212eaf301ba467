import { z } from 'zod';
import { completeMockCheckout, mockCheckoutPage, type Page } from '../../src/billing/mock-checkout.js';
import { receiveProviderWebhook } from '../../src/billing/webhooks.js';
import { htmlPageHeaders } from '../../src/http/html-headers.js';
import { route, type RestResponse } from '../route.js';
import { ErrorBody, pick, sessionErrors, timestamp, validationError } from '../schemas.js';

const Entitlements = z
  .object({ projects: z.number().int(), connectors: z.number().int(), cases: z.number().int() })
  .meta({ id: 'Entitlements' });

const Plan = z
  .object({
    id: z.string().describe('free, starter, growth or scale'),
    name: z.string(),
    prices: z.object({ month: z.number().int(), year: z.number().int() }).describe('Cents, USD'),
    trialDays: z.number().int(),
    entitlements: Entitlements,
  })
  .meta({ id: 'Plan' });

const OrganizationBilling = z
  .object({
    plan: Plan.describe('The plan in force now: free once a trial or a canceled period has ended'),
    subscription: z
      .object({
        status: z.enum(['trialing', 'active', 'past_due', 'canceled']),
        planId: z.string(),
        interval: z.enum(['month', 'year']).nullable(),
        trialEndsAt: timestamp.nullable(),
        currentPeriodEnd: timestamp.nullable(),
        cancelAtPeriodEnd: z.boolean(),
      })
      .nullable(),
    entitlements: Entitlements,
    usage: z.object({ projects: z.number().int() }),
  })
  .meta({ id: 'OrganizationBilling' });

const ownerMutationErrors = {
  ...sessionErrors,
  403: { description: 'Only an Owner changes billing', schema: ErrorBody },
};
const html = (page: Page): RestResponse => ({
  status: page.status,
  body: page.html,
  headers: {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    ...htmlPageHeaders("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"),
  },
});

/** The mock checkout pages' own refusals, as HTML pages (src/billing/mock-checkout.ts). */
const mockCheckoutErrors = {
  404: { description: 'No such checkout, or the provider is not mock (HTML)', contentType: 'text/html', schema: z.string() },
  409: { description: 'Already paid (HTML)', contentType: 'text/html', schema: z.string() },
};

export const billingRoutes = [
  route({
    method: 'GET',
    path: '/api/platform/billing/plans',
    summary: 'The public plan catalog',
    auth: 'public',
    operation: 'BillingPlans',
    respond: (data) => ({ status: 200, body: { plans: data.billingPlans } }),
    responses: { 200: { description: 'Plans', schema: z.object({ plans: z.array(Plan) }) } },
  }),
  route({
    method: 'GET',
    path: '/api/platform/orgs/:orgId/billing',
    summary: "The organization's plan, subscription, entitlements and usage (Viewer or above)",
    auth: 'session',
    operation: 'OrganizationBilling',
    variables: ({ params }) => ({ orgId: params.orgId }),
    respond: (data) => ({ status: 200, body: data.organizationBilling }),
    responses: { 200: { description: 'Billing', schema: OrganizationBilling }, ...sessionErrors },
  }),
  route({
    method: 'POST',
    path: '/api/platform/orgs/:orgId/billing/trial',
    summary: "Start the organization's one trial (Owner)",
    auth: 'session',
    operation: 'StartTrial',
    requestBody: z.object({ planId: z.enum(['starter', 'growth']) }),
    variables: ({ params, body }) => ({ orgId: params.orgId, input: pick(body, ['planId']) }),
    respond: (data) => ({ status: 200, body: data.startTrial }),
    responses: {
      200: { description: 'Trial started', schema: OrganizationBilling },
      ...validationError,
      ...ownerMutationErrors,
      409: { description: 'The organization has had its trial, or has a subscription', schema: ErrorBody },
    },
  }),
  route({
    method: 'POST',
    path: '/api/platform/orgs/:orgId/billing/checkout',
    summary: "Open the payment provider's checkout for a paid plan (Owner)",
    auth: 'session',
    operation: 'StartCheckout',
    requestBody: z.object({ planId: z.enum(['starter', 'growth', 'scale']), interval: z.enum(['month', 'year']) }),
    variables: ({ params, body }) => ({ orgId: params.orgId, input: pick(body, ['planId', 'interval']) }),
    respond: (data) => ({ status: 200, body: data.startCheckout }),
    responses: {
      200: {
        description: 'The checkout page; the subscription changes when the provider reports the payment',
        schema: z.object({ checkoutUrl: z.string(), sessionId: z.string() }),
      },
      ...validationError,
      ...ownerMutationErrors,
    },
  }),
  route({
    method: 'POST',
    path: '/api/platform/orgs/:orgId/billing/cancel',
    summary: 'Cancel at the end of the period (Owner); then the organization falls to free. Nothing live to cancel: 200, unchanged',
    auth: 'session',
    operation: 'CancelSubscription',
    variables: ({ params }) => ({ orgId: params.orgId }),
    respond: (data) => ({ status: 200, body: data.cancelSubscription }),
    responses: {
      200: { description: 'Canceled at period end', schema: OrganizationBilling },
      ...ownerMutationErrors,
    },
  }),
  // Not a GraphQL operation: a provider-to-service callback authenticated by a
  // signature over the raw bytes, so it reads rawBody itself and has no requestBody.
  route({
    method: 'POST',
    path: '/api/platform/billing/webhooks/:provider',
    summary: 'Payment-provider events (mock: X-Mock-Signature; stripe: Stripe-Signature)',
    operationId: 'receiveBillingProviderEvent',
    auth: 'public',
    bodyLimit: 512 * 1024,
    requestHeaders: z.object({
      'X-Mock-Signature': z
        .string()
        .optional()
        .describe('BILLING_PROVIDER=mock: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body" with BILLING_WEBHOOK_SECRET> (several v1 allowed)'),
      'Stripe-Signature': z.string().optional().describe("BILLING_PROVIDER=stripe: Stripe's signature header (verified by the stripe library)"),
    }),
    rawRequestBody: {
      description:
        "The provider's event, verified over its raw bytes whatever the Content-Type (an event without an id is deduplicated by a hash of the body)",
      required: true,
      content: {
        'application/json': z
          .unknown()
          .describe('Any JSON the provider signed; its events are {id, type, created, data: {object}} (checkout.session.completed, customer.subscription.*)'),
        '*/*': z.string().describe('Any other Content-Type: the same bytes'),
      },
    },
    handle: async ({ services, params, rawBody, headers }) => ({
      status: 200,
      body: await receiveProviderWebhook(services, params.provider!, rawBody, headers),
    }),
    responses: {
      200: { description: 'Received (a replayed event id is acknowledged and ignored)', schema: z.object({ received: z.literal(true) }) },
      400: { description: 'invalid_signature: missing, wrong or outside the 5-minute tolerance', schema: ErrorBody },
      404: { description: 'Not the configured provider', schema: ErrorBody },
    },
  }),
  // The mock provider's hosted checkout page (HTML, not an API operation): the
  // checkoutUrl of BILLING_PROVIDER=mock points here.
  route({
    method: 'GET',
    path: '/billing/mock-checkout/:sessionId',
    summary: "Mock provider's checkout page with a Pay button",
    operationId: 'getMockCheckoutPage',
    auth: 'public',
    unstorableParamsNameNothing: true, // a session id with U+0000 is no checkout: the page's own 404, in HTML
    handle: async ({ services, params }) => html(await mockCheckoutPage(services, params.sessionId!)),
    responses: {
      200: { description: 'Checkout page', contentType: 'text/html', schema: z.string() },
      ...mockCheckoutErrors,
    },
  }),
  route({
    method: 'POST',
    path: '/billing/mock-checkout/:sessionId',
    summary: 'Pay a mock checkout: sends a signed checkout.session.completed event to the webhook route',
    operationId: 'payMockCheckout',
    auth: 'public',
    rawRequestBody: {
      description: 'The checkout page\u2019s Pay form: no fields (any body is ignored)',
      required: false,
      content: { 'application/x-www-form-urlencoded': z.object({}) },
    },
    unstorableParamsNameNothing: true, // a session id with U+0000 is no checkout: the page's own 404, in HTML
    handle: async ({ services, params }) => html(await completeMockCheckout(services, params.sessionId!)),
    responses: {
      200: { description: 'Paid', contentType: 'text/html', schema: z.string() },
      ...mockCheckoutErrors,
      502: { description: 'The signed event could not be delivered to the webhook route (HTML)', contentType: 'text/html', schema: z.string() },
    },
  }),
];
