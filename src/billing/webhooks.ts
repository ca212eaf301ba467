import { z } from 'zod';
import { notFound } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Services } from '../services.js';
import { findPlan } from './plans.js';
import { billingProvider, type Headers, type ProviderEvent } from './providers/index.js';
import { currentStatus, lockSubscription, notifyBillingChange } from './service.js';

type Tx = Prisma.TransactionClient;

/**
 * POST /api/platform/billing/webhooks/:provider. Verifies the signature over
 * the raw body, then applies the event once: its id goes into billing_events
 * in the same transaction as the change, so a replay is acknowledged and ignored.
 */
export async function receiveProviderWebhook(services: Services, providerName: string, rawBody: Buffer, headers: Headers) {
  const provider = billingProvider(services.config);
  if (providerName !== provider.name) throw notFound('Billing provider');
  const now = services.now();
  const event = provider.verifyEvent(rawBody, headers, now);
  await services.db.prisma.$transaction(async (tx) => {
    const { count: fresh } = await tx.billingEvent.createMany({
      data: [{ id: `${provider.name}:${event.id}`, provider: provider.name, type: event.type, receivedAt: now }],
      skipDuplicates: true,
    });
    if (fresh) await applyEvent(tx, provider.name, event, now);
  });
  return { received: true as const };
}

// The fields we read from Stripe-shaped objects; everything else is ignored.
const CheckoutCompleted = z.object({
  client_reference_id: z.string().nullish(),
  customer: z.string().nullish(),
  subscription: z.string().nullish(),
});
const SubscriptionObject = z.object({
  id: z.string(),
  status: z.string(),
  cancel_at_period_end: z.boolean().optional(),
  current_period_end: z.number().nullish(),
  items: z.object({ data: z.array(z.object({ current_period_end: z.number().nullish() })) }).optional(),
  metadata: z.record(z.string(), z.string()).nullish(),
});

/** Provider statuses in our four: trialing, active, past_due, canceled. */
const STATUS: Record<string, string> = {
  trialing: 'trialing',
  active: 'active',
  past_due: 'past_due',
  unpaid: 'past_due',
  incomplete: 'past_due',
  paused: 'past_due',
  canceled: 'canceled',
  incomplete_expired: 'canceled',
};

async function applyEvent(tx: Tx, provider: string, event: ProviderEvent, now: Date): Promise<void> {
  switch (event.type) {
    // A verified event of a shape we do not know is acknowledged, not retried forever.
    case 'checkout.session.completed': {
      const object = CheckoutCompleted.safeParse(event.data.object);
      return object.success ? checkoutCompleted(tx, provider, object.data, now) : undefined;
    }
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const object = SubscriptionObject.safeParse(event.data.object);
      if (!object.success) return;
      if (event.type === 'customer.subscription.deleted') object.data.status = 'canceled';
      return subscriptionChanged(tx, provider, object.data, now);
    }
    default:
      return; // other event kinds are acknowledged and ignored
  }
}

async function checkoutCompleted(tx: Tx, provider: string, object: z.infer<typeof CheckoutCompleted>, now: Date) {
  if (!object.client_reference_id) return;
  const checkout = await tx.checkoutSession.findFirst({ where: { id: object.client_reference_id, provider } });
  if (!checkout) return;
  const { count } = await tx.checkoutSession.updateMany({
    where: { id: checkout.id, status: 'open' },
    data: { status: 'completed', completedAt: now },
  });
  if (!count) return;
  const { organizationId, planId, interval } = checkout;
  await lockSubscription(tx, organizationId);
  // Until the provider reports the period, it is one interval from payment.
  const currentPeriodEnd = new Date(now);
  if (interval === 'year') currentPeriodEnd.setUTCFullYear(currentPeriodEnd.getUTCFullYear() + 1);
  else currentPeriodEnd.setUTCMonth(currentPeriodEnd.getUTCMonth() + 1);
  const data = {
    planId,
    status: 'active',
    interval,
    trialEndsAt: null, // a trial paid for is over; trialUsed keeps that it happened
    currentPeriodEnd,
    cancelAtPeriodEnd: false,
    provider,
    providerCustomerId: object.customer ?? null,
    providerSubscriptionId: object.subscription ?? null,
    updatedAt: now,
  };
  await tx.subscription.upsert({
    where: { organizationId },
    create: { organizationId, ...data, createdAt: now },
    update: data,
  });
  const plan = findPlan(planId);
  await notifyBillingChange(tx, organizationId, now, {
    title: `${plan?.name ?? planId} plan active`,
    body: `Payment received: the organization is on the ${plan?.name ?? planId} plan, billed ${interval === 'year' ? 'yearly' : 'monthly'}.`,
  });
}

async function subscriptionChanged(tx: Tx, provider: string, object: z.infer<typeof SubscriptionObject>, now: Date) {
  const found = await tx.subscription.findFirst({ where: { provider, providerSubscriptionId: object.id } });
  if (!found) return;
  const current = await lockSubscription(tx, found.organizationId);
  if (!current || current.providerSubscriptionId !== object.id) return;
  const periodEnd = object.current_period_end ?? object.items?.data[0]?.current_period_end;
  const planId = object.metadata?.planId && findPlan(object.metadata.planId) ? object.metadata.planId : current.planId;
  const next = {
    status: STATUS[object.status] ?? current.status,
    planId,
    cancelAtPeriodEnd: object.cancel_at_period_end ?? current.cancelAtPeriodEnd,
    currentPeriodEnd: periodEnd ? new Date(periodEnd * 1000) : current.currentPeriodEnd,
  };
  await tx.subscription.update({ where: { organizationId: current.organizationId }, data: { ...next, updatedAt: now } });
  const before = currentStatus(current, now);
  if (before === next.status && current.planId === next.planId && current.cancelAtPeriodEnd === next.cancelAtPeriodEnd) return;
  const plan = findPlan(next.planId);
  await notifyBillingChange(tx, current.organizationId, now, {
    title: `${plan?.name ?? next.planId} subscription ${next.status === 'past_due' ? 'past due' : next.status}`,
    body:
      next.status === 'canceled'
        ? 'The subscription has ended: the organization is on the Free plan.'
        : `Subscription status: ${next.status}${next.cancelAtPeriodEnd ? ', ends at the end of the period' : ''}.`,
  });
}
