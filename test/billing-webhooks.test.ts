import { createHmac, randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from '../src/admin/members.js';
import { runBillingSchedule } from '../src/billing/schedule.js';
import { PASSWORD, operator, organization, project, team } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const NOW = new Date('2026-11-23T10:00:00.000Z');
const SECRET = 'mock_webhook_secret_for_tests';

let now = NOW;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ billingWebhookSecret: SECRET }, { now: () => now });
});
afterAll(() => server?.close());

const unix = (date: Date) => Math.floor(date.getTime() / 1000);
const sign = (payload: string, t: number, secret = SECRET) =>
  createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex');

function sendMockEvent(payload: string, signature: string | undefined, headers: Record<string, string> = {}) {
  return server.request('POST', '/api/platform/billing/webhooks/mock', {
    raw: payload,
    headers: { 'content-type': 'application/json', ...(signature && { 'x-mock-signature': signature }), ...headers },
  });
}

const event = (type: string, object: Record<string, unknown>, id = `evt_${randomUUID()}`) =>
  JSON.stringify({ id, object: 'event', type, data: { object } });

const billing = async (orgId: string, token: string) =>
  (await server.request('GET', `/api/platform/orgs/${orgId}/billing`, { token })).body;

/** An owner whose organization paid for starter through the mock checkout page. */
async function paidOrganization() {
  now = NOW;
  const owner = await operator(server, 'Owner');
  const org = await organization(server, owner);
  const checkout = await server.request('POST', `/api/platform/orgs/${org.id}/billing/checkout`, {
    token: owner.token,
    body: { planId: 'starter', interval: 'month' },
  });
  expect(checkout.status).toBe(200);
  const paid = await server.request('POST', new URL(checkout.body.checkoutUrl).pathname);
  expect(paid.status).toBe(200);
  return { owner, org };
}

describe('mock checkout, end to end', () => {
  it('pays on the checkout page, the signed event activates the plan, and entitlements rise', async () => {
    now = NOW;
    const owner = await operator(server, 'Owner');
    const viewer = await operator(server, 'Viewer');
    const org = await organization(server, owner);
    await addMember(server.services.db, { org: org.id, email: viewer.email, role: 'VIEWER' });
    await project(server, owner, org.id, 'First');
    const full = await server.request('POST', `/api/platform/orgs/${org.id}/projects`, { token: owner.token, body: { name: 'Second' } });
    expect(full.status).toBe(403);
    expect(full.body.code).toBe('entitlement_exceeded');

    const checkout = await server.request('POST', `/api/platform/orgs/${org.id}/billing/checkout`, {
      token: owner.token,
      body: { planId: 'starter', interval: 'month' },
    });
    expect(checkout.status).toBe(200);
    expect(checkout.body).toEqual({ checkoutUrl: `${server.url}/billing/mock-checkout/${checkout.body.sessionId}`, sessionId: expect.any(String) });
    // Opening a checkout changes nothing yet.
    expect((await billing(org.id, owner.token)).subscription).toBeNull();

    const page = await server.request('GET', new URL(checkout.body.checkoutUrl).pathname);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('Starter plan');
    expect(page.text).toMatch(/<form method="post" action="\/billing\/mock-checkout\/[^"]+"><button type="submit">Pay<\/button>/);

    const paid = await server.request('POST', new URL(checkout.body.checkoutUrl).pathname);
    expect(paid.status).toBe(200);
    expect(paid.text).toContain('Payment complete');

    const after = await billing(org.id, owner.token);
    expect(after.plan.id).toBe('starter');
    expect(after.entitlements).toEqual({ projects: 3, connectors: 2, cases: 100 });
    expect(after.subscription).toEqual({
      status: 'active',
      planId: 'starter',
      interval: 'month',
      trialEndsAt: null,
      currentPeriodEnd: '2026-12-23T10:00:00.000Z',
      cancelAtPeriodEnd: false,
    });

    // Three projects now: of five parallel creates, exactly two fit.
    const creates = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => server.request('POST', `/api/platform/orgs/${org.id}/projects`, { token: owner.token, body: { name: `P${i}` } })),
    );
    expect(creates.map((r) => r.status).sort()).toEqual([201, 201, 403, 403, 403]);
    expect((await billing(org.id, owner.token)).usage.projects).toBe(3);

    // Every member hears about it.
    const inbox = await server.request('GET', '/api/platform/notifications?product=billing', { token: viewer.token });
    expect(inbox.body.notifications).toMatchObject([
      { product: 'billing', type: 'billing.subscription_changed', title: 'Starter plan active', organizationId: org.id, readAt: null },
    ]);

    // The page cannot be paid twice.
    expect((await server.request('POST', new URL(checkout.body.checkoutUrl).pathname)).status).toBe(409);
  });

  it('cancels a paid subscription at period end; when the period ends the organization is on free', async () => {
    const { owner, org } = await paidOrganization();
    const canceled = await server.request('POST', `/api/platform/orgs/${org.id}/billing/cancel`, { token: owner.token });
    expect(canceled.status).toBe(200);
    expect(canceled.body.subscription).toMatchObject({ status: 'active', cancelAtPeriodEnd: true });
    expect(canceled.body.plan.id).toBe('starter');

    now = new Date('2026-12-23T10:00:00.000Z');
    await runBillingSchedule(server.services);
    // A month on, the first session has expired: log in again.
    const login = await server.request('POST', '/api/platform/auth/login', { body: { email: owner.email, password: PASSWORD } });
    owner.token = login.body.token;
    const after = await billing(org.id, owner.token);
    expect(after.plan.id).toBe('free');
    expect(after.subscription.status).toBe('canceled');
    const inbox = await server.request('GET', '/api/platform/notifications?product=billing', { token: owner.token });
    expect(inbox.body.notifications.map((n: { title: string }) => n.title)).toEqual([
      'Starter subscription ended',
      'Starter subscription canceled',
      'Starter plan active',
    ]);
  });

  it('validates checkout input after the role check', async () => {
    now = NOW;
    const { owner, admin, viewer, outsider, org } = await team(server);
    const checkout = (who: { token: string }, body: unknown) =>
      server.request('POST', `/api/platform/orgs/${org.id}/billing/checkout`, { token: who.token, body });
    for (const body of [{ planId: 'free', interval: 'month' }, { planId: 'starter', interval: 'week' }, { planId: 'starter' }]) {
      expect((await checkout(outsider, body)).status).toBe(404);
      for (const member of [admin, viewer]) {
        const refused = await checkout(member, body);
        expect(refused.status).toBe(403);
        expect(refused.body.code).toBe('forbidden');
      }
      const response = await checkout(owner, body);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('validation_failed');
    }
    expect((await server.request('GET', '/billing/mock-checkout/not-a-session')).status).toBe(404);
  });
});

describe('POST /api/platform/billing/webhooks/mock signature', () => {
  const ignored = () => event('invoice.created', { id: 'in_1' });

  it('accepts a good signature without a session, whatever the content type', async () => {
    now = NOW;
    const payload = ignored();
    const response = await sendMockEvent(payload, `t=${unix(now)},v1=${sign(payload, unix(now))}`, { 'content-type': 'text/plain' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ received: true });
  });

  it('answers 400 invalid_signature (never 401) for a missing, malformed or wrong signature', async () => {
    now = NOW;
    const payload = ignored();
    const t = unix(now);
    const cases = [
      undefined,
      'garbage',
      `v1=${sign(payload, t)}`,
      `t=${t}`,
      `t=${t},v1=${sign(payload, t, 'another secret')}`,
      `t=${t},v1=${sign(`${payload} `, t)}`,
      `t=${t + 1},v1=${sign(payload, t)}`,
    ];
    for (const signature of cases) {
      const response = await sendMockEvent(payload, signature, { authorization: 'Bearer not-a-session' });
      expect(response.status, String(signature)).toBe(400);
      expect(response.body.code).toBe('invalid_signature');
    }
    // A Stripe-Signature header does not stand in for the mock's.
    const stripeHeader = await sendMockEvent(payload, undefined, { 'stripe-signature': `t=${t},v1=${sign(payload, t)}` });
    expect(stripeHeader.body.code).toBe('invalid_signature');
  });

  it('passes when any one of several v1 values matches', async () => {
    now = NOW;
    const payload = ignored();
    const t = unix(now);
    const response = await sendMockEvent(payload, `t=${t},v1=${sign(payload, t, 'old secret')},v1=${sign(payload, t)}`);
    expect(response.status).toBe(200);
  });

  it('holds a 5-minute tolerance both ways, on the server clock', async () => {
    now = NOW;
    const payload = ignored();
    const at = (offsetSeconds: number) => {
      const t = unix(now) + offsetSeconds;
      return sendMockEvent(payload, `t=${t},v1=${sign(payload, t)}`);
    };
    expect((await at(-299)).status).toBe(200);
    expect((await at(299)).status).toBe(200);
    for (const offset of [-301, 301, -3600]) {
      const response = await at(offset);
      expect(response.status, String(offset)).toBe(400);
      expect(response.body.code).toBe('invalid_signature');
    }
  });

  it('acknowledges a replayed event id and ignores it', async () => {
    const { owner, org } = await paidOrganization();
    const subscription = await server.services.db.prisma.subscription.findUniqueOrThrow({ where: { organizationId: org.id } });
    const signed = (payload: string) => `t=${unix(now)},v1=${sign(payload, unix(now))}`;
    const deleted = event('customer.subscription.deleted', { id: subscription.providerSubscriptionId, status: 'canceled' });
    expect((await sendMockEvent(deleted, signed(deleted))).body).toEqual({ received: true });
    expect((await billing(org.id, owner.token)).subscription.status).toBe('canceled');

    const reactivated = event('customer.subscription.updated', { id: subscription.providerSubscriptionId, status: 'active' });
    expect((await sendMockEvent(reactivated, signed(reactivated))).status).toBe(200);
    expect((await billing(org.id, owner.token)).subscription.status).toBe('active');

    // The same deletion again, freshly signed: acknowledged, not applied.
    const replay = await sendMockEvent(deleted, signed(deleted));
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ received: true });
    expect((await billing(org.id, owner.token)).subscription.status).toBe('active');

    // Parallel replays of a new event apply it once.
    const cancelAtEnd = event('customer.subscription.updated', { id: subscription.providerSubscriptionId, status: 'active', cancel_at_period_end: true });
    const answers = await Promise.all([1, 2, 3].map(() => sendMockEvent(cancelAtEnd, signed(cancelAtEnd))));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const inbox = await server.request('GET', '/api/platform/notifications?product=billing', { token: owner.token });
    expect(inbox.body.notifications.map((n: { title: string }) => n.title)).toEqual([
      'Starter subscription active',
      'Starter subscription active',
      'Starter subscription canceled',
      'Starter plan active',
    ]);
  });

  it('acknowledges any signed JSON body, using a hash of the body as the id when there is none', async () => {
    now = NOW;
    for (const payload of ['{}', '{"id":"evt_plain","type":"ping"}', '[1,2]']) {
      const response = await sendMockEvent(payload, `t=${unix(now)},v1=${sign(payload, unix(now))}`);
      expect(response.status, payload).toBe(200);
      expect(response.body).toEqual({ received: true });
    }
    const malformed = '{"id":';
    const response = await sendMockEvent(malformed, `t=${unix(now)},v1=${sign(malformed, unix(now))}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('invalid_json');
  });

  it('answers 404 for a provider that is not configured', async () => {
    const payload = ignored();
    const t = unix(now);
    const response = await server.request('POST', '/api/platform/billing/webhooks/stripe', {
      raw: payload,
      headers: { 'stripe-signature': `t=${t},v1=${sign(payload, t)}` },
    });
    expect(response.status).toBe(404);
  });
});

describe('POST /api/platform/billing/webhooks/stripe', () => {
  const STRIPE_SECRET = 'whsec_test_secret';
  let stripeServer: TestServer;
  beforeAll(async () => {
    stripeServer = await startTestServer(
      { billingProvider: 'stripe', stripeSecretKey: 'sk_test_unused', billingWebhookSecret: STRIPE_SECRET },
      { now: () => now },
    );
  });
  afterAll(() => stripeServer?.close());

  const send = (payload: string, header: string) =>
    stripeServer.request('POST', '/api/platform/billing/webhooks/stripe', {
      raw: payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': header },
    });

  it("verifies Stripe-Signature with the library's scheme and applies checkout and subscription events", async () => {
    now = NOW;
    const owner = await operator(stripeServer);
    const org = await organization(stripeServer, owner);
    // Creating a Stripe checkout needs the network; the row it would leave behind is written directly.
    const checkout = await stripeServer.services.db.prisma.checkoutSession.create({
      data: { organizationId: org.id, provider: 'stripe', planId: 'growth', interval: 'year', providerRef: 'cs_test_1' },
    });
    const completed = event('checkout.session.completed', {
      id: 'cs_test_1',
      object: 'checkout.session',
      client_reference_id: checkout.id,
      customer: 'cus_test_1',
      subscription: 'sub_test_1',
    });
    const timestamp = unix(now);

    const forged = await send(completed, Stripe.webhooks.generateTestHeaderString({ payload: completed, secret: 'whsec_wrong', timestamp }));
    expect(forged.status).toBe(400);
    expect(forged.body.code).toBe('invalid_signature');
    const stale = await send(completed, Stripe.webhooks.generateTestHeaderString({ payload: completed, secret: STRIPE_SECRET, timestamp: timestamp - 600 }));
    expect(stale.body.code).toBe('invalid_signature');

    const header = Stripe.webhooks.generateTestHeaderString({ payload: completed, secret: STRIPE_SECRET, timestamp });
    const accepted = await send(completed, header);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ received: true });
    let state = (await stripeServer.request('GET', `/api/platform/orgs/${org.id}/billing`, { token: owner.token })).body;
    expect(state.plan.id).toBe('growth');
    expect(state.subscription).toMatchObject({ status: 'active', planId: 'growth', interval: 'year', currentPeriodEnd: '2027-11-23T10:00:00.000Z' });

    const periodEnd = unix(new Date('2027-11-20T00:00:00.000Z'));
    const updated = event('customer.subscription.updated', {
      id: 'sub_test_1',
      object: 'subscription',
      status: 'past_due',
      cancel_at_period_end: true,
      items: { data: [{ current_period_end: periodEnd }] },
    });
    expect((await send(updated, Stripe.webhooks.generateTestHeaderString({ payload: updated, secret: STRIPE_SECRET, timestamp }))).status).toBe(200);
    state = (await stripeServer.request('GET', `/api/platform/orgs/${org.id}/billing`, { token: owner.token })).body;
    expect(state.subscription).toMatchObject({ status: 'past_due', cancelAtPeriodEnd: true, currentPeriodEnd: '2027-11-20T00:00:00.000Z' });
    expect(state.plan.id).toBe('growth');
  });
});
